"""sleepacc.doctor: its A/B findings (sign and presence, never size), the
term-by-term cyclictest table, the busy-host rule and advice that never
contradicts a finding or suggests a Linux-only fix for other systems.

The logic tests replace the measured arms by fixed numbers (so the sign of a
difference is known); one live test runs the real checks with a tiny budget
and asserts only that every A/B finding is there, measured or with a reason.
"""

import pathlib

import pytest

from sleepacc import doctor, model

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"


class FakePoint:
    """An arm's numbers: its median error, and a spread (IQR, ns) over n
    samples that sets how far apart two arms must be to differ."""

    def __init__(self, median, p99=None, iqr=4_000.0, n=100):
        self.median = float(median)
        self.p99 = float(p99 if p99 is not None else median * 2)
        self.cpu = 1.0
        self.invol = 0
        self.n = n
        self.d = {"stats": {"median": self.median, "p99": self.p99,
                            "p25": self.median - iqr / 2, "p75": self.median + iqr / 2}}


def fake_arms(values, denied=()):
    """_arm replacement: the median by which setting the arm adds."""
    def arm(method, budget, mode="relative", **env):
        for key, why in denied:
            if key in env:
                return None, why
        if method == "hybrid":
            return FakePoint(values["hybrid"]), None
        if mode == "periodic":
            return FakePoint(values["periodic"]), None
        if "dma_latency" in env and "policy" not in env:
            return FakePoint(values["dma0"]), None
        for key in ("dma_latency", "lock_memory", "policy", "slack"):
            if key in env:
                return FakePoint(values[key]), None
        return FakePoint(values["base"]), None
    return arm


VALUES = {"base": 100e3, "slack": 45e3, "policy": 40e3, "lock_memory": 40e3,
          "dma_latency": 25e3, "periodic": 20e3, "dma0": 80e3, "hybrid": 1e3}
SWEEP = [{"method": "nanosleep", "requested_ns": int(d), "actual_ns": d + 60e3, "n": 100,
          "p25_ns": d + 58e3, "p75_ns": d + 62e3, "os": "Linux 6.18"}
         for d in (10e3, 100e3, 1e6, 10e6)]


def run(monkeypatch, values=VALUES, denied=(), cpu=None):
    monkeypatch.setattr(doctor, "_arm", fake_arms(values, denied))
    if cpu is not None:
        stats, selfs = cpu
        it, jt = iter(stats), iter(selfs)
        monkeypatch.setattr(doctor, "_cpu_times", lambda: next(it))
        monkeypatch.setattr(doctor, "_self_cpu", lambda: next(jt))
    return doctor.diagnose(SWEEP, budget=0.01)


def by_id(result):
    return {f["id"]: f for f in result["findings"]}


def test_ab_findings_have_the_measured_sign(monkeypatch):
    f = by_id(run(monkeypatch))
    assert f["timer_slack"]["status"] == "problem" and f["timer_slack"]["delta_ns"] > 0
    assert f["idle_states"]["status"] == "problem" and f["idle_states"]["delta_ns"] > 0
    assert any("cpu_dma_latency held at 0" in e for e in f["idle_states"]["evidence"])
    assert f["rt_policy"]["delta_ns"] > 0


def test_a_real_time_thread_is_not_told_its_slack_delays_it(monkeypatch):
    """Under SCHED_FIFO the thread's 50 µs slack setting does not apply (Linux
    gives RT threads none): slack 1 ns changes nothing, and the finding says
    why instead of 'timer slack delays every sleep by up to 50 µs'."""
    import sleepacc
    real = sleepacc.system_info
    monkeypatch.setattr(sleepacc, "system_info",
                        lambda: dict(real(), sched_policy="fifo", sched_priority=1,
                                     timer_slack_ns=50_000))
    f = by_id(run(monkeypatch, dict(VALUES, slack=VALUES["base"])))["timer_slack"]
    assert f["status"] == "ok" and "gets no timer slack" in f["title"], f
    assert "delays every sleep" not in f["title"]
    # the same arms under SCHED_OTHER: the slack finding stands, as measured (no gain: ok)
    monkeypatch.setattr(sleepacc, "system_info",
                        lambda: dict(real(), sched_policy="other", timer_slack_ns=50_000))
    g = by_id(run(monkeypatch, dict(VALUES, slack=VALUES["base"])))["timer_slack"]
    assert "delays every sleep" in g["title"], g


def test_a_difference_within_the_noise_is_not_a_finding(monkeypatch):
    """Arms 15 µs apart whose medians are each uncertain by ~6 µs (IQR 60 µs
    over 100 samples) do not differ: no 'problem' is made of it; the same
    15 µs between tight arms (IQR 4 µs; the 2 % drift floor, 2 µs) does."""
    import sleepacc
    real = sleepacc.system_info
    monkeypatch.setattr(sleepacc, "system_info", lambda: dict(real(), cpuidle_driver="haltpoll"))
    for iqr, status in ((60_000.0, "ok"), (4_000.0, "problem")):
        def arm(method, budget, mode="relative", iqr=iqr, **env):
            if "dma_latency" in env and "policy" not in env:
                return FakePoint(85e3, p99=300e3, iqr=iqr), None
            return FakePoint(100e3 if not env else 50e3, p99=300e3, iqr=iqr), None
        monkeypatch.setattr(doctor, "_arm", arm)
        f = by_id(doctor.diagnose(SWEEP, budget=0.01))["idle_states"]
        assert f["status"] == status and f["delta_ns"] == 15e3, (iqr, f)


def test_a_tail_difference_counts_only_beyond_the_p99s_intervals():
    a, b = FakePoint(50e3, p99=200e3), FakePoint(50e3, p99=150e3)
    assert doctor._tail_beyond_noise(50e3, a, b)           # no intervals known: the size
    a.p99_ci, b.p99_ci = (120e3, 400e3), (100e3, 180e3)    # a few hundred samples: wide
    assert not doctor._tail_beyond_noise(50e3, a, b)
    a.p99_ci, b.p99_ci = (190e3, 210e3), (140e3, 160e3)
    assert doctor._tail_beyond_noise(50e3, a, b)
    assert not doctor._tail_beyond_noise(10e3, a, b)       # below MIN_TAIL_NS


def test_a_measured_arm_brackets_its_p99():
    import sleepacc
    pt = doctor._Point(sleepacc.measure("nanosleep", 1e-4, n=300, keep_samples=True))
    lo, hi = pt.p99_ci
    assert lo <= pt.p99 <= hi


def test_no_cpuidle_driver_says_dma_latency_has_nothing_to_limit(monkeypatch):
    import sleepacc
    real = sleepacc.system_info
    monkeypatch.setattr(sleepacc, "system_info", lambda: dict(real(), cpuidle_driver="none"))
    f = by_id(run(monkeypatch, dict(VALUES, dma0=VALUES["base"] - 1e3)))["idle_states"]
    assert f["status"] == "ok"
    assert any("no cpuidle driver" in e and "does not limit" in e for e in f["evidence"]), f


def test_a_worse_arm_is_not_a_gain(monkeypatch):
    f = by_id(run(monkeypatch, dict(VALUES, dma0=130e3)))
    assert f["idle_states"]["status"] == "ok"
    assert f["idle_states"]["delta_ns"] < 0 and f["idle_states"]["gain_us"] == 0


def test_idle_cost_not_measurable_says_why(monkeypatch):
    why = "no permission: dma_latency: /dev/cpu_dma_latency is not writable (needs root)"
    res = run(monkeypatch, denied=[("dma_latency", why)])
    f = by_id(res)["idle_states"]
    assert f["status"] == "unknown" and f["delta_ns"] is None
    assert any("could not be measured" in e and "not writable" in e for e in f["evidence"])
    row = next(r for r in res["cyclictest"] if r["step"] == "idle_exit")
    assert row["median_ns"] is None and row["note"].startswith("not measured")


def test_cyclictest_table_accounts_term_by_term(monkeypatch):
    table = run(monkeypatch)["cyclictest"]
    assert [r["step"] for r in table] == [s[0] for s in doctor.CYCLICTEST_STEPS]
    assert table[0]["term_ns"] is None
    terms = {r["step"]: r["term_ns"] for r in table[1:]}
    assert terms["timer_slack"] < 0 and terms["idle_exit"] < 0 and terms["periodic"] < 0
    # the terms add up to the difference between the first and the last row
    assert sum(terms.values()) == pytest.approx(table[-1]["median_ns"] - table[0]["median_ns"])
    text = doctor.format_cyclictest(table)
    assert "cpu_dma_latency" in text and "SCHED_FIFO" in text


def test_a_denied_step_is_skipped_and_the_ladder_goes_on(monkeypatch):
    table = run(monkeypatch, denied=[("policy", "no permission: SCHED_FIFO needs CAP_SYS_NICE")])[
        "cyclictest"]
    rows = {r["step"]: r for r in table}
    assert rows["rt_policy"]["median_ns"] is None
    assert "CAP_SYS_NICE" in rows["rt_policy"]["note"]
    assert "policy" not in rows["lock_memory"]["env"]
    assert rows["lock_memory"]["term_ns"] is not None


def test_busy_host_counts_other_processes_not_our_load(monkeypatch):
    # (busy, steal, total) jiffies: 2 CPUs, 200 jiffies of wall; all busy
    # time is our own (self CPU 2 s over ~0 s of wall makes others <= 0)
    res = run(monkeypatch, cpu=([(0, 0, 0), (200, 0, 200)], [0.0, 1e9]))
    assert by_id(res)["busy_host"]["status"] == "ok"
    # the same busy jiffies, none of them ours: busy
    res = run(monkeypatch, cpu=([(0, 0, 0), (200, 0, 200)], [0.0, 0.0]))
    assert by_id(res)["busy_host"]["status"] == "problem"
    # a loop that must share the CPUs is told of the slice opt-in
    assert "slice=100e-6" in by_id(res)["busy_host"]["fix"]


def test_no_advice_contradicts_a_finding(monkeypatch):
    res = run(monkeypatch)
    problems = [f for f in res["findings"] if f["status"] == "problem"]
    assert problems
    assert "nothing large to remove" not in (res["model"]["explanation"] or "")
    fit = res["model"]["fit"]
    assert fit["methods"]["nanosleep"]["verdict"] in ("explained", "partly", "unexplained")


def test_data_from_other_systems_get_no_linux_fix(monkeypatch):
    recs = [r for r in model.load_records(DATA / "public_results.csv")
            if r["seed"] in ("srt637", "vayu1667-macos")]
    for seed in ("srt637", "vayu1667-macos"):
        m = model.fit([r for r in recs if r["seed"] == seed])
        text = m.explain()
        for linux_only in ("PR_SET_TIMERSLACK", "cpu_dma_latency", "epoll_pwait2", "timerfd"):
            assert linux_only not in text, (seed, linux_only)


def test_live_checks_are_all_present():
    res = doctor.diagnose(budget=0.01)
    f = by_id(res)
    for key in ("timer_slack", "rt_policy", "idle_states", "busy_host"):
        assert key in f
    idle = f["idle_states"]
    assert idle["delta_ns"] is not None or any("could not be measured" in e
                                               for e in idle["evidence"])
    for row in res["cyclictest"]:
        assert row["median_ns"] is not None or row["note"].startswith("not measured")
    assert res["model"]["fit"] is not None


def test_imported_windows_data_get_the_model_for_windows(monkeypatch):
    monkeypatch.setattr(doctor, "_arm", fake_arms(VALUES))
    recs = [r for r in model.load_records(DATA / "public_results.csv") if r["seed"] == "srt637"]
    res = doctor.diagnose(recs, budget=0.01)
    text = res["model"]["explanation"]
    assert "15.6 ms tick" in text
    for linux_only in ("PR_SET_TIMERSLACK", "cpu_dma_latency", "epoll_pwait2"):
        assert linux_only not in text
    assert "Windows" in res["model"]["note"]


def test_doctor_from_a_csv_of_imported_results():
    import json
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "sleepacc", "doctor", "--from",
                        str(DATA / "public_results.csv"), "--json", "--budget", "0.01"],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["model"]["fit"]["methods"]
    assert doc["cyclictest"] and doc["findings"]


def _hybrid_arms(monkeypatch, hybrid, kernel, busy):
    """The arms with the hybrid and the kernel wait (timerfd) as given, and
    a busy or quiet host."""
    base = fake_arms(VALUES)

    def arm(method, budget, mode="relative", **env):
        if method == "hybrid":
            return hybrid, None
        if method == doctor.KERNEL_METHOD:
            return kernel, None
        return base(method, budget, mode, **env)
    monkeypatch.setattr(doctor, "_arm", arm)
    monkeypatch.setattr(doctor, "_busy", lambda c: doctor._finding(
        "busy_host", "problem" if busy else "ok", "busy" if busy else "quiet"))
    return by_id(doctor.diagnose(SWEEP, budget=0.01))["hybrid"]


def test_hybrid_is_recommended_only_where_its_p99_beats_the_kernel_wait(monkeypatch):
    # a better median but a worse tail (a spin preempted for a time slice): not an option
    f = _hybrid_arms(monkeypatch, FakePoint(1e3, p99=3_900e3), FakePoint(10e3, p99=27e3), False)
    assert f["status"] == "ok" and "does not beat" in f["title"] and f["delta_ns"] < 0, f
    # better at both: an option
    g = _hybrid_arms(monkeypatch, FakePoint(1e3, p99=10e3), FakePoint(10e3, p99=27e3), False)
    assert g["status"] == "option", g
    assert "wins at p50" not in g["title"]


def test_under_load_the_doctor_says_which_wins_at_p50_and_which_at_p99(monkeypatch):
    f = _hybrid_arms(monkeypatch, FakePoint(1e3, p99=3_900e3), FakePoint(10e3, p99=27e3), True)
    assert f["status"] == "ok", f
    assert "hybrid(1 ms) wins at p50" in f["title"] and "timerfd(1 ms) at p99" in f["title"], f
    assert any("wins at p50" in e for e in f["evidence"])
    g = _hybrid_arms(monkeypatch, FakePoint(20e3, p99=10e3), FakePoint(10e3, p99=27e3), True)
    assert "timerfd(1 ms) wins at p50" in g["evidence"][-1] and "hybrid(1 ms) at p99" in g["evidence"][-1]
