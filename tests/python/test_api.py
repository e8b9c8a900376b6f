"""The Python API contract and the measuring invariants.

Invariants, never tight timings: a kernel sleep never ends early, stats are
ordered, a budget stops the run after it and well before 1 s, forced
periodic misses are counted, samples are not copied, records round-trip."""
import json
import math
import time

import numpy as np
import pytest

import sleepacc
from sleepacc import _core, records

# The names the core issue requires on Linux (more may exist).
REQUIRED_METHODS = {
    "select", "pselect", "poll", "ppoll", "epoll_wait", "epoll_pwait2", "usleep", "nanosleep",
    "clock_nanosleep", "clock_nanosleep_abs", "timerfd", "timer_signal", "sigtimedwait",
    "futex", "cond_timedwait", "sched_yield", "spin", "hybrid", "syscall", "clock",
}
STATS_KEYS = ["n", "min", "max", "mean", "std", "p1", "p10", "p25", "median", "p75", "p90", "p99",
              "p999", "undersleeps"]
RECORD_KEYS = {"method", "mode", "requested_ns", "n", "stats", "missed", "cpu_ns_per_call",
               "cpu_percent", "ctx_switches", "wall_ns", "env", "samples"}
FLAT_KEYS = (["method", "mode", "requested_ns", "n"]
             + [f if f == "undersleeps" else f"{f}_ns" for f in _core.stats_fields if f != "n"]
             + ["missed", "cpu_ns_per_call", "cpu_percent", "actual_ns", "error_ns", "schema",
                "host", "os", "kernel", "slack_ns", "policy", "priority", "cpu",
                "dma_latency_us"])


def available(family=None):
    return [m for m in sleepacc.methods()
            if m.available and (family is None or m.family == family)]


def assert_ordered(stats):
    assert stats["min"] <= stats["median"] <= stats["p90"] <= stats["p99"] <= stats["p999"] \
        <= stats["max"], dict(stats)
    assert stats["min"] <= stats["mean"] <= stats["max"]
    assert stats["std"] >= 0


# --------------------------------------------------------------------------- contract

def test_public_names():
    assert isinstance(sleepacc.__version__, str) and sleepacc.__version__ == _core.VERSION
    for name in ("methods", "measure", "sweep", "system_info", "clock_info", "load"):
        assert callable(getattr(sleepacc, name)), name
    for name in ("Measurement", "Sweep", "Method", "Stats", "Samples"):
        assert isinstance(getattr(sleepacc, name), type), name


def test_methods_lists_every_core_row():
    rows = sleepacc.methods()
    assert isinstance(rows, list) and rows
    names = [m.name for m in rows]
    assert len(names) == len(set(names))
    # every registered row, in the core's order, and every required name
    assert names == [r["name"] for r in _core.methods()]
    assert REQUIRED_METHODS <= set(names)
    for m in rows:
        assert isinstance(m, sleepacc.Method)
        assert m._fields == ("name", "family", "description", "granularity_ns",
                             "honours_slack", "absolute", "available")
        assert m.family in ("kernel", "spin", "hybrid", "baseline")
        assert m.honours_slack in ("yes", "no", "unknown")
        assert isinstance(m.granularity_ns, int) and m.granularity_ns >= 0
        assert isinstance(m.absolute, bool) and isinstance(m.available, bool)
        assert isinstance(m.description, str) and m.description
    by_name = {m.name: m for m in rows}
    assert by_name["poll"].granularity_ns == 1_000_000
    assert by_name["epoll_wait"].granularity_ns == 1_000_000
    assert by_name["clock_nanosleep_abs"].absolute


def test_measurement_fields_and_record_schema():
    m = sleepacc.measure("nanosleep", 100e-6, n=50)
    assert isinstance(m, sleepacc.Measurement)
    assert m.method == "nanosleep" and m.mode == "relative"
    assert m.requested == pytest.approx(100e-6) and m.requested_ns == 100_000
    assert m.n == 50 and len(m.samples) == 50
    assert isinstance(m.samples, sleepacc.Samples)
    assert list(m.stats) == STATS_KEYS and m.stats["n"] == 50
    assert m.stats.median == m.stats["median"]
    assert isinstance(m.stats.mean, float) and isinstance(m.stats.min, int)
    assert isinstance(m.errors_ns, np.ndarray) and m.errors_ns.dtype == np.int64
    assert np.array_equal(m.errors_ns, np.asarray(m.samples) - 100_000)
    assert isinstance(m.cpu_ns_per_call, float) and m.cpu_ns_per_call >= 0
    assert set(m.ctx_switches) == {"voluntary", "involuntary"}
    assert m.ctx_switches["voluntary"] > 0  # a kernel sleep blocks
    assert m.missed == 0 and m.wall_ns >= 50 * 100_000
    assert m.env == {"slack_ns": None, "policy": None, "priority": None, "cpu": None,
                     "lock_memory": False, "dma_latency_us": None}
    d = m.to_dict()
    assert set(d) == RECORD_KEYS
    assert list(d["stats"]) == STATS_KEYS
    assert d["samples"] == list(m.samples)
    json.dumps(d)  # plain JSON types only
    assert sleepacc.Measurement.from_dict(d) == m


def test_system_and_clock_info():
    info = sleepacc.system_info()
    assert isinstance(info, dict) and info
    assert all(isinstance(k, str) for k in info)
    assert all(v is None or isinstance(v, (int, float, str)) for v in info.values())
    assert info["loadavg_1m"] is None or isinstance(info["loadavg_1m"], float)
    clocks = sleepacc.clock_info()
    assert {"monotonic", "monotonic_raw", "realtime", "boottime"} <= set(clocks)
    for c in clocks.values():
        assert set(c) == {"resolution_ns", "read_cost_ns"}
    assert clocks["monotonic"]["resolution_ns"] >= 1
    assert clocks["monotonic"]["read_cost_ns"] >= 0


def test_core_queries_convert_their_arguments_by_their_rows():
    # the call table's rows (csrc/calls.c) give each argument an option row:
    # the option converter's words and rules, positional or by name
    assert _core.clock_info(reads=20)["monotonic"]["read_cost_ns"] >= 0
    with pytest.raises(ValueError, match=r"^reads: must be >= 0, got -1$"):
        _core.clock_info(-1)
    with pytest.raises(TypeError, match=r"^ns: must be an int, got str$"):
        _core.format_duration("1")
    with pytest.raises(TypeError, match="missing required argument 'ns'"):
        _core.format_duration()
    with pytest.raises(TypeError, match="at most 0 arguments"):
        _core.methods(1)
    assert _core.format_duration(ns=-1500) == _core.format_duration(-1500)
    assert all(isinstance(v, tuple) for v in (_core.stats_fields, _core.mode_names))  # constants


def test_seconds_ns_conversion():
    assert _core.seconds_ns(0) == 0
    assert _core.seconds_ns(1) == 1_000_000_000
    assert _core.seconds_ns(1e-9) == 1
    assert _core.seconds_ns(0.5) == 500_000_000
    assert _core.seconds_ns(np.float64(1e-3)) == 1_000_000
    assert _core.seconds_ns(np.int64(2)) == 2_000_000_000
    assert _core.seconds_ns(86400) == _core.MAX_DURATION_NS


def test_plan_rows_read_a_whole_options_dict_by_the_core():
    # plan, sweep_plan and seconds_ns are rows of the core's call table
    # (calls with options): a dict argument read through the getter,
    # a refusal worded by the one fault mapper
    points = _core.sweep_plan({"methods": ["nanosleep", "spin"], "durations": [1e-3, 2e-3]})
    assert points == [{"method": m, "duration_ns": d} for m in ("nanosleep", "spin")
                      for d in (1_000_000, 2_000_000)]
    assert sleepacc._api.sweep_points("nanosleep", [1e-3])[0] == ("nanosleep", 1_000_000)
    assert _core.plan(options={"method": "nanosleep", "duration": 1}, sweep_point=False)["n"] == 0
    with pytest.raises(TypeError, match=r"^options: must be a dict, got list$"):
        _core.sweep_plan([])
    with pytest.raises(TypeError, match=r"^options: must be a dict, got tuple$"):
        _core.plan(())
    with pytest.raises(TypeError, match=r"^sweep_point: must be a bool, got int$"):
        _core.plan({"method": "nanosleep", "duration": 1}, 1)
    with pytest.raises(ValueError, match=r"^methods\[1\]: must be an available method"):
        _core.sweep_plan({"methods": ["nanosleep", "nope"]})
    with pytest.raises(TypeError, match=r"^seconds: must be a number of seconds"):
        _core.seconds_ns("1")
    with pytest.raises(ValueError, match=r"^seconds: must be at most 86400 s"):
        _core.seconds_ns(seconds=86401)
    # stats: a row whose values are a buffer the binding lends the core
    assert _core.stats(values=np.array([5, 1, 3], dtype=np.int64), threshold=2)["undersleeps"] == 1
    assert _core.stats(b"", 0)["n"] == 0
    # what the values cannot be is the core's TYPE sentence, naming the argument (the
    # binding wrote "values must be a buffer of int64", and a list got CPython's
    # "a bytes-like object is required, not 'list'", which names none)
    for bad, kind in ((b"abc", "bytes"), ([1, 2], "list"), (None, "NoneType"), ("ab", "str")):
        with pytest.raises(TypeError, match=rf"^values: must be a buffer of int64, got {kind}$"):
            _core.stats(bad, 0)
    with pytest.raises(TypeError, match=r"^threshold: must be an int, got str$"):
        _core.stats(b"", "0")


# --------------------------------------------------------------------------- invariants

def _rounded_up(ns, granularity):
    """The request after a method's own rounding: up to its unit."""
    if granularity <= 1 or ns == 0:
        return ns
    return -(-ns // granularity) * granularity


@pytest.mark.parametrize("duration", [0, 1e-6, 1e-3])
def test_kernel_methods_never_end_early(duration):
    kernel = available("kernel")
    assert len(kernel) >= 10
    for meth in kernel:
        m = sleepacc.measure(meth.name, duration, n=5 if duration >= 1e-3 else 20, budget=2.0)
        assert m.n >= 1, meth.name
        floor = _rounded_up(m.requested_ns, meth.granularity_ns)
        assert m.stats.min >= floor, (meth.name, floor, dict(m.stats))
        assert int(np.asarray(m.samples).min()) >= floor
        assert m.stats.undersleeps == 0, meth.name
        assert_ordered(m.stats)


@pytest.mark.parametrize("method", ["spin", "hybrid", "sched_yield"])
def test_spinning_methods_never_end_early(method):
    m = sleepacc.measure(method, 200e-6, n=50)
    assert m.stats.min >= 200_000
    assert m.stats.undersleeps == 0


@pytest.mark.parametrize("method,mode,duration", [
    ("nanosleep", "relative", 1e-4), ("spin", "relative", 1e-5), ("clock", "relative", 0),
    ("syscall", "relative", 0), ("clock_nanosleep_abs", "periodic", 1e-3),
    ("timerfd", "periodic", 5e-4), ("hybrid", "periodic", 1e-3),
])
def test_stats_ordered(method, mode, duration):
    m = sleepacc.measure(method, duration, mode=mode, budget=0.05)
    assert m.n > 0
    assert_ordered(m.stats)
    assert_ordered(m.stream_stats)
    values = np.asarray(m.samples)
    assert m.stats.min == values.min() and m.stats.max == values.max()
    assert m.stats.n == m.n == len(values)


@pytest.mark.parametrize("method,duration,keep", [
    ("nanosleep", 1e-3, True), ("spin", 1e-3, False), ("clock", 0, False),
    ("hybrid", 1e-3, True)])
def test_budget_is_honoured(method, duration, keep):
    t0 = time.monotonic()
    m = sleepacc.measure(method, duration, budget=0.2, keep_samples=keep)
    elapsed = time.monotonic() - t0
    assert 0.2 <= elapsed < 1.0, elapsed
    assert m.n > 0 and m.wall_ns > 0


@pytest.mark.parametrize("mode", ["relative", "periodic"])
def test_budget_shorter_than_a_sleep_still_measures_one(mode):
    # 50 warm-up sleeps of 10 ms would take 0.5 s: the warm-up is cut short.
    # (n given: without it one sample over the budget is refused, below.)
    t0 = time.monotonic()
    m = sleepacc.measure("clock_nanosleep", 0.01, budget=0.001, warmup=50, mode=mode, n=5)
    assert time.monotonic() - t0 < 0.4
    assert m.n == 1 and len(m.samples) == 1
    assert m.stats.undersleeps == 0
    if mode == "relative":
        assert m.samples[0] >= 10_000_000


@pytest.mark.parametrize("mode", ["relative", "periodic"])
def test_one_sample_longer_than_the_budget_is_refused_up_front(mode):
    """measure("nanosleep", 1000) would sleep 1000 s past the
    1 s default budget; refused before anything runs, naming duration."""
    t0 = time.monotonic()
    with pytest.raises(ValueError, match=r"^duration: one sample is longer than the budget"):
        sleepacc.measure("nanosleep", 1000, mode=mode)
    with pytest.raises(ValueError, match=r"^duration: .*budget"):
        sleepacc.measure("nanosleep", 0.01, budget=0.001)
    assert time.monotonic() - t0 < 0.5


def test_n_stops_before_budget():
    t0 = time.monotonic()
    m = sleepacc.measure("nanosleep", 1e-4, n=30, budget=10)
    assert m.n == 30 and len(m.samples) == 30
    assert time.monotonic() - t0 < 5


def test_budget_none_runs_to_n():
    m = sleepacc.measure("clock", 0, n=1000, budget=None)
    assert m.n == 1000


def test_periodic_counts_forced_misses():
    # 10 us periods are shorter than nanosleep can wake (slack alone is 50 us)
    m = sleepacc.measure("nanosleep", 10e-6, mode="periodic", n=2000, budget=1.0)
    assert m.mode == "periodic" and m.n > 0
    assert m.missed > 0
    assert m.to_dict()["missed"] == m.missed


@pytest.mark.parametrize("method", ["clock_nanosleep_abs", "timerfd", "spin"])
def test_periodic_lateness_non_negative_for_absolute_methods(method):
    m = sleepacc.measure(method, 1e-3, mode="periodic", n=50)
    assert m.stats.min >= 0 and m.stats.undersleeps == 0
    # periodic errors are the lateness itself: a view, not a copy
    assert np.shares_memory(m.errors_ns, np.asarray(m.samples))


def test_zero_copy_samples():
    m = sleepacc.measure("clock", 0, n=10_000)
    a = np.asarray(m.samples)
    b = np.asarray(m.samples)
    assert a.dtype == np.int64 and a.shape == (10_000,)
    assert not a.flags.owndata and not a.flags.writeable
    assert np.shares_memory(a, b)  # both views of the core's buffer
    assert np.shares_memory(a, np.frombuffer(m.samples, dtype=np.int64))
    mv = memoryview(m.samples)
    assert mv.format == "q" and mv.itemsize == 8 and mv.readonly and mv.shape == (10_000,)
    assert a[0] == m.samples[0] and a[-1] == m.samples[-1] == m.samples[len(m.samples) - 1]
    with pytest.raises(IndexError):
        m.samples[10_000]
    with pytest.raises((BufferError, ValueError)):
        np.frombuffer(m.samples, dtype=np.int64).setflags(write=True)
    # the buffer outlives the Measurement while a view holds it
    del m, b, mv
    assert a.sum() > 0


def test_samples_constructor_copies():
    s = sleepacc.Samples([1, 2, 3])
    assert list(s) == [1, 2, 3]
    src = np.array([5, -6], dtype=np.int64)
    t = sleepacc.Samples(src)
    assert not np.shares_memory(np.asarray(t), src) and list(t) == [5, -6]
    assert len(sleepacc.Samples()) == 0 and np.asarray(sleepacc.Samples()).shape == (0,)
    with pytest.raises(TypeError):
        sleepacc.Samples(["a"])


# --------------------------------------------------------------------------- streaming

def test_streaming_mode():
    m = sleepacc.measure("nanosleep", 50e-6, budget=0.1, keep_samples=False)
    assert m.samples is None and m.errors_ns is None
    assert m.n > 0 and m.stats.n == m.n
    assert_ordered(m.stats)
    assert m.to_dict()["samples"] is None
    assert sleepacc.Measurement.from_dict(m.to_dict()) == m


def test_streaming_stats_match_buffer_stats_of_the_same_run():
    # every run also feeds the core's histogram: its percentiles must agree
    # with the exact buffer statistics within the stated precision
    m = sleepacc.measure("nanosleep", 20e-6, n=3000)
    exact, hist = m.stats, m.stream_stats
    assert hist.n == exact.n and hist.min == exact.min and hist.max == exact.max
    assert hist.undersleeps == exact.undersleeps
    for key in ("median", "p90", "p99", "p999"):
        assert abs(hist[key] - exact[key]) <= _core.HIST_PRECISION * abs(exact[key]) + 1, key
    assert hist.mean == pytest.approx(exact.mean, rel=1e-9)


def test_binding_stats_agree_with_numpy():
    m = sleepacc.measure("clock", 0, n=5001)
    a = np.sort(np.asarray(m.samples))
    n = len(a)
    rank = lambda q: a[min(n, max(1, math.ceil(q * n * (1 - 1e-12)))) - 1]  # nearest rank
    assert m.stats.median == rank(0.5) and m.stats.p99 == rank(0.99)
    assert m.stats.mean == pytest.approx(a.mean())
    assert _core.stats(np.asarray(m.samples), 0) == m.stats.to_dict()


# --------------------------------------------------------------------------- sweep, records

def test_sweep_runs_every_pair_and_reports_progress():
    calls = []
    s = sleepacc.sweep(["nanosleep", "spin"], [0, 1e-5], budget=0.02,
                       progress=lambda *a: calls.append(a))
    assert isinstance(s, sleepacc.Sweep) and len(s) == 4
    assert [(m.method, m.requested_ns) for m in s] == [
        ("nanosleep", 0), ("nanosleep", 10_000), ("spin", 0), ("spin", 10_000)]
    assert calls == [(1, 4, "nanosleep", 0), (2, 4, "nanosleep", 1e-5), (3, 4, "spin", 0),
                     (4, 4, "spin", 1e-5)]
    assert s.host and s.started <= s.finished
    assert s.settings["budget"] == 0.02
    rows = s.to_records()
    assert [list(r) for r in rows] == [FLAT_KEYS] * 4
    for r, m in zip(rows, s):
        assert r["actual_ns"] == m.stats.median
        assert r["error_ns"] == r["actual_ns"] - r["requested_ns"]


def test_sweep_settings_record_what_iterators_gave(tmp_path):
    # generators are read once: the settings (and the saved file) name the
    # methods and durations measured, not the empty second pass of them
    s = sleepacc.sweep((m for m in ["nanosleep", "spin"]), (d for d in [1e-5, 1e-4]),
                       budget=0.01)
    assert [(m.method, m.requested_ns) for m in s] == [
        ("nanosleep", 10_000), ("nanosleep", 100_000), ("spin", 10_000), ("spin", 100_000)]
    assert s.settings["methods"] == ["nanosleep", "spin"]
    assert s.settings["durations"] == [1e-5, 1e-4]
    s.save(tmp_path / "s.json")
    assert sleepacc.load(tmp_path / "s.json").settings["methods"] == ["nanosleep", "spin"]


def test_sweep_defaults_and_periodic_skips_zero():
    assert sleepacc.DEFAULT_DURATIONS == (1e-9, 1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 1e-2,
                                          0.1, 0.2, 0.5)
    s = sleepacc.sweep(["clock_nanosleep_abs"], [0, 1e-3], budget=0.02, mode="periodic")
    assert [m.requested_ns for m in s] == [1_000_000]
    r = s.to_records()[0]
    assert r["actual_ns"] == r["requested_ns"] + s[0].stats.median


def test_sweep_validates_everything_before_running():
    calls = []
    with pytest.raises(ValueError, match=r"durations\[2\]"):
        sleepacc.sweep(["nanosleep"], [1e-3, 1e-3, -1], progress=lambda *a: calls.append(a))
    with pytest.raises(ValueError, match=r"must be an available method \(.*\), got 'nope'"):
        sleepacc.sweep(["nanosleep", "nope"], [1e-3], progress=lambda *a: calls.append(a))
    assert calls == []


def test_sweep_default_methods_are_the_available_ones():
    s = sleepacc.sweep(durations=[1e-6], budget=0.005, keep_samples=False)
    assert [m.method for m in s] == [m.name for m in available()]


def test_tables_come_from_the_core():
    s = sleepacc.sweep(["nanosleep", "spin"], [1e-6, 1e-4], budget=0.02)
    irtt = s.table()
    assert any(line.startswith("Sleep Duration") for line in irtt.splitlines())
    assert "Mean Error" in irtt and "% Error" in irtt
    assert "1µs" in irtt and "100µs" in irtt
    wide = s.table("wide")
    assert "nanosleep" in wide and "spin" in wide
    assert s.table("irtt") == irtt
    with pytest.raises(ValueError, match="style"):
        s.table("fancy")


def test_save_load_round_trip(tmp_path):
    s = sleepacc.sweep(["nanosleep", "clock"], [0, 1e-5], budget=0.02)
    s.measurements.append(sleepacc.measure("spin", 1e-5, budget=0.01, keep_samples=False))
    path = tmp_path / "run.json"
    s.save(path)
    doc = json.loads(path.read_text())
    assert doc["schema"] == "sleepacc/1"
    assert set(doc) == {"schema", "host", "started", "finished", "settings", "measurements"}
    back = sleepacc.load(path)
    assert back == s
    assert back.host == s.host and back.started == s.started and back.settings == s.settings
    for a, b in zip(back, s):
        assert a.to_dict() == b.to_dict()
        if b.samples is not None:
            assert np.array_equal(np.asarray(a.samples), np.asarray(b.samples))
    assert back.to_records() == s.to_records()
    assert back.table("wide") == s.table("wide")


def test_jsonl_form_with_torn_last_line(tmp_path):
    s = sleepacc.sweep(["nanosleep"], [1e-5, 1e-4], budget=0.02)
    lines = [records.jsonl_header(s.host, s.settings, s.started)]
    lines += [records.jsonl_point(m) for m in s]
    torn = records.jsonl_point(s[0])[:40]
    path = tmp_path / "run.jsonl"
    path.write_text("\n".join(lines) + "\n" + torn)
    back = sleepacc.load(path)
    assert list(back) == list(s) and back.host == s.host and back.started == s.started
    assert back.finished is None
    path.write_text("\n".join(lines + [records.jsonl_footer(s.finished)]) + "\n")
    assert sleepacc.load(path) == s
    path.write_text("\n".join([lines[0], "{not json", lines[1]]) + "\n")
    with pytest.raises(ValueError, match=":2: not valid JSON"):
        sleepacc.load(path)
    path.write_text(json.dumps({"schema": "other/9", "measurements": []}))
    with pytest.raises(ValueError, match="unsupported schema"):
        sleepacc.load(path)


def test_to_frame():
    pd = pytest.importorskip("pandas")
    s = sleepacc.sweep(["spin"], [0, 1e-6], budget=0.01)
    df = s.to_frame()
    assert isinstance(df, pd.DataFrame)
    assert list(df.columns) == FLAT_KEYS and len(df) == 2


def test_sweep_measures_a_repeated_method_once():
    # the core's plan: each method once, as each duration (the file would
    # otherwise hold duplicate points, which every reader warns about)
    s = sleepacc.sweep(["nanosleep", "spin", "nanosleep"], [1e-5, 1e-5], budget=0.01)
    assert [(m.method, m.requested_ns) for m in s] == [("nanosleep", 10_000), ("spin", 10_000)]
