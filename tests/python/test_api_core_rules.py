"""The core owns what a run is: its defaults, its rules (errors
read "<argument>: <the core's message>"), its record, the sleeper's and
pacer's statistics; names with a NUL byte are refused the same way
everywhere; the ladder and the lower quantiles come from the
core."""
import inspect

import numpy as np
import pytest

import sleepacc
from sleepacc import _core
from conftest import thread_state


def test_defaults_come_from_the_core():
    d = _core.config_default()
    assert d["budget_ns"] == 1_000_000_000 and d["warmup"] == 2 and d["margin_ns"] == 125_000
    assert d["mode"] == 0 and d["keep_samples"] == 1 and d["method"] is None
    assert d["env"] == {"slack_ns": -1, "policy": -1, "priority": 0, "cpu": -1,
                        "lock_memory": 0, "dma_latency_us": -1}
    sig = inspect.signature(sleepacc.measure).parameters
    assert sig["budget"].default == d["budget_ns"] / 1e9
    assert sig["warmup"].default == d["warmup"]
    assert sig["mode"].default == _core.mode_names[d["mode"]] == "relative"
    assert sig["keep_samples"].default is True and sig["lock_memory"].default is False
    for f in (sleepacc.sweep, sleepacc.iter_sweep, sleepacc._api.sweep_points):
        assert inspect.signature(f).parameters["mode"].default == "relative"
    assert sleepacc.MAX_SAMPLES == _core.MAX_SAMPLES == 4_000_000
    # a sweep's budget per point: the core's SLEEPACC_SWEEP_BUDGET_NS (Lua's too)
    assert _core.SWEEP_BUDGET_NS == 500_000_000
    for f in (sleepacc.sweep, sleepacc.iter_sweep):
        assert inspect.signature(f).parameters["budget"].default == _core.SWEEP_BUDGET_NS / 1e9


def test_sleeper_and_pacer_defaults_come_from_the_core():
    d = _core.sleeper_default()
    assert (d["method"], d["quantile"], d["missed"]) == ("auto", 0.99, "skip")
    sig = inspect.signature(sleepacc.Sleeper).parameters
    assert sig["method"].default == d["method"] and sig["quantile"].default == d["quantile"]
    sig = inspect.signature(sleepacc.Pacer).parameters
    assert sig["method"].default == d["method"] and sig["missed"].default == d["missed"]
    assert inspect.signature(sleepacc.sleep).parameters["method"].default == d["method"]
    with sleepacc.Sleeper() as s:
        assert s.method == "auto" and s.stats["quantile"] == d["quantile"]


def test_one_hybrid_margin():
    """Python measure, Lua measure and Sleeper("hybrid") once used 100, 200
    and 125 us; the core's one default is 125 us for all."""
    m = sleepacc.measure("hybrid", 1e-3, n=3)
    assert m.env["margin_ns"] == 125_000
    with sleepacc.Sleeper("hybrid") as s:
        assert s.stats["margin_ns"] == 125_000
    assert sleepacc._api.DEFAULT_MARGIN == 125e-6


def test_default_ladder_is_the_cores():
    assert _core.default_durations_ns == (1, 10, 100, 1_000, 10_000, 100_000, 1_000_000,
                                          10_000_000, 100_000_000, 200_000_000, 500_000_000)
    assert sleepacc.DEFAULT_DURATIONS == tuple(d / 1e9 for d in _core.default_durations_ns)


@pytest.mark.parametrize("call", [
    lambda: sleepacc.measure("nanosleep\0x", 1e-3, n=1),
    lambda: sleepacc.sweep(["nanosleep\0"], [1e-3], budget=0.01),
    lambda: sleepacc.Sleeper("auto\0"),
    lambda: sleepacc.Sleeper("nanosleep\0spin"),
    lambda: sleepacc.Pacer(1e-3, "auto\0"),
    lambda: sleepacc.Pacer(1e-3, missed="skip\0"),
    lambda: sleepacc.sleep(1e-4, "nanosleep\0"),
], ids=["measure", "sweep", "Sleeper", "Sleeper-kernel", "Pacer", "Pacer-missed", "sleep"])
def test_names_with_a_nul_byte_are_refused_everywhere(call):
    before = thread_state()
    with pytest.raises(ValueError, match=r"^(method|methods\[0\]|missed): must not contain a NUL byte, got "):
        call()
    assert thread_state() == before


@pytest.mark.parametrize("kw, arg", [
    (dict(duration=2.0), "duration"),                 # one sample over the 1 s budget
    (dict(mode="periodic", duration=0), "duration"),
    (dict(budget=None), "n"),
    (dict(slack=2 * 10**9), "slack"),
    (dict(priority=3), "priority"),
    (dict(cpu=4095), "cpu"),
    (dict(dma_latency=2**31 - 1), "dma_latency"),
    (dict(budget=None, n=5 * 10**6), "n"),            # kept buffer over MAX_SAMPLES
    (dict(method="spin", policy="fifo", budget=None, n=3), "budget"),
])
def test_core_rules_name_the_python_argument(kw, arg):
    kw = dict(dict(method="nanosleep", duration=1e-4), **kw)
    with pytest.raises(ValueError, match=rf"^{arg}: "):
        sleepacc.measure(kw.pop("method"), kw.pop("duration"), **kw)


def test_core_check_names_core_fields():
    # sleepacc_config_check through the public path (_core.plan): the core's field, by its option
    assert _core.plan({"method": "nanosleep", "duration": 1e-6})["duration_ns"] == 1000
    with pytest.raises(ValueError, match=r"^duration: .*budget"):
        _core.plan({"method": "nanosleep", "duration": 2.0})
    with pytest.raises(TypeError, match=r"^method: "):   # required (Lua's rule, the core's now)
        _core.plan({"duration": 1e-6})
    with pytest.raises(ValueError, match=r"^cpu: "):
        _core.plan({"method": "nanosleep", "duration": 1e-6, "cpu": 4095})


def test_lower_quantiles_and_ordering():
    m = sleepacc.measure("nanosleep", 1e-4, n=200)
    s = m.stats
    assert s.min <= s.p1 <= s.p10 <= s.p25 <= s.median <= s.p75 <= s.p90 <= s.p99 <= s.max
    v = np.sort(np.asarray(m.samples))
    for q, name in ((0.01, "p1"), (0.10, "p10"), (0.25, "p25"), (0.75, "p75")):
        assert s[name] == v[int(np.ceil(q * len(v))) - 1]   # nearest rank, exact
    st = m.stream_stats   # the histogram's, within its precision
    assert abs(st.p25 - s.p25) <= 0.011 * abs(s.p25) + 1


@pytest.mark.parametrize("mode", ["relative", "periodic"])
def test_starts_are_each_samples_start(mode):
    m = sleepacc.measure("nanosleep", 1e-3, n=20, mode=mode)
    starts = np.asarray(m.starts)
    assert isinstance(m.starts, sleepacc.Samples) and len(starts) == m.n == 20
    assert starts[0] >= 0 and np.all(np.diff(starts) > 0)
    if mode == "relative":   # the next sleep starts after this one ended
        assert np.all(np.diff(starts) >= np.asarray(m.samples)[:-1])
    assert starts[-1] <= m.wall_ns
    assert "starts" not in m.to_dict()


def test_streaming_has_no_starts():
    m = sleepacc.measure("nanosleep", 1e-4, n=10, keep_samples=False)
    assert m.samples is None and m.starts is None


def test_record_keys_follow_the_core_table():
    d = sleepacc.measure("nanosleep", 1e-4, n=3).to_dict()
    assert list(d)[:-1] == list(_core.result_fields)   # + "samples"
    assert list(d["stats"]) == list(_core.stats_fields)


SLEEPER_KEYS = {"count", "misses", "spin_ns", "lateness", "strategy", "kernel", "kernel_skipped",
                "kernel_skipped_err", "quantile",
                "margin_ns", "handoff_ns", "clock_cost_ns", "comp_ratio", "kernel_waits",
                "rt_fallbacks", "preempted_spins", "contended", "last_wake_ns",
                "dma_latency_us", "margins", "decision", "reason", "contention", "cpu_pressure",
                "wake_delay_ns", "contended_episodes", "slice_ns", "rt_priority", "rt_spins",
                "rt_denied", "slice_held_ns", "slice_denied"}


def test_sleeper_and_pacer_stats_by_the_core_tables():
    with sleepacc.Sleeper("auto", handoff=0) as s:
        s.sleep(1e-3)
        st = s.stats
        assert set(st) == SLEEPER_KEYS and st["strategy"] == "auto" and st["count"] == 1
        assert st["kernel"] and isinstance(st["contended"], bool) and st["dma_latency_us"] is None
        assert s.last_wake_ns == st["last_wake_ns"] > 0
    with sleepacc.Pacer(1e-3, handoff=0) as p:
        p.wait()
        st = p.stats
        assert st["period_ns"] == p.period_ns == 1_000_000 and st["missed"] == p.missed == 0
        assert st["missed_policy"] == p.missed_policy == "skip"   # the policy; missed is a count
        assert set(st["timer_err"]) == {"mean", "min", "max", "stddev"}
        assert set(st["sleeper"]) == SLEEPER_KEYS
        assert st["last_deadline_ns"] == p.last_deadline_ns > p.start_ns == st["start_ns"]


# --- every option converted by the core's sleepacc_option_set ---

def test_plan_sets_options_by_the_core_and_completes_them():
    cfg = _core.plan({"method": "nanosleep", "duration": 1, "policy": "fifo", "slack": 50_000})
    assert cfg["method"] == "nanosleep" and cfg["duration_ns"] == 10**9   # whole seconds, exact
    assert cfg["env"]["policy"] == _core.policy_names.index("fifo")
    assert cfg["env"]["priority"] == 1 and cfg["env"]["slack_ns"] == 50_000   # fifo's default
    assert cfg["n"] == 0 and cfg["budget_ns"] == _core.config_default()["budget_ns"]
    point = _core.plan({"method": "nanosleep", "duration": 0.5, "budget": 0.2}, sweep_point=True)
    assert point["n"] == _core.MAX_SAMPLES          # a sweep's point still takes one sample
    assert _core.plan({"method": "nanosleep", "duration": 0, "budget": None, "n": 2})["budget_ns"] == 0
    # faults: Lua's words, the core's one sentence (it was "options must be the
    # core's option names, got {...}")
    with pytest.raises(TypeError, match=r"^colour: unknown option; known: method, duration, n, "):
        _core.plan({"method": "nanosleep", "duration": 0, "colour": 1})
    with pytest.raises(TypeError, match=r"^method: must be a str, got NoneType$"):   # required
        _core.plan({})


def test_budget_false_is_no_budget_as_in_lua():
    m = sleepacc.measure("nanosleep", 1e-4, n=3, budget=False)
    assert m.n == 3
    assert _core.plan({"method": "nanosleep", "duration": 0, "budget": False, "n": 1})["budget_ns"] == 0


def test_numpy_scalars_convert_by_their_kind():
    m = sleepacc.measure("hybrid", 1e-4, n=np.int64(2), warmup=np.int32(0),
                         keep_samples=np.True_, lock_memory=np.False_, margin=np.float32(1e-5))
    assert m.n == 2 and m.samples is not None
    with pytest.raises(TypeError, match=r"^duration: must be a number of seconds \(int or float\), "
                                        r"got numpy\.bool"):
        sleepacc.measure("nanosleep", np.True_)      # a bool is not a number of seconds
    with pytest.raises(TypeError, match=r"^n: must be an int, got numpy\.float64$"):
        sleepacc.measure("nanosleep", 1e-4, n=np.float64(2))


@pytest.mark.parametrize("kw, says", [
    (dict(n=2**70), r"^n: .*, got 1180591620717411303424$"),
    (dict(n=-2**70), r"^n: must be >= 1, got -1180591620717411303424$"),
    (dict(slack=2**64), r"^slack: must be 1 ns \.\. 1 s \(or left as it is\), got 18446744073709551616$"),
    # words: no rule bounds warmup: the int64 bound refuses it (it was taken as INT64_MAX)
    (dict(warmup=2**70), r"^warmup: must be <= 9223372036854775807, got 1180591620717411303424$"),
    (dict(n=10, warmup=2**70), r"^warmup: must be <= 9223372036854775807, got 1180591620717411303424$"),
    (dict(cpu=2**40), r"^cpu: must be <= 2147483647, got 1099511627776$"),
    (dict(warmup=-2**80), r"^warmup: must be >= 0, got -1208925819614629174706176$"),
])
def test_ints_beyond_int64_are_refused_with_the_callers_value(kw, says):
    with pytest.raises(ValueError, match=says):
        sleepacc.measure("nanosleep", 1e-4, **kw)


def test_an_int_beyond_int64_is_never_taken_as_int64_max():
    """words: the binding reports the overflow, the core refuses it (it was saturated)."""
    with pytest.raises(ValueError, match=r"^ns: must be <= 9223372036854775807, got 1180591620717411303424$"):
        sleepacc._core.format_duration(2**70)
    with pytest.raises(ValueError, match=r"^ns: must be >= -9223372036854775808, got -9223372036854775809$"):
        sleepacc._core.format_duration(-2**63 - 1)
    assert sleepacc._core.format_duration(2**63 - 1) == sleepacc._core.format_duration(np.int64(2**63 - 1))
    with pytest.raises(ValueError, match=r"^quantile: must be in \(0, 1\), got 18446744073709551616$"):
        sleepacc.Sleeper("spin", quantile=2**64)


def test_a_table_style_by_the_core_rule():
    """words: one rule and words for both bindings (Python's was "style must be 'irtt'
    or 'wide', got 'x'", Lua's 'style: unknown style "x"; known: irtt, wide')."""
    with pytest.raises(ValueError, match=r"^style: must be 'irtt' or 'wide', got 'fancy'$"):
        sleepacc._core.table([], "fancy")
    assert sleepacc._core.table([], "wide") == sleepacc._core.table([], style="wide")


def test_sweep_mode_and_names_by_the_core_rules():
    with pytest.raises(TypeError, match=r"^mode: must be a str, got int$"):
        sleepacc._api.sweep_points(["nanosleep"], [1e-3], mode=1)
    with pytest.raises(ValueError, match=r"^mode: must be 'relative' or 'periodic', got 'both'$"):
        sleepacc._api.sweep_points(["nanosleep"], [1e-3], mode="both")
    with pytest.raises(TypeError, match=r"^methods\[0\]: must be a str, got bytes$"):
        sleepacc._api.sweep_points([b"nanosleep"], [1e-3])
    assert sleepacc._api.sweep_points(["nanosleep"], [1e-3], mode="periodic") == [("nanosleep", 10**6)]


def test_a_default_sweep_is_the_cores_plan():
    # None: every available method over the core's ladder (sleepacc_sweep_plan),
    # and the settings name the methods that plan measures
    points = sleepacc._api.sweep_points()
    avail = [m for m in sleepacc.methods() if m.available]
    floors = {m.name for m in avail if m.family == "baseline"}
    assert {p.method for p in points} == {m.name for m in avail}
    assert {p.duration_ns for p in points if p.method not in floors} == set(
        _core.default_durations_ns)
    sw = sleepacc.sweep(durations=[1e-5], budget=0.002, mode="periodic", warmup=0)
    assert floors and not floors & set(sw.settings["methods"])     # periodic leaves floors out
    assert sw.settings["methods"] == list(dict.fromkeys(m.method for m in sw))
    assert sleepacc.sweep(["nanosleep"], budget=0.002, n=1).settings["durations"] == list(
        sleepacc.DEFAULT_DURATIONS)
    with pytest.raises(ValueError, match=r"^durations\[1\]: must be non-negative, got -1"):
        sleepacc._api.sweep_points(["nanosleep"], [1e-3, -1])


@pytest.mark.parametrize("make, says, exc", [
    (lambda: sleepacc.Sleeper(quantile="0.9"), r"^quantile: must be a number, got str$", TypeError),
    (lambda: sleepacc.Sleeper(quantile=1.5), r"^quantile: must be in \(0, 1\), got 1\.5$", ValueError),
    (lambda: sleepacc.Sleeper(dma_latency="0"), r"^dma_latency: must be an int, got str$", TypeError),
    (lambda: sleepacc.Sleeper(dma_latency=-1), r"^dma_latency: must be >= 0, got -1$", ValueError),
    (lambda: sleepacc.Sleeper(dma_latency=2**80), r"^dma_latency: must be 0\.\.2000000000 us", ValueError),
    (lambda: sleepacc.Pacer(False), r"^period: must be a number of seconds \(int or float\), got bool$",
     TypeError),
    (lambda: sleepacc.Pacer(1e-3, missed=1), r"^missed: must be a str, got int$", TypeError),
])
def test_sleeper_and_pacer_options_by_the_core_rules(make, says, exc):
    with pytest.raises(exc, match=says):
        make()


def test_a_table_style_of_the_wrong_type_reads_by_the_one_template():
    """words: the Python layers that check a style before the core sees it word it as
    the core does, "<arg>: must be <what>, got <type>" (was "style must be a str, got int")."""
    from sleepacc import report
    for call in (lambda: sleepacc.Sweep([]).table(3), lambda: report.format([], 3),
                 lambda: sleepacc._core.table([], 3)):
        with pytest.raises(TypeError, match=r"^style: must be a str, got int$"):
            call()
