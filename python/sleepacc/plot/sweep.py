"""Figures of measurements: error against requested duration, the error's
distribution at one duration, one measurement's histogram and its errors over
time, and accuracy against CPU cost with its Pareto front.
"""
from __future__ import annotations

import math
from typing import List, Optional, Tuple

import numpy as np

from .._units import format_ns
from .axes import (_FLOOR, _MARKERS, _band, _figure, _finish_panel, _footnote, _legend_room,
                   _log_duration_axis, _n_label, _panel_colors, _panels, _place_labels,
                   _signed_duration_formatter, _sup_labels, save_figure)
from .data import (FAMILIES, _FAMILY_LABEL, _FEW, _QUANTILE_LEVEL, _by_family, _methods_in,
                   _registry, method_family, series)


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
    lo_stats: set = set()
    centers: set = set()
    few_any = False
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


def _draw_survival(ax, errors, name: str, color) -> int:
    """Every sample's error as a step curve of the share of samples above it
    (one point at 1/n for a single sample); returns n."""
    e = np.sort(np.maximum(errors, _FLOOR))
    n = e.size
    surv = 1.0 - np.arange(1, n + 1) / n    # share of samples above e[k]
    keep = surv > 0
    if n == 1:  # no tail: the curve is its one point, at 1/n
        surv, keep = np.ones(1), np.ones(1, dtype=bool)
    ax.step(e[keep], surv[keep], where="post", color=color, lw=1.2,
            marker="o" if n == 1 else None, ms=3.5, label=f"{name} (n={n:,})")
    return n


def _draw_quantile_survival(ax, r: dict, name: str, color, marker) -> Optional[int]:
    """A point without samples: the core's order statistics as points joined
    by a dashed line, levels finer than 1/n left out; returns n (0 unknown),
    or None when no level could be drawn."""
    n = r["n"] or 0
    pts = [(max(v, _FLOOR), 1.0 - _QUANTILE_LEVEL[q])
           for q, v in r["quantiles"].items()
           if v is not None and 0 < 1.0 - _QUANTILE_LEVEL[q]
           and (n == 0 or 1.0 - _QUANTILE_LEVEL[q] >= 1.0 / n)]
    if not pts:
        return None
    # in order of the level; a quantile function never falls, so a
    # histogram's rounding (streamed runs) cannot zig-zag the curve
    pts.sort(key=lambda p: -p[1])
    xs = np.maximum.accumulate([p[0] for p in pts])
    ax.plot(xs, [p[1] for p in pts], linestyle="--", marker=marker, ms=3.5, lw=1,
            color=color, label=f"{name} (n={n:,}, quantiles)")
    return n


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
                if r["errors"] is not None and r["errors"].size:
                    n = _draw_survival(ax, r["errors"], name, colors[name])
                else:
                    n = _draw_quantile_survival(ax, r, name, colors[name],
                                                _MARKERS[i % len(_MARKERS)])
                    if n is None:
                        continue
                    from_quantiles = True
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


def _pareto(points: List[Tuple[float, float, str]]):
    """Indices of points not dominated (lower cost and lower error)."""
    front = []
    for i, (c, e, _) in enumerate(points):
        dominated = any((c2 <= c and e2 <= e) and (c2 < c or e2 < e)
                        for j, (c2, e2, _) in enumerate(points) if j != i)
        if not dominated:
            front.append(i)
    return sorted(front, key=lambda i: points[i][0])


def _pareto_notes(quantile: str, few: list, n_of: dict) -> list:
    """The footnote's sentences of a Pareto plot: which points are hollow (a
    p99 of fewer than _FEW samples) and how few samples each filled p99
    rests on; empty when neither applies."""
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
    return notes


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
    _place_labels(fig, ax, [(name, c, e) for c, e, name in pts])
    notes = _pareto_notes(quantile, few, {r["method"]: r.get("n") for r in rows})
    if notes:
        _footnote(fig, " ".join(notes), lines=1)
    fig.pareto_front = [pts[i][2] for i in front]  # type: ignore[attr-defined]
    fig.few_samples = [name for name, _ in few]  # type: ignore[attr-defined]
    return save_figure(fig, save)
