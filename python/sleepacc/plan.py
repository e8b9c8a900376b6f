"""The sweep time planner: per-point budgets that make a sweep fit a total time.

Owns the planning model (what one point is expected to cost), the search for
the budget that fits a total, and :class:`Planner`, which re-plans before
every point.  Pure arithmetic over (method, duration_ns) points: it measures
nothing and imports nothing of the package, so ``sleepacc sweep``, a
notebook or a harness driving sleepacc from another language plan alike.

    import sleepacc
    from sleepacc.plan import Planner
    planner = Planner(total=20.0)                   # the whole sweep in ~20 s
    for m in sleepacc.iter_sweep(["nanosleep", "spin"], per_point=planner):
        print(m.method, m.requested_ns, f"{planner.elapsed():.1f} s")

A point's budget is what the core is given for it; the core counts the
warm-up inside the budget and always completes a sleep it started, so a
point lasts its budget plus at most one sleep.
"""

from __future__ import annotations

import math
import time
from typing import Any, Iterable, Optional, Sequence, Tuple

__all__ = ["DEFAULT_TOTAL_S", "MIN_POINT_BUDGET_S", "MAX_POINT_BUDGET_S", "PLAN_LATE_NS",
           "PLAN_OVERHEAD_S", "DEFAULT_MAX_SAMPLES", "warmup_for", "point_budget", "point_cost",
           "plan_budget", "Planner"]

# The default sweep aims at DEFAULT_TOTAL_S of measuring, so with start-up
# it ends well inside 60 s.
DEFAULT_TOTAL_S = 42.0
MIN_POINT_BUDGET_S = 0.01   # a point never gets less than this ...
MAX_POINT_BUDGET_S = 0.5    # ... nor more, whatever time is left
PLAN_LATE_NS = 60_000       # a typical oversleep, for planning only
PLAN_OVERHEAD_S = 0.004     # per point: opening the method, writing the line
DEFAULT_MAX_SAMPLES = 100_000


def warmup_for(d_ns: int) -> int:
    """Warm-up sleeps for a duration: a warm-up costs its length, so two up
    to 1 ms, one up to 10 ms, none above."""
    return 2 if d_ns <= 1_000_000 else 1 if d_ns <= 10_000_000 else 0


def point_budget(d_ns: int, b: float) -> float:
    """The budget given to the core for one point: at least b, and enough
    to finish the warm-up and start one measured sleep."""
    step = (d_ns + PLAN_LATE_NS) / 1e9
    return max(b, (2 * warmup_for(d_ns) + 1) * step)


def point_cost(d_ns: int, b: float, max_samples: int = DEFAULT_MAX_SAMPLES) -> float:
    """Expected wall time (s) of one point with per-point budget b (s)."""
    step = (d_ns + PLAN_LATE_NS) / 1e9
    budget = point_budget(d_ns, b)
    sleeps = max(1, math.ceil(budget / step))
    sleeps = min(sleeps, max_samples + warmup_for(d_ns))
    return sleeps * step + PLAN_OVERHEAD_S


def plan_budget(durations_ns: Iterable[int], total_s: float,
                max_samples: int = DEFAULT_MAX_SAMPLES) -> float:
    """The largest per-point budget b (within MIN..MAX_POINT_BUDGET_S) whose
    expected total over the given points is at most total_s."""
    counts: dict = {}
    for d in durations_ns:
        counts[d] = counts.get(d, 0) + 1

    def cost(b):
        return sum(k * point_cost(d, b, max_samples) for d, k in counts.items())
    lo, hi = MIN_POINT_BUDGET_S, MAX_POINT_BUDGET_S
    if cost(hi) <= total_s:
        return hi
    if cost(lo) >= total_s:
        return lo
    for _ in range(40):
        mid = (lo + hi) / 2
        if cost(mid) <= total_s:
            lo = mid
        else:
            hi = mid
    return lo


def _duration_ns(point: Any) -> int:
    """A point's requested duration: a SweepPoint (or any (method,
    duration_ns) pair) or a bare duration in ns."""
    if isinstance(point, int):
        return point
    return int(point.duration_ns if hasattr(point, "duration_ns") else point[1])


class Planner:
    """Per-point budgets for a sweep, as ``iter_sweep(per_point=...)`` takes them.

    With `budget` every point gets it.  Otherwise the plan for the whole
    sweep (`points`) gives the points still to measure (`todo`, default all
    of them: fewer when a run is resumed) their share of `total` seconds,
    and before each point the time still left is spread again over the
    points still to do, so slow points are made up for by shorter budgets
    later (never below MIN_POINT_BUDGET_S).  The clock starts when the
    planner is made; without `points` the first call plans (its points are
    the whole sweep) and starts it.

    Called with the points still to measure (the first is the next one), it
    returns that point's :func:`sleepacc.measure` keywords, ``{"budget",
    "warmup"}``, and counts the point before it as done (for :meth:`eta`).
    """

    def __init__(self, points: Optional[Iterable[Any]] = None, total: float = DEFAULT_TOTAL_S,
                 *, budget: Optional[float] = None, max_samples: int = DEFAULT_MAX_SAMPLES,
                 todo: Optional[Iterable[Any]] = None):
        self.total = total
        self.fixed, self.max_samples = budget, max_samples
        self.deadline = math.inf      # set by the plan (a fixed budget has none)
        self.estimated_done = 0.0
        self.last_budget = MIN_POINT_BUDGET_S   # the per-point budget b of the last point
        self._last: Optional[Tuple[int, float]] = None
        self.started = False
        self.t0 = time.monotonic()
        self.estimate = 0.0           # expected seconds of the points to do (set by the plan)
        self.request = math.inf       # the seconds asked for them: total's share, or n x budget
        if points is not None:
            self._start(points, todo)

    def _start(self, points: Iterable[Any], todo: Optional[Iterable[Any]]) -> None:
        total, budget, max_samples = self.total, self.fixed, self.max_samples
        all_d = [_duration_ns(p) for p in points]
        todo_d = all_d if todo is None else [_duration_ns(p) for p in todo]
        if budget is None:
            b0 = plan_budget(all_d, total, max_samples)
            share = (sum(point_cost(d, b0, max_samples) for d in todo_d)
                     / max(1e-9, sum(point_cost(d, b0, max_samples) for d in all_d)))
            self.deadline = time.monotonic() + total * share
            self.request = total * share
        else:
            b0 = budget
            self.request = len(todo_d) * (budget + PLAN_OVERHEAD_S)
        self.estimate = sum(point_cost(d, b0, max_samples) for d in todo_d)
        self.t0, self.started = time.monotonic(), True

    def fits(self, slack: float = 0.1) -> bool:
        """Whether the plan's estimate is within the request (give or take
        `slack` of it): a point lasts at least its warm-up and one sleep of
        its duration, so long durations can take more than asked."""
        return self.estimate <= self.request * (1.0 + slack) + 1e-9

    def promise(self) -> str:
        """One line on what the plan will take, for the user before the
        run: the estimate, and why it passes the request when it does."""
        if self.fits():
            return f"the sweep should take about {self.estimate:.1f} s"
        asked = (f"--total {self.total:g} s" if self.fixed is None else
                 f"--budget {self.fixed:g} s per point ({self.request:.1f} s in all)")
        return (f"{asked} cannot be met: about {self.estimate:.1f} s is needed, because a point "
                "lasts at least its warm-up and one sleep of its duration (long durations "
                "take longer than asked; drop them with --durations to go faster)")

    def budget(self, rest: Sequence[Any]) -> float:
        """The per-point budget b for the next of `rest` (before point_budget)."""
        if self.fixed is not None:
            return self.fixed
        rest_d = [_duration_ns(p) for p in rest]
        return plan_budget(rest_d, max(0.0, self.deadline - time.monotonic()), self.max_samples)

    def eta(self, rest: Sequence[Any], b: Optional[float] = None) -> float:
        """Seconds left for `rest` at per-point budget b (default: the last
        one planned), scaled by how far off the estimates have been so far."""
        b = self.last_budget if b is None else b
        est = sum(point_cost(_duration_ns(p), b, self.max_samples) for p in rest)
        if self.estimated_done <= 0:
            return est
        ratio = (time.monotonic() - self.t0) / self.estimated_done
        return est * min(3.0, max(0.5, ratio))

    def elapsed(self) -> float:
        """Seconds since the planner started (0 before)."""
        return time.monotonic() - self.t0 if self.started else 0.0

    def __call__(self, rest: Sequence[Any]) -> dict:
        if not self.started:          # the first point: the rest is the whole sweep
            self._start(rest, None)
        if self._last is not None:    # the point planned last is done
            self.estimated_done += point_cost(self._last[0], self._last[1], self.max_samples)
        d = _duration_ns(rest[0])
        b = self.last_budget = self.budget(rest)
        self._last = (d, b)
        return {"budget": point_budget(d, b), "warmup": warmup_for(d)}
