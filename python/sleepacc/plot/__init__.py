"""Plots of sleep accuracy.  matplotlib is imported only when a plot is drawn.

Every function returns a ``matplotlib.figure.Figure`` built without pyplot
(no global state, no GUI backend; PNG/SVG come from the Agg/SVG canvases),
and saves it when given ``save="file.png"`` (or ".svg", or a list of paths).

    error_vs_requested(sweep)   error against requested duration, log-log, one
                                panel per method family (from the registry),
                                median line and p1-p99 band per method
    lateness_cdf(sweep)         distribution of the error at one duration, tail on a
                                log scale, one panel per method family
    cost_pareto(sweep)          accuracy against CPU cost, Pareto front marked
    histogram(measurement)      the errors of one measurement
    over_time(measurement)      each sample's error against its start time
    model_fit(model, data)      the fitted model drawn over the measurements
    history(points)             one quantity per machine across the years
    flent_overlay(flent, mon)   flent's latency and sleepacc monitor's timer
                                lateness on one time axis
    compare_hosts(sweeps)       hosts side by side: error against duration and
                                the ranked statistic at one duration

Axes are labelled in ns/µs/ms, never in bare seconds.
"""

from __future__ import annotations

# The package's rooms: axes (figures, axes, legends, saving: no data), data
# (families, series, quantile levels: no drawing), sweep (figures of
# measurements), hosts (the model's fit, history, hosts side by side), flent
# (flent's latency beside monitor's lateness).  Every public name is here.
from .axes import PathLike, save_figure
from .data import FAMILIES, method_family, series
from .flent import flent_overlay, read_flent
from .hosts import compare_hosts, history, model_fit
from .sweep import cost_pareto, error_vs_requested, histogram, lateness_cdf, over_time

__all__ = ["error_vs_requested", "lateness_cdf", "cost_pareto", "histogram", "over_time",
           "model_fit",
           "history", "compare_hosts", "flent_overlay", "read_flent", "save_figure", "series",
           "method_family", "FAMILIES"]
