"""What the plots draw, apart from drawing it: the method families (from the
core's registry), each point's error quantiles and cost (:func:`series`, from
the one row shape and the one error rule), the core's quantile levels, and
which methods a plot shows.
"""
from __future__ import annotations

import os
from typing import List, Sequence, Tuple

import numpy as np

from .. import records
from ..records import flatten, origin_ns, stat_error


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
    from .. import _core
    return {m["name"]: SimpleNamespace(**m) for m in _core.methods()}


def _by_family(names: Sequence[str]) -> List[Tuple[str, List[str]]]:
    """[(family key, names)] in FAMILIES order, names in the given order."""
    reg = _registry()
    groups: dict = {}
    for n in names:
        groups.setdefault(method_family(n, reg), []).append(n)
    return [(k, groups[k]) for k, _l, _w in FAMILIES if k in groups]


def series(data) -> List[dict]:
    """Per measurement: method, requested_ns, error quantiles (ns) and cost.

    Accepts a Sweep, Measurements, point dicts, or tidy records (then only
    the quantiles the records carry).  Keys: method, mode, requested_ns, n,
    median, p1 (the core's p1, or the minimum when the record has none),
    p99, max, cpu_percent, cpu_ns_per_call, errors (array of the samples'
    errors, or None), undersleeps (the core's count; measurements only),
    group.  Errors follow sleepacc.records.error_ns."""
    out: List[dict] = []
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
    from .. import _core
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
