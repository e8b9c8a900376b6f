"""Types of sleepacc's measuring API (sleepacc._api): what a user's script
sees through ``import sleepacc``.  Units: arguments in seconds (int or
float, like time.sleep; slack in ns), results in integer ns.

Statistics of a point read back from irtt's sleep table carry the mean
only (the other fields are None at run time); everything a run measures
has every field."""
import os
from collections.abc import Mapping, Sequence
from typing import Any, Callable, Iterable, Iterator, NamedTuple, Optional, Union, overload

import numpy as np
import numpy.typing as npt
import pandas as pd

__all__ = ["Method", "Stats", "Samples", "Measurement", "Sweep", "methods", "measure", "sweep",
           "iter_sweep", "sweep_points", "load", "system_info", "clock_info", "DEFAULT_DURATIONS",
           "MAX_SAMPLES"]

Seconds = Union[int, float]
_StatValue = Union[int, float, None]

DEFAULT_DURATIONS: tuple[float, ...]
MAX_SAMPLES: int
DEFAULT_MARGIN: float


class _SamplesType(type):
    def __instancecheck__(cls, obj: object) -> bool: ...


class Samples(metaclass=_SamplesType):
    """Read-only int64 ns samples: a memoryview of format 'q' (isinstance checks that)."""
    def __new__(cls, values: Any = ...) -> memoryview: ...  # type: ignore[misc]


class Method(NamedTuple):
    name: str
    family: str
    description: str
    granularity_ns: int
    honours_slack: str
    absolute: bool
    available: bool


def methods() -> list[Method]: ...


class Stats(Mapping[str, _StatValue]):
    """Summary statistics in ns (the core's sleepacc_stats fields); keys
    are also attributes."""
    n: int
    min: int
    max: int
    mean: float
    std: float
    p1: int
    p10: int
    p25: int
    median: int
    p75: int
    p90: int
    p99: int
    p999: int
    undersleeps: int
    def __init__(self, values: Mapping[str, Any]) -> None: ...
    def __getitem__(self, key: str) -> _StatValue: ...
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    def __getattr__(self, name: str) -> _StatValue: ...
    def to_dict(self) -> dict[str, _StatValue]: ...


class Measurement:
    """One measure() run: a method at one duration."""
    method: str
    mode: str
    requested_ns: int
    n: Optional[int]
    env: dict[str, Any]
    samples: Optional[memoryview]
    #: each sample's start, ns since the run's start (None when streaming)
    starts: Optional[memoryview]
    stats: Stats
    stream_stats: Optional[Stats]
    missed: int
    cpu_ns_per_call: float
    cpu_percent: float
    ctx_switches: dict[str, int]
    wall_ns: int
    #: the trace the point carries (from_trace; a results file's "trace" key)
    trace: Optional[Any]
    def __init__(self, *, method: str, mode: str, requested_ns: int, n: int,
                 stats: Mapping[str, Any], missed: int = ..., cpu_ns_per_call: float = ...,
                 cpu_percent: float = ..., ctx_switches: Optional[Mapping[str, int]] = ...,
                 wall_ns: int = ..., env: Optional[Mapping[str, Any]] = ...,
                 samples: Any = ..., stream_stats: Optional[Mapping[str, Any]] = ...,
                 starts: Any = ..., trace: Any = ...) -> None: ...
    @property
    def requested(self) -> float: ...
    @property
    def errors_ns(self) -> Optional[npt.NDArray[np.int64]]: ...
    def to_dict(self) -> dict[str, Any]: ...
    def error(self, stat: str = ...) -> Optional[int]: ...
    def to_record(self, host: Optional[Mapping[str, Any]] = ...) -> dict[str, Any]: ...
    def to_frame(self, host: Optional[Mapping[str, Any]] = ...) -> pd.DataFrame: ...
    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = ...) -> Measurement: ...
    @classmethod
    def from_trace(cls, t: Any) -> Measurement: ...
    def __eq__(self, other: object) -> bool: ...
    __hash__: None  # type: ignore[assignment]
    def _repr_html_(self) -> str: ...


class Sweep(Sequence[Measurement]):
    """Measurements of one sweep() (or sleepacc.load), with host facts."""
    measurements: list[Measurement]
    host: dict[str, Any]
    started: Optional[str]
    finished: Optional[str]
    settings: dict[str, Any]
    def __init__(self, measurements: Iterable[Measurement] = ..., *,
                 host: Optional[Mapping[str, Any]] = ..., started: Optional[str] = ...,
                 finished: Optional[str] = ...,
                 settings: Optional[Mapping[str, Any]] = ...) -> None: ...
    @overload
    def __getitem__(self, i: int) -> Measurement: ...
    @overload
    def __getitem__(self, i: slice) -> list[Measurement]: ...
    def __len__(self) -> int: ...
    def __eq__(self, other: object) -> bool: ...
    __hash__: None  # type: ignore[assignment]
    def _repr_html_(self) -> str: ...
    def to_records(self) -> list[dict[str, Any]]: ...
    def to_frame(self, samples: bool = ...) -> pd.DataFrame: ...
    def to_dict(self) -> dict[str, Any]: ...
    @classmethod
    def from_dict(cls, d: Mapping[str, Any], where: str = ...) -> Sweep: ...
    def save(self, path: Union[str, os.PathLike[str]]) -> None: ...
    def table(self, style: str = ...) -> str: ...


def load(path: Union[str, os.PathLike[str]]) -> Sweep: ...


def measure(method: str, duration: Seconds, *, n: Optional[int] = ...,
            budget: Optional[Seconds] = ..., mode: str = ..., warmup: int = ...,
            keep_samples: bool = ..., slack: Optional[int] = ...,
            policy: Optional[str] = ..., priority: Optional[int] = ...,
            cpu: Optional[int] = ..., lock_memory: bool = ...,
            margin: Optional[Seconds] = ...,
            dma_latency: Optional[int] = ...) -> Measurement: ...


class SweepPoint(NamedTuple):
    method: str
    duration_ns: int


def sweep_host() -> dict[str, Any]: ...
def sweep_points(methods: Union[None, str, Iterable[str]] = ...,
                 durations: Optional[Iterable[Seconds]] = ...,
                 mode: str = ...) -> list[SweepPoint]: ...
def iter_sweep(methods: Union[None, str, Iterable[str]] = ...,
               durations: Optional[Iterable[Seconds]] = ..., *,
               budget: Optional[Seconds] = ..., mode: str = ...,
               progress: Optional[Callable[[int, int, str, float], Any]] = ...,
               skip: Iterable[tuple[str, int]] = ...,
               per_point: Optional[Callable[[Sequence[SweepPoint]], Mapping[str, Any]]] = ...,
               **environment: Any) -> Iterator[Measurement]: ...
def sweep(methods: Union[None, str, Iterable[str]] = ...,
          durations: Optional[Iterable[Seconds]] = ..., *,
          budget: Optional[Seconds] = ..., mode: str = ...,
          progress: Optional[Callable[[int, int, str, float], Any]] = ...,
          **environment: Any) -> Sweep: ...
def system_info() -> dict[str, Any]: ...
def clock_info() -> dict[str, dict[str, Optional[int]]]: ...
