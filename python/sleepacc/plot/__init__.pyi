"""Types of sleepacc.plot: every figure function returns the matplotlib
Figure (saved first to each path of ``save``)."""
import os
from typing import Any, Iterable, Mapping, Optional, Sequence, Union

from matplotlib.figure import Figure

from .._api import Measurement, Sweep
from ..model import Model

__all__ = ["error_vs_requested", "lateness_cdf", "cost_pareto", "histogram", "over_time",
           "model_fit", "history", "compare_hosts", "flent_overlay", "read_flent", "save_figure",
           "series", "method_family", "FAMILIES"]

PathLike = Union[str, "os.PathLike[str]"]
#: Where to save: nothing, one path, or several (the format from the suffix).
_Save = Union[None, PathLike, Sequence[PathLike]]
#: What the plots take: a Sweep, Measurements, point dicts or tidy records.
_PlotData = Union[Sweep, Iterable[Measurement], Iterable[Mapping[str, Any]], PathLike]
_Methods = Optional[Sequence[str]]

def save_figure(fig: Figure, save: _Save) -> Figure: ...
def series(data: _PlotData) -> list[dict[str, Any]]: ...
def error_vs_requested(data: _PlotData, methods: _Methods = ..., *, title: Optional[str] = ...,
                       save: _Save = ...) -> Figure: ...
def lateness_cdf(data: _PlotData, methods: _Methods = ..., *, requested: Optional[float] = ...,
                 title: Optional[str] = ..., save: _Save = ...) -> Figure: ...
def cost_pareto(data: _PlotData, methods: _Methods = ..., *, requested: Optional[float] = ...,
                quantile: str = ..., title: Optional[str] = ..., save: _Save = ...) -> Figure: ...
def model_fit(model: Model, data: Optional[_PlotData] = ..., methods: _Methods = ...,
              *, title: Optional[str] = ..., save: _Save = ...) -> Figure: ...
def history(points: Iterable[Mapping[str, Any]], *, quantity: str = ...,
            title: Optional[str] = ..., save: _Save = ...) -> Figure: ...
def compare_hosts(sweeps: Iterable[Sweep], labels: Optional[Sequence[str]] = ..., *,
                  paths: Optional[Sequence[str]] = ..., method: Optional[str] = ...,
                  requested: Optional[float] = ..., stat: str = ..., title: Optional[str] = ...,
                  save: _Save = ...) -> Figure: ...
def histogram(measurement: Union[Measurement, Mapping[str, Any]], *, bins: Optional[int] = ...,
              title: Optional[str] = ..., save: _Save = ...) -> Figure: ...
def over_time(measurement: Union[Measurement, Mapping[str, Any]], *,
              title: Optional[str] = ..., save: _Save = ...) -> Figure: ...
def read_flent(path: PathLike) -> dict[str, Any]: ...
def flent_overlay(flent: Union[PathLike, Mapping[str, Any]],
                  monitor: Union[PathLike, Iterable[Mapping[str, Any]]], *,
                  title: Optional[str] = ..., save: _Save = ...) -> Figure: ...

#: (key, label, meaning) of each method family, in drawing order.
FAMILIES: tuple[tuple[str, str, str], ...]
def method_family(name: str, registry: Optional[Mapping[str, Any]] = ...) -> str: ...
