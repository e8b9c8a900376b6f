"""Reliability (a): property-based tests over the whole Python API argument
space -- measure, sweep, sleep, Sleeper and Pacer.

Every argument is drawn from a wide space: durations from -inf to +inf and
NaN, ints (huge ones too), floats, bools, strings, None, bytes, complex,
numpy scalars; every keyword; every policy; CPU numbers beyond the machine.

The only allowed outcomes are the documented exceptions (TypeError,
ValueError, PermissionError, OSError carrying an errno) or a valid result
(ordered statistics, at most the requested samples, no undersleep of a
kernel sleep in relative mode).  Never a crash, never a hang past the
budget, and never a changed thread: timer slack, scheduling policy and
priority, and CPU affinity are read from the OS (prctl, sched_*) before and
after every example and must be identical.

Nothing here sleeps long by construction: budgets are at most 50 ms, a
valid duration longer than 10 ms is never run (the example is skipped), and
with budget=None only a few samples are allowed.
"""
import ctypes
import faulthandler
import math
import os
import time
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import sleepacc

PR_GET_TIMERSLACK = 30
_libc = ctypes.CDLL(None, use_errno=True)


def _asan_loaded():
    """libasan is mapped into this process (sanitize-python preloads it;
    conftest removes LD_PRELOAD from the environment, so ask the maps)."""
    try:
        with open("/proc/self/maps") as f:
            return "libasan" in f.read()
    except OSError:
        return False


UNDER_ASAN = _asan_loaded()

ALL_METHODS = [m.name for m in sleepacc.methods()]
KERNEL = {m.name for m in sleepacc.methods() if m.family == "kernel"}
LONGEST_RUN_S = 0.010   # a valid duration above this is never slept
HANG_SLACK_S = 10.0     # generous: a shared, loaded 2-vCPU host
# fewer examples over the (much slower) ASan build: there the point is memory
# errors on every path, which the first examples already walk
SCALE = 0.25 if UNDER_ASAN else 1.0


def examples(n):
    return max(20, int(n * SCALE))


SETTINGS = settings(max_examples=examples(120), deadline=None, derandomize=True, database=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def thread_state():
    """(slack, policy, priority, affinity) of the calling thread, from the OS."""
    slack = _libc.prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)
    return (slack, os.sched_getscheduler(0), os.sched_getparam(0).sched_priority,
            frozenset(os.sched_getaffinity(0)))


def allowed_exception(exc):
    """The documented exceptions: TypeError, ValueError, PermissionError,
    OSError with an errno."""
    if isinstance(exc, (TypeError, ValueError)):
        return True
    if isinstance(exc, OSError):  # PermissionError included
        return exc.errno is not None
    return False


def seconds_value(x):
    """x as float seconds when it is a number the API accepts, else None."""
    if isinstance(x, (bool, np.bool_)) or x is None:
        return None
    if isinstance(x, (int, float, np.integer, np.floating, Fraction)):
        try:
            return float(x)
        except OverflowError:
            return math.inf
    return None


def finite_seconds(x):
    """seconds_value(x) when finite and >= 0, else 0.0 (for time limits)."""
    s = seconds_value(x)
    return s if s is not None and math.isfinite(s) and s >= 0 else 0.0


def is_valid_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, (bool, np.bool_))


def long_slack(x):
    """True when x is a valid timer slack (ns) above 1 ms."""
    return is_valid_int(x) and 1_000_000 < x <= 86400 * 10**9


def long_sleep(x):
    """True when x would be a valid duration longer than LONGEST_RUN_S."""
    s = seconds_value(x)
    return s is not None and LONGEST_RUN_S < s <= 86400.0 + 1


def long_sleep_seconds(x):
    """True when x would be valid seconds of a sleep longer than LONGEST_RUN_S
    (a sleep has no day cap: up to int64 ns from now, about 292 years)."""
    s = seconds_value(x)
    return s is not None and LONGEST_RUN_S < s <= 2**63 / 1e9


# --------------------------------------------------------------- strategies

def mostly(valid, anything, k=3):
    """`valid` k times out of k + 1, else `anything` (so most examples get
    past validation and run, and the rest probe the checks)."""
    return st.integers(0, k).flatmap(lambda i: valid if i < k else anything)


junk = st.one_of(st.none(), st.booleans(), st.text(max_size=8), st.binary(max_size=4),
                 st.just(1j), st.just([1]), st.just({}), st.just(object()))
huge_ints = st.sampled_from([2**31 - 1, 2**31, 2**32, 2**63 - 1, 2**63, 2**64, 2**100,
                             -2**31, -2**63, -2**63 - 1, -2**100])
special_floats = st.sampled_from([math.nan, -math.nan, math.inf, -math.inf, 0.0, -0.0, 5e-324,
                                  1e-300, 1e-10, 4.9e-10, 5e-10, 1e-9, 86400.0, 86400.0000001,
                                  1e300, -1e-9, -1.0])
durations = st.one_of(
    st.floats(min_value=0, max_value=LONGEST_RUN_S),
    st.integers(min_value=0, max_value=0).map(int),
    st.floats(allow_nan=True, allow_infinity=True),
    special_floats, huge_ints, st.integers(min_value=-10, max_value=10), junk,
    st.sampled_from([np.float64(1e-6), np.int64(0), np.float32(1e-4), Fraction(1, 10**6),
                     np.float64(np.nan), np.int8(-1)]),
)
method_names = st.one_of(st.sampled_from(ALL_METHODS), st.sampled_from(["auto", "comp", "NANOSLEEP",
                         "", "nanosleep ", "nanosleep\0", "io_uring", "kqueue"]),
                         st.text(max_size=12), junk, st.integers())
small_n = st.integers(min_value=1, max_value=8)
counts = st.one_of(st.none(), small_n, st.integers(min_value=-3, max_value=0), huge_ints, huge_ints,
                   st.floats(allow_nan=True), junk)
budgets = st.one_of(st.none(), st.floats(min_value=1e-4, max_value=0.05), special_floats,
                    st.integers(min_value=-2, max_value=0), huge_ints, junk)
modes = st.one_of(st.sampled_from(["relative", "periodic"]),
                  st.sampled_from(["RELATIVE", "", "sideways"]), junk, st.integers())
policies = st.one_of(st.none(), st.sampled_from(["other", "batch", "idle", "fifo", "rr"]),
                     st.sampled_from(["FIFO", "deadline", "", "realtime"]), st.integers(), junk)
priorities = st.one_of(st.none(), st.integers(min_value=-2, max_value=101), huge_ints, huge_ints,
                       st.floats(allow_nan=True), junk)
cpus = st.one_of(st.none(), st.integers(min_value=-2, max_value=(os.cpu_count() or 1) + 70),
                 st.sampled_from([1023, 1024, 4096, 2**31 - 1]), huge_ints, huge_ints, junk)
slacks = st.one_of(st.none(), st.integers(min_value=-2, max_value=200_000),
                   st.sampled_from([86400 * 10**9, 86400 * 10**9 + 1]), huge_ints, huge_ints,
                   st.floats(allow_nan=True), junk)
bools = st.one_of(st.booleans(), st.sampled_from([np.bool_(True), np.bool_(False)]), junk,
                  st.integers(min_value=-1, max_value=2))
margins = st.one_of(st.none(), st.floats(min_value=0, max_value=0.001), special_floats,
                    huge_ints, junk)


def no_lock(v):
    """lock_memory=True mlockalls the whole process; under ASan that pins
    its shadow memory, so the sanitizer run draws it as False."""
    return False if (UNDER_ASAN and v is True) else v


# --------------------------------------------------------------- checkers

def check_stats(stats, n):
    assert stats["n"] == n
    if n > 0:
        assert (stats["min"] <= stats["median"] <= stats["p90"] <= stats["p99"]
                <= stats["p999"] <= stats["max"]), stats
        assert 0 <= stats["undersleeps"] <= n
        assert math.isfinite(stats["mean"]) and stats["std"] >= 0


def check_measurement(m, kw):
    assert isinstance(m, sleepacc.Measurement)
    assert m.n >= 0
    if is_valid_int(kw.get("n")) and kw["n"] > 0:
        assert m.n <= kw["n"]
    check_stats(m.stats, m.n)
    if m.samples is not None:
        assert len(m.samples) == m.n
        if m.n:
            a = np.asarray(m.samples)
            assert a.min() == m.stats["min"] and a.max() == m.stats["max"]
    if m.method in KERNEL and m.mode == "relative":
        # a kernel sleep never ends early (every method rounds its unit up)
        assert m.stats["undersleeps"] == 0, (m.method, m.requested_ns, m.stats)


TRACE = os.environ.get("SLEEPACC_RELIABILITY_TRACE")


def run_guarded(fn, limit_s, what="", kind=None):
    """Call fn with the thread state checked around it; returns (result,
    exception).  An undocumented exception fails the test."""
    before = thread_state()
    t0 = time.monotonic()
    result = exc = None
    # a real hang becomes a crash with every thread's traceback, not a stuck CI
    if TRACE:
        print("call:", what, flush=True)
    faulthandler.dump_traceback_later(limit_s + HANG_SLACK_S + 60, exit=True)
    try:
        result = fn()
    except BaseException as e:  # noqa: BLE001 - classify every outcome
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        if not allowed_exception(e):
            raise AssertionError(f"undocumented exception {type(e).__name__}: {e}") from e
        exc = e
    finally:
        faulthandler.cancel_dump_traceback_later()
    elapsed = time.monotonic() - t0
    if kind:
        tally(kind, exc)
    assert thread_state() == before, "the thread's slack/policy/affinity changed"
    assert elapsed < limit_s + HANG_SLACK_S, f"call took {elapsed:.1f} s (hang?)"
    return result, exc


# --------------------------------------------------------------- measure

AVAILABLE = [m.name for m in sleepacc.methods() if m.available]
FLOORS = {m.name for m in sleepacc.methods() if m.family == "baseline"}
ALLOWED_CPUS = sorted(os.sched_getaffinity(0))
VALID = {
    "method": st.sampled_from(AVAILABLE),
    "duration": st.one_of(st.floats(min_value=0, max_value=LONGEST_RUN_S), st.just(0),
                          st.sampled_from([1e-9, 1e-6, np.float64(1e-5), Fraction(1, 10**4)])),
    "n": st.one_of(st.none(), small_n),
    "budget": st.floats(min_value=1e-4, max_value=0.05),
    "mode": st.sampled_from(["relative", "periodic"]),
    "warmup": st.integers(min_value=0, max_value=3),
    "keep_samples": st.booleans(),
    "slack": st.one_of(st.none(), st.integers(min_value=1, max_value=200_000)),
    "policy": st.one_of(st.none(), st.sampled_from(["other", "batch", "idle", "fifo", "rr"])),
    "cpu": st.one_of(st.none(), st.sampled_from(ALLOWED_CPUS)),
    "lock_memory": st.just(False) if UNDER_ASAN else st.sampled_from([False] * 7 + [True]),
    "margin": st.one_of(st.none(), st.floats(min_value=0, max_value=0.001)),
}
ANY = {
    "method": method_names, "duration": durations, "n": counts, "budget": budgets,
    "mode": modes, "warmup": st.one_of(st.integers(min_value=0, max_value=3), counts),
    "keep_samples": bools, "slack": slacks, "policy": policies, "priority": priorities,
    "cpu": cpus, "lock_memory": bools, "margin": margins,
}
OUTCOMES = {}   # outcome -> examples, reported at the end of the module


def tally(kind, exc):
    key = f"{kind}: " + ("ok" if exc is None else type(exc).__name__)
    OUTCOMES[key] = OUTCOMES.get(key, 0) + 1


@pytest.fixture(scope="module", autouse=True)
def report_outcomes():
    yield
    print("\nreliability outcomes:", ", ".join(f"{k} x{v}" for k, v in sorted(OUTCOMES.items())))


def measure_kwargs(data, bad):
    """Valid keyword arguments, except the names in `bad`, drawn from ANY."""
    kw = {}
    for name in ("method", "duration", "n", "budget", "mode", "warmup", "keep_samples",
                 "slack", "policy", "cpu", "lock_memory", "margin"):
        kw[name] = data.draw(ANY[name] if name in bad else VALID[name], label=name)
    if "priority" in bad:
        kw["priority"] = data.draw(ANY["priority"], label="priority")
    elif kw["policy"] in ("fifo", "rr"):
        kw["priority"] = data.draw(st.one_of(st.none(), st.integers(1, 99)), label="priority")
    if "lock_memory" in bad:
        kw["lock_memory"] = no_lock(kw["lock_memory"])
    if kw["mode"] == "periodic" and "duration" not in bad and "mode" not in bad \
            and round(seconds_value(kw["duration"]) * 1e9) == 0:   # rounds to 0 ns
        kw["duration"] = 1e-6
    if kw["mode"] == "periodic" and "method" not in bad and "mode" not in bad \
            and kw["method"] in FLOORS:   # periodic mode refuses a floor (it has no deadline)
        kw["method"] = "nanosleep"
    if "margin" not in bad and kw["method"] != "hybrid":
        kw["margin"] = None   # only the hybrid family has a margin (another is refused it)
    if kw["policy"] in ("fifo", "rr") and "budget" not in bad:
        kw["budget"] = min(kw["budget"], 0.01)   # real-time runs: keep them short
    if not ({"duration", "n", "budget"} & set(bad)) and kw["n"] is None and \
            kw["budget"] is not None and seconds_value(kw["duration"]) > kw["budget"]:
        kw["n"] = 1   # one sample longer than the budget needs an explicit n
    return kw


def check_measure_call(kw):
    duration = kw.pop("duration")
    method = kw.pop("method")
    assume(not long_sleep(duration))
    # a valid timer slack S lets every kernel sleep last up to S longer (the
    # kernel may defer the wake-up that long): a slack of a day is a day-long
    # sleep, not a hang, so large valid slacks are not run (like durations)
    assume(not long_slack(kw.get("slack")))
    b = seconds_value(kw.get("budget"))
    # budget=None with a valid large n/warm-up would run as long as n says
    if kw.get("budget", 1) is None:
        assume(not (is_valid_int(kw.get("n")) and kw["n"] > 8))
        assume(not (is_valid_int(kw.get("warmup")) and kw["warmup"] > 3))
    assume(not (b is not None and 0.05 < b <= 86400 * 2))
    limit = min(finite_seconds(kw.get("budget")), 0.05) + \
        30 * (min(finite_seconds(duration), 0.01) + 0.002)
    m, exc = run_guarded(lambda: sleepacc.measure(method, duration, **kw), limit,
                         f"measure({method!r}, {duration!r}, **{kw!r})", "measure")
    if exc is None:
        check_measurement(m, kw)
        assert m.method == method and m.mode in ("relative", "periodic")
    return m, exc


@settings(SETTINGS, max_examples=examples(600))
@given(data=st.data(), bad=st.one_of(st.just(()), st.tuples(st.sampled_from(sorted(ANY)))))
def test_measure_one_bad_argument(data, bad):
    """Every argument valid except at most one, drawn from the whole space:
    each bad value meets the check that owns it."""
    kw = measure_kwargs(data, set(bad))
    m, exc = check_measure_call(kw)
    if not bad:
        assert exc is None or isinstance(exc, PermissionError), exc


@settings(SETTINGS, max_examples=examples(300))
@given(data=st.data(), bad=st.sets(st.sampled_from(sorted(ANY)), min_size=2))
def test_measure_any_arguments(data, bad):
    """Several arguments drawn from the whole space at once."""
    check_measure_call(measure_kwargs(data, bad))


# --------------------------------------------------------------- sweep

@settings(SETTINGS, max_examples=examples(100))
@given(methods=mostly(st.lists(st.sampled_from(AVAILABLE), min_size=1, max_size=2),
                      st.one_of(st.none(), st.lists(method_names, max_size=2), method_names,
                                junk)),
       durs=mostly(st.lists(VALID["duration"], min_size=1, max_size=2),
                   st.one_of(st.none(), st.lists(durations, max_size=2), junk, durations)),
       budget=mostly(st.floats(min_value=1e-4, max_value=0.005), budgets),
       mode=mostly(VALID["mode"], modes),
       extra=mostly(st.fixed_dictionaries({}, optional={
                           "n": VALID["n"], "warmup": VALID["warmup"],
                           "keep_samples": VALID["keep_samples"], "slack": VALID["slack"],
                           "cpu": VALID["cpu"], "margin": VALID["margin"],
                           "policy": st.sampled_from(["other", "batch"])}),
                     st.dictionaries(st.sampled_from(["n", "warmup", "keep_samples", "slack",
                                                        "policy", "priority", "cpu", "margin",
                                                        "bogus"]),
                                       st.one_of(small_n, slacks, policies, bools), max_size=3)),
       progress=st.one_of(st.none(), st.just(lambda *a: None), st.just(3)))
def test_sweep_any_arguments(methods, durs, budget, mode, extra, progress):
    # methods=None or durations=None means every method / irtt's ladder up to
    # 0.5 s: far too long here, so those are only checked for early errors
    runs_all = methods is None or durs is None
    assume(not long_slack(extra.get("slack")))
    if isinstance(durs, list):
        assume(not any(long_sleep(d) for d in durs))
    else:
        assume(not long_sleep(durs))
    b = seconds_value(budget)
    if budget is None:
        assume(not (is_valid_int(extra.get("n")) and extra["n"] > 8))
        assume(not (is_valid_int(extra.get("warmup")) and extra["warmup"] > 3))
    assume(not (b is not None and 0.005 < b <= 86400 * 2))
    if runs_all:  # make the call invalid in a cheap, documented way
        budget = -1
    calls = []
    prog = progress
    if callable(progress):
        def prog(done, total, name, d):
            calls.append((done, total))
    s, exc = run_guarded(lambda: sleepacc.sweep(methods, durs, budget=budget, mode=mode,
                                                progress=prog, **extra), 4 * 0.05,
                         "sweep", "sweep")
    if exc is None:
        assert isinstance(s, sleepacc.Sweep)
        for m in s:
            check_measurement(m, extra)
        if callable(progress):
            assert [c[0] for c in calls] == list(range(1, len(s) + 1))
        s.table("irtt")
        s.table("wide")


# --------------------------------------------------------------- sleep / Sleeper / Pacer

SLEEP_METHODS = ["auto", "hybrid", "comp", "spin"] + sorted(
    m.name for m in sleepacc.methods() if m.available and m.family == "kernel")
strategies_and_methods = mostly(st.sampled_from(SLEEP_METHODS), method_names)
valid_seconds = mostly(st.one_of(st.floats(min_value=0, max_value=LONGEST_RUN_S), st.just(0),
                                 st.sampled_from([1e-9, 1e-6, np.float64(1e-5)])), durations)


@SETTINGS
@given(seconds=valid_seconds, method=strategies_and_methods, positional=st.booleans())
def test_sleep_any_arguments(seconds, method, positional):
    assume(not long_sleep_seconds(seconds))
    s = finite_seconds(seconds)
    t0 = time.monotonic_ns()

    def call():
        if positional:
            return sleepacc.sleep(seconds, method)
        return sleepacc.sleep(seconds, method=method)
    r, exc = run_guarded(call, min(s, 0.01), "sleep", "sleep")
    if exc is None:
        assert r is None
        # never wakes early (the ns rounding of `seconds` is at most 1 ns)
        assert time.monotonic_ns() - t0 >= int(s * 1e9) - 1


@SETTINGS
@given(method=st.one_of(st.none(), strategies_and_methods), quantile=mostly(
           st.one_of(st.none(), st.floats(min_value=0.01, max_value=0.999)),
           st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.sampled_from(
               [0.0, 1.0, 0.5, 0.999999, 1e-300]), junk, huge_ints)),
       margin=mostly(st.one_of(st.none(), st.floats(min_value=0, max_value=0.001)), margins),
       seconds=st.lists(valid_seconds, max_size=3),
       until=st.one_of(st.integers(min_value=-10**6, max_value=5 * 10**6), huge_ints, junk,
                       st.floats(allow_nan=True)),
       use_kw=st.booleans())
def test_sleeper_any_arguments(method, quantile, margin, seconds, until, use_kw):
    assume(not any(long_sleep_seconds(x) for x in seconds))
    args = {}
    if method is not None or use_kw:
        args["method"] = method if method is not None else "auto"
    if quantile is not None:
        args["quantile"] = quantile
    if margin is not None:
        args["margin"] = margin
    sleeper, exc = run_guarded(lambda: sleepacc.Sleeper(**args), 0.1, "Sleeper", "Sleeper()")
    if exc is not None:
        return
    with sleeper:
        for x in seconds:
            s = finite_seconds(x)
            t0 = time.monotonic_ns()
            r, exc = run_guarded(lambda: sleeper.sleep(x), min(s, 0.01), "", "Sleeper.sleep")
            if exc is None:
                assert time.monotonic_ns() - t0 >= int(s * 1e9) - 1
        # sleep_until: a CLOCK_MONOTONIC time; offsets up to 5 ms ahead, or junk
        target = time.monotonic_ns() + until if is_valid_int(until) and abs(until) < 10**7 \
            else until
        r, exc = run_guarded(lambda: sleeper.sleep_until(target), 0.01, "",
                             "Sleeper.sleep_until")
        if exc is None:
            assert time.monotonic_ns() >= target
        st_ = sleeper.stats
        lat = st_["lateness"]
        check_stats(lat, lat["n"])
    # closed: every call is a clean ValueError
    r, exc = run_guarded(lambda: sleeper.sleep(0), 0)
    assert isinstance(exc, ValueError)


@SETTINGS
@given(period=mostly(st.floats(min_value=1e-6, max_value=0.005), durations),
       method=st.one_of(st.none(), strategies_and_methods),
       missed=mostly(st.one_of(st.none(), st.sampled_from(["skip", "burst", "delay"])),
                     st.one_of(st.sampled_from(["SKIP", ""]), junk)),
       ticks=st.integers(min_value=0, max_value=4))
def test_pacer_any_arguments(period, method, missed, ticks):
    assume(not long_sleep(period))
    args = {}
    if method is not None:
        args["method"] = method
    if missed is not None:
        args["missed"] = missed
    pacer, exc = run_guarded(lambda: sleepacc.Pacer(period, **args), 0.1, "Pacer", "Pacer()")
    if exc is not None:
        return
    with pacer:
        last = None
        for _ in range(ticks):
            deadline, exc = run_guarded(pacer.wait, 0.02, "", "Pacer.wait")
            assert exc is None
            assert time.monotonic_ns() >= deadline        # never early
            if last is not None and missed != "burst":
                assert deadline > last
            last = deadline
        stats = pacer.stats
        assert stats["count"] == ticks
        check_stats(stats["lateness"], stats["lateness"]["n"])
