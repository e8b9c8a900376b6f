"""The model's terms: the vocabulary of causes, the grids the structure
search tries, and what one structure (:class:`_Spec`) predicts.

A structure is the discrete part of a fit: the call's timeout unit and
rounding, a kernel tick with extra ticks, a zero-timeout shortcut, and the
shape terms (proportional or capped coalescing, idle exit, select slack,
set-up after the deadline).  :func:`_design` turns it into the linear
problem the solver fits; :func:`_predict_spec` evaluates it.  All in ns.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Mapping, Optional, Tuple, List

import numpy as np

from .._units import format_ns

#: The fixed vocabulary of causes.
CAUSES = ("granularity", "zero_shortcut", "tick", "timer_slack", "select_slack",
          "coalescing", "wakeup", "idle_exit", "load")

# Kernel tick lengths tried: HZ = 1000, 500, 300, 250, 100, Windows' 64 Hz
# default, and the ~0.5 ms timer interrupt a Windows high-resolution waitable
# timer wakes on.  Which of them an OS has: :func:`ticks_for`.
TICK_CANDIDATES_NS = (500_000, 1_000_000, 2_000_000, 10_000_000 / 3, 4_000_000, 10_000_000,
                      15_625_000)
_HZ_TICKS_NS = (1_000_000, 2_000_000, 10_000_000 / 3, 4_000_000, 10_000_000)
# Windows: the 0.5 ms interrupt, a 1 ms period (timeBeginPeriod(1)), the 64 Hz default.
_WINDOWS_TICKS_NS = (500_000, 1_000_000, 15_625_000)
EXTRA_TICKS = (0, 1, 2)
UNITS_NS = (1, 1_000, 1_000_000)
# Shape grids: idle-exit half-lengths, coalescing knees (cap / a), select-slack thresholds.
IDLE_HALF_NS = (10e3, 30e3, 100e3, 300e3, 1e6, 3e6, 10e6, 30e6, 100e6)
KNEE_NS = tuple(float(x) for x in np.geomspace(20e3, 200e6, 17))
SELECT_SLACK_NS = tuple(float(x) for x in np.geomspace(1e3, 1e6, 13))
ENTRY_NS = tuple(float(x) for x in np.geomspace(1e3, 1e5, 5))    # set-up: starting points
SELECT_SHARE = 0.001            # fs/select.c: 0.1 % of the timeout
IDLE_EXIT_MAX_NS = 1_000_000    # deepest C-state exits are below 1 ms
# A sleep's set-up (system call, sleep queue, timer programming, switch) costs µs
# to tens of µs (a null system call is 0.3-5 µs); a "set-up" of a tick's size
# would be a tick or a whole-ms unit, which the family already has.
ENTRY_MAX_NS = 100_000
ZERO_RETURN_MAX_NS = 50_000     # a zero timeout that returns is a system call, not a sleep
LINUX_DEFAULT_SLACK_NS = 50_000


def tolerance_ns(measured_ns, requested_ns=0.0):
    """The reporting tolerance of a fit: max(5 % of the measured oversleep
    (measured - requested), 5 µs).  Relative to the oversleep, not to the
    duration: 5 % of a 10 ms request would hide a 40 µs miss of a model whose
    whole oversleep is a few µs."""
    over = np.asarray(measured_ns, dtype=float) - np.asarray(requested_ns, dtype=float)
    return np.maximum(0.05 * np.abs(over), 5_000.0)


def ticks_for(kind: Optional[str]) -> Tuple[float, ...]:
    """The tick lengths an OS family can have: Windows' own (the 0.5 ms
    interrupt, 1 ms, 64 Hz), the HZ ticks elsewhere, every one when the OS is
    not known."""
    if kind is None:
        return TICK_CANDIDATES_NS
    return _WINDOWS_TICKS_NS if kind == "windows" else _HZ_TICKS_NS


def _os_kind(facts: Mapping) -> Optional[str]:
    """The OS family the host facts name: linux, freebsd, bsd (OpenBSD,
    NetBSD: tick-based timeouts, no calloutng), darwin, windows or None."""
    s = " ".join(str(facts.get(k) or "") for k in ("os", "sysname", "system")).lower()
    if "linux" in s:
        return "linux"
    if "openbsd" in s or "netbsd" in s:
        return "bsd"
    if "freebsd" in s or "bsd" in s:
        return "freebsd"
    if "mac" in s or "os x" in s or "darwin" in s:
        return "darwin"
    if "windows" in s:
        return "windows"
    return None


# Which shape terms each OS has (None: unknown OS, every term).
_OS_TERMS = {"linux": {"idle", "select"}, "darwin": {"capped", "prop", "idle"},
             "freebsd": {"prop", "capped", "idle"}, "windows": {"idle", "prop"},
             "bsd": {"idle"},
             None: {"idle", "select", "capped", "prop"}}


def _round_unit(req, unit, rounding):
    """The timeout the kernel is given.  "down" is a caller that truncates:
    what it truncates to 0 returns at once (the zero shortcut); a nonzero
    truncated timeout still never ends a kernel sleep before the request."""
    req = np.asarray(req, dtype=float)
    if unit <= 1:
        return np.floor(req + 0.5) if rounding == "down" else np.ceil(req - 1e-9)
    if rounding == "down":
        q = np.floor(req / unit + 1e-9) * unit
        return np.where(q > 0, np.maximum(q, req), q)
    return np.ceil(req / unit - 1e-9) * unit


def _base(unit, rounding, tick, k, req):
    q = _round_unit(req, unit, rounding)
    if tick:
        return q, (np.ceil(q / tick - 1e-9) + k) * tick
    return q, q


@dataclass(frozen=True)
class _Spec:
    unit: int
    rounding: str
    tick: float
    k: int
    zero: bool
    terms: Tuple[Tuple[str, float], ...] = ()   # ("prop", 0) ("capped", knee) ("idle", half)
    #    ("select", s) ("entry", v): the requests below v are shorter than the set-up

    def term(self, kind):
        for t, v in self.terms:
            if t == kind:
                return v
        return None

    def with_terms(self, terms) -> "_Spec":
        """This structure with other shape terms."""
        return _Spec(self.unit, self.rounding, self.tick, self.k, self.zero, tuple(terms))

    def columns(self) -> List[str]:
        cols = ["c"]
        for t, _ in self.terms:
            cols.append({"prop": "p", "capped": "a", "idle": "E", "entry": "s"}.get(t, ""))
        return [c for c in cols if c]

    def n_params(self) -> float:
        n = 1 + (1 if self.zero else 0) + (1 if self.tick else 0) + 0.5 * self.k
        for t, _ in self.terms:
            n += 1 if t in ("prop", "entry") else 2
        return n

    def causes(self) -> Tuple[str, ...]:
        out = []
        if self.unit > 1:
            out.append(f"granularity {format_ns(self.unit).split()[-1]}"
                       + (" (truncated)" if self.rounding == "down" else ""))
        if self.zero:
            out.append("zero_shortcut")
        if self.tick:
            out.append(f"tick {format_ns(self.tick)}" + (f" +{self.k}" if self.k else ""))
        for t, v in self.terms:
            out.append({"prop": "coalescing (proportional)",
                        "capped": "coalescing (capped)",
                        "idle": "idle_exit", "select": "select_slack",
                        "entry": "wakeup (set-up after the deadline)"}[t])
        return tuple(out)


def _design(spec: _Spec, b):
    """Columns (n, m), offset (n,), lower and upper bounds for the linear parameters."""
    cols, lb, ub = [np.ones_like(b)], [0.0], [math.inf]
    off = b.copy()
    if spec.tick:
        lb[0], ub[0] = -0.5 * spec.tick, 0.5 * spec.tick
    for t, v in spec.terms:
        if t == "prop":
            cols.append(b / 1e6)          # scaled: coefficient is ppm-ish of 1e6
            lb.append(0.0)
            ub.append(0.5e6)
        elif t == "capped":
            cols.append(np.minimum(b, v) / 1e6)
            lb.append(0.0)
            ub.append(1e6)
        elif t == "idle":
            cols.append(b / (b + v))
            lb.append(0.0)
            ub.append(IDLE_EXIT_MAX_NS)
        elif t == "select":
            off = off + np.maximum(0.0, SELECT_SHARE * b - v)
            lb[0] = max(lb[0], v)        # the constant holds the slack itself
        elif t == "entry":
            # max(0, s - b) with s the linear parameter: the requests below v
            # expired during the set-up, the others hid it (s between them)
            below = b < v
            cols.append(below.astype(float))
            off = off - np.where(below, b, 0.0)
            lb.append(float(np.max(b[below])) if np.any(below) else 0.0)
            ub.append(min(float(np.min(b[~below])), ENTRY_MAX_NS) if np.any(~below)
                      else ENTRY_MAX_NS)
    return np.column_stack(cols), off, np.array(lb), np.array(ub)


def _predict_spec(spec: _Spec, beta, zero_ns, req):
    req = np.asarray(req, dtype=float)
    q, b = _base(spec.unit, spec.rounding, spec.tick, spec.k, req)
    A, off, _, _ = _design(spec, b)
    out = off + A @ beta
    out = np.maximum(out, np.maximum(q, req))   # a kernel sleep never ends before its request
    if spec.zero and zero_ns is not None:
        out = np.where(q == 0, zero_ns, out)
    return out
