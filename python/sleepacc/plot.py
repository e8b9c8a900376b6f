"""Plots of sleep accuracy.  matplotlib is imported only when a plot is drawn.

Every function returns a ``matplotlib.figure.Figure`` built without pyplot
(no global state, no GUI backend; PNG/SVG come from the Agg/SVG canvases),
and saves it when given ``save="file.png"`` (or ".svg", or a list of paths).

    error_vs_requested(sweep)   error against requested duration, log-log,
                                median line and p1-p99 band per method
    lateness_cdf(sweep)         distribution of the error, one curve per method
    cost_pareto(sweep)          accuracy against CPU cost, Pareto front marked
    model_fit(model, data)      the fitted model drawn over the measurements
    history(points)             one quantity per machine across the years
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
from .records import flatten, stat_error

__all__ = ["error_vs_requested", "lateness_cdf", "cost_pareto", "model_fit", "history",
           "compare_hosts", "save_figure", "series"]

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


def _log_duration_axis(axis):
    """Duration labels (ns/µs/ms) on a log axis; 1-2-5 steps when the data
    span less than two decades, so a narrow range still gets labels."""
    from matplotlib.ticker import LogLocator, NullFormatter
    lo, hi = sorted(axis.get_data_interval())
    narrow = lo > 0 and math.isfinite(lo) and math.isfinite(hi) and hi / lo < 100
    subs = (1.0, 2.0, 5.0) if narrow else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs, numticks=15))
    axis.set_major_formatter(_duration_formatter())
    axis.set_minor_formatter(NullFormatter())


_BASELINE = ("syscall", "clock")


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
    errors, or None), group.  Errors follow sleepacc.records.error_ns."""
    out = []
    items = list(data) if not isinstance(data, (str, os.PathLike)) else None
    if items is None or (items and isinstance(items[0], dict) and "stats" not in items[0]):
        from .model import to_records
        for r in to_records(data):
            req = float(r["requested_ns"])
            act = r.get("actual_ns")
            if act is None:
                continue
            med = float(act) - req
            lo = r.get("p1_ns", r.get("min_ns"))
            hi = r.get("p99_ns")
            out.append({"method": str(r["method"]), "mode": r.get("mode") or "relative",
                        "requested_ns": req, "n": r.get("n"), "median": med,
                        "p1": float(lo) - req if lo is not None else med,
                        "p99": float(hi) - req if hi is not None else med,
                        "max": float(r["max_ns"]) - req if r.get("max_ns") is not None else med,
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
                errs = arr - (arr.dtype.type(0) if row["mode"] == "periodic"
                              else float(row["requested_ns"]))
        p1 = err("p1") if row.get("p1_ns") is not None else err("min")
        out.append({"method": row["method"], "mode": row["mode"],
                    "requested_ns": float(row["requested_ns"]), "n": row["n"],
                    "median": err("median"), "p1": p1, "p99": err("p99"), "max": err("max"),
                    "cpu_percent": row["cpu_percent"],
                    "cpu_ns_per_call": row["cpu_ns_per_call"], "errors": errs,
                    "group": None})
    return out


def _methods_in(rows, methods):
    names = list(dict.fromkeys(r["method"] for r in rows))
    if methods is None:
        # baselines do not sleep: their "error" is minus the request
        names = [n for n in names if n not in _BASELINE] or names
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


# ---------------------------------------------------------------------------
# plots
# ---------------------------------------------------------------------------

def error_vs_requested(data, methods=None, *, title: Optional[str] = None, save=None):
    """Error (actual - requested) against the requested duration, log-log:
    per method the median as a line and the p1-p99 range as a band (p1 from
    the samples, or the minimum when samples were not kept).  A request of
    0 cannot sit on a log axis and is left out (the table shows it)."""
    rows = [r for r in series(data) if r["requested_ns"] > 0]
    names = _methods_in(rows, methods)
    colors = _colors(names)
    fig = _figure()
    ax = fig.add_subplot()
    for name in names:
        rs = sorted((r for r in rows if r["method"] == name), key=lambda r: r["requested_ns"])
        x = np.array([r["requested_ns"] for r in rs])
        med = np.maximum([r["median"] for r in rs], _FLOOR)
        lo = np.maximum([r["p1"] for r in rs], _FLOOR)
        hi = np.maximum([r["p99"] for r in rs], _FLOOR)
        ax.fill_between(x, lo, hi, color=colors[name], alpha=0.18, linewidth=0)
        ax.plot(x, med, marker="o", ms=3.5, color=colors[name], label=name)
    ax.set_xscale("log")
    ax.set_yscale("log")
    _log_duration_axis(ax.xaxis)
    _log_duration_axis(ax.yaxis)
    ax.set_xlabel("requested duration")
    ax.set_ylabel("error (actual − requested)")
    ax.set_title(title or "Sleep error: median line, p1–p99 band")
    ax.grid(True, which="major", alpha=0.3)
    _legend(ax, len(names))
    return save_figure(fig, save)


def lateness_cdf(data, methods=None, *, requested: Optional[float] = None,
                 title: Optional[str] = None, save=None):
    """Cumulative distribution of the error of each method at one requested
    duration (seconds; default: the most common non-zero request).  Uses
    every sample where samples were kept, else the quantiles as steps."""
    rows = series(data)
    reqs = [r["requested_ns"] for r in rows if r["requested_ns"] > 0] or \
        [r["requested_ns"] for r in rows]
    if not reqs:
        raise ValueError("nothing to plot: no measurements")
    if requested is None:
        vals, counts = np.unique(reqs, return_counts=True)
        target = float(vals[np.argmax(counts)]) if len(vals) else 0.0
        # prefer 1 ms when present: the duration everyone asks about
        if 1e6 in vals:
            target = 1e6
    else:
        target = float(round(requested * 1e9))
    rows = [r for r in rows if r["requested_ns"] == target]
    if not rows:
        raise ValueError(f"no measurement at {format_ns(target)}")
    names = _methods_in(rows, methods)
    colors = _colors(names)
    fig = _figure()
    ax = fig.add_subplot()
    for name in names:
        for r in (r for r in rows if r["method"] == name):
            if r["errors"] is not None:
                e = np.sort(np.maximum(r["errors"], _FLOOR))
                y = np.arange(1, e.size + 1) / e.size
                ax.step(e, y, where="post", color=colors[name], label=f"{name} (n={e.size})")
            else:
                qs = [(0.01, r["p1"]), (0.5, r["median"]), (0.99, r["p99"]), (1.0, r["max"])]
                ax.step([max(v, _FLOOR) for _, v in qs], [q for q, _ in qs], where="post",
                        color=colors[name], label=f"{name} (quantiles)")
    ax.set_xscale("log")
    _log_duration_axis(ax.xaxis)
    ax.set_ylim(0, 1.0)
    ax.set_xlabel(f"error (actual − requested) at {format_ns(target)}")
    ax.set_ylabel("share of sleeps with at most this error")
    ax.set_title(title or f"Distribution of the error of a {format_ns(target)} sleep")
    ax.grid(True, alpha=0.3)
    _legend(ax, len(names)) if len(names) > 8 else ax.legend(fontsize=8, loc="lower right",
                                                             framealpha=0.85)
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


def cost_pareto(data, methods=None, *, requested: Optional[float] = None,
                quantile: str = "p99", title: Optional[str] = None, save=None):
    """Accuracy (the `quantile` error, p99 by default, or "median") against
    CPU cost (CPU time per sleep as a share of the wall time) for each method
    at one requested duration.  The Pareto front - methods no other beats on
    both - is joined by a line."""
    if quantile not in ("p99", "median", "max"):
        raise ValueError("quantile must be 'p99', 'median' or 'max'")
    rows = [r for r in series(data) if r.get("cpu_percent") is not None
            and r["cpu_percent"] >= 0]
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
    colors = _colors(names)
    pts = []
    for name in names:
        r = next(r for r in rows if r["method"] == name)
        pts.append((max(float(r["cpu_percent"]), 0.01), max(float(r[quantile]), _FLOOR), name))
    fig = _figure()
    ax = fig.add_subplot()
    for c, e, name in pts:
        ax.scatter([c], [e], color=colors[name], s=40, zorder=3)
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
    ax.legend(fontsize=8, loc="upper right", framealpha=0.85)
    _place_labels(fig, ax, [(name, c, e) for c, e, name in pts])
    fig.pareto_front = [pts[i][2] for i in front]  # type: ignore[attr-defined]
    return save_figure(fig, save)


def model_fit(model, data=None, methods=None, *, title: Optional[str] = None, save=None):
    """The fitted model (lines) over the measured medians (dots): error
    against requested duration, log-log, one colour per method.  `model` is
    a Model from sleepacc.model.fit; `data` (optional) adds the measured
    p1-p99 band; without it the points the model was fitted on are drawn."""
    names = list(model.params)
    if methods is not None:
        methods = [methods] if isinstance(methods, str) else list(methods)
        unknown = [m for m in methods if m not in names]
        if unknown:
            raise ValueError(f"no fit for {', '.join(unknown)}; fitted: {', '.join(names)}")
        names = [m for m in names if m in methods]
    names = [n for n in names if model.params[n].sleeps] or names
    colors = _colors(names)
    fig = _figure()
    ax = fig.add_subplot()
    rows = series(data) if data is not None else []
    lo_all = []
    for name in names:
        p = model.params[name]
        req = np.asarray(p.requested_ns, dtype=float)
        meas = np.asarray(p.measured_ns, dtype=float)
        keep = req > 0
        lo_all.extend(req[keep])
        ax.scatter(req[keep], np.maximum(meas[keep] - req[keep], _FLOOR), color=colors[name],
                   s=22, zorder=3)
        band = sorted((r for r in rows if r["method"] == name and r["requested_ns"] > 0),
                      key=lambda r: r["requested_ns"])
        if band:
            ax.fill_between([r["requested_ns"] for r in band],
                            [max(r["p1"], _FLOOR) for r in band],
                            [max(r["p99"], _FLOOR) for r in band],
                            color=colors[name], alpha=0.15, linewidth=0)
    if not lo_all:
        raise ValueError("nothing to plot: the model has no measured points")
    grid = np.unique(np.concatenate([np.geomspace(max(min(lo_all), 1.0), max(lo_all) * 1.2, 3000),
                                     np.asarray(lo_all)]))
    for name in names:
        p = model.params[name]
        pred = np.maximum(np.asarray(p.predict_ns(grid)) - grid, _FLOOR)
        ax.plot(grid, pred, color=colors[name], linewidth=1.3, label=f"{name}: {_brief(p)}")
    ax.set_xscale("log")
    ax.set_yscale("log")
    _log_duration_axis(ax.xaxis)
    _log_duration_axis(ax.yaxis)
    ax.set_xlabel("requested duration")
    ax.set_ylabel("error (actual − requested)")
    ax.set_title(title or ("Model (lines) over measured medians (dots)"
                           + (f"\n{model.label}" if getattr(model, "label", "") else "")))
    ax.grid(True, which="major", alpha=0.3)
    _legend(ax, len(names))
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
    """Annotate points without overlapping text: each label tries right of
    its marker, then left, stepping down a line at a time (display space,
    after the layout is fixed by one draw)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    if not hasattr(fig.canvas, "get_renderer"):
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    from matplotlib.transforms import Bbox
    boxes = []
    for _text, x, y in labels:   # the markers themselves are obstacles too
        px, py = ax.transData.transform((x, y))
        boxes.append(Bbox([[px - 5, py - 5], [px + 5, py + 5]]))
    for text, x, y in labels:
        ann = None
        for attempt in range(16):
            right = attempt % 2 == 0
            dy = -3 - 10 * (attempt // 2)
            if ann is None:
                ann = ax.annotate(text, (x, y), textcoords="offset points", xytext=(7, dy),
                                  fontsize=7, ha="left")
            else:
                ann.set_position((7 if right else -7, dy))
                ann.set_ha("left" if right else "right")
            box = ann.get_window_extent(renderer=fig.canvas.get_renderer())
            if not any(box.overlaps(b) for b in boxes):
                break
        if attempt >= 2:  # moved away from its marker: draw a thin leader line
            pos, ha = ann.xyann, ann.get_ha()
            ann.remove()
            ann = ax.annotate(text, (x, y), textcoords="offset points", xytext=pos,
                              fontsize=7, ha=ha,
                              arrowprops=dict(arrowstyle="-", color="0.6", lw=0.5))
        boxes.append(ann.get_window_extent(renderer=fig.canvas.get_renderer()))


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
    for name, sw in zip(names, sweeps):
        rs = sorted((r for r in series(sw) if r["method"] == method and r["requested_ns"] > 0),
                    key=lambda r: r["requested_ns"])
        if not rs:
            continue
        x = np.array([r["requested_ns"] for r in rs])
        if len(rs) > 1:
            left.fill_between(x, np.maximum([r["p1"] for r in rs], _FLOOR),
                              np.maximum([r["p99"] for r in rs], _FLOOR),
                              color=colors[name], alpha=0.15, linewidth=0)
        left.plot(x, np.maximum([r["median"] for r in rs], _FLOOR), marker="o", ms=3.5,
                  color=colors[name], label=name)
    left.set_xscale("log")
    left.set_yscale("log")
    _log_duration_axis(left.xaxis)
    _log_duration_axis(left.yaxis)
    left.axvline(target, color="0.5", linestyle=":", linewidth=1)
    left.set_xlabel("requested duration")
    left.set_ylabel("error (actual − requested)")
    left.set_title(f"{method}: median line, p1–p99 band", fontsize=10)
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
        few = tail and r["n"] < 100
        right.barh(y, v, color=colors[r["label"]], hatch="//" if few else None,
                   edgecolor="0.3" if few else None)
        right.annotate(f" {format_ns(r[key], 4)}  n={r['n']}" + (" (n<100)" if few else ""),
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
