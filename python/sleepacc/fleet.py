"""Hosts side by side: one row per result file (``sleepacc compare``, ``plot --compare``).

A result file is anything :func:`sleepacc.load` reads: a ``sweep -o`` file, a
Lua ``save``, an exporter ``--snapshot``.  :func:`fleet` picks one method and
one requested duration that the files share, and gives per file the chosen
statistic of the error (actual - requested; the lateness itself for periodic
points and for the exporter's ``auto``), n, and the top cause the oversleep
model names from the file's own data (no live measurement), ranked best
first.  Values stay integer ns: nothing is rounded before it is printed.
"""
from __future__ import annotations

import math
import os
from collections import Counter
from typing import Any, Dict, List, Optional, Sequence

from sleepacc import records
from sleepacc._units import format_go as _go, format_ns

__all__ = ["fleet", "labels_for", "pick", "point_error", "error_ns", "top_cause", "STAT_FIELDS"]

REFERENCE_METHOD = "nanosleep"
REFERENCE_NS = 1_000_000


#: Statistics a fleet can be ranked by (the core's order statistics and
#: mean): records.STAT_FIELDS, named here too for the callers of this module.
STAT_FIELDS = records.STAT_FIELDS


def point_error(point: dict, stat: str) -> Optional[float]:
    """The error of one statistic of a point record, None without samples
    (n 0) or without that statistic (n None: irtt's table has the mean
    only): :func:`sleepacc.records.stat_error`, the one error rule."""
    if (point.get("stats") or {}).get("n") == 0:
        return None
    return records.stat_error(point, stat)


#: point_error's former name, kept for one release.
error_ns = point_error


def _has_data(m) -> bool:
    """A point with samples, or (irtt's table text) with n unknown but a mean."""
    return bool(m.n) or (m.n is None and m.stats.get("mean") is not None)


def labels_for(sweeps: Sequence[Any], paths: Sequence[str],
               labels: Optional[Sequence[str]] = None) -> List[str]:
    """Given labels, else the host name; files of the same host are told
    apart by their file name."""
    if labels is not None:
        if len(labels) != len(sweeps):
            raise ValueError(f"labels: {len(labels)} given for {len(sweeps)} files")
        out = [str(x) for x in labels]
        # a label names one host in the table and the plot: "" names none, a
        # repeated one two
        for i, x in enumerate(out):
            if not x.strip():
                raise ValueError(f"labels: label {i + 1} is empty")
            if x in out[:i]:
                raise ValueError(f"labels: {x!r} is given twice (a label names one file)")
        return out
    names = [str((sw.host or {}).get("hostname") or "?") for sw in sweeps]
    count = Counter(names)
    return [f"{n} ({os.path.basename(p)})" if count[n] > 1 else n
            for n, p in zip(names, paths)]


def pick(sweeps: Sequence[Any], method: Optional[str] = None,
         requested_ns: Optional[int] = None):
    """(method, requested_ns): given, or the reference (nanosleep, 1 ms)
    where every file has it, else what most files have.  (fleet() then lets
    a file with one method only, such as irtt's table, use its own.)"""
    per_file = [{(m.method, m.requested_ns) for m in sw if _has_data(m)} for sw in sweeps]
    methods = Counter(m for keys in per_file for m in {k[0] for k in keys})
    if method is None:
        common = [m for m in dict.fromkeys(k[0] for keys in per_file for k in keys)
                  if all(any(k[0] == m for k in keys) for keys in per_file)]
        if REFERENCE_METHOD in common:
            method = REFERENCE_METHOD
        elif common:
            method = common[0]
        elif methods:   # what most files have; the reference first, then file order
            order = list(dict.fromkeys(k[0] for keys in per_file for k in sorted(keys)))
            method = max(order, key=lambda m: (methods[m], m == REFERENCE_METHOD,
                                               -order.index(m)))
        else:
            raise ValueError("no measurements in these files")
    if method not in methods:
        raise ValueError(f"no file has the method {method!r}; they have "
                         + ", ".join(sorted(methods)) if methods else
                         f"no file has the method {method!r}: no file has measurements")
    if requested_ns is None:
        ds = [k[1] for keys in per_file for k in keys if k[0] == method]
        count = Counter(ds)
        best = max(count.values())       # in the most files that have the method
        cands = [d for d in count if count[d] == best]
        # 1 ms where it is, else the nearest to it (a ratio: 10 us and 100 ms are as far)
        requested_ns = min(cands, key=lambda d: abs(math.log(max(d, 1) / REFERENCE_NS)))
    return method, int(requested_ns)


def top_cause(sweep: Any, method: str, requested_ns: int) -> Optional[dict]:
    """The largest component the oversleep model finds for `method` at
    `requested_ns`, fitted on the file's own points of that method."""
    from sleepacc import model
    from sleepacc._api import Sweep
    pts = [m for m in sweep if m.method == method and _has_data(m)]
    if not pts:
        return None
    if all(m.n is None for m in pts):    # irtt's table: a mean per duration, no samples
        return {"cause": None, "id": None, "ns": None, "note": "- (means only)"}
    try:
        fitted = next(iter(model.fit(Sweep(pts, host=sweep.host,
                                           settings=sweep.settings)).values()))
        params = fitted.params.get(method)
        if params is None:
            parts = []
        elif hasattr(params, "_parts"):     # (cause id from model.CAUSES, label, ns)
            parts = params._parts(float(requested_ns))
        else:
            parts = [(None, label, ns) for label, ns in params.components_ns(requested_ns)]
    except Exception as exc:   # the model says why it cannot fit; the row stays
        return {"cause": None, "id": None, "ns": None, "note": f"model: {exc}"}
    parts = [p for p in parts if p[2] is not None and p[2] > 0]
    if not parts:
        return {"cause": "none", "id": None, "ns": 0.0, "note": None}
    cause, label, ns = max(parts, key=lambda p: p[2])
    return {"cause": label, "id": cause, "ns": float(ns), "note": None}


def fleet(sweeps: Sequence[Any], paths: Sequence[str], *, stat: str = "median",
          method: Optional[str] = None, requested_ns: Optional[int] = None,
          labels: Optional[Sequence[str]] = None, causes: bool = True) -> Dict[str, Any]:
    """One row per file: {"rank", "label", "hostname", "path", "kernel",
    "slack_ns", "policy", "settings" (what of the run changes its figures:
    an applied slack, a real-time policy, a held dma latency), "method",
    "mode", "requested_ns", "n", "<stat>_ns", "median_ns", "p99_ns",
    "top_cause" (the model's label), "top_cause_id" (its cause from
    sleepacc.model.CAUSES), "top_cause_ns"}, ranked by the statistic
    (lowest first; files without the point last)."""
    if stat not in STAT_FIELDS:
        raise ValueError(f"stat must be one of {', '.join(STAT_FIELDS)}, got {stat!r}")
    given = method is not None
    method, requested_ns = pick(sweeps, method, requested_ns)
    names = labels_for(sweeps, paths, labels)
    rows = []
    for label, path, sw in zip(names, paths, sweeps):
        own = [m.method for m in sw if _has_data(m)]
        use = method
        if not given and method not in own and len(set(own)) == 1:
            use = own[0]     # a one-method file (irtt's table, a router's save): its method
        point = next((m.to_dict() for m in sw if m.method == use
                      and m.requested_ns == requested_ns and _has_data(m)), None)
        host = sw.host or {}
        env = (point or {}).get("env") or ((sw.settings or {}).get("env") or {})
        slack = env.get("slack_ns", env.get("slack"))
        policy = env.get("policy") or host.get("sched_policy")
        row = {"label": label, "hostname": host.get("hostname"), "path": path,
               "kernel": host.get("kernel_release"),
               "slack_ns": slack if slack is not None else host.get("timer_slack_ns"),
               "policy": policy, "settings": _settings(slack, policy, env.get("dma_latency_us")),
               "method": use, "mode": point["mode"] if point else None,
               "requested_ns": requested_ns, "n": point["n"] if point else 0,
               f"{stat}_ns": point_error(point, stat) if point else None,
               "median_ns": point_error(point, "median") if point else None,
               "p99_ns": point_error(point, "p99") if point else None,
               "top_cause": None, "top_cause_id": None, "top_cause_ns": None}
        if causes and point:
            c = top_cause(sw, use, requested_ns)
            if c:
                row["top_cause"] = c["cause"] or c["note"]
                row["top_cause_id"] = c["id"]
                row["top_cause_ns"] = c["ns"]
        rows.append(row)
    if all(r["mode"] is None for r in rows):    # nothing to rank: say what there is
        have = sorted({m.requested_ns for sw in sweeps for m in sw
                       if m.method == method and _has_data(m)})
        raise ValueError(f"no file has {method} at {_go(requested_ns)}; {method} is at "
                         + ", ".join(_go(d) for d in have))
    key = f"{stat}_ns"
    rows.sort(key=lambda r: (r[key] is None, r[key] if r[key] is not None else 0))
    for i, r in enumerate(rows, 1):
        r["rank"] = i if r[key] is not None else None
    return {"stat": stat, "method": method, "requested_ns": requested_ns, "hosts": rows}


def _settings(slack, policy, dma) -> Optional[str]:
    """The run's settings that change its figures, as a note for the host's
    row ("slack 1 ns, fifo"): an applied slack, a real-time policy (no
    slack at all), a held cpu_dma_latency; None for none."""
    out = []
    if isinstance(slack, (int, float)) and not isinstance(slack, bool):
        out.append(f"slack {format_ns(slack)}")
    if policy in ("fifo", "rr"):
        out.append(str(policy))
    if isinstance(dma, int) and not isinstance(dma, bool):
        out.append(f"dma_latency {dma} µs")
    return ", ".join(out) or None


def cause_text(row: dict) -> str:
    if not row.get("top_cause"):
        return "-"
    ns = row.get("top_cause_ns")
    return row["top_cause"] + ("" if ns is None else f" ({format_ns(ns, 3)})")
