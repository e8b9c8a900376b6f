"""The model's advice where no trace exists (published data, other OSes):
invariants of what it may say.

* a fix only for a cause the fit identified (a cause whose interval reaches
  0 gets none), and only a fix of the data's own OS;
* under an ``unexplained`` verdict, nothing but "measure more";
* a timer-slack claim only where the constant can hold the slack, on a
  sleep that slack can delay;
* Windows' high-resolution waitable timer wakes on a ~0.5 ms interrupt (a
  sub-millisecond tick), not on a wake-up plus an idle exit;
* a fit is judged against the oversleep, not the request.
"""

import pathlib

import numpy as np
import pytest

from sleepacc import model
from sleepacc.model import explain

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
DATASETS = ((DATA / "seed_results.csv", model.GROUP_KEYS),
            (DATA / "public_results.csv", ("seed", "host", "os", "timer_config")))

# Words that name one OS's fix: none may appear in advice for another OS.
FOREIGN = {
    "darwin": ("sysctl", "kern.", "prctl", "PR_SET_TIMERSLACK", "cpu_dma_latency",
               "timeBeginPeriod", "CONFIG_HIGH_RES", "calloutng", "epoll", "SetWaitableTimer"),
    "windows": ("sysctl", "kern.", "prctl", "PR_SET_TIMERSLACK", "cpu_dma_latency",
                "CONFIG_HIGH_RES", "calloutng", "epoll", "THREAD_TIME_CONSTRAINT"),
    "freebsd": ("prctl", "PR_SET_TIMERSLACK", "cpu_dma_latency", "timeBeginPeriod",
                "CONFIG_HIGH_RES", "epoll", "THREAD_TIME_CONSTRAINT", "SetWaitableTimer"),
    "bsd": ("sysctl", "kern.", "calloutng", "prctl", "PR_SET_TIMERSLACK", "cpu_dma_latency",
            "timeBeginPeriod", "HZ=64", "CONFIG_HIGH_RES", "THREAD_TIME_CONSTRAINT"),
    "linux": ("sysctl", "kern.", "calloutng", "timeBeginPeriod", "THREAD_TIME_CONSTRAINT",
              "SetWaitableTimer"),
    None: ("sysctl", "kern.", "prctl", "PR_SET_TIMERSLACK", "cpu_dma_latency",
           "timeBeginPeriod", "THREAD_TIME_CONSTRAINT"),
}

# The words each cause's advice starts from: absent where the cause is not identified.
CAUSE_WORDS = {
    "tick": ("tick (HZ=", "timer interrupt"),
    "coalescing": ("defer a timer", "coalescing lets"),
    "wakeup": ("wake-up takes", "constant can hold"),
    "idle_exit": ("idle exit grows",),
    "timer_slack": ("timer slack costs",),
    "select_slack": ("select/poll allow",),
}

# Each advice rule and the cause it is for.
RULES = {"tick": explain._advise_tick, "granularity": explain._advise_unit,
         "coalescing": explain._advise_coalescing, "select_slack": explain._advise_select,
         "timer_slack": explain._advise_slack, "wakeup": explain._advise_wakeup,
         "idle_exit": explain._advise_idle_exit, "zero_shortcut": explain._advise_zero}


@pytest.fixture(scope="module")
def fitted():
    out = []
    for path, by in DATASETS:
        for m in model.fit_groups(path, by=by, bootstrap=100).values():
            for p in m.params.values():
                if p.sleeps:
                    out.append((m, p, explain.advice(p, m.facts, explain.pick_request(p, None))))
    return out


def host(truth, durations, method="nanosleep", os="Linux 6.18", spread=3_000.0, seed=1,
         extra=None):
    rng = np.random.default_rng(seed)
    recs = []
    for d in durations:
        med = d + truth(d) + rng.normal(0, 1.2533 * spread / 20) + rng.normal(0, 0.005 * truth(d))
        r = {"method": method, "requested_ns": int(d), "actual_ns": float(med), "n": 400,
             "p25_ns": med - 0.6745 * spread, "p75_ns": med + 0.6745 * spread}
        if os:
            r["os"] = os
        r.update(extra or {})
        recs.append(r)
    return model.fit(recs)


def advice_of(m, method):
    p = m.params[method]
    return p, explain.advice(p, m.facts, explain.pick_request(p, None))


# ------------------------------------------------------------------ the datasets

def test_dataset_advice_names_only_the_datas_own_os(fitted):
    kinds = set()
    for m, p, adv in fitted:
        kind = model.terms._os_kind(m.facts)
        kinds.add(kind)
        for line in adv:
            for word in FOREIGN[kind]:
                assert word not in line, (m.label, p.method, kind, line)
    assert {"linux", "freebsd", "darwin", "windows"} <= kinds


def test_dataset_unexplained_verdicts_advise_only_to_measure_more(fitted):
    seen = 0
    for m, p, adv in fitted:
        if p.verdict == "unexplained":
            seen += 1
            assert len(adv) == 1 and "measure more" in adv[0], (m.label, p.method, adv)
    assert seen >= 3


def test_dataset_causes_not_identified_get_no_advice(fitted):
    seen = 0
    for m, p, adv in fitted:
        req = explain.pick_request(p, None)
        kind = model.terms._os_kind(m.facts)
        for c in p.causes:
            if c.get("identified", True):
                continue
            seen += 1
            rule = RULES.get(c["name"])
            if rule is not None:
                assert rule(p, kind, kind == "linux", req, m.facts) == [], (m.label, p.method, c)
            for word in CAUSE_WORDS.get(c["name"], ()):
                assert not any(word in a for a in adv), (m.label, p.method, c, adv)
    assert seen >= 5


def test_dataset_slack_claims_fit_the_slack(fitted):
    """A line that says a constant is (or holds) Linux's slack: on Linux
    2.6.28+ (or no version named), with a constant at least the slack."""
    for m, p, adv in fitted:
        for line in adv:
            if "timer slack" not in line or "PR_SET_TIMERSLACK" not in line:
                continue
            assert model.terms._os_kind(m.facts) == "linux", (m.label, line)
            assert "2.4" not in str(m.facts.get("os")), (m.label, line)
            assert p.constant_ns >= model.LINUX_DEFAULT_SLACK_NS * 0.9, (m.label, line)


def test_windows_high_resolution_timer_data_is_unexplained_and_says_so_only():
    ms = model.fit_groups(DATA / "public_results.csv", by=("seed", "host", "os", "timer_config"))
    m = ms.find(seed="spinsleep22")
    p, adv = advice_of(m, "waitable_timer_hr")
    assert p.verdict == "unexplained"
    assert len(adv) == 1 and "measure more" in adv[0], adv


# ------------------------------------------------------------------ other OSes, synthetic

def test_macos_proportional_leeway_is_not_given_a_freebsd_sysctl():
    m = host(lambda d: 5e3 + 0.03 * d, [1e3, 10e3, 100e3, 1e6, 3e6, 10e6, 30e6],
             method="mach_wait_until", os="macOS 14")
    p, adv = advice_of(m, "mach_wait_until")
    assert any(c["name"] == "coalescing" for c in p.causes), p.causes
    text = " ".join(adv)
    assert "coalescing" in text or "defer a timer" in text, adv
    for word in FOREIGN["darwin"]:
        assert word not in text, (word, adv)


def test_openbsd_one_duration_gets_no_windows_tick_and_no_fix():
    rec = {"method": "nanosleep", "requested_ns": 1_000_000, "actual_ns": 15_600_000.0,
           "os": "OpenBSD 7.4"}
    m = model.fit([rec])
    p, adv = advice_of(m, "nanosleep")
    assert p.verdict == "unexplained"
    assert p.tick_ns != pytest.approx(15_625_000)
    assert len(adv) == 1 and "measure more" in adv[0], adv
    assert "HZ=64" not in m.explain() and "timeBeginPeriod" not in m.explain()


def test_openbsd_ticks_get_a_bsd_fix():
    T = 10e6
    m = host(lambda d: (np.ceil(d / T) + 1) * T - d + 20e3,
             [1e3, 100e3, 1e6, 3e6, 8e6, 13e6, 23e6, 50e6], os="OpenBSD 7.4", spread=200e3)
    p, adv = advice_of(m, "nanosleep")
    assert p.tick_ns == pytest.approx(T) and p.identified["tick"]
    text = " ".join(adv)
    assert "HZ=100" in text, adv
    for word in FOREIGN["bsd"]:
        assert word not in text, (word, adv)


def test_windows_high_resolution_timer_is_a_half_millisecond_tick():
    """Windows' high-resolution waitable timer wakes on a ~0.5 ms timer
    interrupt: sub-tick requests last one interrupt period."""
    T = 500_000
    durations = [1e3, 10e3, 100e3, 250e3, 400e3, 600e3, 1e6, 1.2e6, 2e6, 5e6]
    m = host(lambda d: np.ceil(d / T) * T - d + 15e3, durations, method="waitable_timer_hr",
             os="Windows 10", spread=50e3)
    p, adv = advice_of(m, "waitable_timer_hr")
    assert p.tick_ns == pytest.approx(T), (p.tick_ns, p.causes)
    assert not p.idle_exit_ns and not any(c["name"] == "idle_exit" for c in p.causes)
    assert p.verdict != "unexplained", p.verdict_note
    text = " ".join(adv)
    assert "timer interrupt" in text, adv
    for word in FOREIGN["windows"] + ("HZ=64", "timeBeginPeriod"):
        assert word not in text, (word, adv)


def test_linux_ticks_never_include_windows_ones():
    assert 15_625_000 not in model.terms.ticks_for("linux")
    assert 500_000 not in model.terms.ticks_for("freebsd")
    assert 500_000 in model.terms.ticks_for("windows")


# ------------------------------------------------------------------ slack claims

@pytest.mark.parametrize("method,os", [("timerfd", "Linux 6.1"), ("timerfd_emulated", "Linux"),
                                       ("emu_sleep", "Linux"), ("emu_sleep", "Linux 6.1")])
def test_a_33us_constant_is_not_called_linux_timer_slack(method, os):
    """Emulator data on Linux with a 33 µs constant: timerfd has no slack, and
    33 µs cannot hold a 50 µs slack, whatever the method."""
    m = host(lambda d: 33e3, [1e3, 10e3, 100e3, 1e6, 3e6, 10e6], method=method, os=os)
    p, adv = advice_of(m, method)
    text = " ".join(adv) + " " + m.explain()
    assert "PR_SET_TIMERSLACK" not in text and "timer slack costs" not in text, text
    assert not any(c["name"] == "timer_slack" for c in p.causes), p.causes


def test_a_constant_that_holds_the_slack_may_be_called_slack():
    """The control: 80 µs on a Linux whose slack is not known can hold the
    50 µs default slack plus 30 µs of wake-up, and the advice says so."""
    m = host(lambda d: 80e3, [1e3, 10e3, 100e3, 1e6, 3e6, 10e6], method="emu_sleep", os="Linux")
    p, adv = advice_of(m, "emu_sleep")
    assert any("PR_SET_TIMERSLACK" in a for a in adv), adv
    # the same on Linux 2.4 (no timer slack before 2.6.28): no slack claim
    m = host(lambda d: 80e3, [1e3, 10e3, 100e3, 1e6, 3e6, 10e6], method="emu_sleep",
             os="Linux 2.4.19")
    assert "PR_SET_TIMERSLACK" not in m.explain()


# ------------------------------------------------------------------ the verdict

def hybrid_sweep(late_ns):
    """A hybrid sweep like sleepacc.sweep(['hybrid'], [1e-6 .. 1e-2]): 100 ns
    late everywhere but the 10 ms point, `late_ns` late there with a wide
    spread (the CPU was lost during its spin)."""
    recs = []
    for d in (1e3, 1e4, 1e5, 1e6, 1e7):
        late, spread = (late_ns, 160e3) if d == 1e7 else (100.0, 200.0)
        med = d + late
        recs.append({"method": "hybrid", "requested_ns": int(d), "actual_ns": med, "n": 400,
                     "p25_ns": med - 0.6745 * spread, "p75_ns": med + 0.6745 * spread,
                     "margin_ns": 125_000, "os": "Linux 6.18"})
    return model.fit(recs)


def test_a_hybrid_sweep_40us_late_at_10ms_is_not_explained():
    m = hybrid_sweep(40e3)
    p = m.params["hybrid"]
    assert p.predict_ns(1e7) - 1e7 < 5e3          # the model: a sub-µs oversleep
    assert p.verdict != "explained", p.verdict_note
    ok = p.within_tolerance()
    assert not ok[-1] and ok.sum() == 4
    text = m.explain()
    assert "nothing large to remove" not in text, text
    assert "4 of 5 measured durations within max(5% of the oversleep, 5 µs)" in text, text


def test_the_same_sweep_on_time_is_explained():
    m = hybrid_sweep(100.0)
    p = m.params["hybrid"]
    assert p.verdict == "explained", p.verdict_note
    assert p.within_tolerance().all()
    assert "nothing large to remove" in m.explain()


def test_the_tolerance_is_relative_to_the_oversleep():
    assert model.tolerance_ns(10e6 + 40e3, 10e6) == pytest.approx(5e3)
    assert model.tolerance_ns(20e6, 3e6) == pytest.approx(0.05 * 17e6)
    # without a request: the measured value itself (the oversleep of a 0 request)
    assert model.tolerance_ns(1e6) == pytest.approx(0.05e6)
