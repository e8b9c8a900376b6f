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

import math
import os
from typing import Iterable, List, Optional, Sequence, Tuple, Union

import numpy as np

from ._units import format_ns
from . import records
from .records import flatten, origin_ns, stat_error

__all__ = ["error_vs_requested", "lateness_cdf", "cost_pareto", "histogram", "over_time",
           "model_fit",
           "history", "compare_hosts", "flent_overlay", "read_flent", "save_figure", "series",
           "method_family", "FAMILIES"]

PathLike = Union[str, os.PathLike]


# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------

def _figure(width=8.0, height=5.0):
    try:
        from matplotlib.figure import Figure
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("sleepacc.plot needs matplotlib: pip install 'sleepacc[plot]' "
                          "or pip install matplotlib") from e
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig


def save_figure(fig, save: Union[None, PathLike, Sequence[PathLike]]):
    """Save fig to each path (format from the suffix: .png, .svg, .pdf)."""
    if save is None:
        return fig
    paths = [save] if isinstance(save, (str, os.PathLike)) else list(save)
    for p in paths:
        fig.savefig(os.fspath(p), dpi=120)
    return fig


def _duration_formatter():
    from matplotlib.ticker import FuncFormatter

    def fmt(v, _pos):
        if v <= 0:
            return "0"
        return format_ns(v, digits=3)
    return FuncFormatter(fmt)


def _log_duration_axis(axis, sparse: bool = False):
    """Duration labels (ns/µs/ms) on a log axis; 1-2-5 steps when the data
    span less than three decades, so a narrow range still gets labels.
    sparse: ticks at every decade but labels only at 1 ns, 1 µs, 1 ms, 1 s
    (a narrow panel spanning nine decades)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    axis.axes.autoscale_view()
    lo, hi = sorted(axis.get_view_interval())
    narrow = lo > 0 and math.isfinite(lo) and math.isfinite(hi) and hi / lo < 1000
    subs = (1.0, 2.0, 5.0) if narrow else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs, numticks=15))
    if sparse and not narrow:
        def fmt(v, _pos):
            k = round(math.log10(v)) if v > 0 else 1
            return format_ns(v, digits=3) if k % 3 == 0 and abs(math.log10(v) - k) < 1e-6 \
                else ""
        axis.set_major_formatter(FuncFormatter(fmt))
    else:
        axis.set_major_formatter(_duration_formatter())
    axis.set_minor_formatter(NullFormatter())


# ---------------------------------------------------------------------------
# Method families, from the registry (family, granularity_ns, honours_slack)
# ---------------------------------------------------------------------------

#: (key, label, what it means) in drawing order.
FAMILIES = (
    ("slack", "slack-bound kernel sleeps", "the kernel adds the thread's timer slack"),
    ("ms", "ms-unit APIs", "the timeout is whole ms, rounded up"),
    ("timer", "slack-free timers", "timer slack does not apply"),
    ("spin", "spin-based", "the CPU spins to the deadline"),
    ("floor", "floors", "no sleep: the cost of a call (measured at 0)"),
    ("other", "other", "not in this registry"),
)
_FAMILY_LABEL = {k: label for k, label, _ in FAMILIES}
_MS_NS = 1_000_000
_FEW = 100   # fewer samples than this: a p99 is an upper order statistic, not a percentile


def method_family(name: str, registry=None) -> str:
    """The family key of a method, derived from its registry row: "floor"
    (family baseline), "spin" (spin or hybrid), "ms" (a kernel sleep whose
    timeout is in ms or coarser), "timer" (a kernel sleep timer slack does
    not delay) or "slack" (the other kernel sleeps); "other" for a name the
    registry does not have (a seed's or irtt's timer)."""
    if registry is None:
        registry = _registry()
    row = registry.get(name)
    if row is None:
        return "other"
    if row.family == "baseline":
        return "floor"
    if row.family in ("spin", "hybrid"):
        return "spin"
    if row.granularity_ns >= _MS_NS:
        return "ms"
    if row.honours_slack == "no":
        return "timer"
    return "slack"


def _registry():
    """The core's method registry, {name: row} (family, granularity_ns, honours_slack)."""
    from types import SimpleNamespace
    from . import _core
    return {m["name"]: SimpleNamespace(**m) for m in _core.methods()}


def _by_family(names: Sequence[str]) -> List[Tuple[str, List[str]]]:
    """[(family key, names)] in FAMILIES order, names in the given order."""
    reg = _registry()
    groups: dict = {}
    for n in names:
        groups.setdefault(method_family(n, reg), []).append(n)
    return [(k, groups[k]) for k, _l, _w in FAMILIES if k in groups]


def _panels(count: int, width: float = 4.3, height: float = 3.3, sharey: bool = True):
    """A figure with `count` axes in a grid (1, 2 or 3 columns), shared
    axes; unused cells removed.  Returns (fig, [axes])."""
    cols = 1 if count == 1 else 2 if count in (2, 4) else 3
    rows = -(-count // cols)
    if count == 1:   # one panel: the usual single-figure size
        width, height = 8.0, 4.4
    fig = _figure(width * cols, height * rows + 0.9)
    grid = fig.subplots(rows, cols, sharex=True, sharey=sharey, squeeze=False)
    axes = [a for row in grid for a in row]
    for ax in axes[count:]:
        ax.remove()
    return fig, axes[:count]


def _footnote(fig, text: str, lines: int = 2) -> None:
    """A caption under the axes (what the marks mean), `lines` lines tall,
    wrapped to the figure's width."""
    import textwrap
    width_in = fig.get_figwidth()
    wrapped = "\n".join(textwrap.wrap(text, width=int(width_in * 17)))
    lines = max(lines, wrapped.count("\n") + 1)
    height = (lines * 0.13 + 0.08) / fig.get_figheight()
    fig.text(0.01, 0.008, wrapped, fontsize=7, color="0.25", ha="left", va="bottom")
    layout = fig.get_layout_engine()
    if layout is not None and hasattr(layout, "set"):
        layout.set(rect=(0, height, 1, 1 - height))
    return height


def _legend_room(groups) -> float:
    """How far above the data (a factor on a log axis) the shared y axis
    must reach so that the tallest panel legend sits above the data."""
    rows = max(len(ns) if len(ns) <= 4 else -(-len(ns) // 2) for _k, ns in groups)
    return 10 ** (0.5 + 0.33 * rows)


def _finish_panel(ax, family: str, entries: int, loc: str, one_column: int = 4) -> None:
    """A family panel's title, grid and legend (two columns past `one_column`)."""
    ax.set_title(_FAMILY_LABEL[family], fontsize=9.5)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=6, loc=loc, framealpha=0.85, ncol=1 if entries <= one_column else 2,
              columnspacing=0.8, handlelength=1.6)


def _sup_labels(fig, axes, xlabel: str, ylabel: str, note: str) -> None:
    """The shared axis labels of a panel figure and its footnote: x labels
    under the bottom panels, y labels left of the first column."""
    _footnote(fig, note)
    for ax in axes:
        ss = ax.get_subplotspec()
        if ss is None:
            continue
        if ss.is_last_row() or not any(
                o.get_subplotspec() is not None and o.get_subplotspec().rowspan.start
                == ss.rowspan.stop and o.get_subplotspec().colspan == ss.colspan for o in axes):
            ax.set_xlabel(xlabel, fontsize=8.5)
        if ss.is_first_col():
            ax.set_ylabel(ylabel, fontsize=8.5)


_MARKERS = "osD^v<>ph*X"


def _legend(ax, n):
    """Inside when few entries, outside on the right when many."""
    if n > 6:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), framealpha=0.85)
    else:
        ax.legend(fontsize=8, loc="best", framealpha=0.85)


def _colors(names: Sequence[str]):
    from matplotlib import colormaps
    cmap = colormaps["tab10" if len(names) <= 10 else "tab20"]
    return {n: cmap(i % cmap.N) for i, n in enumerate(names)}


def series(data) -> List[dict]:
    """Per measurement: method, requested_ns, error quantiles (ns) and cost.

    Accepts a Sweep, Measurements, point dicts, or tidy records (then only
    the quantiles the records carry).  Keys: method, mode, requested_ns, n,
    median, p1 (the core's p1, or the minimum when the record has none),
    p99, max, cpu_percent, cpu_ns_per_call, errors (array of the samples'
    errors, or None), undersleeps (the core's count; measurements only),
    group.  Errors follow sleepacc.records.error_ns."""
    out = []
    items = list(data) if not isinstance(data, (str, os.PathLike)) else None
    if items is None or (items and isinstance(items[0], dict) and "stats" not in items[0]):
        for r in records.to_records(data):
            req = float(r["requested_ns"])
            act = r.get("actual_ns")
            if act is None:
                continue
            med = float(act) - req
            # the actual durations of the row's statistics (the one error rule)
            has_p1 = records.actual_of(r, "p1") is not None
            lo = records.actual_of(r, "p1" if has_p1 else "min")
            hi = records.actual_of(r, "p99")
            top = records.actual_of(r, "max")
            out.append({"method": str(r["method"]), "mode": r.get("mode") or "relative",
                        "requested_ns": req, "n": r.get("n"), "median": med,
                        "center": "median", "quantiles": {},
                        "lo_stat": "p1" if has_p1 else "min",
                        "p1": float(lo) - req if lo is not None else med,
                        "p99": float(hi) - req if hi is not None else med,
                        "max": float(top) - req if top is not None else med,
                        "cpu_percent": r.get("cpu_percent"),
                        "cpu_ns_per_call": r.get("cpu_ns_per_call"), "errors": None,
                        "group": r.get("host")})
        return out
    for m in items:
        row = flatten(m)

        def err(stat, row=row):
            v = stat_error(row, stat)
            return None if v is None else float(v)
        samples = m.get("samples") if isinstance(m, dict) else m.samples
        errs = None
        if samples is not None:
            arr = np.asarray(samples, dtype=np.float64)
            if arr.size:
                errs = arr - float(origin_ns(row["mode"], row["requested_ns"]))
        lo_stat = "p1" if row.get("p1_ns") is not None else "min"
        center = "median" if row.get("median_ns") is not None else "mean"  # irtt: a mean only
        out.append({"method": row["method"], "mode": row["mode"],
                    "requested_ns": float(row["requested_ns"]), "n": row["n"],
                    "median": err(center), "center": center,
                    "p1": err(lo_stat), "lo_stat": lo_stat,
                    "p99": err("p99"), "max": err("max"),
                    "quantiles": {q: err(q) for q in _QUANTILES
                                  if row.get(f"{q}_ns") is not None},
                    "cpu_percent": row["cpu_percent"],
                    "cpu_ns_per_call": row["cpu_ns_per_call"], "errors": errs,
                    "undersleeps": row.get("undersleeps"), "group": None})
    return out


def _quantile_levels() -> dict:
    from . import _core
    levels = {k: _core.stats_level(k) for k in _core.stats_fields}
    return {k: q for k, q in sorted(levels.items(), key=lambda kv: kv[1]) if q >= 0}


#: Order statistics of the core drawn by the distribution plots when the
#: samples were not kept, with the share of samples at or below each (the
#: core's levels, sleepacc_stats_level), in increasing order.
_QUANTILE_LEVEL = _quantile_levels()
_QUANTILES = tuple(_QUANTILE_LEVEL)


def _methods_in(rows, methods):
    names = list(dict.fromkeys(r["method"] for r in rows))
    if methods is None:
        # floors do not sleep: their "error" is minus the request
        reg = _registry()
        names = [n for n in names if method_family(n, reg) != "floor"] or names
    if methods is not None:
        if isinstance(methods, str):
            methods = [methods]
        unknown = [m for m in methods if m not in names]
        if unknown:
            raise ValueError(f"no data for {', '.join(unknown)}; have {', '.join(names)}")
        names = [m for m in names if m in methods]
    if not names:
        raise ValueError("nothing to plot: no measurements")
    return names


_FLOOR = 1.0  # ns: errors below this are drawn at 1 ns on log axes


def _band(ax, x, lo, hi, where, color, alpha):
    """The lo-hi band over the points `where` is true: filled between
    neighbouring such points, and a point with no such neighbour (the only
    duration, or one between points of few samples) as a bar of the band's
    colour at its x, which fill_between alone leaves out (zero width)."""
    x, lo, hi = np.asarray(x, dtype=float), np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    where = np.asarray(where, dtype=bool)
    if len(x) > 1:
        ax.fill_between(x, lo, hi, where=where, color=color, alpha=alpha, linewidth=0)
    prev = np.concatenate([[False], where[:-1]])
    nxt = np.concatenate([where[1:], [False]])
    alone = where & ~prev & ~nxt
    if alone.any():
        ax.vlines(x[alone], lo[alone], hi[alone], color=color, alpha=min(1.0, 2 * alpha),
                  linewidth=5)


# ---------------------------------------------------------------------------
# plots
# ---------------------------------------------------------------------------

def _n_label(name: str, ns: Sequence) -> str:
    ns = [int(n) for n in ns if n is not None]
    if not ns:
        return name
    lo, hi = min(ns), max(ns)
    return f"{name} (n={lo:,})" if lo == hi else f"{name} (n={lo:,}–{hi:,})"


def _panel_colors(names: Sequence[str]):
    from matplotlib import colormaps
    cmap = colormaps["tab10"]
    return {n: cmap(i % 10) for i, n in enumerate(names)}


def _floor_lines(axes, rows) -> List[str]:
    """Dotted reference lines at the median cost of each floor method
    measured at 0 (the floor under any sleep); their names."""
    reg = _registry()
    drawn = []
    for r in rows:
        if method_family(r["method"], reg) != "floor" or r["requested_ns"] != 0 \
                or r["median"] is None or r["method"] in drawn:
            continue
        y = max(r["median"], _FLOOR)
        for ax in axes:
            ax.axhline(y, color="0.45", linestyle=":", linewidth=0.9, zorder=1)
            ax.annotate(f"{r['method']} floor {format_ns(r['median'], 2)}", (1.0, y),
                        xycoords=("axes fraction", "data"), xytext=(-3, 2),
                        textcoords="offset points", ha="right", va="bottom", fontsize=6.5,
                        color="0.35")
        drawn.append(r["method"])
    return drawn


def error_vs_requested(data, methods=None, *, title: Optional[str] = None, save=None):
    """Error (actual - requested) against the requested duration, log-log,
    one panel per method family (slack-bound kernel sleeps, ms-unit APIs,
    slack-free timers, spin-based; from the registry), shared axes.

    Per method: the median as a line with dots and the p1-p99 band (min-p99
    when the record has no p1), the band drawn only where a point has at
    least 100 samples; a p99 from fewer samples (an upper order statistic,
    close to the maximum) is an open triangle.  The legend gives each
    method's sample counts.  Floors (syscall, clock: measured at 0, which a
    log axis cannot show) are dotted reference lines in every panel."""
    all_rows = series(data)
    rows = [r for r in all_rows if r["requested_ns"] > 0 and r["median"] is not None]
    names = _methods_in(rows, methods)
    groups = [(k, ns) for k, ns in _by_family(names) if k != "floor"] or _by_family(names)
    fig, axes = _panels(len(groups))
    lo_stats, centers, few_any = set(), set(), False
    for ax, (fam, fnames) in zip(axes, groups):
        colors = _panel_colors(fnames)
        for i, name in enumerate(fnames):
            rs = sorted((r for r in rows if r["method"] == name), key=lambda r: r["requested_ns"])
            x = np.array([r["requested_ns"] for r in rs])
            med = np.maximum([r["median"] for r in rs], _FLOOR)
            ns = [r["n"] for r in rs]
            well = np.array([n is not None and n >= _FEW for n in ns])
            c = colors[name]
            has_band = [r["p1"] is not None and r["p99"] is not None for r in rs]
            if any(has_band):
                lo = np.maximum([r["p1"] if r["p1"] is not None else r["median"] for r in rs],
                                _FLOOR)
                hi = np.maximum([r["p99"] if r["p99"] is not None else r["median"] for r in rs],
                                _FLOOR)
                _band(ax, x, lo, hi, well & np.array(has_band), c, 0.16)
                few = ~well & np.array(has_band)
                if few.any():
                    few_any = True
                    ax.scatter(x[few], hi[few], marker="^", s=22, facecolors="none",
                               edgecolors=[c], linewidths=0.9, zorder=3)
                lo_stats.update(r["lo_stat"] for r in rs)
            centers.update(r["center"] for r in rs)
            ax.plot(x, med, marker=_MARKERS[i % len(_MARKERS)], ms=3.2, lw=1.2, color=c,
                    label=_n_label(name, ns))
        _finish_panel(ax, fam, len(fnames), "upper left")
    floors = _floor_lines(axes, all_rows) if methods is None else []
    ax0 = axes[0]
    ax0.set_xscale("log")
    ax0.set_yscale("log")
    _log_duration_axis(ax0.xaxis, sparse=len(axes) > 1)
    _log_duration_axis(ax0.yaxis)
    top = max([r["p99"] or r["median"] for r in rows if r["method"] in names] or [1.0])
    ax0.set_ylim(top=max(top, _FLOOR) * _legend_room(groups))
    center = "median" if centers <= {"median"} else "/".join(sorted(centers))
    lo = "p1" if lo_stats <= {"p1"} else "min" if lo_stats <= {"min"} else "p1 (or min)"
    fig.suptitle(title or f"Sleep error by method family: {center} line, {lo}–p99 band",
                 fontsize=11)
    note = [f"Lines: {center} error; band: {lo}–p99 where a point has ≥ {_FEW} samples."]
    if few_any:
        note.append(f"△ p99 of fewer than {_FEW} samples (close to the maximum, not a percentile).")
    if floors:
        note.append(f"Dotted: {', '.join(floors)} (no sleep, measured at 0).")
    note.append("Errors below 1 ns are drawn at 1 ns.")
    _sup_labels(fig, axes, "requested duration", "error (actual − requested)", " ".join(note))
    return save_figure(fig, save)


def _target_request(rows, requested) -> float:
    reqs = [r["requested_ns"] for r in rows if r["requested_ns"] > 0] or \
        [r["requested_ns"] for r in rows]
    if not reqs:
        raise ValueError("nothing to plot: no measurements")
    if requested is not None:
        return float(round(requested * 1e9))
    vals, counts = np.unique(reqs, return_counts=True)
    if 1e6 in vals:          # the duration everyone asks about
        return 1e6
    return float(vals[np.argmax(counts)])


def lateness_cdf(data, methods=None, *, requested: Optional[float] = None,
                 title: Optional[str] = None, save=None):
    """The distribution of the error at one requested duration (seconds;
    default 1 ms, else the most common request), one panel per method
    family, with the tail on a log scale: the share of sleeps whose error
    exceeds x (1 - CDF, log y; the median sits at 0.5, p99 at 0.01), on a
    log error axis.  Every sample is drawn where samples were kept; the
    curve then ends at 1/n, so n is visible.  Without samples the core's
    order statistics are drawn as points joined by a dashed line.  Levels
    finer than 1/n (p99 with fewer than 100 samples) are not drawn."""
    rows = series(data)
    target = _target_request(rows, requested)
    rows = [r for r in rows if r["requested_ns"] == target]
    if not rows:
        raise ValueError(f"no measurement at {format_ns(target)}")
    names = _methods_in(rows, methods)
    groups = _by_family(names)
    fig, axes = _panels(len(groups), height=3.1)
    lowest = 1.0
    from_quantiles = False
    for ax, (fam, fnames) in zip(axes, groups):
        colors = _panel_colors(fnames)
        for i, name in enumerate(fnames):
            for r in (r for r in rows if r["method"] == name):
                c = colors[name]
                if r["errors"] is not None and r["errors"].size:
                    e = np.sort(np.maximum(r["errors"], _FLOOR))
                    n = e.size
                    surv = 1.0 - np.arange(1, n + 1) / n    # share of samples above e[k]
                    keep = surv > 0
                    if n == 1:  # no tail: the curve is its one point, at 1/n
                        surv, keep = np.ones(1), np.ones(1, dtype=bool)
                    ax.step(e[keep], surv[keep], where="post", color=c, lw=1.2,
                            marker="o" if n == 1 else None, ms=3.5, label=f"{name} (n={n:,})")
                    lowest = min(lowest, 1.0 / n)
                else:
                    n = r["n"] or 0
                    pts = [(max(v, _FLOOR), 1.0 - _QUANTILE_LEVEL[q])
                           for q, v in r["quantiles"].items()
                           if v is not None and 0 < 1.0 - _QUANTILE_LEVEL[q]
                           and (n == 0 or 1.0 - _QUANTILE_LEVEL[q] >= 1.0 / n)]
                    if not pts:
                        continue
                    # in order of the level; a quantile function never falls, so a
                    # histogram's rounding (streamed runs) cannot zig-zag the curve
                    pts.sort(key=lambda p: -p[1])
                    xs = np.maximum.accumulate([p[0] for p in pts])
                    pts = list(zip(xs, (p[1] for p in pts)))
                    from_quantiles = True
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], linestyle="--",
                            marker=_MARKERS[i % len(_MARKERS)], ms=3.5, lw=1, color=c,
                            label=f"{name} (n={n:,}, quantiles)")
                    if n:
                        lowest = min(lowest, 1.0 / n)
        _finish_panel(ax, fam, len(fnames), "lower left", one_column=5)
    ax0 = axes[0]
    ax0.set_xscale("log")
    ax0.set_yscale("log")
    _log_duration_axis(ax0.xaxis, sparse=False)
    bottom = 10 ** math.floor(math.log10(max(lowest, 1e-7)))
    ax0.set_ylim(bottom * 0.7, 1.5)
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    levels = [lv for lv in (1.0, 0.5, 0.1, 0.01, 0.001, 1e-4, 1e-5, 1e-6) if lv >= bottom]
    names_at = {0.5: "p50", 0.1: "p90", 0.01: "p99", 0.001: "p99.9"}
    for ax in axes:
        ax.yaxis.set_major_locator(FixedLocator(levels))
        ax.yaxis.set_minor_locator(NullLocator())
        ax.yaxis.set_major_formatter(FuncFormatter(
            lambda v, _p: f"{v:g}" + (f"  {names_at[v]}" if v in names_at else "")))
        for lv in (0.5, 0.01):
            if lv >= bottom:
                ax.axhline(lv, color="0.6", lw=0.6, zorder=1)
    fig.suptitle(title or f"Distribution of the error of a {format_ns(target)} sleep, "
                          "tail on a log scale", fontsize=11)
    note = ("Share of sleeps whose error exceeds x (1 − CDF): the median is where a curve "
            "crosses 0.5, p99 where it crosses 0.01; a curve of n samples ends at 1/n, so a "
            f"p99 needs n ≥ {_FEW}.")
    if from_quantiles:
        note += (" Dashed with markers: the core's order statistics (the samples were not "
                 "kept; from a streamed run they come from the core's histogram, each within "
                 "about 1% of the actual duration); levels finer than 1/n are left out.")
    note += " Errors below 1 ns are drawn at 1 ns."
    _sup_labels(fig, axes, f"error (actual − requested) at {format_ns(target)}",
                "share of sleeps with a larger error", note)
    return save_figure(fig, save)


def histogram(measurement, *, bins: Optional[int] = None, title: Optional[str] = None,
              save=None):
    """Histogram of the errors of one measurement (a Measurement, or a point
    dict with samples): counts on a log scale so the tail shows, on a log
    error axis when the errors are positive and span more than 1.5
    decades (log-spaced bins), else linear.  The median, p99 (when n >= 100)
    and the maximum are marked; the title gives the method, the request and
    n.  Needs the samples (``keep_samples=True``; ``sweep --samples``)."""
    (row,) = series([measurement])
    errs = row["errors"]
    if errs is None or errs.size == 0:
        raise ValueError(f"{row['method']} at {format_ns(row['requested_ns'])} kept no samples: "
                         "measure with keep_samples=True (sleepacc sweep --samples)")
    n = errs.size
    lo, hi = float(errs.min()), float(errs.max())
    log_x = lo > 0 and hi / lo > 10 ** 1.5
    if bins is None:
        bins = int(min(80, max(10, 2 * round(n ** (1 / 3)))))
    edges = np.geomspace(lo, hi * 1.0001, bins + 1) if log_x else \
        np.linspace(lo, hi if hi > lo else lo + 1, bins + 1)
    counts, edges = np.histogram(errs, bins=edges)
    fig = _figure(8.0, 4.6)
    ax = fig.add_subplot()
    ax.stairs(counts, edges, fill=True, color="tab:blue", alpha=0.35)
    ax.stairs(counts, edges, color="tab:blue", lw=1.0)
    if log_x:
        ax.set_xscale("log")
        _log_duration_axis(ax.xaxis)
    else:
        ax.xaxis.set_major_formatter(_signed_duration_formatter())
    ax.set_yscale("log")
    ax.set_ylim(0.7, max(counts.max(), 1) * 2.5)
    from matplotlib.ticker import FuncFormatter
    ax.yaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:,.0f}" if v >= 1 else ""))
    marks = [("median", row["median"], "-")]
    if n >= _FEW and row["p99"] is not None:
        marks.append(("p99", row["p99"], "--"))
    marks.append(("max", row["max"], ":"))
    for i, (label, v, ls) in enumerate(marks):
        if v is None:
            continue
        ax.axvline(v, color="0.15", linestyle=ls, lw=1)
        # staggered down the axes: marks close together keep readable labels
        ax.annotate(f"{label} {format_ns(v, 3)}", (v, 1.0 - 0.3 * i),
                    xycoords=("data", "axes fraction"),
                    xytext=(3, -3), textcoords="offset points", ha="left", va="top",
                    fontsize=7.5, rotation=90,
                    bbox=dict(boxstyle="square,pad=0.15", fc="white", ec="none", alpha=0.8))
    what = "lateness" if row["mode"] == "periodic" else "error (actual − requested)"
    ax.set_xlabel(what)
    ax.set_ylabel("sleeps per bin (log)")
    ax.set_title(title or f"{row['method']}({format_ns(row['requested_ns'])}): {what} of "
                          f"n={n:,} sleeps", fontsize=10.5)
    ax.grid(True, which="major", alpha=0.3)
    note = f"{bins} {'log-spaced' if log_x else 'equal'} bins."
    if n < _FEW:
        note += f" No p99 mark: fewer than {_FEW} samples."
    under = row.get("undersleeps") or 0     # the core's count, by its threshold
    if under:
        note += f" {under} undersleeps (error < 0)."
    _footnote(fig, note, lines=1)
    return save_figure(fig, save)


def over_time(measurement, *, title: Optional[str] = None, save=None):
    """The error of each sample of one measurement against when its sleep
    started (``Measurement.starts``: seconds since the run's measured part
    began), log y: drifts, periodic disturbances (a tick, a timer of another
    process) and bursts show up as patterns in time.  The median is a line.
    Needs the samples and their start times (``keep_samples=True``)."""
    starts = measurement.get("starts") if isinstance(measurement, dict) else \
        getattr(measurement, "starts", None)
    (row,) = series([measurement])
    errs = row["errors"]
    if errs is None or errs.size == 0 or starts is None or len(starts) != errs.size:
        raise ValueError(f"{row['method']} at {format_ns(row['requested_ns'])} has no samples "
                         "with start times: measure with keep_samples=True")
    t = np.asarray(starts, dtype=np.float64) / 1e9
    fig = _figure(9.0, 4.4)
    ax = fig.add_subplot()
    ax.scatter(t, np.maximum(errs, _FLOOR), s=4, color="tab:blue", alpha=0.6, linewidths=0)
    if row["median"] is not None:
        ax.axhline(max(row["median"], _FLOOR), color="0.2", lw=1)
    ax.set_yscale("log")
    _log_duration_axis(ax.yaxis)
    what = "lateness" if row["mode"] == "periodic" else "error (actual − requested)"
    ax.set_ylabel(what)
    ax.set_xlabel("start of the sleep (s since the run began)")
    med = "" if row["median"] is None else f", median {format_ns(row['median'], 3)} (line)"
    ax.set_title(title or f"{row['method']}({format_ns(row['requested_ns'])}): {what} over time, "
                          f"n={errs.size:,} samples (dots){med}", fontsize=10.5)
    ax.grid(True, which="major", alpha=0.3)
    return save_figure(fig, save)


def _signed_duration_formatter():
    from matplotlib.ticker import FuncFormatter

    def fmt(v, _pos):
        if v == 0:
            return "0"
        return ("−" if v < 0 else "") + format_ns(abs(v), digits=3)
    return FuncFormatter(fmt)


def _pareto(points: List[Tuple[float, float, str]]):
    """Indices of points not dominated (lower cost and lower error)."""
    front = []
    for i, (c, e, _) in enumerate(points):
        dominated = any((c2 <= c and e2 <= e) and (c2 < c or e2 < e)
                        for j, (c2, e2, _) in enumerate(points) if j != i)
        if not dominated:
            front.append(i)
    return sorted(front, key=lambda i: points[i][0])


def cost_pareto(data, methods=None, *, requested: Optional[float] = None,
                quantile: str = "p99", title: Optional[str] = None, save=None):
    """Accuracy (the `quantile` error, p99 by default, or "median"/"max")
    against CPU cost (CPU time per sleep as a share of the wall time) for
    each method at one requested duration, one colour and marker shape per
    method family.  The Pareto front - methods no other beats on both - is
    joined by a dashed line.

    A p99 (or p99.9) computed from fewer than 100 samples is an upper order
    statistic, close to the maximum: such points are drawn hollow, labelled
    with their n, and the footnote says so (``fig.few_samples`` lists them)."""
    if quantile not in ("p99", "median", "max"):
        raise ValueError("quantile must be 'p99', 'median' or 'max'")
    rows = [r for r in series(data) if r.get("cpu_percent") is not None
            and r["cpu_percent"] >= 0 and r.get(quantile) is not None]
    if not rows:
        raise ValueError("nothing to plot: no measurement has a CPU figure")
    reqs = sorted({r["requested_ns"] for r in rows})
    if requested is None:
        target = 1e6 if 1e6 in reqs else reqs[len(reqs) // 2]
    else:
        target = float(round(requested * 1e9))
    rows = [r for r in rows if r["requested_ns"] == target]
    if not rows:
        raise ValueError(f"no measurement at {format_ns(target)}")
    names = _methods_in(rows, methods)
    reg = _registry()
    fam_of = {n: method_family(n, reg) for n in names}
    from matplotlib import colormaps
    fam_keys = [k for k, _l, _w in FAMILIES]
    cmap = colormaps["tab10"]
    fam_color = {k: cmap(i) for i, k in enumerate(fam_keys)}
    fam_marker = dict(zip(fam_keys, "osD^vP"))
    pts, few = [], []
    for name in names:
        r = next(r for r in rows if r["method"] == name)
        n = r.get("n")
        thin = quantile == "p99" and (n is None or n < _FEW)
        pts.append((max(float(r["cpu_percent"]), 0.01), max(float(r[quantile]), _FLOOR), name))
        if thin:
            few.append((name, n))
    thin_names = {n for n, _ in few}
    fig = _figure(10.0, 5.6)
    ax = fig.add_subplot()
    seen = set()
    for c, e, name in pts:
        fam = fam_of[name]
        col = fam_color[fam]
        label = _FAMILY_LABEL[fam] if fam not in seen else None
        seen.add(fam)
        ax.scatter([c], [e], s=42, zorder=3, marker=fam_marker[fam], label=label,
                   facecolors="none" if name in thin_names else [col], edgecolors=[col],
                   linewidths=1.2)
    front = _pareto(pts)
    ax.plot([pts[i][0] for i in front], [pts[i][1] for i in front], color="0.3",
            linestyle="--", linewidth=1, zorder=2, label="Pareto front")
    ax.set_xscale("log")
    ax.set_yscale("log")
    _log_duration_axis(ax.yaxis)
    from matplotlib.ticker import FuncFormatter
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _p: f"{v:g}%"))
    ax.set_xlabel("CPU time while sleeping (% of one CPU)")
    ax.set_ylabel(f"{quantile} error (actual − requested)")
    ax.set_title(title or f"Accuracy against CPU cost, {format_ns(target)} sleeps")
    ax.grid(True, which="major", alpha=0.3)
    # outside the axes: a legend inside hides the points in its corner
    ax.legend(fontsize=7.5, loc="upper left", bbox_to_anchor=(1.01, 1.0), framealpha=0.85)
    n_of = {r["method"]: r.get("n") for r in rows}
    _place_labels(fig, ax, [(name, c, e) for c, e, name in pts])
    notes = []
    if few:
        counts = sorted({n for _m, n in few if n is not None})
        span = (f"{counts[0]}" if len(counts) == 1 else f"{counts[0]}–{counts[-1]}") \
            if counts else "unknown"
        notes.append(f"Hollow: a {quantile} of fewer than {_FEW} samples (n = {span}): an upper "
                     "order statistic close to the maximum, not a percentile.")
    if quantile == "p99":
        tail = sorted(n // 100 for n in n_of.values() if n is not None and n >= _FEW)
        if tail and tail[0] < 10:
            ks = f"{tail[0]}" if tail[0] == tail[-1] else f"{tail[0]}–{tail[-1]}"
            what = "largest sample" if ks == "1" else f"{ks} largest samples"
            notes.append(f"Each filled p99 rests on the {what} of its run (n/100, n = "
                         f"{min(n_of.values(), key=lambda v: v or 0)}–"
                         f"{max(n_of.values(), key=lambda v: v or 0)}): a rough ranking.")
    if notes:
        notes.append("Measure longer (a larger budget) to rank the tails.")
        _footnote(fig, " ".join(notes), lines=1)
    fig.pareto_front = [pts[i][2] for i in front]  # type: ignore[attr-defined]
    fig.few_samples = [name for name, _ in few]  # type: ignore[attr-defined]
    return save_figure(fig, save)


def model_fit(model, data=None, methods=None, *, title: Optional[str] = None, save=None):
    """The fitted model (lines) over the measured medians (dots): error
    against requested duration, log-log, one panel per method family.
    `model` is a Model from sleepacc.model.fit; `data` (optional) adds the
    measured p1-p99 band (where a point has at least 100 samples).  A
    method whose timeout is whole units of 1 ms or more is drawn at whole
    units only (between them its error saws from 0 to one unit)."""
    names = list(model.params)
    if methods is not None:
        methods = [methods] if isinstance(methods, str) else list(methods)
        unknown = [m for m in methods if m not in names]
        if unknown:
            raise ValueError(f"no fit for {', '.join(unknown)}; fitted: {', '.join(names)}")
        names = [m for m in names if m in methods]
    names = [n for n in names if model.params[n].sleeps] or names
    rows = series(data) if data is not None else []
    lo_all = [float(r) for n in names for r in model.params[n].requested_ns if r > 0]
    if not lo_all:
        raise ValueError("nothing to plot: the model has no measured points")
    grid = np.unique(np.concatenate([np.geomspace(max(min(lo_all), 1.0), max(lo_all) * 1.2,
                                                  600), np.asarray(lo_all)]))
    groups = [(k, ns) for k, ns in _by_family(names) if k != "floor"] or _by_family(names)
    fig, axes = _panels(len(groups), width=5.6)   # the fit legends are long
    whole_units = []
    for ax, (fam, fnames) in zip(axes, groups):
        colors = _panel_colors(fnames)
        for i, name in enumerate(fnames):
            p = model.params[name]
            c = colors[name]
            req = np.asarray(p.requested_ns, dtype=float)
            meas = np.asarray(p.measured_ns, dtype=float)
            keep = req > 0
            ax.scatter(req[keep], np.maximum(meas[keep] - req[keep], _FLOOR), color=c, s=16,
                       marker=_MARKERS[i % len(_MARKERS)], zorder=3)
            band = sorted((r for r in rows if r["method"] == name and r["requested_ns"] > 0
                           and r["p1"] is not None and r["p99"] is not None
                           and (r["n"] or 0) >= _FEW), key=lambda r: r["requested_ns"])
            if band:
                _band(ax, [r["requested_ns"] for r in band],
                      [max(r["p1"], _FLOOR) for r in band],
                      [max(r["p99"], _FLOOR) for r in band], [True] * len(band), c, 0.12)
            g = float(p.granularity_ns or 1)
            x = grid
            if g >= _MS_NS:
                x = np.unique(np.concatenate([np.ceil(grid / g) * g, req[keep]]))
                whole_units.append(name)
            pred = np.maximum(np.asarray(p.predict_ns(x)) - x, _FLOOR)
            ax.plot(x, pred, color=c, linewidth=1.2, label=f"{name}: {_brief(p)}")
        _finish_panel(ax, fam, len(fnames), "upper left")
    ax0 = axes[0]
    ax0.set_xscale("log")
    ax0.set_yscale("log")
    _log_duration_axis(ax0.xaxis, sparse=len(axes) > 1)
    _log_duration_axis(ax0.yaxis)
    top = max(max(np.asarray(model.params[n].measured_ns, dtype=float)
                  - np.asarray(model.params[n].requested_ns, dtype=float), default=1.0)
              for n in names)
    ax0.set_ylim(top=max(top, _FLOOR) * _legend_room(groups))
    fig.suptitle(title or ("Model (lines) over measured medians (dots)"
                           + (f": {model.label}" if getattr(model, "label", "") else "")),
                 fontsize=11)
    note = "Dots: measured median error; lines: the fitted model"
    lo = "p1" if all(r["lo_stat"] == "p1" for r in rows) else "min"
    note += f"; band: measured {lo}–p99 where n ≥ {_FEW}." if rows else "."
    if whole_units:
        note += f" {', '.join(whole_units)}: drawn at whole timeout units."
    _sup_labels(fig, axes, "requested duration", "error (actual − requested)", note)
    return save_figure(fig, save)


def _brief(p) -> str:
    """A short legend text for a fitted method."""
    parts = []
    if p.granularity_ns >= 1000:
        parts.append(f"{format_ns(p.granularity_ns).split()[-1]} unit")
    if p.tick_ns:
        parts.append(f"{format_ns(p.tick_ns)} tick" + (f" +{p.extra_ticks}" if p.extra_ticks else ""))
    if abs(p.constant_ns) >= 500:
        parts.append(f"{'+' if p.constant_ns >= 0 else '−'}{format_ns(abs(p.constant_ns), 2)}")
    if p.proportional:
        parts.append(f"+{p.proportional * 100:.1f}%")
    if p.idle_exit_ns:
        parts.append(f"idle ≤{format_ns(p.idle_exit_ns, 2)}")
    return ", ".join(parts) or "as asked"


def history(points: Iterable[dict], *, quantity: str = "oversleep of a 1 ms sleep",
            title: Optional[str] = None, save=None):
    """One value per machine against the year it was measured, log y.

    points: dicts with label, year, value_ns and optionally kind (a legend
    group such as "tick kernel", "timer slack", "this host")."""
    pts = list(points)
    if not pts:
        raise ValueError("nothing to plot: no points")
    kinds = list(dict.fromkeys(p.get("kind", "") for p in pts))
    colors = _colors(kinds)
    markers = dict(zip(kinds, "osD^v<>ph*"))
    fig = _figure(9, 5.5)
    ax = fig.add_subplot()
    seen = set()
    order = sorted(pts, key=lambda q: (q["year"], -q["value_ns"]))
    for p in order:
        k = p.get("kind", "")
        ax.scatter([p["year"]], [max(p["value_ns"], _FLOOR)], color=colors[k],
                   marker=markers[k], s=55, zorder=3, label=k if k not in seen else None)
        seen.add(k)
    ax.set_yscale("log")
    _log_duration_axis(ax.yaxis)
    years = [p["year"] for p in pts]
    ax.set_xlim(min(years) - 6, max(years) + 6)
    ax.set_xlabel("year measured")
    ax.set_ylabel(quantity)
    ax.set_title(title or f"{quantity[0].upper()}{quantity[1:]}, machine by machine")
    ax.grid(True, which="major", alpha=0.3)
    if any(kinds):
        ax.legend(fontsize=8, loc="upper right", framealpha=0.85)
    _place_labels(fig, ax, [(p["label"], p["year"], max(p["value_ns"], _FLOOR)) for p in order])
    return save_figure(fig, save)


def _place_labels(fig, ax, labels):
    """Annotate points without overlapping text or leaving the axes: each
    label tries positions around its marker at growing distances (display
    space, after the layout is fixed by one draw); a label moved away from
    its marker gets a thin leader line."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    if not hasattr(fig.canvas, "get_renderer"):
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    from matplotlib.transforms import Bbox
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer=renderer)
    boxes = []
    for _text, x, y in labels:   # the markers themselves are obstacles too
        px, py = ax.transData.transform((x, y))
        boxes.append(Bbox([[px - 5, py - 5], [px + 5, py + 5]]))
    directions = [(1, -0.4), (-1, -0.4), (1, 0.6), (-1, 0.6), (0, -1.4), (0, 1.2),
                  (1, -1.4), (-1, -1.4), (1, 1.4), (-1, 1.4)]
    for text, x, y in labels:
        ann = ax.annotate(text, (x, y), textcoords="offset points", xytext=(7, -3),
                          fontsize=7, ha="left", va="center")
        best = None
        for step in range(8):
            dist = 7 + 9 * step
            for dx, dy in directions:
                ha = "left" if dx > 0 else "right" if dx < 0 else "center"
                ann.set_position((dx * dist, dy * max(dist, 9)))
                ann.set_ha(ha)
                box = ann.get_window_extent(renderer=renderer)
                inside = (box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0
                          and box.y1 <= frame.y1)
                if inside and not any(box.overlaps(b) for b in boxes):
                    best = (ann.xyann, ha, step)
                    break
            if best:
                break
        if best is None:   # nowhere free: keep the first place inside the axes
            best = ((7, -3), "left", 0)
        pos, ha, step = best
        ann.remove()
        arrow = dict(arrowstyle="-", color="0.4", lw=0.6) if step >= 1 else None
        ann = ax.annotate(text, (x, y), textcoords="offset points", xytext=pos, fontsize=7,
                          ha=ha, va="center", arrowprops=arrow)
        boxes.append(ann.get_window_extent(renderer=renderer))


def compare_hosts(sweeps, labels: Optional[Sequence[str]] = None, *,
                  paths: Optional[Sequence[str]] = None, method: Optional[str] = None,
                  requested: Optional[float] = None, stat: str = "median",
                  title: Optional[str] = None, save=None):
    """Hosts side by side (one per Sweep, e.g. sleepacc.load of each file).

    Left: the error of `method` against the requested duration, one colour
    per host (median line, p1-p99 band).  Right: the hosts ranked by the
    `stat` error at one requested duration (seconds; default 1 ms where
    every host has it), each bar labelled with its value and n; bars of a
    tail statistic from fewer than 100 samples are hatched."""
    from .fleet import fleet
    sweeps = list(sweeps)
    if len(sweeps) < 1:
        raise ValueError("nothing to plot: no hosts")
    paths = list(paths) if paths is not None else [f"file {i + 1}" for i in range(len(sweeps))]
    table = fleet(sweeps, paths, stat=stat, method=method,
                  requested_ns=None if requested is None else int(round(requested * 1e9)),
                  labels=labels, causes=False)
    method, target = table["method"], table["requested_ns"]
    order = {r["path"]: r for r in table["hosts"]}
    names = [order[p]["label"] for p in paths]
    colors = _colors(names)
    fig = _figure(11, 4.8)
    left, right = fig.subplots(1, 2, width_ratios=[1.3, 1])
    from .fleet import error_ns
    for name, path, sw in zip(names, paths, sweeps):
        use = order[path]["method"]      # a one-method file (irtt's table) uses its own
        rs = []
        for m in sw:
            if m.method != use or m.requested_ns <= 0:
                continue
            d = {"stats": dict(m.stats), "mode": m.mode, "requested_ns": m.requested_ns}
            mid = error_ns(d, "median")
            mid = error_ns(d, "mean") if mid is None else mid   # irtt's table: means only
            if mid is None:
                continue
            # the core's nearest-rank p1 and p99 (a record from before p1: the minimum)
            lo, hi = error_ns(d, "p1"), error_ns(d, "p99")
            if lo is None:
                lo = error_ns(d, "min")
            rs.append((m.requested_ns, mid, lo, hi))
        if not rs:
            continue
        rs.sort()
        x = np.array([r[0] for r in rs], dtype=float)
        mid = np.maximum([r[1] for r in rs], _FLOOR)
        label = name if use == method else f"{name} ({use})"
        banded = all(r[2] is not None and r[3] is not None for r in rs)
        if banded:
            lo = np.maximum([r[2] for r in rs], _FLOOR)
            hi = np.maximum([r[3] for r in rs], _FLOOR)
            if len(rs) > 1:
                left.fill_between(x, lo, hi, color=colors[name], alpha=0.15, linewidth=0)
            else:     # one duration (an exporter snapshot): the range as an error bar
                left.errorbar(x, mid, yerr=[mid - lo, hi - mid], color=colors[name],
                              capsize=3, linewidth=1)
        left.plot(x, mid, marker="o", ms=3.5, color=colors[name], label=label,
                  linestyle="-" if banded else "--")
    left.set_xscale("log")
    left.set_yscale("log")
    _log_duration_axis(left.xaxis)
    _log_duration_axis(left.yaxis)
    left.axvline(target, color="0.5", linestyle=":", linewidth=1)
    left.set_xlabel("requested duration")
    left.set_ylabel("error (actual − requested)")
    left.set_title(f"{method}: median (dashed: mean) line, band from p1 (min in records "
                   "without p1) to p99", fontsize=10)
    left.grid(True, which="major", alpha=0.3)
    _legend(left, len(names))
    key = f"{stat}_ns"
    ranked = [r for r in table["hosts"] if r[key] is not None]
    if not ranked:
        raise ValueError(f"no host has {method} at {format_ns(target)}")
    ys = np.arange(len(ranked))[::-1]
    vals = [max(float(r[key]), _FLOOR) for r in ranked]
    tail = stat in ("p90", "p99", "p999", "max")
    for y, r, v in zip(ys, ranked, vals):
        few = tail and r["n"] is not None and r["n"] < 100
        right.barh(y, v, color=colors[r["label"]], hatch="//" if few else None,
                   edgecolor="0.3" if few else None)
        n = "?" if r["n"] is None else r["n"]
        right.annotate(f" {format_ns(r[key], 4)}  n={n}" + (" (n<100)" if few else ""),
                       (v, y), va="center", fontsize=8)
    right.set_yticks(ys, [f"{r['rank']}. {r['label']}" for r in ranked], fontsize=8)
    right.set_xscale("log")
    _log_duration_axis(right.xaxis)
    right.set_xlim(min(vals) / 2, max(vals) * 8)
    right.set_xlabel(f"{stat} error at {format_ns(target)}")
    right.set_title(f"ranked by the {stat}, best on top", fontsize=10)
    right.grid(True, axis="x", which="major", alpha=0.3)
    fig.suptitle(title or f"Hosts side by side: {method}({format_ns(target)})")
    return save_figure(fig, save)


# ---------------------------------------------------------------------------
# flent beside the monitor
# ---------------------------------------------------------------------------

def read_flent(path) -> dict:
    """A flent data file (.flent.gz, .flent or .json): its metadata and, per
    data set, [(Unix time s, value)] from ``raw_values`` (each point's own
    ``t``), or from ``x_values`` + metadata ``T0`` when there are no raw
    values; values None (lost packets) are dropped."""
    import datetime
    import gzip
    import json as _json
    path = os.fspath(path)
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
            doc = _json.load(f)
    except (OSError, ValueError, EOFError) as exc:
        raise ValueError(f"{path}: not a flent data file ({exc})") from None
    if not isinstance(doc, dict) or "results" not in doc or "metadata" not in doc:
        raise ValueError(f"{path}: not a flent data file (no results/metadata)")
    meta = doc["metadata"]
    t0 = None
    if meta.get("T0"):
        t0 = datetime.datetime.fromisoformat(str(meta["T0"]).replace("Z", "+00:00"))
        t0 = t0.replace(tzinfo=t0.tzinfo or datetime.timezone.utc).timestamp()
    series_out = {}
    raw = doc.get("raw_values") or {}
    for name, values in doc["results"].items():
        pts = []
        if isinstance(raw.get(name), list) and raw[name] and isinstance(raw[name][0], dict):
            pts = [(float(p["t"]), float(p["val"])) for p in raw[name]
                   if p.get("t") is not None and p.get("val") is not None]
        elif t0 is not None:
            pts = [(t0 + float(x), float(v)) for x, v in zip(doc.get("x_values", []), values)
                   if v is not None]
        if pts:
            series_out[name] = pts
    if not series_out:
        raise ValueError(f"{path}: the flent file has no data points")
    return {"metadata": meta, "t0": t0 if t0 is not None else min(
        t for pts in series_out.values() for t, _ in pts), "series": series_out}


def _flent_unit_ns(name: str, meta) -> float:
    """ns per unit of a flent data set: its name says "(ms)" for latency."""
    units = {"ms": 1e6, "us": 1e3, "µs": 1e3, "s": 1e9, "ns": 1.0}
    for unit, scale in units.items():
        if f"({unit})" in name:
            return scale
    return 1e6    # flent's latency series are in ms


def flent_overlay(flent, monitor, *, title: Optional[str] = None, save=None):
    """One figure on one time axis: flent's latency series (top) and the
    timer lateness that ``sleepacc monitor -o FILE`` measured beside it
    (bottom: per report interval the median as a step, the p99 dashed, the
    maximum as dots).  Time is seconds since flent's T0; both panels use
    Unix time underneath (flent's raw ``t``, the monitor's ``t``).

    flent: a flent data file path (or :func:`read_flent`'s result);
    monitor: the monitor file's path or its lines (records.read_monitor)."""
    from .records import read_monitor
    fl = flent if isinstance(flent, dict) and "series" in flent else read_flent(flent)
    if isinstance(monitor, (str, os.PathLike)):
        with open(os.fspath(monitor), encoding="utf-8") as f:
            mon = read_monitor(f.read().splitlines(), os.fspath(monitor))
    else:
        mon = list(monitor)
    t0 = fl["t0"]
    fig = _figure(9.5, 6.2)
    top, bottom = fig.subplots(2, 1, sharex=True, height_ratios=[1, 1.15])
    colors = _panel_colors(list(fl["series"]))
    for i, (name, pts) in enumerate(fl["series"].items()):
        scale = _flent_unit_ns(name, fl["metadata"])
        x = np.array([t - t0 for t, _ in pts])
        y = np.maximum(np.array([v for _, v in pts]) * scale, _FLOOR)
        top.plot(x, y, marker=_MARKERS[i % len(_MARKERS)], ms=3, lw=1, color=colors[name],
                 label=f"{name} (n={len(pts)})")
    top.set_yscale("log")
    _log_duration_axis(top.yaxis)
    top.set_ylabel("flent latency")
    top.legend(fontsize=7, loc="upper right", framealpha=0.85)
    top.grid(True, which="major", alpha=0.3)
    method = mon[0].get("method", "?")
    interval = mon[0].get("interval_ns")
    thin = sum(1 for rec in mon if 0 < int(rec.get("count") or 0) < _FEW)
    for key, style, label in (("median_ns", "-", "median"), ("p99_ns", "--", "p99")):
        xs, ys = [], []
        for rec in mon:
            if rec.get(key) is None or (key == "p99_ns" and int(rec.get("count") or 0) < _FEW):
                continue   # a p99 of fewer than 100 wake-ups is the maximum: not drawn
            xs += [rec.get("t_start", rec["t"]) - t0, rec["t"] - t0, math.nan]
            ys += [max(rec[key], _FLOOR)] * 2 + [math.nan]
        if xs:
            bottom.plot(xs, ys, linestyle=style, color="tab:red" if key == "p99_ns"
                        else "tab:blue", lw=1.4, label=f"{label} of each report")
    mx = [(rec["t"] - t0, max(rec["max_ns"], _FLOOR)) for rec in mon
          if rec.get("max_ns") is not None]
    if mx:
        bottom.scatter([a for a, _ in mx], [b for _, b in mx], s=12, color="0.3", zorder=3,
                       label="max of each report")
    bottom.set_yscale("log")
    _log_duration_axis(bottom.yaxis)
    every = f" every {format_ns(interval)}" if interval else ""
    bottom.set_ylabel(f"timer lateness\n({method}{every})")
    bottom.legend(fontsize=7, loc="upper right", framealpha=0.85)
    bottom.grid(True, which="major", alpha=0.3)
    end = max([t for pts in fl["series"].values() for t, _ in pts])
    for ax in (top, bottom):
        ax.axvspan(0, end - t0, color="0.92", zorder=0)
    import datetime
    when = datetime.datetime.fromtimestamp(t0, datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S UTC")
    bottom.set_xlabel(f"time since flent's start (s; T0 = {when})")
    name = fl["metadata"].get("NAME", "flent")
    fig.suptitle(title or f"flent {name} and the timer lateness beside it, one time axis",
                 fontsize=11)
    n_wake = sum(int(rec.get("count") or 0) for rec in mon)
    note = (f"Grey: the flent run. Monitor: {len(mon)} reports, {n_wake:,} wake-ups; each "
            "step spans its report interval (t_start to t, Unix time).")
    if thin:
        note += (f" {thin} reports had fewer than {_FEW} wake-ups: no p99 drawn for them (it "
                 "would be their maximum); use a longer --report.")
    _footnote(fig, note, lines=1)
    return save_figure(fig, save)
