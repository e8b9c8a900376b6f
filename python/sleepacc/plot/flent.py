"""flent beside sleepacc: a flent data file read, and its latency drawn on one
time axis with ``sleepacc monitor``'s timer lateness.
"""
from __future__ import annotations

import math
import os
from typing import Optional

import numpy as np

from .._units import format_ns
from .axes import (_FLOOR, _MARKERS, _figure, _footnote, _log_duration_axis, _panel_colors,
                   save_figure)
from .data import _FEW


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
    t0: Optional[float] = None
    if meta.get("T0"):
        start = datetime.datetime.fromisoformat(str(meta["T0"]).replace("Z", "+00:00"))
        t0 = start.replace(tzinfo=start.tzinfo or datetime.timezone.utc).timestamp()
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
    from ..records import read_monitor
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
