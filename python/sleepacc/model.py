"""The oversleep model: why a sleep lasts longer than asked, and how sure we are.

``fit(data)`` takes a :class:`Sweep`, a list of measurements, or tidy records
(dicts, a CSV path such as ``tests/data/seed_results.csv``, or a pandas frame)
with at least ``method, requested_ns, actual_ns``, and explains every method's
actual duration as a sum of named causes, from one fixed vocabulary
(:data:`CAUSES`):

``granularity``
    the call takes its timeout in whole µs (select, usleep) or ms (poll,
    epoll_wait, kqueue, Go's netpoller on epoll_wait); a request is rounded up
    (or down by a caller that truncates).  The unit is fitted from the data;
    the registry (``sleepacc.methods()``) is only its prior.
``zero_shortcut``
    a timeout that becomes 0 returns at once (one system call).
``tick``
    on a periodic-tick kernel the wake-up happens on a tick:
    ``ceil(request / T) * T`` plus ``k`` extra ticks (FreeBSD 4 and Linux 2.4
    nanosleep add one); Windows' default timer is a 64 Hz tick (15.625 ms).  A
    negative constant on top of it is the tick phase.
``timer_slack``
    Linux delays a timer by up to the thread's slack (50 µs by default).  It
    is a *window*: another wake-up inside it ends the sleep early, so under
    load the oversleep drops below slack + wake-up (then ``load`` is named).
    A hybrid sleep (registry family ``hybrid``) ends its kernel part the
    run's margin (``margin_ns``) early and spins the rest: slack shows only
    by what it exceeds the margin, none below it.
``select_slack``
    Linux select/poll/epoll: ``max(slack, 0.1 % of the timeout)``
    (``fs/select.c``), a max, not a sum.
``coalescing``
    a leeway growing with the duration, ``min(a * d, cap)`` (macOS timer
    coalescing; FreeBSD calloutng's uncapped share of the timeout).
``wakeup``
    the constant rest: interrupt, scheduler, the way back to the caller.
    Its entry part can be hidden: the kernel computes the deadline at entry
    (now + d), then spends ``s`` setting the sleep up (sleep queue, timer,
    context switch); a request shorter than ``s`` has expired before the
    thread sleeps and returns after the set-up: ``max(0, s - d)``, seen only
    where some requests are shorter than ``s``.
``idle_exit``
    a longer sleep lets the CPU reach a deeper idle state (or the hypervisor
    deschedule the vCPU): ``E * d / (d + d½)``.  A busy CPU or
    ``/dev/cpu_dma_latency`` = 0 removes it.
``load``
    other work: a slack window cut short, or a spread the family cannot carry.

How the fit works (all in ns):

* each point (one method, one requested duration) carries its own
  uncertainty: the standard error of its median, ``1.25 * spread / sqrt(n)``
  with the spread from the core's statistics (IQR / 1.349, else p90, else
  std), in quadrature with a floor: 1 µs and 2 % of the oversleep (the
  run-to-run drift of a median).  Published means without a spread get
  3 µs, 5 % of the oversleep and 0.1 % of the duration (their rounded digits
  and the measuring clock's rate).  The max(5 %, 5 µs) tolerance is only a
  reporting metric (:meth:`MethodParams.within_tolerance`).
* the discrete structure (unit, rounding, tick, extra ticks, zero shortcut)
  and the shape parameters (knees, half-lengths) are searched exhaustively on
  small grids; the linear amounts are fitted by weighted least squares with
  bounds (every physical term >= 0; an exact active-set solver, no clipping
  afterwards).  Structures are ranked by chi-square + ln(n) per parameter
  (BIC) + priors (the registry's unit, the host's high-resolution timers,
  the OS).  Cost: O(n) per candidate, a bounded number of candidates.
* the set-up ``s`` is tried last, on the best fits of the leading tickless
  structures: where some requests are shorter than it and enough are longer
  to fit the rest with a degree of freedom to spare; it is kept only where
  leaving it out worsens the fit beyond the 95 % threshold.  With one
  request shorter than ``s`` it rests on that request alone: a duration left
  out cannot be predicted with it.
* every linear parameter gets a 95 % interval from a wild bootstrap of the
  points (200 replicates; the residual inflates a point's noise where the
  fit misses it); shape parameters get profile intervals.  A term is
  *identified* only when its interval excludes zero.
* a verdict per method: ``explained`` (the residuals are consistent with the
  noise), ``partly`` (what is left is named with its size and shape) or
  ``unexplained``; structures that fit about as well are listed as
  ``alternatives``, and the verdict says so.

All values are in ns internally; ``predict`` takes and returns seconds.
"""

from __future__ import annotations

import csv
import math
import os
import re
from dataclasses import dataclass, field, asdict
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from . import records
from ._units import format_ns

__all__ = [
    "CAUSES",
    "MethodParams",
    "Model",
    "ModelSet",
    "fit",
    "fit_groups",
    "load_records",
    "to_records",
    "TICK_CANDIDATES_NS",
    "GROUP_KEYS",
    "tolerance_ns",
]

#: The fixed vocabulary of causes.
CAUSES = ("granularity", "zero_shortcut", "tick", "timer_slack", "select_slack",
          "coalescing", "wakeup", "idle_exit", "load")

# Kernel tick lengths tried: HZ = 1000, 500, 300, 250, 100 and Windows' 64 Hz.
TICK_CANDIDATES_NS = (1_000_000, 2_000_000, 10_000_000 / 3, 4_000_000, 10_000_000, 15_625_000)
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
# Columns that identify one machine/configuration in tidy records.
GROUP_KEYS = ("seed", "host", "os", "timer_config", "slack_ns", "dma_latency_us", "policy")

LINUX_DEFAULT_SLACK_NS = 50_000
BOOTSTRAP = 200
HUBER = 1.5             # residuals beyond this many sigma weigh linearly
_AMBIGUOUS = 2.0        # score gap under which two structures "fit about equally"
_IDENTIFIED = 6.0       # score gap for a discrete part to count as identified
_FLOOR_NS = 1_000.0     # absolute noise floor of a point
_FLOOR_REL = 0.02       # ... and its share of the oversleep (run-to-run drift)
_FLOOR_REL_PUBLISHED = 0.05
_FLOOR_PUBLISHED_NS = 3000.0   # published means: unknown spread, rounded digits

def tolerance_ns(measured_ns):
    """The reporting tolerance: max(5 % of the measured value, 5 µs)."""
    return np.maximum(0.05 * np.abs(np.asarray(measured_ns, dtype=float)), 5_000.0)

# ---------------------------------------------------------------------------
# Records: every input becomes a list of flat dicts.
# ---------------------------------------------------------------------------

def _num(v):
    if v is None:
        return None
    if isinstance(v, (int, float, np.integer, np.floating)):
        return v
    s = str(v).strip()
    if s == "":
        return None
    try:
        return int(s)
    except ValueError:
        try:
            return float(s)
        except ValueError:
            return s

_NUMERIC = {"requested_ns", "actual_ns", "samples", "n", "slack_ns", "min_ns", "max_ns",
            "p1_ns", "p10_ns", "p25_ns", "p75_ns", "p90_ns", "p99_ns", "median_ns", "mean_ns",
            "std_ns", "cpu_percent", "cpu_ns_per_call", "dma_latency_us", "margin_ns"}

def load_records(path) -> List[dict]:
    """Read a tidy CSV (like seed_results.csv) into a list of dicts; numeric
    columns become numbers, empty cells None."""
    out = []
    with open(path, newline="", encoding="utf-8") as f:
        for row in csv.DictReader(f):
            rec = {}
            for k, v in row.items():
                rec[k] = _num(v) if k in _NUMERIC else (v if v != "" else None)
            out.append(rec)
    return out

def _get(obj, name, default=None):
    if isinstance(obj, Mapping):
        return obj.get(name, default)
    return getattr(obj, name, default)

def _measurement_record(m, host: Optional[Mapping] = None) -> dict:
    """One point from a Measurement (or its dict) using the core's statistics
    only: the samples are never read (memory stays bounded by the number of
    points, whatever the size of the file)."""
    st = _get(m, "stats") or {}
    if hasattr(st, "to_dict"):
        st = st.to_dict()
    req = int(_get(m, "requested_ns"))
    mode = _get(m, "mode", "relative") or "relative"

    def at(key):   # the actual duration: requested + the error (the one error rule)
        err = records.error_ns(mode, req, st.get(key))
        return None if err is None else float(req + err)

    rec = {
        "method": _get(m, "method"),
        "mode": mode,
        "requested_ns": req,
        "actual_ns": at("median"),
        "n": _get(m, "n", st.get("n")),
        "min_ns": at("min"),
        "max_ns": at("max"),
        "p90_ns": at("p90"),
        "p99_ns": at("p99"),
        "std_ns": st.get("std"),
        "cpu_percent": _get(m, "cpu_percent"),
        "cpu_ns_per_call": _get(m, "cpu_ns_per_call"),
    }
    for q in ("p1", "p10", "p25", "p75"):
        if st.get(q) is not None:
            rec[f"{q}_ns"] = at(q)
    env = _get(m, "env") or {}
    slack = env.get("slack_ns", env.get("slack"))
    if isinstance(slack, (int, float)) and slack > 0:
        rec["slack_ns"] = int(slack)
    for key in ("dma_latency_us", "margin_ns"):   # margin_ns: a hybrid run's
        v = env.get(key)
        if isinstance(v, int) and not isinstance(v, bool):
            rec[key] = v
    if isinstance(env.get("policy"), str):   # set for the run (else the thread's: the host's)
        rec["policy"] = env["policy"]
    host = dict(host or _get(m, "host") or {})
    if host:
        rec["_host"] = host
    return rec

def _is_measurement(x) -> bool:
    return hasattr(x, "stats") and hasattr(x, "requested_ns") and hasattr(x, "method")

def to_records(data) -> List[dict]:
    """Tidy records from a Sweep, a Measurement, a list of either or of dicts,
    a CSV path, or a pandas DataFrame.  Each record has method,
    requested_ns, actual_ns (relative: median actual duration; periodic:
    requested + median lateness) and what else the source carries."""
    if isinstance(data, (str, os.PathLike)):
        return load_records(data)
    if hasattr(data, "to_dict") and hasattr(data, "columns"):  # pandas
        return [dict(r) for r in data.to_dict("records")]
    if _is_measurement(data):
        return [_measurement_record(data)]
    host = getattr(data, "host", None)
    out: List[dict] = []
    for item in data:
        if _is_measurement(item):
            out.append(_measurement_record(item, host))
        elif isinstance(item, Mapping):
            if "stats" in item and "actual_ns" not in item:
                out.append(_measurement_record(item, host))
            else:
                out.append(dict(item))
        elif hasattr(item, "__iter__"):  # a nested sweep
            out.extend(to_records(item))
        else:
            raise TypeError(f"cannot turn {type(item).__name__} into a record")
    return out

def _point_sigma(r: dict, y: float, req: float) -> Tuple[float, bool]:
    """(standard uncertainty of the point's central value in ns, has a spread)."""
    over = max(y - req, 0.0)
    spread = None
    p25, p75 = r.get("p25_ns"), r.get("p75_ns")
    if isinstance(p25, (int, float)) and isinstance(p75, (int, float)) and p75 >= p25:
        spread = (p75 - p25) / 1.349
    if spread is None:
        p90 = r.get("p90_ns")
        if isinstance(p90, (int, float)) and p90 >= y:
            spread = (p90 - y) / 1.2816
    if spread is None:
        std = r.get("std_ns")
        if isinstance(std, (int, float)) and std >= 0:
            spread = float(std)
    n = r.get("n")
    if not isinstance(n, (int, float)) or n <= 0:
        n = r.get("samples") if isinstance(r.get("samples"), (int, float)) else None
    if spread is None or not n:
        return math.hypot(_FLOOR_PUBLISHED_NS, _FLOOR_REL_PUBLISHED * over, 0.001 * y), False
    se = 1.2533 * spread / math.sqrt(max(float(n), 1.0))
    floor = max(_FLOOR_NS, _FLOOR_REL * over)
    return math.hypot(se, floor), True

# ---------------------------------------------------------------------------
# Structures and the bounded solver
# ---------------------------------------------------------------------------

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

def _lstsq(A, Y):
    return np.linalg.lstsq(A, Y, rcond=None)[0]

def _bls(A, Y, lb, ub):
    """min ||A x - y||^2 subject to lb <= x <= ub, for each column y of Y.

    Exact for the small number of parameters here: the optimum solves the
    unconstrained problem on its free set, so the best feasible solution over
    every assignment of parameters to {free, lower, upper} is the optimum."""
    single = Y.ndim == 1
    Y2 = Y[:, None] if single else Y
    m = A.shape[1]
    X = _lstsq(A, Y2)
    eps = 1e-9 * (1 + np.abs(X))
    ok = np.all((X >= lb[:, None] - eps) & (X <= ub[:, None] + eps), axis=0)
    if not np.all(ok):
        bad = ~ok
        Yb = Y2[:, bad]
        best = np.full(Yb.shape[1], np.inf)
        bestx = np.zeros((m, Yb.shape[1]))
        choices = []
        for j in range(m):
            c = ["free"]
            if math.isfinite(lb[j]):
                c.append("lb")
            if math.isfinite(ub[j]):
                c.append("ub")
            choices.append(c)
        import itertools
        for pattern in itertools.product(*choices):
            fixed = np.array([p != "free" for p in pattern])
            val = np.array([lb[j] if p == "lb" else ub[j] if p == "ub" else 0.0
                            for j, p in enumerate(pattern)])
            R = Yb - (A[:, fixed] @ val[fixed])[:, None]
            x = np.tile(val[:, None], (1, Yb.shape[1]))
            if np.any(~fixed):
                x[~fixed] = _lstsq(A[:, ~fixed], R)
            e = 1e-9 * (1 + np.abs(x))
            feas = np.all((x >= lb[:, None] - e) & (x <= ub[:, None] + e), axis=0)
            cost = np.sum((A @ x - Yb) ** 2, axis=0)
            better = feas & (cost < best)
            best[better] = cost[better]
            bestx[:, better] = x[:, better]
        X = X.copy()
        X[:, bad] = bestx
    X = np.minimum(np.maximum(X, lb[:, None]), ub[:, None])   # rounding only
    return X[:, 0] if single else X

@dataclass(eq=False)   # a fit is itself: two fits of one spec hold arrays, which == cannot rank
class _Fit:
    spec: _Spec
    beta: np.ndarray            # linear parameters (scaled as in _design)
    zero_ns: Optional[float]
    chi2: float
    score: float
    pred: np.ndarray

def _predict_spec(spec: _Spec, beta, zero_ns, req):
    req = np.asarray(req, dtype=float)
    q, b = _base(spec.unit, spec.rounding, spec.tick, spec.k, req)
    A, off, _, _ = _design(spec, b)
    out = off + A @ beta
    out = np.maximum(out, np.maximum(q, req))   # a kernel sleep never ends before its request
    if spec.zero and zero_ns is not None:
        out = np.where(q == 0, zero_ns, out)
    return out

def _solve(spec: _Spec, req, y, sig, prior: float, n_eff: float, huber: bool = False):
    q, b = _base(spec.unit, spec.rounding, spec.tick, spec.k, req)
    zero_ns = None
    zm = q == 0
    use = np.ones(len(req), dtype=bool)
    if spec.zero:
        if not np.any(zm) or np.all(zm):
            return None
        w = 1.0 / sig[zm] ** 2
        zero_ns = float(np.sum(w * y[zm]) / np.sum(w))
        if zero_ns > ZERO_RETURN_MAX_NS:
            return None
        use = ~zm
    A, off, lb, ub = _design(spec, b[use])
    su = sig[use]
    yu = y[use] - off
    beta = _bls(A / su[:, None], yu / su, lb, ub)
    # Huber: a point more than HUBER sigma off counts linearly, not squared
    # (a disturbed median does not drag the fit); a few reweighting rounds
    for _ in range(3 if huber else 0):
        r = (yu - A @ beta) / su
        big = np.abs(r) > HUBER
        if not np.any(big):
            break
        w = np.where(big, np.sqrt(HUBER / np.maximum(np.abs(r), 1e-12)), 1.0)
        beta = _bls(A * (w / su)[:, None], yu * w / su, lb, ub)
    pred = _predict_spec(spec, beta, zero_ns, req)
    if spec.zero and zero_ns is not None and np.any(~zm) and zero_ns >= np.min(pred[~zm]):
        return None                      # a "shortcut" as slow as sleeping is not one
    r = np.abs((y - pred) / sig)
    chi2 = float(np.sum(np.where(r <= HUBER, r ** 2, 2 * HUBER * r - HUBER ** 2)))
    score = chi2 + max(math.log(max(n_eff, 1.0)), 2.0) * spec.n_params() + prior
    return _Fit(spec, beta, zero_ns, chi2, score, pred)

def _os_kind(facts: Mapping) -> Optional[str]:
    s = " ".join(str(facts.get(k) or "") for k in ("os", "sysname", "system")).lower()
    if "linux" in s:
        return "linux"
    if "freebsd" in s or "bsd" in s:
        return "freebsd"
    if "mac" in s or "os x" in s or "darwin" in s:
        return "darwin"
    if "windows" in s:
        return "windows"
    return None

def _prior(spec: _Spec, unit_prior: int, ctx: dict) -> float:
    pen = 0.0
    if spec.unit != unit_prior:
        pen += 2.0 if spec.rounding == "up" else 3.0
    elif spec.rounding == "down":
        pen += 0.5
    if spec.tick and ctx.get("hres"):
        pen += 50.0          # the host says high-resolution timers are on
    kind = ctx.get("os")
    for t, _ in spec.terms:
        if t == "capped" and kind not in ("darwin", None):
            pen += 6.0
        if t == "prop" and kind not in ("freebsd", None):
            pen += 3.0
        if t == "idle" and kind in ("darwin", "windows"):
            pen += 6.0
    return pen

# Which shape terms each OS has (None: unknown OS, every term).
_OS_TERMS = {"linux": {"idle", "select"}, "darwin": {"capped", "prop", "idle"},
             "freebsd": {"prop", "capped", "idle"}, "windows": {"idle", "prop"},
             None: {"idle", "select", "capped", "prop"}}

def _physical_prior(fit: _Fit) -> float:
    """A constant of milliseconds is a tick, a unit or load, not a wake-up;
    a tick phase of most of a tick is implausible."""
    c = float(fit.beta[0])
    if fit.spec.tick:
        return 3.0 * abs(c) / fit.spec.tick + 0.1 * fit.spec.k
    return 3.0 * max(0.0, math.log2(max(c, 1.0) / 500e3))

def _stage_specs(unit_prior, has_zero_pts_for):
    for unit in UNITS_NS:
        for rounding in (("up",) if unit == 1 else ("up", "down")):
            for zero in (False, True):
                if zero and not has_zero_pts_for(unit, rounding):
                    continue
                yield _Spec(unit, rounding, 0.0, 0, zero)
                for tick in TICK_CANDIDATES_NS:
                    for k in EXTRA_TICKS:
                        yield _Spec(unit, rounding, float(tick), k, zero)

def _term_sets(spec: _Spec, ndist: int, ctx: dict, known_slack):
    allowed = _OS_TERMS.get(ctx.get("os"), _OS_TERMS[None])
    yield ()
    if ndist >= 3 and "prop" in allowed:
        yield (("prop", 0.0),)
    if spec.tick or ndist < 4:
        return
    if "idle" in allowed:
        for h in IDLE_HALF_NS:
            yield (("idle", h),)
    if "capped" in allowed:
        for kn in KNEE_NS:
            yield (("capped", kn),)
    if "select" in allowed and ctx.get("honours_slack", True) is not False:
        # the threshold is the thread's slack: fixed when it is known, else fitted
        svals = {float(known_slack)} if known_slack else set(SELECT_SLACK_NS)
        for s in sorted(svals):
            yield (("select", s),)
            if ndist >= 5:
                for h in IDLE_HALF_NS[::2]:
                    yield (("select", s), ("idle", h))
    if ndist >= 5 and "prop" in allowed and "idle" in allowed:
        for h in IDLE_HALF_NS[::2]:
            yield (("prop", 0.0), ("idle", h))

# ---------------------------------------------------------------------------
# Parameters of one method
# ---------------------------------------------------------------------------

@dataclass
class MethodParams:
    """Fitted components of one method on one machine/configuration (ns)."""

    method: str
    sleeps: bool = True               # False: duration does not follow the request (syscall floor)
    granularity_ns: int = 1           # unit of the call's timeout argument
    rounding: str = "up"              # how a request becomes whole units: "up" or "down"
    zero_return_ns: Optional[float] = None  # zero-timeout shortcut: cost when the timeout is 0
    tick_ns: float = 0.0              # tick quantisation (0 = high-resolution timers)
    extra_ticks: int = 0              # ticks added after rounding up
    constant_ns: float = 0.0          # constant term: slack + wake-up (negative: tick phase)
    slack_ns: Optional[float] = None  # part of the constant that is timer slack
    wakeup_ns: Optional[float] = None # part of the constant that is wake-up latency
    slack_source: str = ""            # "fitted", "applied", "host", "assumed", "method" or ""
    proportional: float = 0.0         # uncapped share of the (rounded) request added
    coalescing_share: float = 0.0     # capped leeway: min(share * d, cap)
    coalescing_cap_ns: float = 0.0
    select_slack_ns: Optional[float] = None  # max(this, 0.1 % of the timeout) when fitted
    idle_exit_ns: float = 0.0         # largest idle-exit penalty E
    idle_exit_half_ns: float = 0.0    # request length at which E/2 is paid
    entry_ns: float = 0.0             # set-up after the deadline: max(0, this - timeout) is added
    verdict: str = "unexplained"      # "explained", "partly" or "unexplained"
    verdict_note: str = ""
    residual: Dict[str, object] = field(default_factory=dict)
    causes: List[dict] = field(default_factory=list)
    parameters: Dict[str, dict] = field(default_factory=dict)
    alternatives: List[dict] = field(default_factory=list)
    reference_ns: float = 1e6
    identified: Dict[str, bool] = field(default_factory=dict)
    notes: Dict[str, str] = field(default_factory=dict)
    requested_ns: List[float] = field(default_factory=list)
    measured_ns: List[float] = field(default_factory=list)
    sigma_ns: List[float] = field(default_factory=list)
    chi2: float = 0.0
    dof: int = 0
    cost: float = 0.0                 # the structure's score (chi-square + penalties)

    # -- prediction -------------------------------------------------------
    def _spec(self) -> _Spec:
        terms = []
        if self.proportional:
            terms.append(("prop", 0.0))
        if self.coalescing_share and self.coalescing_cap_ns:
            terms.append(("capped", self.coalescing_cap_ns / self.coalescing_share))
        if self.select_slack_ns is not None:
            terms.append(("select", float(self.select_slack_ns)))
        if self.idle_exit_ns:
            terms.append(("idle", self.idle_exit_half_ns))
        if self.entry_ns:
            terms.append(("entry", float(self.entry_ns)))
        return _Spec(int(self.granularity_ns), self.rounding, float(self.tick_ns),
                     int(self.extra_ticks), self.zero_return_ns is not None, tuple(terms))

    def _beta(self, spec: _Spec):
        vals = [self.constant_ns]
        for t, _ in spec.terms:
            if t == "prop":
                vals.append(self.proportional * 1e6)
            elif t == "capped":
                vals.append(self.coalescing_share * 1e6)
            elif t == "idle":
                vals.append(self.idle_exit_ns)
            elif t == "entry":
                vals.append(self.entry_ns)
        return np.array(vals, dtype=float)

    def predict_ns(self, requested_ns):
        """Predicted actual duration(s) in ns for request(s) in ns."""
        req = np.asarray(requested_ns, dtype=float)
        if not self.sleeps:
            out = np.full(req.shape, self.constant_ns, dtype=float)
        else:
            spec = self._spec()
            out = _predict_spec(spec, self._beta(spec), self.zero_return_ns, np.atleast_1d(req))
            out = out.reshape(req.shape)
        return float(out) if out.ndim == 0 else out

    def components_ns(self, requested_ns: float) -> List[Tuple[str, float]]:
        """The named additive parts of the prediction for one request."""
        return [(label, v) for _, label, v in self._parts(float(requested_ns))]

    def _parts(self, req: float) -> List[Tuple[str, str, float]]:
        """(cause, label, ns) for one request; they sum to the prediction - req."""
        if not self.sleeps:
            return [("wakeup", "call cost", self.constant_ns - req)]
        unit_word = format_ns(self.granularity_ns).split()[-1]
        q = float(_round_unit(np.array([req]), self.granularity_ns, self.rounding)[0])
        parts: List[Tuple[str, str, float]] = []
        if q != req:
            how = "rounded up to whole" if q > req else "rounded down to whole"
            parts.append(("granularity", f"{how} {unit_word}", q - req))
        if q == 0 and self.zero_return_ns is not None:
            parts.append(("zero_shortcut", "zero timeout returns at once", self.zero_return_ns))
            return parts
        base = q
        if self.tick_ns:
            n = math.ceil(q / self.tick_ns - 1e-9)
            up = n * self.tick_ns
            if up != q:
                parts.append(("tick", f"rounded up to the {format_ns(self.tick_ns)} tick", up - q))
            if self.extra_ticks:
                parts.append(("tick", "one extra tick" if self.extra_ticks == 1
                              else f"{self.extra_ticks} extra ticks",
                              self.extra_ticks * self.tick_ns))
            base = up + self.extra_ticks * self.tick_ns
        if self.proportional:
            parts.append(("coalescing", f"proportional slack ({self.proportional * 100:.2g}%)",
                          self.proportional * base))
        if self.coalescing_share and self.coalescing_cap_ns:
            parts.append(("coalescing", f"coalescing leeway min({self.coalescing_share:.3g} x d, "
                                        f"{format_ns(self.coalescing_cap_ns)})",
                          min(self.coalescing_share * base, self.coalescing_cap_ns)))
        if self.select_slack_ns is not None:
            extra = max(0.0, SELECT_SHARE * base - self.select_slack_ns)
            if extra:
                parts.append(("select_slack", "select/poll slack above the timer slack "
                                              "(0.1% of the timeout)", extra))
        c = self.constant_ns
        if self.tick_ns:
            if c < 0:
                parts.append(("tick", "tick phase (the call starts after a tick)", c))
            elif c:
                parts.append(("wakeup", "constant overhead", c))
        elif self.slack_ns is not None and self.wakeup_ns is not None:
            if self.slack_ns:
                parts.append(("timer_slack", "timer slack", self.slack_ns))
            parts.append(("wakeup", "wake-up", self.wakeup_ns))
        elif c:
            parts.append(("wakeup", "wake-up and slack", c))
        if self.idle_exit_ns:
            parts.append(("idle_exit", "idle exit",
                          self.idle_exit_ns * base / (base + self.idle_exit_half_ns)))
        if self.entry_ns > base:
            parts.append(("wakeup", "set-up after the deadline (the request expired while the "
                                    "sleep was set up)", self.entry_ns - base))
        # never below the (rounded) request: the kernel does not wake early
        total = sum(v for _, _, v in parts)
        floor_gap = (q - req) - total
        if floor_gap > 0.5 and parts:
            parts.append(("tick", "the wake-up cannot come before the request", floor_gap))
        return parts

    def within_tolerance(self) -> np.ndarray:
        """Per measured point: is the prediction within max(5 %, 5 µs)?"""
        meas = np.asarray(self.measured_ns, dtype=float)
        pred = self.predict_ns(np.asarray(self.requested_ns, dtype=float))
        return np.abs(np.atleast_1d(pred) - meas) <= tolerance_ns(meas)

    def lodo(self) -> np.ndarray:
        """Leave one duration out: per measured point, is the prediction of a
        fit made without it within max(5 %, 5 µs)?"""
        args = getattr(self, "_fitargs", None)
        req = np.asarray(self.requested_ns, dtype=float)
        meas = np.asarray(self.measured_ns, dtype=float)
        out = np.zeros(len(req), dtype=bool)
        if args is None or len(req) < 2:
            return out
        for i in range(len(req)):
            keep = np.arange(len(req)) != i
            p = _fit_method(self.method, req[keep], meas[keep],
                            np.asarray(self.sigma_ns)[keep], args["unit_prior"], args["ctx"],
                            bootstrap=0)
            out[i] = abs(float(p.predict_ns(req[i])) - meas[i]) <= float(tolerance_ns(meas[i]))
        return out

    def to_dict(self) -> dict:
        return asdict(self)

    def to_json(self) -> dict:
        """The machine-readable fit: verdict, causes, parameters with intervals."""
        ok = self.within_tolerance()
        return {
            "method": self.method, "sleeps": self.sleeps, "verdict": self.verdict,
            "verdict_note": self.verdict_note, "reference_ns": self.reference_ns,
            "causes": self.causes, "parameters": self.parameters,
            "alternatives": self.alternatives, "residual": self.residual,
            "identified": self.identified, "notes": self.notes,
            "chi2": self.chi2, "dof": self.dof,
            "within_tolerance": [int(ok.sum()), int(ok.size)],
            "points": [{"requested_ns": r, "measured_ns": m, "sigma_ns": s,
                        "predicted_ns": float(self.predict_ns(r))}
                       for r, m, s in zip(self.requested_ns, self.measured_ns, self.sigma_ns)],
        }

def _apply(p: MethodParams, f: _Fit):
    s = f.spec
    p.granularity_ns = int(s.unit)
    p.rounding = s.rounding
    p.tick_ns = float(s.tick)
    p.extra_ticks = int(s.k)
    p.zero_return_ns = f.zero_ns if s.zero else None
    p.constant_ns = float(f.beta[0])
    p.proportional = p.coalescing_share = p.coalescing_cap_ns = 0.0
    p.idle_exit_ns = p.idle_exit_half_ns = 0.0
    p.select_slack_ns = None
    p.entry_ns = 0.0
    j = 1
    for t, v in s.terms:
        if t == "prop":
            p.proportional = float(f.beta[j]) / 1e6
            j += 1
        elif t == "capped":
            p.coalescing_share = float(f.beta[j]) / 1e6
            p.coalescing_cap_ns = p.coalescing_share * v
            j += 1
        elif t == "idle":
            p.idle_exit_ns = float(f.beta[j])
            p.idle_exit_half_ns = float(v) if p.idle_exit_ns else 0.0
            j += 1
        elif t == "select":
            p.select_slack_ns = float(v)
        elif t == "entry":
            p.entry_ns = float(f.beta[j])
            j += 1
    if p.coalescing_share == 0.0:
        p.coalescing_cap_ns = 0.0

def _wilson_hilferty_p(chi2: float, dof: int) -> float:
    """P(X >= chi2) for a chi-square with dof degrees of freedom."""
    if dof <= 0:
        return 1.0
    z = ((chi2 / dof) ** (1 / 3) - (1 - 2 / (9 * dof))) / math.sqrt(2 / (9 * dof))
    return 0.5 * math.erfc(z / math.sqrt(2))

def _shape(req, e, sig) -> str:
    """Words for the shape of what is left."""
    pos = req > 0
    if np.sum(pos) >= 3:
        x = np.log10(req[pos])
        r = e[pos]
        if np.ptp(x) > 0 and np.std(r) > 0:
            corr = float(np.corrcoef(x, r)[0, 1])
        else:
            corr = 0.0
    else:
        corr = 0.0
    big = np.abs(e) > 3 * sig
    signs = np.sign(e[big]) if np.any(big) else np.sign(e)
    changes = int(np.sum(np.abs(np.diff(np.sign(e[np.abs(e) > sig]))) > 0)) if np.sum(np.abs(e) > sig) > 1 else 0
    if changes >= 3 and len(e) >= 6:
        return "oscillating with d"
    if corr > 0.6:
        return "growing with d"
    if corr < -0.6:
        return "shrinking with d"
    if np.any(big):
        where = req[big]
        if np.all(where <= np.median(req)):
            return "at short durations"
        if np.all(where >= np.median(req)):
            return "at long durations"
    return "scattered" if len(set(signs.tolist())) > 1 else "constant"

def _verdict(p: MethodParams, req, y, sig, pred, k_params: float, alternatives):
    e = y - pred
    r = e / sig
    n = len(y)
    dof = int(max(n - math.ceil(k_params), 0))
    chi2 = float(np.sum(r ** 2))
    p.chi2, p.dof = chi2, dof
    over = np.maximum(y - req, 1.0)
    pval = _wilson_hilferty_p(chi2, dof) if dof > 0 else 1.0
    worst = int(np.argmax(np.abs(r))) if n else 0
    shape = _shape(req, e, sig)
    p.residual = {"chi2": round(chi2, 2), "dof": dof, "p_value": pval,
                  "max_abs_ns": float(np.max(np.abs(e))) if n else 0.0,
                  "at_requested_ns": float(req[worst]) if n else None,
                  "shape": shape}
    if len({float(x) for x in req}) < 3:
        p.verdict = "unexplained"
        p.verdict_note = (f"{len(set(req.tolist()))} duration(s) cannot tell the structures apart"
                          + ("; candidates: " + "; ".join(a["structure"] for a in alternatives)
                             if alternatives else ""))
        return
    frac_bad = float(np.mean(np.abs(r) > 3))
    rel = float(np.sqrt(np.mean(e ** 2)) / np.median(over))
    if dof < 1:
        p.verdict = "unexplained"
        p.verdict_note = (f"{n} durations for {math.ceil(k_params)} parameters: any structure "
                          "fits them, none is confirmed")
        if alternatives:
            p.verdict_note += "; candidates: " + "; ".join(a["structure"] for a in alternatives)
        return
    if pval >= 1e-3 and np.max(np.abs(r)) <= 5:
        p.verdict = "explained"
        p.verdict_note = "the residuals are consistent with the noise"
    elif frac_bad >= 0.34 and ((shape in ("oscillating with d", "scattered") and rel > 0.1)
                               or (frac_bad > 0.5 and rel > 0.5)):
        p.verdict = "unexplained"
        p.verdict_note = (f"not explained by these terms: {_us(float(np.max(np.abs(e))))} left, "
                          f"{shape} ({int(frac_bad * n)} of {n} points off by more than 3 sigma)")
    else:
        big = e[np.abs(r) > 3] if np.any(np.abs(r) > 3) else e
        lead = big[np.argmax(np.abs(big))]
        p.verdict = "partly"
        p.verdict_note = (f"{'+' if lead >= 0 else '-'}{_us(abs(float(lead)))} left "
                          f"(at {format_ns(float(req[worst]))}), {shape}, not in the family")
    if alternatives and p.verdict != "unexplained":
        p.verdict_note += ("; other structures fit about equally: "
                           + "; ".join(a["structure"] for a in alternatives))

def _fit_method(method, req, act, sig, unit_prior=1, ctx=None, bootstrap=BOOTSTRAP) -> MethodParams:
    ctx = dict(ctx or {})
    req = np.asarray(req, dtype=float)
    act = np.asarray(act, dtype=float)
    sig = np.asarray(sig, dtype=float)
    order = np.argsort(req, kind="stable")
    req, act, sig = req[order], act[order], sig[order]
    p = MethodParams(method=method, requested_ns=req.tolist(), measured_ns=act.tolist(),
                     sigma_ns=sig.tolist())
    p._fitargs = {"unit_prior": unit_prior, "ctx": ctx}  # type: ignore[attr-defined]
    p.reference_ns = _pick_request(p, None)
    n = len(req)
    long = req >= 100_000
    baseline = ctx.get("baseline")
    if baseline or (baseline is None and np.any(long) and np.median(act[long] / req[long]) < 0.5):
        p.sleeps = False
        w = 1.0 / sig ** 2
        p.constant_ns = float(np.sum(w * act) / np.sum(w))
        p.identified = {"sleeps": True, "constant": True}
        p.notes["sleeps"] = ("its duration does not follow the request: "
                             "it measures a floor (the cost of the call itself)")
        p.verdict = "explained"
        p.verdict_note = "a floor: the call's own cost"
        p.parameters = {"call_cost_ns": {"value": p.constant_ns, "interval": None,
                                         "identified": True}}
        p.causes = [{"name": "wakeup", "ns": p.constant_ns, "interval": None,
                     "label": "call cost"}]
        e = act - p.constant_ns
        p.chi2 = float(np.sum((e / sig) ** 2))
        p.dof = max(n - 1, 0)
        return p
    if n == 0:
        return p
    ndist = len(set(req.tolist()))

    def has_zero(unit, rounding):
        q = _round_unit(req, unit, rounding)
        return bool(np.any(q == 0) and np.any(q > 0))

    # Stage A: every discrete structure with a constant only.
    stage_a: List[_Fit] = []
    for spec in _stage_specs(unit_prior, has_zero):
        f = _solve(spec, req, act, sig, _prior(spec, unit_prior, ctx), n)
        if f is None:
            continue
        f.score += _physical_prior(f)
        stage_a.append(f)
    stage_a.sort(key=lambda f: f.score)
    pool: List[_Fit] = []
    seen = set()
    for f in stage_a:
        key = (f.spec.unit, f.spec.rounding, f.spec.tick, f.spec.k, f.spec.zero)
        if key in seen:
            continue
        seen.add(key)
        pool.append(f)
        if len(pool) >= 4:
            break
    for f in stage_a:       # the best tickless structures always compete
        if f.spec.tick == 0.0 and f not in pool:
            pool.append(f)
            if sum(1 for g in pool if g.spec.tick == 0.0) >= 2:
                break
    # Stage B: the shape terms on the best structures.
    known_slack = ctx.get("known_slack")
    cands: List[_Fit] = []
    for base in pool:
        for terms in _term_sets(base.spec, ndist, ctx, known_slack):
            spec = _Spec(base.spec.unit, base.spec.rounding, base.spec.tick, base.spec.k,
                         base.spec.zero, terms)
            if not terms:
                cands.append(base)
                continue
            f = _solve(spec, req, act, sig, _prior(spec, unit_prior, ctx), n)
            if f is None:
                continue
            # a term that came out at its bound of 0 adds nothing
            if len(f.beta) > 1 and np.any(f.beta[1:] <= 0):
                continue
            f.score += _physical_prior(f)
            cands.append(f)
    cands.sort(key=lambda f: f.score)
    # refine the shape parameter of the leading candidates between its grid
    # neighbours (a knee or a half-length between two grid points)
    grids = {"capped": KNEE_NS, "idle": IDLE_HALF_NS, "select": SELECT_SLACK_NS}
    extra = []
    for f in cands[:4]:
        for kind, g in grids.items():
            v = f.spec.term(kind)
            if v is None or v not in g or (kind == "select" and known_slack):
                continue
            i = g.index(v)
            lo = g[max(i - 1, 0)]
            hi = g[min(i + 1, len(g) - 1)]
            for x in np.geomspace(lo, hi, 13):
                terms = tuple((t, (float(x) if t == kind else w)) for t, w in f.spec.terms)
                spec = _Spec(f.spec.unit, f.spec.rounding, f.spec.tick, f.spec.k, f.spec.zero, terms)
                h = _solve(spec, req, act, sig, _prior(spec, unit_prior, ctx), n)
                if h is not None and not (len(h.beta) > 1 and np.any(h.beta[1:] <= 0)):
                    h.score += _physical_prior(h)
                    extra.append(h)
    cands = sorted(cands + extra, key=lambda f: f.score)
    # the leading candidates again, robustly (Huber)
    refined = []
    for f in cands[:8]:
        g = _solve(f.spec, req, act, sig, _prior(f.spec, unit_prior, ctx), n, huber=True)
        if g is not None:
            g.score += _physical_prior(g)
            refined.append(g)
    cands = sorted(refined + cands[8:], key=lambda f: f.score)
    if ndist >= 4:
        cands = sorted(cands + _entry_candidates(cands, req, act, sig, unit_prior, ctx),
                       key=lambda f: f.score)
    # among structures the noise cannot tell apart, the one that predicts the
    # most points within the reporting tolerance (a tie-break, not the criterion)
    tol = tolerance_ns(act)
    near = [f for f in cands if f.score - cands[0].score < _AMBIGUOUS]
    best = max(near, key=lambda f: (int(np.sum(np.abs(f.pred - act) <= tol)), -f.score))
    cands.remove(best)
    cands.insert(0, best)
    _apply(p, best)
    p.cost = best.score

    # --- alternatives: other cause sets that fit about as well ------------
    alts, seen_c = [], {best.spec.causes()}
    for f in cands[1:]:
        if f.score - best.score >= _AMBIGUOUS:
            continue
        cs = f.spec.causes()
        if cs in seen_c:
            continue
        if ndist >= 3 and np.max(np.abs(f.pred - best.pred) / sig) < 0.5:
            continue            # the same predictions on these data: not an alternative
        seen_c.add(cs)
        alts.append({"structure": ", ".join(cs) or "a constant only",
                     "score_gap": round(f.score - best.score, 2)})
        if abs(f.score - best.score) >= _AMBIGUOUS:
            alts.pop()
        if len(alts) >= 2:
            break
    if alts:
        alts.insert(0, {"structure": ", ".join(best.spec.causes()) or "a constant only",
                        "score_gap": 0.0})
    p.alternatives = alts if alts else []

    # --- identifiability of the discrete parts ------------------------------
    def best_where(pred):
        return min((f.score for f in cands + stage_a if pred(f.spec)), default=math.inf)

    s = best.spec
    ident, notes = p.identified, p.notes
    other_unit = best_where(lambda x: (x.unit, x.rounding) != (s.unit, s.rounding))
    ident["granularity"] = other_unit - best.score >= _IDENTIFIED
    if not ident["granularity"]:
        notes["granularity"] = ("not identifiable: the requests are whole multiples of every "
                                "candidate unit, so the prior unit "
                                f"({format_ns(unit_prior)}) is kept" if s.unit == unit_prior
                                else "weakly identified: another unit fits almost as well")
    ident["zero_shortcut"] = bool(s.zero)
    if not s.zero:
        zero_pts = np.any(_round_unit(req, s.unit, s.rounding) == 0)
        notes["zero_shortcut"] = ("no request rounds to a zero timeout" if not zero_pts else
                                  "a zero timeout still sleeps like any other request")
    if s.tick:
        tickless = best_where(lambda x: x.tick == 0.0 and (x.unit, x.rounding) == (s.unit, s.rounding))
        ident["tick"] = tickless - best.score >= _IDENTIFIED
        if not ident["tick"]:
            notes["tick"] = "a tickless model with a constant fits about as well"
        alt_k = best_where(lambda x: x.tick == s.tick and x.k != s.k
                           and (x.unit, x.rounding) == (s.unit, s.rounding))
        ident["extra_ticks"] = alt_k - best.score >= _IDENTIFIED
        if np.all(req < s.tick):
            notes["tick"] = (f"every request is below one {format_ns(s.tick)} tick "
                             f"(HZ={1e9 / s.tick:.0f}): each sleep lasts whole ticks")
    else:
        ticked = best_where(lambda x: x.tick != 0.0 and (x.unit, x.rounding) == (s.unit, s.rounding))
        ident["tick"] = ticked - best.score >= _IDENTIFIED
        ident["extra_ticks"] = False
        if not ident["tick"]:
            multiples = [T for T in TICK_CANDIDATES_NS
                         if np.all(np.abs(req / T - np.round(req / T)) < 1e-6)]
            notes["tick"] = ("not identifiable: every request is a whole number of "
                             + ", ".join(format_ns(T) for T in multiples) + " ticks"
                             if multiples else "not identifiable from these requests")
            c = p.constant_ns
            if multiples and c > 0:
                near = [T for T in multiples if abs(c - T) <= 0.05 * T]
                if near:
                    notes["tick"] += (f"; the {format_ns(c)} constant could equally be one "
                                      f"extra tick of a {format_ns(near[0])} (HZ={1e9 / near[0]:.0f}) clock")
        else:
            notes["tick"] = "no tick: the data need high-resolution timers"
    ident["constant"] = True
    ident["wakeup"] = False
    ident["slack"] = False

    # --- intervals: wild bootstrap of the linear parameters -----------------
    reps = _bootstrap(best, req, act, sig, bootstrap)
    p._reps = reps  # type: ignore[attr-defined]
    p._best = best  # type: ignore[attr-defined]
    ident["proportional"] = bool(p.proportional > 0)
    ident["coalescing"] = bool(p.coalescing_share > 0)
    ident["idle_exit"] = bool(p.idle_exit_ns > 0)
    ident["select_slack"] = p.select_slack_ns is not None
    if reps is not None:
        cols = s.columns()
        for j, name in enumerate(cols[1:], start=1):
            lo = float(np.percentile(reps["beta"][:, j], 2.5))
            key = {"p": "proportional", "a": "coalescing", "E": "idle_exit", "s": "entry"}[name]
            # a set-up no longer than the shortest request shows nowhere
            ident[key] = bool(lo > (float(np.min(req[req > 0])) if name == "s" else 0.0))
    if not p.proportional:
        top = float(req.max()) if len(req) else 0.0
        lim = float(np.min(sig)) * 3 / top * 100 if top else math.inf
        notes["proportional"] = f"no measurable effect (below about {lim:.2g}% of the longest request)"
    if not p.idle_exit_ns:
        notes["idle_exit"] = "no measurable growth with the sleep length"
    _verdict(p, req, act, sig, best.pred, s.n_params(), alts)
    return p

def _entry_candidates(cands: List[_Fit], req, y, sig, unit_prior, ctx) -> List[_Fit]:
    """The set-up after the deadline, max(0, s - d), added to the best fit of
    each of the leading tickless structures (their shapes as fitted).

    Given which requests are shorter than s (a partition), s is a bounded
    linear amount; the fit is continuous in s, so the partition is found by
    bisection from starting points on a grid, following where s wants to go.
    It is tried only where some requests are shorter than s and enough are
    longer to fit the rest of the structure with a degree of freedom to spare,
    and kept only where it is identified: refitted without it, the fit is
    worse by more than chi-square 3.84 (95 %, scaled by the misfit)."""
    n = len(req)
    out, kinds = [], set()
    for f in cands:
        key = (f.spec.unit, f.spec.rounding, f.spec.zero, tuple(t for t, _ in f.spec.terms))
        if f.spec.tick or key in kinds:
            continue
        kinds.add(key)
        b = _base(f.spec.unit, f.spec.rounding, 0.0, 0, req)[1]
        b = b[b > 0] if f.spec.zero else b
        u = np.unique(b)
        need = math.ceil(f.spec.n_params())
        # partition k: the requests below u[k] expired during the set-up
        ks = [k for k in range(1, len(u)) if u[k - 1] < ENTRY_MAX_NS and np.sum(b >= u[k]) > need]
        tried: Dict[int, Optional[_Fit]] = {}

        def at(k, huber=False):
            if k not in ks:
                return None
            if k not in tried or huber:
                spec = _Spec(f.spec.unit, f.spec.rounding, 0.0, 0, f.spec.zero,
                             f.spec.terms + (("entry", float(u[k])),))
                h = _solve(spec, req, y, sig, _prior(spec, unit_prior, ctx), n, huber=huber)
                if h is not None and (np.any(h.beta[1:] <= 0) or h.beta[-1] <= u[0]):
                    h = None             # a term at its bound, or a set-up no request shows
                if h is not None:
                    h.score += _physical_prior(h)
                if huber:
                    return h
                tried[k] = h
            return tried[k]

        def way(k):
            """Where s wants to go from partition k: -1 below it, +1 above, 0 inside."""
            h = at(k)
            if h is None:
                return -1
            sk = float(h.beta[-1])
            return 1 if sk >= u[k] * (1 - 1e-9) else -1 if sk <= u[k - 1] * (1 + 1e-9) else 0

        # F(s) is continuous: from starting points on a grid, bisect each bracket
        # that holds a minimum (s going up at its left end, down at its right)
        starts = sorted({int(np.searchsorted(u, g)) for g in ENTRY_NS} & set(ks))
        if not starts:
            continue
        ends = [(ks[0] - 1, 1)] + [(k, way(k)) for k in starts] + [(ks[-1] + 1, -1)]
        found = [k for k, w in ends[1:-1] if w == 0]
        for (a, wa), (c, wc) in zip(ends, ends[1:]):
            if wa <= 0 or wc >= 0:
                continue
            while c - a > 1:
                m = (a + c) // 2
                wm = way(m)
                if wm == 0:
                    break
                a, c = (m, c) if wm > 0 else (a, m)
            else:
                m = a if a >= ks[0] else c
            found.append(m)
        found = [k for k in found if at(k) is not None]
        if found:
            k = min(found, key=lambda j: at(j).score)
            h = at(k, huber=True)               # robustly, like the other leading fits
            wo = _solve(f.spec, req, y, sig, 0.0, n, huber=True)
            if h is not None and wo is not None:
                scale = max(1.0, h.chi2 / max(n - math.ceil(h.spec.n_params()), 1))
                if wo.chi2 - h.chi2 > 3.84 * scale:
                    out.append(h)
        if len(kinds) >= 4:
            break
    return out

def _bootstrap(best: _Fit, req, y, sig, B: int):
    if B <= 0:
        return None
    rng = np.random.default_rng(20260 + len(req))
    e = y - best.pred
    scale = np.maximum(sig, np.abs(e))
    V = rng.choice((-1.0, 1.0), size=(len(req), B))
    Y = best.pred[:, None] + scale[:, None] * V
    s = best.spec
    q, b = _base(s.unit, s.rounding, s.tick, s.k, req)
    zm = q == 0
    use = ~zm if s.zero else np.ones(len(req), dtype=bool)
    zero = None
    if s.zero:
        w = 1.0 / sig[zm] ** 2
        zero = np.maximum((w @ Y[zm]) / np.sum(w), 0.0)
    A, off, lb, ub = _design(s, b[use])
    Aw = A / sig[use, None]
    Yw = (Y[use] - off[:, None]) / sig[use, None]
    beta = _bls(Aw, Yw, lb, ub).T          # (B, m)
    return {"beta": beta, "zero": zero}

def _interval(vals) -> Optional[List[float]]:
    vals = np.asarray(vals, dtype=float)
    if vals.size == 0:
        return None
    return [float(np.percentile(vals, 2.5)), float(np.percentile(vals, 97.5))]

def _finish(p: MethodParams):
    """Parameters with intervals and the causes at the reference request,
    once the slack split is known."""
    if not p.sleeps:
        return
    reps = getattr(p, "_reps", None)
    best = getattr(p, "_best", None)
    spec = p._spec()
    names = {"c": "constant_ns", "p": "proportional", "a": "coalescing_share",
             "E": "idle_exit_ns", "s": "entry_ns"}
    params: Dict[str, dict] = {}
    beta_reps = reps["beta"] if reps is not None else None
    cols = spec.columns()
    for j, col in enumerate(cols):
        val = float(p._beta(spec)[j]) / (1e6 if col in ("p", "a") else 1.0)
        iv = None
        if beta_reps is not None and j < beta_reps.shape[1]:
            iv = _interval(beta_reps[:, j] / (1e6 if col in ("p", "a") else 1.0))
        params[names[col]] = {"value": val, "interval": iv,
                              "identified": bool(iv is not None and iv[0] > 0)}
    if p.tick_ns:
        params["tick_ns"] = {"value": p.tick_ns, "interval": None,
                             "identified": p.identified.get("tick", False)}
        params["extra_ticks"] = {"value": p.extra_ticks, "interval": None,
                                 "identified": p.identified.get("extra_ticks", False)}
    params["granularity_ns"] = {"value": p.granularity_ns, "interval": None,
                                "identified": p.identified.get("granularity", False)}
    if p.zero_return_ns is not None:
        iv = _interval(reps["zero"]) if reps is not None and reps["zero"] is not None else None
        params["zero_return_ns"] = {"value": p.zero_return_ns, "interval": iv, "identified": True}
    if p.coalescing_cap_ns:
        params["coalescing_cap_ns"] = {"value": p.coalescing_cap_ns, "interval": _profile(
            p, "capped"), "identified": p.identified.get("coalescing", False)}
    if p.idle_exit_ns:
        params["idle_exit_half_ns"] = {"value": p.idle_exit_half_ns,
                                       "interval": _profile(p, "idle"), "identified":
                                       p.identified.get("idle_exit", False)}
    if "entry_ns" in params:
        # s at or below the shortest request shows nowhere: the interval then reaches 0
        shortest = float(np.min(np.asarray(p.requested_ns)[np.asarray(p.requested_ns) > 0]))
        iv = params["entry_ns"]["interval"]
        if iv is not None and iv[0] <= shortest:
            iv[0] = 0.0
        params["entry_ns"]["identified"] = bool(iv is not None and iv[0] > 0)
        shorter = int(np.sum(np.asarray(p.requested_ns) < p.entry_ns))
        p.notes["entry"] = (f"the deadline is set at entry and the sleep's set-up takes about "
                            f"{_us(p.entry_ns)}" + (f" [{_us(iv[0])}, {_us(iv[1])}]" if iv else "")
                            + f": a shorter request returns after the set-up (seen at {shorter} "
                            f"of {len(set(p.requested_ns))} durations; longer ones hide it)")
    if p.select_slack_ns is not None:
        fixed = (getattr(p, "_fitargs", {}) or {}).get("ctx", {}).get("known_slack")
        params["select_slack_ns"] = {"value": p.select_slack_ns,
                                     "interval": None if fixed else _profile(p, "select"),
                                     "identified": not fixed}
    # slack / wake-up split of the constant (not for tick structures)
    c_reps = beta_reps[:, 0] if beta_reps is not None else None
    if not p.tick_ns and p.slack_ns is not None and p.wakeup_ns is not None:
        frac_known = p.slack_source in ("applied", "host", "assumed", "method")
        if c_reps is not None:
            if p.slack_source == "fitted":
                s_reps = np.maximum(c_reps - p.wakeup_ns, 0.0)
                w_iv = getattr(p, "_wakeup_iv", None)
            elif frac_known:
                s_reps = np.maximum(np.minimum(c_reps, p.slack_ns if p.slack_source != "method" else 0.0), 0.0)
                s_reps = np.minimum(s_reps, getattr(p, "_slack_known", p.slack_ns))
                w_iv = _interval(c_reps - s_reps)
            else:
                s_reps, w_iv = None, None
            params["timer_slack_ns"] = {"value": p.slack_ns,
                                        "interval": _interval(s_reps) if s_reps is not None else None,
                                        "identified": p.slack_source == "fitted"}
            params["wakeup_ns"] = {"value": p.wakeup_ns, "interval": w_iv,
                                   "identified": bool(w_iv is not None and w_iv[0] > 0)}
    p.parameters = params
    # causes at the reference request, with intervals from the replicates
    ref = p.reference_ns
    parts = p._parts(ref)
    agg: Dict[str, float] = {}
    labels: Dict[str, List[str]] = {}
    for cause, label, v in parts:
        agg[cause] = agg.get(cause, 0.0) + v
        labels.setdefault(cause, []).append(label)
    rep_vals: Dict[str, List[float]] = {}
    if beta_reps is not None and best is not None:
        clone = MethodParams(**{k: getattr(p, k) for k in (
            "method", "sleeps", "granularity_ns", "rounding", "zero_return_ns", "tick_ns",
            "extra_ticks", "constant_ns", "slack_ns", "wakeup_ns", "slack_source",
            "proportional", "coalescing_share", "coalescing_cap_ns", "select_slack_ns",
            "idle_exit_ns", "idle_exit_half_ns", "entry_ns")})
        known = getattr(p, "_slack_known", None)
        step = max(1, beta_reps.shape[0] // 100)
        for i in range(0, beta_reps.shape[0], step):
            bvec = beta_reps[i]
            clone.constant_ns = float(bvec[0])
            j = 1
            for t, _ in spec.terms:
                if t == "prop":
                    clone.proportional = float(bvec[j]) / 1e6
                    j += 1
                elif t == "capped":
                    clone.coalescing_share = float(bvec[j]) / 1e6
                    clone.coalescing_cap_ns = clone.coalescing_share * spec.term("capped")
                    j += 1
                elif t == "idle":
                    clone.idle_exit_ns = float(bvec[j])
                    j += 1
                elif t == "entry":
                    clone.entry_ns = float(bvec[j])
                    j += 1
            if reps.get("zero") is not None:
                clone.zero_return_ns = float(reps["zero"][i])
            if p.slack_ns is not None and not p.tick_ns:
                if p.slack_source == "fitted":
                    clone.wakeup_ns = p.wakeup_ns
                    clone.slack_ns = max(clone.constant_ns - p.wakeup_ns, 0.0)
                else:
                    cap = known if known is not None else p.slack_ns
                    clone.slack_ns = min(max(clone.constant_ns, 0.0), cap)
                    clone.wakeup_ns = clone.constant_ns - clone.slack_ns
            sums: Dict[str, float] = {}
            for cause, _, v in clone._parts(ref):
                sums[cause] = sums.get(cause, 0.0) + v
            for cause in set(agg) | set(sums):
                rep_vals.setdefault(cause, []).append(sums.get(cause, 0.0))
    causes = []
    for cause in CAUSES:
        if cause not in agg:
            continue
        v = agg[cause]
        if abs(v) < 50:          # below the clock read cost: not a cause worth naming
            continue
        iv = _interval(rep_vals[cause]) if cause in rep_vals else None
        causes.append({"name": cause, "ns": float(v), "interval": iv,
                       "label": ", ".join(labels[cause]),
                       "identified": _cause_identified(p, cause, iv)})
    load = getattr(p, "_load_ns", None)
    if load:
        causes.append({"name": "load", "ns": float(load), "interval": None,
                       "label": "the slack window was cut short by other wake-ups",
                       "identified": True})
    p.causes = causes

def _cause_identified(p: MethodParams, cause: str, iv) -> bool:
    if cause == "granularity":
        return p.identified.get("granularity", False) or p.granularity_ns > 1
    if cause == "tick":
        return p.identified.get("tick", False)
    if cause == "zero_shortcut":
        return p.identified.get("zero_shortcut", False)
    if cause == "timer_slack":
        return p.slack_source == "fitted" or bool(iv and iv[0] > 0)
    return bool(iv is not None and iv[0] > 0)

def _profile(p: MethodParams, kind: str) -> Optional[List[float]]:
    """Profile interval of a shape parameter: the grid values whose best fit
    is within chi-square 3.84 (scaled by the misfit) of the best."""
    args = getattr(p, "_fitargs", None)
    best = getattr(p, "_best", None)
    if args is None or best is None:
        return None
    req = np.asarray(p.requested_ns)
    y = np.asarray(p.measured_ns)
    sig = np.asarray(p.sigma_ns)
    coarse = {"capped": KNEE_NS, "idle": IDLE_HALF_NS, "select": SELECT_SLACK_NS}[kind]
    grid = sorted(set(np.geomspace(coarse[0], coarse[-1], 49).tolist())
                  | {float(best.spec.term(kind))})
    scale = max(1.0, best.chi2 / max(p.dof, 1))
    keep = []
    for g in grid:
        terms = tuple((t, (g if t == kind else v)) for t, v in best.spec.terms)
        spec = _Spec(best.spec.unit, best.spec.rounding, best.spec.tick, best.spec.k,
                     best.spec.zero, terms)
        f = _solve(spec, req, y, sig, 0.0, len(req), huber=True)
        if f is not None and f.chi2 - best.chi2 <= 3.84 * scale:
            val = g
            if kind == "capped":
                val = float(f.beta[1 + [t for t, _ in terms].index("capped")]) / 1e6 * g
            keep.append(val)
    if not keep:
        return None
    return [float(min(keep)), float(max(keep))]

# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------

def _method_info():
    """{name: (granularity_ns, honours_slack, family)} from the core's registry,
    or {} when the compiled core is not importable (analysis of records only)."""
    try:
        from ._api import methods
    except ImportError:
        return {}
    out = {}
    for m in methods():
        hs = {"yes": True, "no": False}.get(str(m.honours_slack))
        out[m.name] = (m.granularity_ns or 1, hs, m.family)
    return out

def _linux_version(os_name: str):
    m = re.search(r"linux\D*(\d+)\.(\d+)(?:\.(\d+))?", os_name or "", re.I)
    if not m:
        return None
    return tuple(int(x) for x in m.groups() if x is not None)

class Model:
    """Fitted components per method for one machine and configuration."""

    def __init__(self, params: Dict[str, MethodParams], facts: Optional[dict] = None,
                 label: str = ""):
        self.params = params
        self.facts = dict(facts or {})
        self.label = label

    def __repr__(self):
        return f"<sleepacc.model.Model {self.label or ''} methods={list(self.params)}>"

    @property
    def methods(self) -> List[str]:
        return list(self.params)

    def predict(self, method: str, seconds):
        """Predicted actual duration in seconds for a request in seconds."""
        if method not in self.params:
            raise ValueError(f"no fit for method {method!r}; fitted: {', '.join(self.params)}")
        if isinstance(seconds, bool):
            raise TypeError("seconds must be a number")
        arr = np.asarray(seconds, dtype=float)
        if np.any(~np.isfinite(arr)) or np.any(arr < 0):
            raise ValueError("seconds must be finite and >= 0")
        out = self.params[method].predict_ns(np.round(arr * 1e9)) / 1e9
        return float(out) if np.ndim(out) == 0 else out

    def within_tolerance(self) -> Tuple[int, int]:
        """(points within max(5 %, 5 µs), points) over all methods."""
        ok = n = 0
        for p in self.params.values():
            wt = p.within_tolerance()
            ok += int(np.sum(wt))
            n += int(wt.size)
        return ok, n

    def summary(self) -> List[dict]:
        """One flat row per method: the fitted components."""
        rows = []
        for name, p in self.params.items():
            ok = p.within_tolerance()
            rows.append({
                "group": self.label, "method": name, "sleeps": p.sleeps,
                "verdict": p.verdict, "causes": ",".join(c["name"] for c in p.causes),
                "granularity_ns": p.granularity_ns, "rounding": p.rounding,
                "zero_return_ns": p.zero_return_ns, "tick_ns": p.tick_ns,
                "extra_ticks": p.extra_ticks, "constant_ns": p.constant_ns,
                "slack_ns": p.slack_ns, "wakeup_ns": p.wakeup_ns,
                "proportional": p.proportional, "coalescing_share": p.coalescing_share,
                "coalescing_cap_ns": p.coalescing_cap_ns, "select_slack_ns": p.select_slack_ns,
                "idle_exit_ns": p.idle_exit_ns, "idle_exit_half_ns": p.idle_exit_half_ns,
                "entry_ns": p.entry_ns, "within": int(ok.sum()), "points": int(ok.size),
            })
        return rows

    def to_json(self) -> dict:
        """Machine-readable: per method verdict, causes and parameters with intervals."""
        facts = {k: v for k, v in self.facts.items()
                 if isinstance(v, (str, int, float, bool)) or v is None}
        return {"label": self.label, "facts": facts,
                "methods": {n: p.to_json() for n, p in self.params.items()}}

    # -- explanation --------------------------------------------------------
    def explain(self, method: Optional[str] = None, seconds: Optional[float] = None) -> str:
        """Plain sentences: the verdict, what a typical sleep is made of, then
        advice with the expected gain."""
        names = [method] if method is not None else list(self.params)
        out = []
        if self.label:
            out.append(f"{self.label}:")
        for name in names:
            if name not in self.params:
                raise ValueError(f"no fit for method {name!r}; fitted: {', '.join(self.params)}")
        out.extend(self._host_lines(names))
        for name in names:
            out.extend(_explain_one(self.params[name], self.facts, seconds))
        return "\n".join(out)

    def _host_lines(self, names) -> List[str]:
        """What the host facts (when the data carry them) say about the
        components: the configured HZ against the tick the data show."""
        f = self.facts
        hz = f.get("hz")
        if not isinstance(hz, (int, float)) or hz <= 0:
            return []
        facts = [f"HZ={hz:g}"]
        for key, label in (("clocksource", "clock source"), ("high_res_timers", "high-res timers")):
            if f.get(key) is not None:
                facts.append(f"{label} {f[key]}")
        if isinstance(f.get("timer_slack_ns"), (int, float)):
            facts.append(f"timer slack {format_ns(f['timer_slack_ns'])}")
        who = "documented" if f.get("hz_source") == "documented" else "host"
        lines = [f"{who}: " + ", ".join(facts) + "."]
        sleeping = [self.params[n] for n in names if self.params[n].sleeps]
        ticks = {p.tick_ns for p in sleeping if p.tick_ns}
        if sleeping and not ticks:
            lines.append(f"no method shows the {format_ns(1e9 / hz)} tick of HZ={hz:g}: "
                         "the timers fire between ticks (high-resolution, one-shot timers).")
        for t in sorted(ticks):
            agree = abs(t - 1e9 / hz) <= 0.02 * t
            lines.append(f"the fitted {format_ns(t)} tick {'matches' if agree else 'differs from'} "
                         f"HZ={hz:g}.")
        return lines

class ModelSet(dict):
    """Models per group (machine / configuration), keyed by the group tuple."""

    def __init__(self, by: Sequence[str], models: Mapping[tuple, Model]):
        super().__init__(models)
        self.by = tuple(by)

    def explain(self, method: Optional[str] = None, seconds: Optional[float] = None) -> str:
        parts = []
        for m in self.values():
            if method is not None and method not in m.params:
                continue
            parts.append(m.explain(method, seconds))
        if method is not None and not parts:
            fitted = sorted({n for m in self.values() for n in m.params})
            raise ValueError(f"no fit for method {method!r}; fitted: {', '.join(fitted)}")
        return "\n\n".join(parts)

    def within_tolerance(self) -> Tuple[int, int]:
        ok = n = 0
        for m in self.values():
            a, b = m.within_tolerance()
            ok += a
            n += b
        return ok, n

    def summary(self) -> List[dict]:
        rows = []
        for key, m in self.items():
            for r in m.summary():
                r.update({k: v for k, v in zip(self.by, key)})
                rows.append(r)
        return rows

    def to_json(self) -> dict:
        return {"groups": [dict(m.to_json(), key=dict(zip(self.by, key)))
                           for key, m in self.items()]}

    def find(self, **match) -> Model:
        """The one model whose group values match (text: an exact value, or
        else a substring): ms.find(host="XP1700"), find(timer_config="HZ=100")."""
        hits = []
        exact = {k: any(dict(zip(self.by, key)).get(k) == v for key in self)
                 for k, v in match.items()}
        for key, m in self.items():
            vals = dict(zip(self.by, key))
            good = True
            for k, v in match.items():
                have = vals.get(k)
                if isinstance(v, str) and not exact[k]:
                    good &= isinstance(have, str) and v in have
                else:
                    good &= have == v
            if good:
                hits.append(m)
        if len(hits) != 1:
            raise KeyError(f"{len(hits)} groups match {match}")
        return hits[0]

# Linux gives a real-time thread no timer slack (hrtimer sleeps and
# select's estimate both skip it for rt_task()).
_RT_POLICIES = ("fifo", "rr")

def _known_slack(facts: dict, slack_applied, honours) -> Tuple[Optional[float], str]:
    if honours is False:
        return 0.0, "method"
    if slack_applied is not None:
        return float(slack_applied), "applied"
    if isinstance(facts.get("timer_slack_ns"), (int, float)):
        return float(facts["timer_slack_ns"]), "host"
    ver = _linux_version(facts.get("os", "") or "")
    if ver is not None and ver >= (2, 6, 28):
        return float(LINUX_DEFAULT_SLACK_NS), "assumed"
    return None, ""

def _hybrid_slack(known: Optional[float], src: str, margin) -> Tuple[Optional[float], str]:
    """The slack a hybrid sleep shows: its kernel part ends `margin` ns before
    the deadline and a spin takes it from there, so a slack within the
    margin never shows (src "margin") and a larger one by its excess; with
    the margin (or the slack) not known, neither is what shows."""
    if src not in ("applied", "host", "assumed"):
        return known, src
    if not isinstance(margin, (int, float)) or known is None:
        return None, ""
    return (0.0, "margin") if known <= margin else (known - margin, src)

def _slack_for(p: MethodParams, known: Optional[float], src: str):
    """Attribute the constant to slack and wake-up from what is known."""
    if not p.sleeps or p.tick_ns:
        return
    margin = getattr(p, "_margin_ns", None)
    if src in ("method", "os", "margin", "policy"):
        p.slack_ns, p.wakeup_ns = 0.0, p.constant_ns
        p.slack_source = "method"
        p.notes["slack"] = {
            "method": "this method is not delayed by timer slack",
            "os": "timer slack is a Linux mechanism: the constant is wake-up",
            "policy": "a real-time thread (SCHED_FIFO, SCHED_RR) gets no timer slack: the "
                      "constant is wake-up",
            "margin": (f"the timer slack is within the hybrid margin ({_us(margin or 0.0)}): "
                       "the spin covers it, so it never shows"),
        }[src]
        return
    if p.select_slack_ns is not None and not known:
        # the knee of max(slack, 0.1% of d) measures the slack itself
        p.slack_ns = min(p.select_slack_ns, p.constant_ns)
        p.wakeup_ns = p.constant_ns - p.slack_ns
        p.slack_source = "fitted"
        p.identified["slack"] = True
        p.notes["slack"] = ("fitted from where select's 0.1% of the timeout overtakes the "
                            "timer slack")
        return
    if known is None:
        p.notes["slack"] = "timer slack and wake-up latency cannot be told apart here"
        return
    p._slack_known = known  # type: ignore[attr-defined]
    eff = min(known, max(p.constant_ns, 0.0))
    p.slack_ns = eff
    p.wakeup_ns = p.constant_ns - eff
    p.slack_source = src
    p.notes["slack"] = {
        "applied": "split using the slack applied for the run (one setting: not fitted)",
        "host": "split using the host's timer_slack_ns (one setting: not fitted)",
        "assumed": ("split assuming Linux's default 50 µs timer slack: one slack setting "
                    "cannot separate slack from wake-up latency"),
    }[src]
    if margin is not None:
        p.notes["slack"] += f", less the hybrid margin ({_us(margin)}) its spin covers"
    reps = getattr(p, "_reps", None)
    if known >= 5_000 and reps is not None:
        hi = float(np.percentile(reps["beta"][:, 0], 97.5))
        if hi < 0.8 * known:
            p._load_ns = known - p.constant_ns  # type: ignore[attr-defined]
            p.notes["load"] = (f"the oversleep ({_us(p.constant_ns)}) is below the "
                               f"{_us(known)} slack: other wake-ups cut the slack window short")

def _group_facts(recs: List[dict]) -> dict:
    facts = {}
    for r in recs:
        h = r.get("_host")
        if h:
            facts.update(h)
            break
    hz = re.search(r"HZ=(\d+)", str(recs[0].get("timer_config") or ""))
    if hz and "hz" not in facts:
        facts["hz"] = int(hz.group(1))  # documented by the source of the numbers
        facts["hz_source"] = "documented"
    for k in ("seed", "host", "os", "timer_config"):
        v = recs[0].get(k)
        if v is not None:
            facts.setdefault(k if k != "host" else "host_name", v)
            if k == "os":
                facts["os"] = v
    if "os" not in facts:
        sysname = facts.get("sysname") or facts.get("system")
        rel = facts.get("kernel_release") or facts.get("release")
        if sysname or rel:
            facts["os"] = f"{sysname or 'Linux'} {rel or ''}".strip()
    return facts

def _fit_group(recs: List[dict], label: str, info=None, bootstrap=BOOTSTRAP) -> Model:
    info = _method_info() if info is None else info
    pts: Dict[str, Dict[float, List[Tuple[float, float]]]] = {}
    margins: Dict[str, set] = {}
    for r in recs:
        y, req = r.get("actual_ns"), r.get("requested_ns")
        if not isinstance(y, (int, float)) or not isinstance(req, (int, float)):
            continue
        if not (math.isfinite(y) and math.isfinite(req)):
            continue
        s, _ = _point_sigma(r, float(y), float(req))
        pts.setdefault(str(r["method"]), {}).setdefault(float(req), []).append((float(y), s))
        margins.setdefault(str(r["method"]), set()).add(r.get("margin_ns"))
    facts = _group_facts(recs)
    slack_vals = {r.get("slack_ns") for r in recs if r.get("slack_ns") is not None}
    slack_applied = next(iter(slack_vals)) if len(slack_vals) == 1 else None
    kind = _os_kind(facts)
    hres = str(facts.get("high_res_timers") or "").lower() in ("yes", "true", "1", "on")
    # the run's policy (one per group: a group key), else the thread's at the start
    policy = next((r["policy"] for r in recs if r.get("policy")), None) or facts.get("sched_policy")
    params = {}
    for method, by_req in pts.items():
        req = sorted(by_req)
        act, sig = [], []
        for x in req:
            vals = by_req[x]
            ys = np.array([v for v, _ in vals])
            ss = np.array([s for _, s in vals])
            act.append(float(np.median(ys)))
            spread = float(np.std(ys)) if len(ys) > 1 else 0.0
            sig.append(max(float(np.sqrt(np.mean(ss ** 2) / len(ss))), spread / math.sqrt(len(ys)),
                           _FLOOR_NS))
        row = info.get(method)
        unit = int(row[0]) if row else 1
        honours = row[1] if row else None
        family = row[2] if row else None
        known, src = _known_slack(facts, slack_applied, honours)
        if kind not in ("linux", None):
            known, src = 0.0, "os"
        elif policy in _RT_POLICIES and src in ("applied", "host", "assumed"):
            known, src = 0.0, "policy"
        margin = None
        if family == "hybrid":   # one margin for all its points, else not known
            ms = margins.get(method, set())
            margin = next(iter(ms)) if len(ms) == 1 else None
            known, src = _hybrid_slack(known, src, margin)
        honours = False if src in ("margin", "policy") else honours
        ctx = {"os": kind, "hres": hres, "honours_slack": honours,
               "known_slack": known if src in ("applied", "host", "assumed") else None,
               "baseline": (family == "baseline") if family else None}
        p = _fit_method(method, req, act, sig, unit_prior=max(unit, 1), ctx=ctx,
                        bootstrap=bootstrap)
        if margin is not None:
            p._margin_ns = float(margin)  # type: ignore[attr-defined]
        if row:
            p._registry_unit = unit  # type: ignore[attr-defined]
        _slack_for(p, known, src)
        params[method] = p
    m = Model(params, facts, label)
    m.slack_applied = slack_applied  # type: ignore[attr-defined]
    return m

def fit_groups(data, by: Sequence[str] = GROUP_KEYS, bootstrap: int = BOOTSTRAP) -> ModelSet:
    """Fit one Model per group of records (by the columns in `by` that the
    records carry), then separate timer slack from wake-up latency where
    groups differ only in the applied slack."""
    recs = to_records(data)
    if not recs:
        raise ValueError("no records to fit")
    for r in recs:
        if "method" not in r or "requested_ns" not in r:
            raise ValueError("records need method, requested_ns and actual_ns")
    keys = [k for k in by if any(r.get(k) is not None for r in recs)]
    groups: Dict[tuple, List[dict]] = {}
    for r in recs:
        groups.setdefault(tuple(r.get(k) for k in keys), []).append(r)
    info = _method_info()
    models = {}
    for key, rs in groups.items():
        label = " / ".join(
            f"slack {format_ns(v)}" if k == "slack_ns" else
            f"dma latency {v} µs" if k == "dma_latency_us" else
            f"policy {v}" if k == "policy" else f"{v}"
            for k, v in zip(keys, key) if v is not None and k != "seed")
        models[key] = _fit_group(rs, label, info, bootstrap)
    ms = ModelSet(keys, models)
    _separate_slack(ms)
    _compare_dma(ms)
    for m in ms.values():
        for p in m.params.values():
            _finish(p)
    return ms

def _separate_slack(ms: ModelSet):
    """Across groups that differ only in the applied slack, the constant term
    is latency + slack: its intercept against the applied slack is the
    wake-up latency (>= 0), and each group's fitted slack is what remains."""
    if "slack_ns" not in ms.by:
        return
    si = ms.by.index("slack_ns")
    families: Dict[tuple, List[tuple]] = {}
    for key in ms:
        if key[si] is None:
            continue
        families.setdefault(key[:si] + key[si + 1:], []).append(key)
    for fam_keys in families.values():
        if len(fam_keys) < 2:
            continue
        methods = set.intersection(*(set(ms[k].params) for k in fam_keys))
        for method in methods:
            ps = [ms[k].params[method] for k in fam_keys]
            if any(not p.sleeps or p.tick_ns or p.slack_source == "method" for p in ps):
                continue
            s = np.array([float(k[si]) for k in fam_keys])
            c = np.array([p.constant_ns for p in ps])
            if np.ptp(s) <= 0:
                continue
            pairs = [(c[j] - c[i]) / (s[j] - s[i]) for i in range(len(s))
                     for j in range(i + 1, len(s)) if s[j] != s[i]]
            slope = float(np.median(pairs))
            intercept = max(float(np.median(c - slope * s)), 0.0)
            intercept = min(intercept, float(np.min(c)))
            # interval of the intercept: the spread of the leave-one-setting-out intercepts
            ivs = []
            for drop in range(len(s)):
                keep = np.arange(len(s)) != drop
                if np.ptp(s[keep]) > 0:
                    sl = float(np.polyfit(s[keep], c[keep], 1)[0])
                    ivs.append(max(float(np.median(c[keep] - sl * s[keep])), 0.0))
            w_iv = [min(ivs + [intercept]), max(ivs + [intercept])] if ivs else None
            for p in ps:
                p.wakeup_ns = float(intercept)
                p.slack_ns = float(max(p.constant_ns - intercept, 0.0))
                p.slack_source = "fitted"
                p.identified["slack"] = True
                p.identified["wakeup"] = intercept > 0
                p._wakeup_iv = w_iv  # type: ignore[attr-defined]
                p.notes["slack"] = (
                    f"fitted across {len(ps)} applied slack settings: the constant grows "
                    f"{slope:.2f} ns per ns of slack; wake-up latency is the intercept")

def _compare_dma(ms: ModelSet):
    """Groups that differ only in a held cpu_dma_latency of 0: the difference
    of their predictions is the measured idle-exit cost; it is noted on the
    group that did not hold it."""
    if "dma_latency_us" not in ms.by:
        return
    di = ms.by.index("dma_latency_us")
    held = {k[:di] + k[di + 1:]: k for k in ms if k[di] == 0}
    for key in ms:
        if key[di] is not None:
            continue
        other = held.get(key[:di] + key[di + 1:])
        if other is None:
            continue
        for name, p in ms[key].params.items():
            q = ms[other].params.get(name)
            if q is None or not p.sleeps or not q.sleeps:
                continue
            ref = p.reference_ns
            gain = float(p.predict_ns(ref)) - float(q.predict_ns(ref))
            p.notes["idle_exit"] = (f"measured: holding cpu_dma_latency at 0 changes the "
                                    f"{format_ns(ref)} prediction by {'-' if gain >= 0 else '+'}"
                                    f"{_us(abs(gain))}")
            p.identified["idle_exit_measured"] = gain > 0


def fit(data, by: Optional[Sequence[str]] = None, bootstrap: int = BOOTSTRAP):
    """Fit the oversleep model.

    data: a Sweep, Measurement(s), tidy records, a CSV path or a DataFrame.
    Returns a Model (``.params[method]``, ``.predict``, ``.explain``,
    ``.to_json``) when the data hold one machine/configuration, else a
    ModelSet of Models keyed by the group columns (seed, host, os,
    timer_config, applied slack, dma latency, scheduling policy)."""
    ms = fit_groups(data, by if by is not None else GROUP_KEYS, bootstrap)
    if len(ms) == 1:
        return next(iter(ms.values()))
    return ms

# ---------------------------------------------------------------------------
# Explanation
# ---------------------------------------------------------------------------

def _us(ns: float) -> str:
    a = abs(ns)
    if a >= 10_000_000:
        return f"{ns / 1e6:.1f} ms"
    if a >= 10_000:
        return f"{ns / 1e3:.0f} µs"
    if a >= 1_000:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"

def _pick_request(p: MethodParams, seconds) -> float:
    if seconds is not None:
        return float(round(seconds * 1e9))
    req = p.requested_ns
    if not req:
        return 1e6
    for want in (1e6, 3e6, 1e5, 1e7):
        if want in req:
            return want
    nonzero = [r for r in req if r > 0] or req
    return float(nonzero[len(nonzero) // 2])

def _explain_one(p: MethodParams, facts: dict, seconds) -> List[str]:
    req = _pick_request(p, seconds)
    pred = p.predict_ns(req)
    measured = None
    if req in p.requested_ns:
        measured = p.measured_ns[p.requested_ns.index(req)]
    meas_txt = f" (measured {_us(measured)})" if measured is not None else ""
    name = p.method
    lines = []
    if not p.sleeps:
        lines.append(f"{name}({format_ns(req)}) does not sleep: every call costs "
                     f"{_us(p.constant_ns)}{meas_txt}. {p.notes.get('sleeps', '')}".rstrip())
        return lines
    parts = p._parts(req)
    if any(c == "zero_shortcut" for c, _, _ in parts):
        lines.append(f"{name}({format_ns(req)}) = {_us(req)} asked, rounded down to 0 "
                     f"{format_ns(p.granularity_ns).split()[-1]}: the call returns at once = "
                     f"{_us(pred)}{meas_txt}.")
    else:
        terms = [f"{_us(req)} asked"]
        for _, label, v in parts:
            if abs(v) < 0.5:
                continue
            terms.append(f"{'+' if v >= 0 else '-'} {_us(abs(v))} {label}")
        lines.append(f"{name}({format_ns(req)}) = " + " ".join(terms) + f" = {_us(pred)}{meas_txt}.")
    lines.append(f"  verdict: {p.verdict} ({p.verdict_note}).")
    if p.causes:
        cs = []
        for c in p.causes:
            iv = c.get("interval")
            ivt = f" [{_us(iv[0])}, {_us(iv[1])}]" if iv else ""
            cs.append(f"{c['name']} {_us(c['ns'])}{ivt}"
                      + ("" if c.get("identified", True) else " (not identified)"))
        lines.append(f"  causes at {format_ns(p.reference_ns)}: " + "; ".join(cs) + ".")
    ok = p.within_tolerance()
    lines.append(f"  fit: {int(ok.sum())} of {ok.size} measured durations within "
                 "max(5%, 5 µs) of the model.")
    for comp in ("granularity", "tick", "slack", "load", "idle_exit", "entry"):
        note = p.notes.get(comp)
        if not note:
            continue
        if comp == "granularity" and "weakly" not in note:
            continue
        if comp in ("tick", "slack") and p.identified.get(comp, False) and "below one" not in note:
            continue
        if comp == "idle_exit" and not note.startswith("measured"):
            continue
        lines.append(f"  {comp}: {note}.")
    lines.extend("  advice: " + a for a in _advice(p, facts, req))
    return lines

def _advice(p: MethodParams, facts: dict, req: float) -> List[str]:
    """Fixes for the causes found, for the OS the data come from; never a
    fix for a cause the fit did not find, never "nothing to remove" above a
    finding."""
    out = []
    name = p.method
    kind = _os_kind(facts)
    linux = kind in ("linux", None) and kind != "windows"
    if p.verdict == "unexplained":
        out.append("the model cannot say what this oversleep is made of"
                   + (": measure more durations" if len(set(p.requested_ns)) < 3 else
                      "; the advice below covers only what it could name"))
    if p.tick_ns:
        hz = 1e9 / p.tick_ns
        alt = MethodParams(**{**{k: getattr(p, k) for k in (
            "method", "granularity_ns", "rounding", "zero_return_ns", "proportional",
            "idle_exit_ns", "idle_exit_half_ns")}, "tick_ns": 0.0, "extra_ticks": 0,
            "constant_ns": max(p.constant_ns, 0.0)})
        gain = p.predict_ns(req) - alt.predict_ns(req)
        extra = (f", and {p.extra_ticks} extra tick{'s' if p.extra_ticks > 1 else ''} "
                 "so it never ends early") if p.extra_ticks else ""
        if kind == "windows":
            fix = ("timeBeginPeriod(1) (a 1 ms tick) or a high-resolution waitable timer "
                   "(CREATE_WAITABLE_TIMER_HIGH_RESOLUTION, Windows 10 1803+)")
        else:
            fix = "a high-resolution-timer (tickless) kernel"
        out.append(f"the {format_ns(p.tick_ns)} tick (HZ={hz:.0f}) rounds every sleep up to whole "
                   f"ticks{extra}: {fix} would save about {_us(max(gain, 0.0))} on a "
                   f"{format_ns(req)} sleep.")
    if p.granularity_ns >= 1_000_000 and p.rounding == "up":
        q = _round_unit(np.array([100_000.0]), p.granularity_ns, p.rounding)[0]
        alt = ("ppoll, epoll_pwait2 or clock_nanosleep take ns" if linux else
               "a call that takes a finer timeout")
        out.append(f"{name} counts its timeout in whole ms: a 100 µs request waits "
                   f"{_us(q)} before anything else; {alt} and would save about "
                   f"{_us(q - 100_000)}.")
    if p.proportional >= 0.001:
        gain = p.proportional * req
        if kind == "freebsd" or p.proportional > 0.01:
            out.append(f"the kernel may defer a timer by about {p.proportional * 100:.1f}% of its "
                       f"length to batch wake-ups (FreeBSD: sysctl kern.timecounter.alloweddeviation, "
                       f"default 5%, which the kernel applies as a power-of-two share, 1/16 = 6.25%); "
                       f"setting it to 0 saves about {_us(gain)} on a {format_ns(req)} sleep.")
    if p.coalescing_share and p.coalescing_cap_ns:
        gain = min(p.coalescing_share * req, p.coalescing_cap_ns)
        how = ("macOS: a real-time thread (THREAD_TIME_CONSTRAINT_POLICY) or a latency QoS "
               "gets a tighter leeway" if kind == "darwin" else
               "a real-time or latency-critical thread gets a tighter leeway")
        out.append(f"timer coalescing lets the wake-up slip by min({p.coalescing_share:.3g} x d, "
                   f"{_us(p.coalescing_cap_ns)}) ({_us(gain)} on {format_ns(req)}): {how}.")
    if p.select_slack_ns is not None:
        extra = max(0.0, SELECT_SHARE * req - p.select_slack_ns)
        out.append(f"select/poll allow max(slack, 0.1% of the timeout) ({_us(extra)} above the "
                   f"slack on {format_ns(req)}, growing with d): nanosleep, timerfd or "
                   "epoll_pwait2 with a timerfd avoid the share.")
    if p.slack_ns and p.slack_ns >= 5_000 and linux:
        how = " (assumed)" if p.slack_source == "assumed" else ""
        out.append(f"timer slack costs {_us(p.slack_ns)} per sleep{how}: "
                   "prctl(PR_SET_TIMERSLACK, 1), a real-time policy, or timerfd removes it.")
    elif p.slack_ns is None and not p.tick_ns and p.constant_ns >= 30_000 and linux and \
            "linux" in (facts.get("os") or "").lower():
        out.append(f"the {_us(p.constant_ns)} constant is the size of Linux's 50 µs timer slack: "
                   "prctl(PR_SET_TIMERSLACK, 1) or timerfd would remove most of it.")
    if getattr(p, "_load_ns", None):
        out.append("the sleeps end before the slack runs out: other wake-ups (load) cut the "
                   "window short; the figures depend on what else runs.")
    wake = p.wakeup_ns if p.wakeup_ns is not None else (p.constant_ns if not p.tick_ns else None)
    margin = getattr(p, "_margin_ns", None)
    if margin is not None and p.constant_ns >= 2_000:   # a hybrid sleep ending late
        out.append(f"the kernel part ends {_us(p.constant_ns)} past the deadline: its timer slack "
                   f"and wake-up outrun the {_us(margin)} margin; a larger margin (--margin), or "
                   "the auto sleeper, which learns it, spins that part instead.")
    elif wake is not None and wake >= 2_000 and not (p.slack_ns is None and p.constant_ns >= 30_000):
        out.append(f"wake-up takes {_us(wake)}: the hybrid method (sleep, then spin the last "
                   f"part) removes it at the cost of CPU time.")
    if p.idle_exit_ns >= 2_000:
        e_req = p.idle_exit_ns * req / (req + p.idle_exit_half_ns)
        # E is the asymptote (d -> infinity) of E*d/(d+h): say what the longest measured
        # sleep pays, not a figure no measurement reached
        d_top = float(max(p.requested_ns)) if len(p.requested_ns) else req
        e_top = p.idle_exit_ns * d_top / (d_top + p.idle_exit_half_ns)
        # a hybrid sleep still idles in its kernel part: its spin hides the exit only
        # when the margin covers slack + wake-up + this
        hide = (f"a hybrid sleep hides it behind its spin when its margin also covers these "
                f"{_us(e_top)} (the auto sleeper learns such a margin)")
        fix = ("holding /dev/cpu_dma_latency at 0 (sleepacc --dma-latency 0) avoids the deep idle "
               "state; " + hide if linux else hide)
        if margin is not None:   # a hybrid sleep already: its kernel part outruns the margin
            fix = (f"the kernel part then ends past the {_us(margin)} margin; "
                   + ("holding /dev/cpu_dma_latency at 0 (sleepacc --dma-latency 0), " if linux
                      else "") + "a larger margin (--margin), or the auto sleeper, which "
                   "learns it, keeps the spin ahead of it")
        out.append(f"idle exit grows to {_us(e_top)} at {format_ns(d_top)}, the longest measured "
                   f"({_us(e_req)} at {format_ns(req)}): {fix}.")
    if p.zero_return_ns is not None and p.rounding == "down" and \
            getattr(p, "_registry_unit", None) == 1:   # the call takes ns: nothing truncates
        out.append(f"a timeout below about {format_ns(p.granularity_ns)} returns at once "
                   f"({_us(p.zero_return_ns)}) without sleeping: {name} takes ns, so its deadline "
                   "has passed before it would sleep (the call's own entry takes that long); "
                   "a wait that short needs a spin.")
    elif p.zero_return_ns is not None and p.rounding == "down":
        out.append(f"a timeout below {format_ns(p.granularity_ns)} is truncated to 0 and returns "
                   f"at once ({_us(p.zero_return_ns)}): it does not sleep at all; round up, or "
                   "use a call that takes ns.")
    over = float(p.predict_ns(req)) - req
    if not out:
        if over < 5_000:
            out.append("nothing large to remove: this method already sleeps about as asked.")
        else:
            out.append(f"{_us(over)} over the request, none of it from a cause with a known fix.")
    return out
