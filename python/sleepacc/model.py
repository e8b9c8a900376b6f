"""The oversleep model: why a sleep lasts longer than asked.

``fit(data)`` takes a :class:`Sweep`, a list of measurements, or tidy records
(dicts, a CSV path such as ``tests/data/seed_results.csv``, or a pandas frame)
with at least ``method, requested_ns, actual_ns``, and explains every method's
actual duration as a sum of named components:

API granularity
    the call takes its timeout in whole µs (select, usleep) or ms (poll,
    epoll_wait, kqueue's EVFILT_TIMER); a request is rounded up, or down by a
    caller that truncates, and a timeout that becomes 0 returns at once (the
    *zero-timeout shortcut*, which costs one system call).
tick quantisation
    on a periodic-tick kernel (HZ=100 -> T = 10 ms) the wake-up happens on a
    tick: ``ceil(request / T) * T``, plus ``k`` extra ticks (FreeBSD and
    Linux 2.4 nanosleep/usleep add one so that a sleep never ends early).
    A negative constant on top of it is the *tick phase*: the loop starts its
    next sleep a little after the tick that woke it.
constant slack and wake-up latency
    Linux lets a timer fire up to the thread's timer slack late (50 µs by
    default) so that wake-ups coalesce; then the scheduler takes a few µs to
    run the thread.  From one slack setting only their sum is identifiable;
    with several applied slacks the model separates them.
proportional slack
    select/poll on Linux allow 0.1 % of the timeout; FreeBSD's calloutng lets
    an event be deferred by a share of its timeout
    (``kern.timecounter.alloweddeviation``, 5 % by default).
idle-exit penalty
    a longer sleep lets the CPU reach a deeper idle state (or the hypervisor
    deschedule the vCPU), and leaving it costs more: ``E * d / (d + d½)``.

The fit is robust: medians of samples where samples exist (means are all the
seed documents publish), least absolute deviations weighted by the test
tolerance max(5 %, 5 µs), and an exhaustive search over the discrete parts
(unit, rounding, tick candidates, extra ticks).  A component enters only when
it improves the fit by more than one tolerance unit; each parameter records
whether the data identified it, and why not when they did not.

All values are in ns internally; ``predict`` takes and returns seconds.
"""

from __future__ import annotations

import csv
import itertools
import math
import os
import re
from dataclasses import dataclass, field, asdict
from typing import Dict, List, Mapping, Optional, Sequence, Tuple

import numpy as np

from ._units import format_ns

__all__ = [
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

# Kernel tick lengths tried: HZ = 1000, 500, 300, 250, 100 and Windows' 64 Hz.
TICK_CANDIDATES_NS = (1_000_000, 2_000_000, 10_000_000 / 3, 4_000_000, 10_000_000, 15_625_000)
EXTRA_TICKS = (0, 1, 2)
UNITS_NS = (1, 1_000, 1_000_000)
# Idle-exit half-lengths tried (ns).
IDLE_HALF_NS = (10e3, 30e3, 100e3, 300e3, 1e6, 3e6, 10e6, 30e6, 100e6)
# Columns that identify one machine/configuration in tidy records.
GROUP_KEYS = ("seed", "host", "os", "timer_config", "slack_ns")

# A component enters the model only when it lowers the weighted cost by at
# least this many tolerance units.
_ENTRY = 1.0

# Unit of the timeout argument of well-known calls (ns); ties in the fit are
# broken toward these.  The live registry (sleepacc.methods()) is consulted
# first when the compiled core is importable.
_DEFAULT_UNIT = {
    "select": 1_000, "usleep": 1_000, "poll": 1_000_000, "epoll_wait": 1_000_000,
    "kqueue": 1_000_000,
}
# Methods whose wake-up the Linux timer slack delays (fallback when the core
# registry is not available).
_SLACK_NO = {"timerfd", "timer_signal", "spin", "sched_yield", "syscall", "clock", "hybrid"}
# Baseline methods: they do not sleep at all.
_BASELINE = {"syscall", "clock"}

LINUX_DEFAULT_SLACK_NS = 50_000


def tolerance_ns(measured_ns):
    """The agreement the model aims for: max(5 % of the measured value, 5 µs)."""
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
            "p1_ns", "p99_ns", "median_ns", "mean_ns", "cpu_percent", "cpu_ns_per_call"}


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


def _measurement_record(m, host: Optional[Mapping] = None) -> dict:
    d = m.to_dict() if hasattr(m, "to_dict") else dict(m)
    st = d.get("stats") or {}
    req = int(d["requested_ns"])
    mode = d.get("mode", "relative")
    med = st.get("median")
    samples = d.get("samples")
    arr = None
    if samples is not None:
        arr = np.asarray(samples, dtype=np.int64)
        if arr.size == 0:
            arr = None
    if arr is not None:
        med = float(np.median(arr))
    shift = req if mode == "periodic" else 0
    rec = {
        "method": d["method"],
        "mode": mode,
        "requested_ns": req,
        "actual_ns": (med + shift) if med is not None else None,
        "n": d.get("n", st.get("n")),
        "min_ns": (st.get("min") + shift) if st.get("min") is not None else None,
        "max_ns": (st.get("max") + shift) if st.get("max") is not None else None,
        "p99_ns": (st.get("p99") + shift) if st.get("p99") is not None else None,
        "cpu_percent": d.get("cpu_percent"),
        "cpu_ns_per_call": d.get("cpu_ns_per_call"),
    }
    if arr is not None:
        rec["p1_ns"] = float(np.percentile(arr, 1)) + shift
        rec["p99_ns"] = float(np.percentile(arr, 99)) + shift
    env = d.get("env") or {}
    slack = env.get("slack_ns", env.get("slack"))
    if isinstance(slack, (int, float)) and slack > 0:
        rec["slack_ns"] = int(slack)
    host = dict(host or d.get("host") or {})
    if host:
        rec["_host"] = host
    return rec


def _is_measurement(x) -> bool:
    return hasattr(x, "to_dict") and hasattr(x, "requested_ns") and hasattr(x, "method")


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


# ---------------------------------------------------------------------------
# Parameters
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
    slack_source: str = ""            # "fitted", "host", "assumed" or ""
    proportional: float = 0.0         # share of the (rounded) request added
    idle_exit_ns: float = 0.0         # largest idle-exit penalty E
    idle_exit_half_ns: float = 0.0    # request length at which E/2 is paid
    identified: Dict[str, bool] = field(default_factory=dict)
    notes: Dict[str, str] = field(default_factory=dict)
    requested_ns: List[float] = field(default_factory=list)
    measured_ns: List[float] = field(default_factory=list)
    cost: float = 0.0                 # weighted LAD cost (tolerance units)

    # -- prediction -------------------------------------------------------
    def predict_ns(self, requested_ns):
        """Predicted actual duration(s) in ns for request(s) in ns."""
        req = np.asarray(requested_ns, dtype=float)
        out = _predict(self._struct(), self._cont(), req)
        return float(out) if out.ndim == 0 else out

    def components_ns(self, requested_ns: float) -> List[Tuple[str, float]]:
        """The named additive parts of the prediction for one request."""
        req = float(requested_ns)
        if not self.sleeps:
            return [("call cost", self.constant_ns - req)]
        q = _round_unit(np.array([req]), self.granularity_ns, self.rounding)[0]
        parts: List[Tuple[str, float]] = []
        if q != req:
            unit = format_ns(self.granularity_ns)
            how = "rounded up to whole" if q > req else "rounded down to whole"
            parts.append((f"{how} {unit.split()[-1]}", q - req))
        if q == 0 and self.zero_return_ns is not None:
            parts.append(("zero timeout returns at once", self.zero_return_ns))
            return parts
        base = q
        if self.tick_ns:
            n = math.ceil(q / self.tick_ns - 1e-9)
            up = n * self.tick_ns
            if up != q:
                parts.append((f"rounded up to the {format_ns(self.tick_ns)} tick", up - q))
            if self.extra_ticks:
                parts.append(("one extra tick" if self.extra_ticks == 1
                              else f"{self.extra_ticks} extra ticks",
                              self.extra_ticks * self.tick_ns))
            base = up + self.extra_ticks * self.tick_ns
        if self.proportional:
            parts.append((f"proportional slack ({self.proportional * 100:.2g}%)",
                          self.proportional * base))
        c = self.constant_ns
        if self.tick_ns and c < 0:
            parts.append(("tick phase (the call starts after a tick)", c))
        elif self.slack_ns is not None and self.wakeup_ns is not None:
            parts.append(("timer slack", self.slack_ns))
            parts.append(("wake-up", self.wakeup_ns))
        elif c:
            parts.append(("constant overhead" if self.tick_ns else "wake-up and slack", c))
        if self.idle_exit_ns:
            parts.append(("idle exit", self.idle_exit_ns * base / (base + self.idle_exit_half_ns)))
        return parts

    def _struct(self):
        return (self.sleeps, self.granularity_ns, self.rounding, self.zero_return_ns,
                self.tick_ns, self.extra_ticks)

    def _cont(self):
        return (self.constant_ns, self.proportional, self.idle_exit_ns, self.idle_exit_half_ns)

    def within_tolerance(self) -> np.ndarray:
        """Per measured point: is the prediction within max(5 %, 5 µs)?"""
        meas = np.asarray(self.measured_ns, dtype=float)
        pred = self.predict_ns(np.asarray(self.requested_ns, dtype=float))
        return np.abs(np.atleast_1d(pred) - meas) <= tolerance_ns(meas)

    def to_dict(self) -> dict:
        return asdict(self)


def _round_unit(req, unit, rounding):
    if unit <= 1:
        return np.floor(req + 0.5) if rounding == "down" else np.ceil(req - 1e-9)
    if rounding == "down":
        return np.floor(req / unit + 1e-9) * unit
    return np.ceil(req / unit - 1e-9) * unit


def _base(struct, req):
    sleeps, unit, rounding, zero, tick, k = struct
    q = _round_unit(req, unit, rounding)
    if tick:
        b = (np.ceil(q / tick - 1e-9) + k) * tick
    else:
        b = q
    return q, b


def _predict(struct, cont, req):
    sleeps, unit, rounding, zero, tick, k = struct
    c, p, e, half = cont
    req = np.asarray(req, dtype=float)
    if not sleeps:
        return np.full(req.shape, c, dtype=float) if req.ndim else np.array(c, dtype=float)
    q, b = _base(struct, req)
    out = b + c + p * b
    if e:
        out = out + e * b / (b + half)
    if zero is not None:
        out = np.where(q == 0, zero, out)
    return out


# ---------------------------------------------------------------------------
# Fitting one method
# ---------------------------------------------------------------------------

def _wmedian(values, weights):
    order = np.argsort(values)
    v = values[order]
    w = weights[order]
    cw = np.cumsum(w)
    i = int(np.searchsorted(cw, 0.5 * cw[-1]))
    return float(v[min(i, len(v) - 1)])


def _lad(X, y, w, nonneg):
    """Weighted least absolute deviations by vertex enumeration.

    X: (n, m) design, y: (n,), w: (n,) weights, nonneg: (m,) bool — which
    coefficients must be >= 0.  Returns (beta, cost).  Exact for the small
    n of a sweep (the optimum passes through m points)."""
    n, m = X.shape
    best_beta = np.zeros(m)
    best_cost = float(np.sum(w * np.abs(y)))
    if n == 0:
        return best_beta, 0.0
    if m == 1 and not nonneg[0]:
        # weighted median of y / x (x constant 1 in practice)
        if np.all(X[:, 0] == 1.0):
            b = _wmedian(y, w)
            return np.array([b]), float(np.sum(w * np.abs(y - b)))
    combos = np.array(list(itertools.combinations(range(n), m))) if n >= m else None
    if combos is None or len(combos) == 0:
        beta, *_ = np.linalg.lstsq(X, y, rcond=None)
        if np.any(beta[nonneg] < 0):
            beta = np.where(nonneg & (beta < 0), 0.0, beta)
        return beta, float(np.sum(w * np.abs(y - X @ beta)))
    A = X[combos]            # (K, m, m)
    Y = y[combos]            # (K, m)
    det = np.linalg.det(A)
    scale = np.prod(np.abs(A).max(axis=1) + 1e-300, axis=1)
    ok = np.abs(det) > 1e-9 * scale
    if not np.any(ok):
        return best_beta, best_cost
    B = np.linalg.solve(A[ok], Y[ok][..., None])[..., 0]   # (K', m)
    feas = np.all((B >= -1e-12) | ~nonneg[None, :], axis=1)
    if not np.any(feas):
        return best_beta, best_cost
    B = B[feas]
    R = y[None, :] - B @ X.T
    costs = np.sum(w[None, :] * np.abs(R), axis=1)
    i = int(np.argmin(costs))
    if costs[i] < best_cost:
        return B[i], float(costs[i])
    return best_beta, best_cost


@dataclass
class _Candidate:
    score: float
    cost: float
    struct: tuple
    cont: tuple
    used: Tuple[bool, bool]  # proportional, idle exit


def _fit_linear(base, y, w, allow_p=True, allow_e=True, cmax=math.inf):
    """Best (c, p, E, half) for y = c + p*base + E*base/(base+half), with
    |c| <= cmax (on a tick, a constant of a whole tick is an extra tick)."""
    ones = np.ones_like(base)
    X1 = ones[:, None]
    beta, cost = _lad(X1, y, w, np.array([False]))
    if abs(beta[0]) > cmax:
        beta = np.array([math.copysign(cmax, beta[0])])
        cost = float(np.sum(w * np.abs(y - beta[0])))
    best = _Candidate(cost, cost, (), (beta[0], 0.0, 0.0, 0.0), (False, False))
    bscale = 1e6
    if allow_p and len(base) >= 3 and np.ptp(base) > 0:
        X = np.column_stack([ones, base / bscale])
        beta, cost = _lad(X, y, w, np.array([False, True]))
        sc = cost + _ENTRY
        if sc < best.score and abs(beta[0]) <= cmax:
            best = _Candidate(sc, cost, (), (beta[0], beta[1] / bscale, 0.0, 0.0), (True, False))
    if allow_e and len(base) >= 4 and np.ptp(base) > 0:
        for half in IDLE_HALF_NS:
            g = base / (base + half)
            X = np.column_stack([ones, g])
            beta, cost = _lad(X, y, w, np.array([False, True]))
            sc = cost + 1.5 * _ENTRY
            if beta[1] > 0 and sc < best.score and abs(beta[0]) <= cmax:
                best = _Candidate(sc, cost, (), (beta[0], 0.0, beta[1], half), (False, True))
            if allow_p and len(base) >= 5:
                X = np.column_stack([ones, base / bscale, g])
                beta, cost = _lad(X, y, w, np.array([False, True, True]))
                sc = cost + 2.5 * _ENTRY
                if beta[2] > 0 and beta[1] > 0 and sc < best.score and abs(beta[0]) <= cmax:
                    best = _Candidate(sc, cost, (), (beta[0], beta[1] / bscale, beta[2], half),
                                      (True, True))
    return best


def _structures(default_unit):
    for unit in UNITS_NS:
        for rounding in (("up",) if unit == 1 else ("up", "down")):
            pen = 0.0 if unit == default_unit else 1.5 * _ENTRY
            if unit == default_unit and rounding == "down":
                pen = 0.25 * _ENTRY
            yield (unit, rounding, 0.0, 0, pen)
            for tick in TICK_CANDIDATES_NS:
                for k in EXTRA_TICKS:
                    yield (unit, rounding, float(tick), k, pen + _ENTRY + 0.1 * k)


def _eval_structure(req, act, w, unit, rounding, tick, k, full):
    struct0 = (True, unit, rounding, None, tick, k)
    q, b = _base(struct0, req)
    zero_mask = q == 0
    results = []
    # (a) every point on the formula
    cmax = 0.5 * tick if tick else math.inf
    cand = _fit_linear(b, act - b, w, allow_p=full, allow_e=full, cmax=cmax)
    cand.struct = struct0
    results.append(cand)
    # (b) requests that round to 0 return at once
    if np.any(zero_mask) and np.sum(~zero_mask) >= 1:
        z = float(np.median(act[zero_mask]))
        zc = float(np.sum(w[zero_mask] * np.abs(act[zero_mask] - z)))
        nz = ~zero_mask
        c2 = _fit_linear(b[nz], act[nz] - b[nz], w[nz], allow_p=full, allow_e=full, cmax=cmax)
        c2.cost += zc
        c2.score += zc + _ENTRY
        c2.struct = (True, unit, rounding, z, tick, k)
        results.append(c2)
    return min(results, key=lambda c: c.score)


def _fit_method(method, req, act, default_unit=1):
    req = np.asarray(req, dtype=float)
    act = np.asarray(act, dtype=float)
    order = np.argsort(req)
    req, act = req[order], act[order]
    w = 1.0 / tolerance_ns(act)
    p = MethodParams(method=method, requested_ns=req.tolist(), measured_ns=act.tolist())
    # A method that does not sleep: its duration ignores the request.
    long = req >= 100_000
    if method in _BASELINE or (np.any(long) and np.median(act[long] / req[long]) < 0.5):
        p.sleeps = False
        p.constant_ns = float(np.median(act))
        p.cost = float(np.sum(w * np.abs(act - p.constant_ns)))
        p.identified = {"sleeps": True, "constant": True}
        p.notes["sleeps"] = ("its duration does not follow the request: "
                             "it measures a floor (the cost of the call itself)")
        return p

    # Stage A: discrete structure with a constant (+ zero shortcut) only.
    stage_a = []
    for unit, rounding, tick, k, pen in _structures(default_unit):
        cand = _eval_structure(req, act, w, unit, rounding, tick, k, full=False)
        cand.score += pen
        stage_a.append(cand)
    stage_a.sort(key=lambda c: c.score)
    # Stage B: the best few structures with proportional slack and idle exit.
    best = None
    seen = set()
    pool = []
    for cand in stage_a:
        key = cand.struct[1:3] + cand.struct[4:6]
        if key in seen:
            continue
        seen.add(key)
        pool.append(cand)
        if len(pool) >= 4:
            break
    # always consider the best tickless structure, so a tick must earn its place
    for cand in stage_a:
        if cand.struct[4] == 0.0:
            if cand not in pool:
                pool.append(cand)
            break
    final = []
    for cand in pool:
        _, unit, rounding, _, tick, k = cand.struct
        pen = cand.score - cand.cost - (_ENTRY if cand.struct[3] is not None else 0.0)
        full = _eval_structure(req, act, w, unit, rounding, tick, k, full=True)
        full.score += max(pen, 0.0)
        final.append(full)
        if best is None or full.score < best.score:
            best = full
    assert best is not None

    sleeps, unit, rounding, zero, tick, k = best.struct
    c, prop, e, half = best.cont
    p.granularity_ns = int(unit)
    p.rounding = rounding
    p.zero_return_ns = zero
    p.tick_ns = float(tick)
    p.extra_ticks = int(k)
    p.constant_ns = float(c)
    p.proportional = float(prop)
    p.idle_exit_ns = float(e)
    p.idle_exit_half_ns = float(half) if e else 0.0
    p.cost = best.cost

    # --- identifiability ------------------------------------------------
    # Identified = every alternative without it fits worse by at least one
    # tolerance unit (costs of the constant-only stage, a zero shortcut
    # counted as one more parameter; no tie-breaking penalties).
    def ncost(x):  # cost plus one unit for a zero-shortcut parameter
        return x.cost + (_ENTRY if x.struct[3] is not None else 0.0)

    def best_where(pred):
        xs = [x for x in stage_a if pred(x.struct)]
        return min((ncost(x) for x in xs), default=math.inf)

    a_best = min((ncost(x) for x in stage_a
                  if x.struct[1:3] == (unit, rounding) and x.struct[4:6] == (tick, k)),
                 default=ncost(stage_a[0]))
    ident = p.identified
    notes = p.notes
    other_unit = best_where(lambda s: s[1] != unit or s[2] != rounding)
    ident["granularity"] = other_unit - a_best >= _ENTRY
    if not ident["granularity"]:
        notes["granularity"] = ("not identifiable: the requests are whole multiples of every "
                                "candidate unit, so the call's documented unit "
                                f"({format_ns(default_unit)}) is kept" if unit == default_unit
                                else "weakly identified: another unit fits almost as well")
    zero_pts = np.any(_round_unit(req, unit, rounding) == 0)
    ident["zero_shortcut"] = bool(zero is not None)
    if zero is None:
        notes["zero_shortcut"] = ("no request rounds to a zero timeout" if not zero_pts else
                                  "a zero timeout still sleeps like any other request")
    if tick:
        # with the call's unit held (it is the API's, a documented fact)
        tickless = best_where(lambda s: s[4] == 0.0 and s[1:3] == (unit, rounding))
        ident["tick"] = tickless - a_best >= _ENTRY
        if not ident["tick"]:
            notes["tick"] = "a tickless model with a constant fits as well"
        alt_k = best_where(lambda s: s[4] == tick and s[5] != k and s[1:3] == (unit, rounding))
        ident["extra_ticks"] = alt_k - a_best >= _ENTRY
    else:
        ticked = best_where(lambda s: s[4] != 0.0 and s[1:3] == (unit, rounding))
        ident["tick"] = ticked - a_best >= _ENTRY
        ident["extra_ticks"] = False
        if not ident["tick"]:
            multiples = [T for T in TICK_CANDIDATES_NS
                         if np.all(np.abs(req / T - np.round(req / T)) < 1e-6)]
            notes["tick"] = ("not identifiable: every request is a whole number of "
                             + ", ".join(format_ns(T) for T in multiples) + " ticks"
                             if multiples else "not identifiable from these requests")
            if multiples and c > 0:
                near = [T for T in multiples if abs(c - T) <= 0.05 * T]
                if near:
                    notes["tick"] += (f"; the {format_ns(c)} constant could equally be one "
                                      f"extra tick of a {format_ns(near[0])} (HZ={1e9 / near[0]:.0f}) clock")
        else:
            notes["tick"] = "no tick: the data need high-resolution timers"
    ident["constant"] = True
    ident["proportional"] = bool(prop > 0)
    if not prop:
        top = float(req.max()) if len(req) else 0.0
        lim = float(tolerance_ns(act.max())) / top * 100 if top else math.inf
        notes["proportional"] = (f"no measurable effect (below about {lim:.2g}% of "
                                 "the longest request)")
    ident["idle_exit"] = bool(e > 0)
    if not e:
        notes["idle_exit"] = "no measurable growth with the sleep length"
    ident["slack"] = False
    ident["wakeup"] = False
    return p


# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------

def _method_info():
    """{name: (granularity_ns, honours_slack)} from the core's registry, or
    {} when the compiled core is not importable (analysis of records only)."""
    try:
        from ._api import methods
    except ImportError:
        return {}
    out = {}
    for m in methods():
        hs = {"yes": True, "no": False}.get(str(m.honours_slack))
        out[m.name] = (m.granularity_ns or 1, hs)
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
                "granularity_ns": p.granularity_ns, "rounding": p.rounding,
                "zero_return_ns": p.zero_return_ns, "tick_ns": p.tick_ns,
                "extra_ticks": p.extra_ticks, "constant_ns": p.constant_ns,
                "slack_ns": p.slack_ns, "wakeup_ns": p.wakeup_ns,
                "proportional": p.proportional, "idle_exit_ns": p.idle_exit_ns,
                "idle_exit_half_ns": p.idle_exit_half_ns,
                "within": int(ok.sum()), "points": int(ok.size),
            })
        return rows

    # -- explanation --------------------------------------------------------
    def explain(self, method: Optional[str] = None, seconds: Optional[float] = None) -> str:
        """Plain sentences: what a typical sleep is made of, then advice with
        the expected gain."""
        names = [method] if method else list(self.params)
        out = []
        if self.label:
            out.append(f"{self.label}:")
        out.extend(self._host_lines(names))
        for name in names:
            if name not in self.params:
                raise ValueError(f"no fit for method {name!r}; fitted: {', '.join(self.params)}")
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
            if method and method not in m.params:
                continue
            parts.append(m.explain(method, seconds))
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


def _slack_for(p: MethodParams, facts: dict, slack_applied, info):
    """Attribute the constant to slack and wake-up from what is known."""
    hs = info.get(p.method, (None, None))[1] if p.method in info else None
    if hs is None:
        hs = p.method not in _SLACK_NO and not p.method.startswith("go-")
    if not p.sleeps or p.tick_ns or not hs:
        if p.sleeps and not p.tick_ns and not hs:
            p.slack_ns, p.wakeup_ns = 0.0, p.constant_ns
            p.slack_source = "method"
            p.notes["slack"] = "this method is not delayed by timer slack"
        return
    known = None
    if slack_applied is not None:
        known, src = float(slack_applied), "applied"
    elif facts.get("timer_slack_ns") is not None:
        known, src = float(facts["timer_slack_ns"]), "host"
    else:
        ver = _linux_version(facts.get("os", "") or "")
        if ver is not None and ver >= (2, 6, 28):
            known, src = float(LINUX_DEFAULT_SLACK_NS), "assumed"
    if known is None:
        p.notes["slack"] = "timer slack and wake-up latency cannot be told apart here"
        return
    known = min(known, max(p.constant_ns, 0.0))
    p.slack_ns = known
    p.wakeup_ns = p.constant_ns - known
    p.slack_source = src
    p.notes["slack"] = {
        "applied": "split using the slack applied for the run (one setting: not fitted)",
        "host": "split using the host's timer_slack_ns (one setting: not fitted)",
        "assumed": ("split assuming Linux's default 50 µs timer slack: one slack setting "
                    "cannot separate slack from wake-up latency"),
    }[src]


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


def _fit_group(recs: List[dict], label: str, info=None) -> Model:
    info = _method_info() if info is None else info
    by_method: Dict[str, Dict[float, List[float]]] = {}
    for r in recs:
        if r.get("actual_ns") is None or r.get("requested_ns") is None:
            continue
        by_method.setdefault(str(r["method"]), {}).setdefault(
            float(r["requested_ns"]), []).append(float(r["actual_ns"]))
    facts = _group_facts(recs)
    slack_vals = {r.get("slack_ns") for r in recs if r.get("slack_ns") is not None}
    slack_applied = next(iter(slack_vals)) if len(slack_vals) == 1 else None
    params = {}
    for method, pts in by_method.items():
        req = sorted(pts)
        act = [float(np.median(pts[x])) for x in req]
        unit = info.get(method, (None,))[0] or _DEFAULT_UNIT.get(method, 1)
        p = _fit_method(method, req, act, default_unit=int(unit))
        _slack_for(p, facts, slack_applied, info)
        params[method] = p
    m = Model(params, facts, label)
    m.slack_applied = slack_applied  # type: ignore[attr-defined]
    return m


def fit_groups(data, by: Sequence[str] = GROUP_KEYS) -> ModelSet:
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
        label = " / ".join(f"{v}" if k != "slack_ns" else f"slack {format_ns(v)}"
                           for k, v in zip(keys, key) if v is not None and k != "seed")
        models[key] = _fit_group(rs, label, info)
    ms = ModelSet(keys, models)
    _separate_slack(ms)
    return ms


def _separate_slack(ms: ModelSet):
    """Across groups that differ only in the applied slack, the constant term
    is latency + slack: its intercept against the applied slack is the
    wake-up latency, and each group's fitted slack is what remains."""
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
            if any(not p.sleeps or p.tick_ns for p in ps):
                continue
            s = np.array([float(k[si]) for k in fam_keys])
            c = np.array([p.constant_ns for p in ps])
            if np.ptp(s) <= 0:
                continue
            # Theil-Sen: median of pairwise slopes, median intercept (robust
            # to one disturbed setting)
            pairs = [(c[j] - c[i]) / (s[j] - s[i]) for i in range(len(s))
                     for j in range(i + 1, len(s)) if s[j] != s[i]]
            slope = float(np.median(pairs))
            intercept = float(np.median(c - slope * s))
            for p, si_val in zip(ps, s):
                p.wakeup_ns = float(intercept)
                p.slack_ns = float(p.constant_ns - intercept)
                p.slack_source = "fitted"
                p.identified["slack"] = True
                p.identified["wakeup"] = True
                p.notes["slack"] = (
                    f"fitted across {len(ps)} applied slack settings: the constant grows "
                    f"{slope:.2f} ns per ns of slack; wake-up latency is the intercept")


def fit(data, by: Optional[Sequence[str]] = None):
    """Fit the oversleep model.

    data: a Sweep, Measurement(s), tidy records, a CSV path or a DataFrame.
    Returns a Model (``.params[method]``, ``.predict``, ``.explain``) when the
    data hold one machine/configuration, else a ModelSet of Models keyed by
    the group columns (seed, host, os, timer_config, applied slack)."""
    ms = fit_groups(data, by if by is not None else GROUP_KEYS)
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
    terms = [f"{_us(req)} asked"]
    for label, v in p.components_ns(req):
        if label.startswith("zero timeout"):
            terms = [f"{_us(req)} asked", f"rounded down to 0 {format_ns(p.granularity_ns).split()[-1]}"]
            break
        if abs(v) < 0.5:
            continue
        sign = "+" if v >= 0 else "-"
        terms.append(f"{sign} {_us(abs(v))} {label}")
    if p.zero_return_ns is not None and _round_unit(np.array([req]), p.granularity_ns,
                                                      p.rounding)[0] == 0:
        lines.append(f"{name}({format_ns(req)}) = {terms[0]}, {terms[1]}: the call returns at "
                     f"once = {_us(pred)}{meas_txt}.")
    else:
        lines.append(f"{name}({format_ns(req)}) = " + " ".join(
            t if i == 0 else t for i, t in enumerate(terms)).replace(" asked ", " asked ")
            + f" = {_us(pred)}{meas_txt}.")
    ok = p.within_tolerance()
    lines.append(f"  fit: {int(ok.sum())} of {ok.size} measured durations within "
                 "max(5%, 5 µs) of the model.")
    # what the data could not tell
    for comp in ("granularity", "tick", "slack"):
        note = p.notes.get(comp)
        if note and not p.identified.get(comp, False) and comp != "granularity" or (
                comp == "granularity" and note and "weakly" in note):
            lines.append(f"  {comp}: {note}.")
    lines.extend("  advice: " + a for a in _advice(p, facts, req))
    return lines


def _advice(p: MethodParams, facts: dict, req: float) -> List[str]:
    out = []
    name = p.method
    if p.tick_ns:
        hz = 1e9 / p.tick_ns
        alt = MethodParams(**{**p.to_dict(), "tick_ns": 0.0, "extra_ticks": 0,
                              "constant_ns": max(p.constant_ns, 0.0)})
        gain = p.predict_ns(req) - alt.predict_ns(req)
        extra = (f", and {p.extra_ticks} extra tick{'s' if p.extra_ticks > 1 else ''} "
                 "so it never ends early") if p.extra_ticks else ""
        out.append(f"the {format_ns(p.tick_ns)} tick (HZ={hz:.0f}) rounds every sleep up to whole "
                   f"ticks{extra}: a high-resolution-timer (tickless) kernel would save about "
                   f"{_us(gain)} on a {format_ns(req)} sleep.")
    if p.granularity_ns >= 1_000_000:
        q = _round_unit(np.array([100_000.0]), p.granularity_ns, p.rounding)[0]
        out.append(f"{name} counts its timeout in whole ms: a 100 µs request waits "
                   f"{_us(q)} before anything else; ppoll, epoll_pwait2 or clock_nanosleep "
                   f"take ns and would save about {_us(q - 100_000)}.")
    if p.proportional >= 0.001:
        gain = p.proportional * req
        if p.proportional > 0.01:
            out.append(f"the kernel may defer a timer by about {p.proportional * 100:.1f}% of its "
                       f"length to batch wake-ups (FreeBSD: sysctl kern.timecounter.alloweddeviation, "
                       f"default 5%, which the kernel applies as a power-of-two share, 1/16 = 6.25%); "
                       f"setting it to 0 saves about {_us(gain)} on a {format_ns(req)} sleep.")
        else:
            out.append(f"select/poll allow {p.proportional * 100:.2g}% of the timeout as slack "
                       f"({_us(gain)} on {format_ns(req)}); nanosleep or a real-time policy avoid it.")
    if p.slack_ns and p.slack_ns >= 5_000:
        how = {"fitted": "", "applied": "", "host": "", "assumed": " (assumed)"}.get(p.slack_source, "")
        out.append(f"timer slack costs {_us(p.slack_ns)} per sleep{how}: "
                   "prctl(PR_SET_TIMERSLACK, 1), a real-time policy, or timerfd removes it.")
    elif p.slack_ns is None and not p.tick_ns and p.constant_ns >= 30_000 and \
            _linux_version(facts.get("os", "") or "") is None and "linux" in (facts.get("os") or "").lower():
        out.append(f"the {_us(p.constant_ns)} constant is the size of Linux's 50 µs timer slack: "
                   "prctl(PR_SET_TIMERSLACK, 1) or timerfd would remove most of it.")
    wake = p.wakeup_ns if p.wakeup_ns is not None else (p.constant_ns if not p.tick_ns else None)
    if wake is not None and wake >= 2_000 and not (p.slack_ns is None and p.constant_ns >= 30_000):
        out.append(f"wake-up takes {_us(wake)}: the hybrid method (sleep, then spin the last "
                   f"part) removes it at the cost of CPU time.")
    if p.idle_exit_ns >= 2_000:
        e_req = p.idle_exit_ns * req / (req + p.idle_exit_half_ns)
        out.append(f"idle exit grows to {_us(p.idle_exit_ns)} on long sleeps ({_us(e_req)} at "
                   f"{format_ns(req)}): holding /dev/cpu_dma_latency at 0 or a hybrid sleep "
                   "avoids the deep idle state.")
    if p.zero_return_ns is not None and p.rounding == "down":
        out.append(f"a timeout below {format_ns(p.granularity_ns)} is truncated to 0 and returns "
                   f"at once ({_us(p.zero_return_ns)}): it does not sleep at all; round up, or "
                   "use a call that takes ns.")
    if not out:
        out.append("nothing large to remove: this method already sleeps about as asked.")
    return out
