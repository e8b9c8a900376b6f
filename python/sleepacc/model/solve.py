"""The solver: each point's uncertainty, and the bounded weighted least
squares fit of one structure (:func:`_solve`).

A point's uncertainty is the standard error of its median from the core's
spread statistics, in quadrature with a floor (the run-to-run drift of a
median).  The linear amounts of a structure are fitted with bounds by an
exact active-set search (no clipping afterwards); a few Huber rounds keep a
disturbed median from dragging the fit.  All in ns.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Mapping, Optional, Tuple

import numpy as np

from .. import records
from .terms import ZERO_RETURN_MAX_NS, _Spec, _base, _design, _predict_spec

HUBER = 1.5             # residuals beyond this many sigma weigh linearly
_FLOOR_NS = 1_000.0     # absolute noise floor of a point
_FLOOR_REL = 0.02       # ... and its share of the oversleep (run-to-run drift)
_FLOOR_REL_PUBLISHED = 0.05
_FLOOR_PUBLISHED_NS = 3000.0   # published means: unknown spread, rounded digits


def _spread(r: Mapping, y: float) -> Optional[float]:
    """The spread of a point's durations: IQR / 1.349, else from p90, else std."""
    p25, p75 = records.actual_of(r, "p25"), records.actual_of(r, "p75")
    if isinstance(p25, (int, float)) and isinstance(p75, (int, float)) and p75 >= p25:
        return (p75 - p25) / 1.349
    p90 = records.actual_of(r, "p90")
    if isinstance(p90, (int, float)) and p90 >= y:
        return (p90 - y) / 1.2816
    std = r.get("std_ns")
    if isinstance(std, (int, float)) and std >= 0:
        return float(std)
    return None


def point_sigma(r: Mapping, y: float, req: float) -> Tuple[float, bool]:
    """(standard uncertainty of the point's central value in ns, has a spread)
    of a row (:func:`sleepacc.records.to_records`) whose median actual
    duration is `y` for a request of `req` ns."""
    over = max(y - req, 0.0)
    spread = _spread(r, y)
    n = r.get("n")
    if not isinstance(n, (int, float)) or n <= 0:
        n = r.get("samples") if isinstance(r.get("samples"), (int, float)) else None
    if spread is None or not n:
        return math.hypot(_FLOOR_PUBLISHED_NS, _FLOOR_REL_PUBLISHED * over, 0.001 * y), False
    se = 1.2533 * spread / math.sqrt(max(float(n), 1.0))
    floor = max(_FLOOR_NS, _FLOOR_REL * over)
    return math.hypot(se, floor), True


def _lstsq(A, Y):
    return np.linalg.lstsq(A, Y, rcond=None)[0]


def _bls(A, Y, lb, ub):
    """min ||A x - y||^2 subject to lb <= x <= ub, for each column y of Y.

    Exact for the small number of parameters here: the optimum solves the
    unconstrained problem on its free set, so the best feasible solution over
    every assignment of parameters to {free, lower, upper} is the optimum."""
    single = Y.ndim == 1
    Y2 = Y[:, None] if single else Y
    X = _lstsq(A, Y2)
    eps = 1e-9 * (1 + np.abs(X))
    ok = np.all((X >= lb[:, None] - eps) & (X <= ub[:, None] + eps), axis=0)
    if not np.all(ok):
        X = X.copy()
        X[:, ~ok] = _bls_active(A, Y2[:, ~ok], lb, ub)
    X = np.minimum(np.maximum(X, lb[:, None]), ub[:, None])   # rounding only
    return X[:, 0] if single else X


def _bls_active(A, Yb, lb, ub):
    """The bounded optimum of each column of Yb by trying every assignment
    of the parameters to {free, lower bound, upper bound}."""
    m = A.shape[1]
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
    return bestx


@dataclass(eq=False)   # a fit is itself: two fits of one spec hold arrays, which == cannot rank
class _Fit:
    spec: _Spec
    beta: np.ndarray            # linear parameters (scaled as in _design)
    zero_ns: Optional[float]
    chi2: float
    score: float
    pred: np.ndarray


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
