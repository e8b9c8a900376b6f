"""Figures across fits, years and hosts: the fitted model over the
measurements, one quantity per machine across the years, and hosts side by
side.
"""
from __future__ import annotations

from typing import Iterable, Optional, Sequence

import numpy as np

from .._units import format_ns
from .axes import (_FLOOR, _MARKERS, _band, _colors, _figure, _finish_panel, _legend, _legend_room,
                   _log_duration_axis, _panel_colors, _panels, _place_labels, _sup_labels,
                   save_figure)
from .data import _FEW, _MS_NS, _by_family, series


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
    from ..fleet import fleet
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
    for name, path, sw in zip(names, paths, sweeps):
        use = order[path]["method"]      # a one-method file (irtt's table) uses its own
        rs = _host_errors(sw, use)
        if rs:
            _draw_host_errors(left, rs, name if use == method else f"{name} ({use})",
                              colors[name])
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
    _draw_ranking(right, table, stat, colors)
    fig.suptitle(title or f"Hosts side by side: {method}({format_ns(target)})")
    return save_figure(fig, save)


def _host_errors(sw, method: str) -> list:
    """(requested_ns, median error, p1 error, p99 error) of each point of
    `method` in sw, by requested duration: the mean where a record has no
    median (irtt's table), the minimum where it has no p1 (an older record)."""
    from ..fleet import point_error
    rs = []
    for m in sw:
        if m.method != method or m.requested_ns <= 0:
            continue
        d = {"stats": dict(m.stats), "mode": m.mode, "requested_ns": m.requested_ns}
        mid = point_error(d, "median")
        mid = point_error(d, "mean") if mid is None else mid
        if mid is None:
            continue
        lo, hi = point_error(d, "p1"), point_error(d, "p99")
        if lo is None:
            lo = point_error(d, "min")
        rs.append((m.requested_ns, mid, lo, hi))
    return sorted(rs)


def _draw_host_errors(ax, rs: list, label: str, color) -> None:
    """One host's error line on ax: the median (dashed where a point has no
    band), its p1-p99 band, or an error bar for a single duration."""
    x = np.array([r[0] for r in rs], dtype=float)
    ymid = np.maximum([float(r[1]) for r in rs], _FLOOR)
    banded = all(r[2] is not None and r[3] is not None for r in rs)
    if banded:
        ylo = np.maximum([float(r[2] or 0.0) for r in rs], _FLOOR)   # banded: none is None
        yhi = np.maximum([float(r[3] or 0.0) for r in rs], _FLOOR)
        if len(rs) > 1:
            ax.fill_between(x, ylo, yhi, color=color, alpha=0.15, linewidth=0)
        else:     # one duration (an exporter snapshot): the range as an error bar
            ax.errorbar(x, ymid, yerr=[ymid - ylo, yhi - ymid], color=color,
                        capsize=3, linewidth=1)
    ax.plot(x, ymid, marker="o", ms=3.5, color=color, label=label,
            linestyle="-" if banded else "--")


def _draw_ranking(ax, table: dict, stat: str, colors: dict) -> None:
    """The hosts of a fleet table as bars of their `stat` error, best on
    top, each labelled with its value and n; a tail statistic from fewer
    than 100 samples is hatched."""
    method, target, key = table["method"], table["requested_ns"], f"{stat}_ns"
    ranked = [r for r in table["hosts"] if r[key] is not None]
    if not ranked:
        raise ValueError(f"no host has {method} at {format_ns(target)}")
    ys = np.arange(len(ranked))[::-1]
    vals = [max(float(r[key]), _FLOOR) for r in ranked]
    tail = stat in ("p90", "p99", "p999", "max")
    for y, r, v in zip(ys, ranked, vals):
        few = tail and r["n"] is not None and r["n"] < 100
        ax.barh(y, v, color=colors[r["label"]], hatch="//" if few else None,
                edgecolor="0.3" if few else None)
        n = "?" if r["n"] is None else r["n"]
        ax.annotate(f" {format_ns(r[key], 4)}  n={n}" + (" (n<100)" if few else ""),
                    (v, y), va="center", fontsize=8)
    ax.set_yticks(ys, [f"{r['rank']}. {r['label']}" for r in ranked], fontsize=8)
    ax.set_xscale("log")
    _log_duration_axis(ax.xaxis)
    ax.set_xlim(min(vals) / 2, max(vals) * 8)
    ax.set_xlabel(f"{stat} error at {format_ns(target)}")
    ax.set_title(f"ranked by the {stat}, best on top", fontsize=10)
    ax.grid(True, axis="x", which="major", alpha=0.3)
