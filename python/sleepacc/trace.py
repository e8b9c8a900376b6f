"""Measured explanations: each sample's lateness in its parts, traced from the kernel.

    import sleepacc
    t = sleepacc.trace("nanosleep", 1e-3, n=200)
    t.terms["slack"]          # float ns per sample, NaN where the chain is incomplete
    print(t.table())          # per-term median and p99, complete count, traced vs untraced

Owns :func:`trace`, :class:`Trace` and the trace table.  The tracing, the
join of each sample's kernel events and the six terms are the C core's
(``csrc/trace.c``, ``_core.trace``): this module only names the arrays.
Linux with tracefs only; it needs root or CAP_DAC_OVERRIDE (a
PermissionError naming ``trace`` otherwise).
"""
from __future__ import annotations

import array
import math
from typing import Any, Optional

from . import _core

__all__ = ["Trace", "trace", "format_table"]


class Trace:
    """One traced run (the core's answer, ``sleepacc_trace_fields``).

    ``lateness``: int64 ns per traced sample (actual - requested; in
    periodic mode wake - deadline).  ``terms``: the six terms by name
    (``rounding``, ``slack``, ``timer_irq``, ``wake_to_run``, ``to_user``,
    ``other``), float64 ns per sample, NaN where the sample's chain is
    incomplete; per complete sample they sum exactly to its lateness.
    ``complete``: bool per sample.  ``idle``: the CPU the timer expired on,
    at the interrupt: 1 idle (its idle task ran), 0 busy, -1 unknown;
    ``idle_at_expiry`` is ``idle == 1``; ``idle_state`` the cpu_idle state it
    idled in (-1: none known; a cpuidle driver's state index).  ``untraced``: the lateness of
    the same run untraced, measured right before (the tracer's own cost is the
    difference).  ``lost``: events the kernel dropped or not kept; ``gaps``:
    samples whose chain lacks a link.  ``interrupted``: a signal (Ctrl-C)
    ended the runs early (an interrupted untraced run leaves no traced one).
    """

    __slots__ = ("schema", "method", "mode", "requested_ns", "slack_ns", "cpu", "n", "lateness",
                 "terms", "complete", "idle", "idle_state", "untraced", "gaps", "lost",
                 "missed_pages", "events", "interrupted", "mounted", "tracefs")

    def __init__(self, raw: dict[str, Any]):
        import numpy as np
        self.schema: str = raw["schema"]
        self.method: str = raw["method"]
        self.mode: str = raw["mode"]
        self.requested_ns: int = raw["requested_ns"]
        self.slack_ns: Optional[int] = raw.get("slack_ns")
        self.cpu: Optional[int] = raw.get("cpu")
        self.n: int = raw["n"]
        self.lateness = np.asarray(raw["lateness"], dtype=np.int64)
        self.terms = {name: np.asarray(values, dtype=np.float64) for name, values in raw["terms"].items()}
        self.complete = np.asarray(raw["complete"], dtype=bool)
        self.idle = np.asarray(raw["idle"], dtype=np.int64)
        self.idle_state = np.asarray(raw["idle_state"], dtype=np.int64)
        self.untraced = np.asarray(raw["untraced"], dtype=np.int64)
        for key in ("gaps", "lost", "missed_pages", "events", "interrupted", "mounted", "tracefs"):
            setattr(self, key, raw[key])

    @property
    def idle_at_expiry(self):
        """bool per sample: the CPU the timer expired on was idle at the interrupt."""
        return self.idle == 1

    def __repr__(self) -> str:
        return (f"Trace({self.method!r}, requested_ns={self.requested_ns}, n={self.n}, "
                f"complete={int(self.complete.sum())}, lost={self.lost})")

    def summary(self) -> dict[str, Any]:
        """Median and p99 (the core's statistics) of each term over the
        complete samples, of timer_irq over those whose CPU was idle at the
        expiry and over those whose CPU was busy, and of the traced and
        untraced lateness."""
        done = self.complete
        rows = {name: _stats(values[done]) for name, values in self.terms.items()}
        idle, busy = done & (self.idle == 1), done & (self.idle == 0)
        irq = self.terms["timer_irq"]
        return {"terms": rows, "complete": int(done.sum()), "n": self.n,
                "idle_at_expiry": int(idle.sum()), "busy_at_expiry": int(busy.sum()),
                "timer_irq_idle": _stats(irq[idle]), "timer_irq_busy": _stats(irq[busy]),
                "traced": _stats(self.lateness), "untraced": _stats(self.untraced),
                "lost": self.lost, "gaps": self.gaps}

    def table(self) -> str:
        """The per-term table (:func:`format_table`)."""
        return format_table(self)

    def to_dict(self) -> dict[str, Any]:
        """The JSON form (the ``trace`` key of docs/schema.md): arrays as
        lists, a missing term null."""
        def opt(values):
            return [None if math.isnan(v) else int(v) for v in values.tolist()]
        return {"schema": self.schema, "method": self.method, "mode": self.mode,
                "requested_ns": self.requested_ns, "slack_ns": self.slack_ns, "cpu": self.cpu,
                "n": self.n, "lateness": self.lateness.tolist(),
                "terms": {name: opt(v) for name, v in self.terms.items()},
                "complete": self.complete.tolist(), "idle": self.idle.tolist(),
                "idle_state": self.idle_state.tolist(),
                "untraced": self.untraced.tolist(), "gaps": self.gaps, "lost": self.lost,
                "missed_pages": self.missed_pages, "events": self.events,
                "interrupted": self.interrupted,
                "mounted": self.mounted, "tracefs": self.tracefs}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Trace":
        """A Trace back from :meth:`to_dict`'s form (a results file's
        ``trace`` key), checked field by field (records.check_trace); a
        schema other than this one's, or a bad field, is a ValueError."""
        from .records import TRACE_SCHEMA, check_trace
        if not isinstance(d, dict) or d.get("schema") != TRACE_SCHEMA:
            got = d.get("schema") if isinstance(d, dict) else type(d).__name__
            raise ValueError(f"trace: schema must be {TRACE_SCHEMA!r}, got {got!r}")
        check_trace(d, "trace")   # the reader's check of every field
        raw = dict(d)
        raw["terms"] = {name: [math.nan if v is None else v for v in values]
                        for name, values in d["terms"].items()}
        return cls(raw)

    def to_frame(self):
        """One row per traced sample (pandas): ``sample``, ``lateness_ns``,
        each term (NaN where missing), ``complete``, ``idle``, ``idle_state``,
        ``idle_at_expiry``, with the run's method, mode and requested_ns."""
        try:
            import pandas as pd
        except ImportError as e:
            raise ImportError("Trace.to_frame() needs pandas: pip install 'sleepacc[frame]'") from e
        import numpy as np
        cols: dict[str, Any] = {"method": self.method, "mode": self.mode,
                                "requested_ns": self.requested_ns, "sample": np.arange(self.n),
                                "lateness_ns": self.lateness}
        cols.update(self.terms)
        cols.update(complete=self.complete, idle=self.idle, idle_state=self.idle_state,
                    idle_at_expiry=self.idle_at_expiry)
        return pd.DataFrame(cols)


def _stats(values) -> dict[str, Optional[float]]:
    """median and p99 by the core's statistics (None for no values)."""
    ints = array.array("q", (int(v) for v in values))
    if not ints:
        return {"median": None, "p99": None}
    st = _core.stats(memoryview(ints), -(2 ** 62))
    return {"median": st["median"], "p99": st["p99"]}


def trace(method: str, duration: float, *, n: Optional[int] = None, budget: Optional[float] = None,
          slack: Optional[int] = None, cpu: Optional[int] = None, policy: Optional[str] = None,
          priority: Optional[int] = None, dma_latency: Optional[int] = None) -> Trace:
    """Trace `method` sleeping `duration` seconds: each sample's lateness
    in its six terms, from the kernel's events (Linux tracefs).

    The run is measured twice by the core's engine with the same options,
    untraced then traced (at most 20000 samples each): ``n`` samples, or what
    ``budget`` seconds fill (the core's default budget, 1 s, when neither is
    given; with ``n`` alone only ``n`` stops).  ``slack`` (ns), ``cpu``,
    ``policy``, ``priority`` and ``dma_latency`` (us) are measure()'s,
    applied to the thread for the run and restored.  Every rule is the core's.

    Nothing global changes: the core uses a private tracefs instance and
    removes it on every path; tracefs not mounted is mounted at
    /sys/kernel/tracing and left mounted (``Trace.mounted`` says so).  The calling thread is busy for both
    runs (the interpreter lock is held); Ctrl-C ends them at the sleep it
    interrupts, and KeyboardInterrupt is raised as the call returns (one that
    arrives while the thread is not sleeping, in the tracer's setup or
    between sleeps, is seen only when the trace ends: press it again).

    Raises TypeError/ValueError for bad arguments, PermissionError naming
    ``trace`` and what it needs (root or CAP_DAC_OVERRIDE) when tracefs is not
    usable, OSError for other failures.
    """
    given = dict(n=n, slack=slack, cpu=cpu, policy=policy, priority=priority, dma_latency=dma_latency)
    options: dict[str, Any] = {"method": method, "duration": duration}
    options.update((k, v) for k, v in given.items() if v is not None)
    if budget is not None or n is not None:
        options["budget"] = budget   # None with n: only n stops
    return Trace(_core.trace(options))


def _us(ns: Optional[float]) -> str:
    return "-" if ns is None else f"{ns / 1e3:.1f}"


def format_table(t: Trace) -> str:
    """The trace table: per term the median and p99 (us) over the complete
    samples, the complete count, how many expired on an idle CPU and on a
    busy one, timer_irq split that way, and the lateness traced against
    untraced."""
    s = t.summary()
    head = (f"{t.method} {t.requested_ns / 1e3:g} us"
            + (f", slack {t.slack_ns} ns" if t.slack_ns is not None else "")
            + (f", cpu {t.cpu}" if t.cpu is not None else "")
            + f": {s['complete']}/{s['n']} samples complete"
            + (f", {t.lost} events lost" if t.lost else ""))
    where = (f"CPU idle at expiry in {s['idle_at_expiry']}, "
             f"busy in {s['busy_at_expiry']}")
    lines = [head, where, f"{'term':<18} {'median us':>10} {'p99 us':>10}"]
    for name, st in s["terms"].items():
        lines.append(f"{name:<18} {_us(st['median']):>10} {_us(st['p99']):>10}")
    for name in ("idle", "busy"):
        st = s["timer_irq_" + name]
        lines.append(f"{'timer_irq ' + name:<18} {_us(st['median']):>10} {_us(st['p99']):>10}")
    for name in ("traced", "untraced"):
        st = s[name]
        lines.append(f"{'lateness ' + name:<18} {_us(st['median']):>10} {_us(st['p99']):>10}")
    if t.interrupted:
        lines.append("interrupted: the runs ended at a signal (Ctrl-C)")
    if t.mounted:
        lines.append(f"tracefs was not mounted: this run mounted it at {t.tracefs}")
    return "\n".join(lines)
