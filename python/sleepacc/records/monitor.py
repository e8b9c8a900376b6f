"""Monitor lines (``sleepacc monitor``: the lateness statistics of one
report interval) and irtt's timer statistics (its JSON's ``timer_stats``)
from lateness statistics pooled over intervals.
"""
from __future__ import annotations

import json
import math
from typing import Any, Iterable, Mapping, Optional

from .schema import SCHEMA


def monitor_line(method: str, interval_ns: int, stats: Mapping[str, Any], missed: int,
                 t_start: float, t_end: float, time_iso: str) -> dict[str, Any]:
    """One line of ``sleepacc monitor`` (JSON Lines): the lateness
    statistics of the periodic wake-ups of one report interval.  ``t`` and
    ``t_start`` are Unix-epoch seconds (float, like flent's raw ``t``) at the
    interval's end and start; ``time`` is ``t`` in ISO 8601 UTC."""
    n = stats.get("n") or 0

    def stat(key):
        return stats.get(key) if n else None
    return {"schema": SCHEMA, "type": "monitor", "time": time_iso, "t": round(t_end, 6),
            "t_start": round(t_start, 6), "method": method, "interval_ns": int(interval_ns),
            "count": n, "median_ns": stat("median"), "p99_ns": stat("p99"),
            "max_ns": stat("max"), "mean_ns": stat("mean"), "std_ns": stat("std"),
            "min_ns": stat("min"), "missed": int(missed)}


def read_monitor(lines: Iterable[str], where: str = "<monitor>") -> list[dict[str, Any]]:
    """The "monitor" lines of a ``sleepacc monitor -o FILE`` (other lines,
    such as the header, are skipped; a torn last line is dropped)."""
    out = []
    numbered = [(i, ln) for i, ln in enumerate(lines, 1) if ln.strip()]
    for k, (lineno, line) in enumerate(numbered):
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as e:
            if k == len(numbered) - 1:
                break
            raise ValueError(f"{where}:{lineno}: not valid JSON ({e.msg})") from None
        if isinstance(obj, dict) and obj.get("type") == "monitor":
            if not isinstance(obj.get("t"), (int, float)):
                raise ValueError(f"{where}:{lineno}: a monitor line without its Unix time 't'")
            out.append(obj)
    if not out:
        raise ValueError(f"{where}: no monitor lines (written by `sleepacc monitor -o FILE`)")
    return out


class TimerTotals:
    """Lateness statistics pooled over report intervals (count, mean,
    variance by the parallel formula, min, max, misses): what the monitor's
    summary and its irtt-style JSON report."""

    def __init__(self) -> None:
        self.n = 0
        self.mean = 0.0
        self.m2 = 0.0
        self.min: Optional[float] = None
        self.max: Optional[float] = None
        self.misses = 0
        self.reports = 0

    def add(self, stats: Mapping[str, Any], missed: int = 0) -> None:
        self.reports += 1
        self.misses += int(missed)
        n = int(stats.get("n") or 0)
        if not n:
            return
        mean, std = float(stats["mean"]), float(stats.get("std") or 0.0)
        total = self.n + n
        delta = mean - self.mean
        self.m2 += (n - 1) * std * std + delta * delta * self.n * n / total
        self.mean += delta * n / total
        self.n = total
        self.min = stats["min"] if self.min is None else min(self.min, stats["min"])
        self.max = stats["max"] if self.max is None else max(self.max, stats["max"])

    def lateness(self) -> dict[str, Any]:
        """{n, mean, std, min, max} of every wake-up so far."""
        std = math.sqrt(self.m2 / (self.n - 1)) if self.n > 1 else 0.0
        return {"n": self.n, "mean": self.mean, "std": std, "min": self.min, "max": self.max}


def irtt_timer_stats(lateness: Mapping[str, Any], period_ns: int, misses: int,
                     count: Optional[int] = None) -> dict[str, Any]:
    """The timer part of irtt's JSON ``stats`` (``irtt client -o``), from
    the lateness of periodic wake-ups (ns: n, mean, std, min, max):
    ``timer_error`` (irtt's duration statistics: total, n, min, max, mean,
    stddev, variance, in int ns), ``timer_err_percent`` (mean error as a
    percentage of the period), ``timer_misses`` (deadlines passed over,
    never served: irtt's expected - sent) and ``timer_miss_percent`` (of the
    expected ticks, `count` wake-ups (default n) + misses, as irtt's)."""
    n = int(lateness.get("n") or 0)
    mean = float(lateness.get("mean") or 0.0)
    std = float(lateness.get("std") or 0.0)
    count = n if count is None else int(count)
    timer_error = {"total": round(mean * n), "n": n,
                   "min": int(lateness["min"]) if n and lateness.get("min") is not None else 0,
                   "max": int(lateness["max"]) if n and lateness.get("max") is not None else 0,
                   "mean": round(mean), "stddev": round(std), "variance": round(std * std)}
    return {"timer_error": timer_error,
            "timer_err_percent": 100.0 * mean / period_ns if period_ns > 0 else 0.0,
            "timer_misses": int(misses),
            "timer_miss_percent": 100.0 * misses / (count + misses) if count + misses > 0 else 0.0}


def irtt_json(lateness: Mapping[str, Any], period_ns: int, misses: int, *,
              count: Optional[int] = None, timer: str = "sleepacc",
              start_time: Optional[str] = None, duration_ns: int = 0,
              system_info: Optional[Mapping[str, Any]] = None,
              version: Optional[str] = None) -> dict[str, Any]:
    """A document in the shape of irtt's JSON output (``irtt client -o``)
    holding only the timer: ``config.params.interval`` (the period, ns),
    ``config.timer`` (the method), ``stats`` with :func:`irtt_timer_stats`,
    ``start_time`` and ``duration``; ``round_trips`` is empty (no packets).
    A harness that reads irtt's timer statistics reads these the same way."""
    stats = {"start_time": start_time, "duration": int(duration_ns)}
    stats.update(irtt_timer_stats(lateness, period_ns, misses, count))
    return {"version": {"sleepacc": version, "schema": SCHEMA},
            "system_info": dict(system_info or {}),
            "config": {"params": {"interval": int(period_ns), "duration": int(duration_ns)},
                       "timer": timer},
            "stats": stats, "round_trips": []}


def pacer_irtt_json(pacer_stats: Mapping[str, Any], **kw: Any) -> dict[str, Any]:
    """:func:`irtt_json` of a ``sleepacc.Pacer``'s ``stats`` (its lateness
    against the schedule, period_ns, timer_misses and count)."""
    return irtt_json(pacer_stats["lateness"], pacer_stats["period_ns"],
                     pacer_stats.get("timer_misses", pacer_stats.get("misses", 0)),
                     count=pacer_stats.get("count"), **kw)
