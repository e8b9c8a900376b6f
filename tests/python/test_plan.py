"""The sweep time planner (sleepacc.plan): its budgets stay in their bounds,
fit the total they were asked for when the bounds allow it, and plug into
iter_sweep as its per_point, as `sleepacc sweep` uses them."""
import pytest

import sleepacc
from sleepacc import _api
from sleepacc import plan

LADDER = [round(d * 1e9) for d in sleepacc.DEFAULT_DURATIONS]


@pytest.mark.parametrize("total", [0.1, 2.0, 10.0, 42.0, 1000.0])
def test_plan_budget_fits_the_total_within_its_bounds(total):
    b = plan.plan_budget(LADDER * 3, total)
    assert plan.MIN_POINT_BUDGET_S <= b <= plan.MAX_POINT_BUDGET_S
    cost = sum(plan.point_cost(d, b) for d in LADDER * 3)
    # it fits, unless even the smallest budget cannot
    assert cost <= total + 1e-9 or b == plan.MIN_POINT_BUDGET_S
    if b < plan.MAX_POINT_BUDGET_S:    # and no larger budget would
        assert sum(plan.point_cost(d, b * 1.01) for d in LADDER * 3) > total - 1e-3


def test_budgets_grow_with_the_total_and_cover_the_warmup():
    budgets = [plan.plan_budget(LADDER, t) for t in (1, 5, 20, 100)]
    assert budgets == sorted(budgets)
    for d in LADDER:
        step = (d + plan.PLAN_LATE_NS) / 1e9
        assert plan.point_budget(d, 0.0) >= (2 * plan.warmup_for(d) + 1) * step
        assert plan.warmup_for(d) in (0, 1, 2)


def test_a_planner_is_iter_sweeps_per_point():
    names, durations = ["nanosleep", "syscall"], [1e-5, 1e-4]
    points = _api.sweep_points(names, durations)
    planner = plan.Planner(total=0.5)     # its points: the whole sweep, at the first call
    assert planner.elapsed() == 0
    seen = []

    def per_point(rest):
        kw = planner(rest)
        seen.append((rest[0], kw))
        assert planner.eta(rest) >= 0
        return kw
    got = [(m.method, m.requested_ns) for m in sleepacc.iter_sweep(names, durations,
                                                                   per_point=per_point)]
    assert got == [tuple(p) for p in points] == [tuple(p) for p, _kw in seen]
    for p, kw in seen:
        assert set(kw) == {"budget", "warmup"} and kw["warmup"] == plan.warmup_for(p.duration_ns)
        assert kw["budget"] >= plan.MIN_POINT_BUDGET_S
    assert planner.elapsed() > 0 and planner.estimated_done > 0


def test_a_fixed_budget_is_every_points():
    planner = plan.Planner([("spin", 10_000), ("spin", 1_000_000)], budget=0.02)
    assert planner([("spin", 10_000), ("spin", 1_000_000)])["budget"] == pytest.approx(0.02)
    assert planner([("spin", 1_000_000)])["budget"] >= 0.02


def test_planner_estimate_within_a_total_it_says_it_fits():
    """A plan that says it fits estimates no more than the request; one
    that cannot (a sleep of 1 s per point against 2 s in all) says so and
    what it will take, before anything runs."""
    short = [("nanosleep", d) for d in (1_000, 100_000, 1_000_000)] * 4
    p = plan.Planner(short, 5.0)
    assert p.fits() and p.estimate <= p.request * 1.1 and p.request == pytest.approx(5.0)
    assert "about" in p.promise()
    long = [("nanosleep", 1_000_000_000), ("spin", 1_000_000_000), ("nanosleep", 1_000)]
    p = plan.Planner(long, 0.5)
    assert not p.fits() and p.estimate >= 2.0
    text = p.promise()
    assert "--total 0.5 s cannot be met" in text and f"about {p.estimate:.1f} s" in text


def test_fixed_budget_says_when_points_outlast_it():
    p = plan.Planner([("nanosleep", 1_000_000)] * 3, budget=0.05)
    assert p.fits() and p.estimate <= p.request * 1.1
    p = plan.Planner([("nanosleep", 500_000_000)] * 3, budget=0.02)
    assert not p.fits() and "--budget 0.02 s per point" in p.promise()
    # a resumed sweep: only the points still to do are promised
    p = plan.Planner([("nanosleep", 500_000_000)] * 3, budget=0.02, todo=[])
    assert p.estimate == 0 and p.fits()


def test_cli_sweep_says_before_the_run_when_the_request_cannot_be_met():
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "sleepacc", "sweep", "--methods", "nanosleep",
                        "--durations", "100ms", "--total", "0.01", "--format", "none"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    lines = r.stderr.splitlines()
    said = [i for i, x in enumerate(lines) if "--total 0.01 s cannot be met" in x]
    done = [i for i, x in enumerate(lines) if "measured in" in x]
    assert said and done and said[0] < done[0], r.stderr
