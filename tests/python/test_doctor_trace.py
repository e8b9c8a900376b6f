"""sleepacc.doctor with what was measured: the trace section, the basis of
every finding and every cause, advice that never contradicts a measured
finding, the halt cost named by what the host is, and trace against model.

Built from synthetic inputs (fixed A/B arms, a fixed trace summary, a sweep
with a known idle-exit term), so the logic is checked everywhere; one live
run checks the section's shape where a trace can or cannot run.
"""
import pytest

import sleepacc
from sleepacc import doctor

from test_doctor import VALUES, by_id, fake_arms

D = (0, 10e3, 100e3, 1e6, 3e6, 10e6)


def _actual(d, const=60e3, idle=30e3, half=1e6):
    return d + const + idle * d / (d + half)


# a sweep whose fit names an idle-exit term (15 µs at 1 ms) and advises cpu_dma_latency
SWEEP = [{"method": "nanosleep", "requested_ns": int(d), "actual_ns": _actual(d), "n": 100,
          "p25_ns": _actual(d) - 2e3, "p75_ns": _actual(d) + 2e3, "os": "Linux 6.18"} for d in D]


def st(median, p99=None):
    return {"median": median, "p99": median * 2 if p99 is None and median is not None else p99}


def summary(slack=50e3, idle_irq=9e3, busy_irq=1.2e3, idle_n=40, busy_n=60, wake=5e3):
    """A traced method's summary (Trace.summary()'s keys, the doctor's wakeup)."""
    terms = {"rounding": st(300), "slack": st(slack), "timer_irq": st(busy_irq),
             "wake_to_run": st(wake), "to_user": st(1.2e3), "other": st(2e3)}
    busy_late = 300 + slack + busy_irq + wake + 1.2e3 + 2e3
    return {"terms": terms, "complete": idle_n + busy_n, "n": idle_n + busy_n,
            "idle_at_expiry": idle_n, "busy_at_expiry": busy_n,
            "timer_irq_idle": st(idle_irq if idle_n else None),
            "timer_irq_busy": st(busy_irq if busy_n else None),
            "traced": st(busy_late + 3e3), "untraced": st(busy_late), "lost": 0, "gaps": 0,
            "wakeup": {"median": busy_late}}


def diagnose(monkeypatch, values=VALUES, facts=None, traced=None, why=None):
    monkeypatch.setattr(doctor, "_arm", fake_arms(values))
    monkeypatch.setattr(doctor, "_trace_summaries", lambda: (traced, why))
    real = sleepacc.system_info
    monkeypatch.setattr(sleepacc, "system_info", lambda: dict(real(), **(facts or {})))
    return doctor.diagnose(SWEEP, budget=0.01)


VM = {"virtualization": "hypervisor", "cpuidle_driver": "none"}
# a guest with cpuidle-haltpoll: cpu_dma_latency at 0 leaves only POLL
HALTPOLL = {"virtualization": "hypervisor", "cpuidle_driver": "haltpoll",
            "cpuidle_states": "POLL:0,haltpoll idle:1", "guest_halt_poll_ns": 0}
METAL = {"virtualization": "none", "cpuidle_driver": "intel_idle",
         "cpuidle_states": "POLL:0,C1:2,C6:100"}
# the A/B measures no gain, nor does the ladder's cpu_dma_latency step
NO_DMA_GAIN = dict(VALUES, dma0=VALUES["base"], dma_latency=VALUES["lock_memory"])
DMA_GAIN = dict(VALUES, dma0=VALUES["base"] - 40e3)  # the A/B measures a gain
TRACED = {"nanosleep": summary(), "timerfd": summary(slack=0)}


def advice_lines(res):
    """Every line of the report that recommends something: the model's
    text and the fixes of the findings the report prints a fix for."""
    lines = (res["model"]["explanation"] or "").split("\n")
    return lines + [f["fix"] for f in res["findings"]
                    if f["fix"] and f["status"] in ("problem", "option", "unknown")]


@pytest.mark.parametrize("facts", [VM, HALTPOLL, METAL], ids=["vm", "haltpoll", "metal"])
@pytest.mark.parametrize("traced", [TRACED, None], ids=["traced", "untraced"])
def test_no_advice_line_contradicts_a_measured_finding(monkeypatch, facts, traced):
    res = diagnose(monkeypatch, NO_DMA_GAIN, facts, traced, "trace: needs root")
    idle = by_id(res)["idle_states"]
    assert idle["basis"] == "measured" and idle["status"] == "ok"
    step = next(r for r in res["cyclictest"] if r["step"] == "idle_exit")
    assert step["within_noise"]
    nothing = [f for f in res["findings"] if doctor._measured_nothing(f, res["cyclictest"])]
    assert idle in nothing
    for f in nothing:
        for line in advice_lines(res):
            for word in doctor._FIX_WORDS.get(f["id"], ()):
                assert word not in line, (f["id"], line)
    assert any(d.startswith("idle_states") for d in res["model"]["dropped_advice"])


def test_a_measured_gain_keeps_the_models_advice(monkeypatch):
    res = diagnose(monkeypatch, DMA_GAIN, METAL, TRACED)
    assert by_id(res)["idle_states"]["status"] == "problem"
    assert "cpu_dma_latency" in res["model"]["explanation"]
    assert res["model"]["dropped_advice"] == []


@pytest.mark.parametrize("facts", [VM, METAL, {"virtualization": "none",
                                                "cpuidle_driver": "none"}])
@pytest.mark.parametrize("traced", [TRACED, None])
def test_every_finding_and_every_cause_says_its_basis(monkeypatch, facts, traced):
    res = diagnose(monkeypatch, VALUES, facts, traced, "trace: needs root")
    for f in res["findings"]:
        assert f["basis"] in doctor.BASES, f
        # a measured A/B difference is there exactly when the basis says measured or traced
        if f["delta_ns"] is not None:
            assert f["basis"] == "measured", f
        if f["basis"] == "traced":     # only where a trace ran
            assert traced is not None, f
    assert res["model"]["causes"]
    for c in res["model"]["causes"]:
        assert c["basis"] in ("traced", "inferred"), c
        assert (c["basis"] == "traced") == ("model_ns" in c)
    assert res["trace"]["available"] == (traced is not None)
    if traced is None:
        assert res["trace"]["why"] == "trace: needs root"
        assert all(c["basis"] == "inferred" for c in res["model"]["causes"])
        assert by_id(res)["idle_halt"]["basis"] == "inferred"


def test_the_halt_cost_is_named_by_what_the_host_is(monkeypatch):
    vm = by_id(diagnose(monkeypatch, NO_DMA_GAIN, VM, TRACED))["idle_halt"]
    assert vm["basis"] == "traced" and vm["status"] == "problem"
    assert "vCPU" in vm["title"]
    for word in ("guest_halt_poll_ns", "idle=poll", "halt polling", "spin"):
        assert word in vm["fix"], word
    assert "cpu_dma_latency" not in vm["fix"]
    metal = by_id(diagnose(monkeypatch, DMA_GAIN, METAL, TRACED))["idle_halt"]
    assert "cpu_dma_latency" in metal["fix"] and "guest_halt_poll_ns" not in metal["fix"]
    # bare metal whose A/B measured cpu_dma_latency as changing nothing: not advised
    metal0 = by_id(diagnose(monkeypatch, NO_DMA_GAIN, METAL, TRACED))["idle_halt"]
    assert "cpu_dma_latency" not in metal0["fix"]


def test_a_haltpoll_guest_is_told_of_cpu_dma_latency_where_it_measured_a_gain(monkeypatch):
    """haltpoll has an idle state for cpu_dma_latency to limit: held at 0
    the vCPU polls instead of halting.  Both idle findings name it where
    the A/B measured a gain, neither where it measured none, and the guest
    is not told to load the driver it has."""
    gain = by_id(diagnose(monkeypatch, DMA_GAIN, HALTPOLL, TRACED))
    assert gain["idle_states"]["status"] == "problem"
    for fid in ("idle_states", "idle_halt"):
        fix = gain[fid]["fix"]
        assert "cpu_dma_latency" in fix and "measured here as a gain" in fix, fid
        assert "guest_halt_poll_ns" in fix and "spin" in fix, fid
    assert "haltpoll" not in gain["virtualisation"]["fix"]
    assert "cpuidle-haltpoll" in by_id(diagnose(monkeypatch, DMA_GAIN, VM, TRACED))[
        "virtualisation"]["fix"]
    none = by_id(diagnose(monkeypatch, NO_DMA_GAIN, HALTPOLL, TRACED))
    for fid in ("idle_states", "idle_halt"):
        assert "cpu_dma_latency" not in (none[fid]["fix"] or ""), fid


@pytest.mark.parametrize("poll_ns, said", [(0, "0 ns"), (200_000, "200 µs"), (None, None)])
def test_a_haltpoll_guest_is_told_how_long_its_vcpu_polls(monkeypatch, poll_ns, said):
    """The host fact guest_halt_poll_ns (0: the vCPU halts at once) is in
    the evidence and the fix that says to raise it; unknown, neither
    names a value."""
    f = by_id(diagnose(monkeypatch, DMA_GAIN, dict(HALTPOLL, guest_halt_poll_ns=poll_ns),
                       TRACED))["idle_halt"]
    text = " ".join(f["evidence"])
    if said is None:
        assert "guest_halt_poll_ns, then halts" in text and "(now" not in f["fix"]
    else:
        assert f"guest_halt_poll_ns ({said}), then halts" in text
        assert f"raise guest_halt_poll_ns (now {said};" in f["fix"]


def test_the_traced_halt_cost_is_idle_less_busy(monkeypatch):
    res = diagnose(monkeypatch, VALUES, VM, TRACED)
    s = res["trace"]["methods"]["nanosleep"]
    assert s["halt_ns"] == s["timer_irq_idle"]["median"] - s["timer_irq_busy"]["median"]
    few = {"nanosleep": summary(idle_n=1), "timerfd": summary(slack=0)}
    res = diagnose(monkeypatch, VALUES, VM, few)
    assert res["trace"]["methods"]["nanosleep"]["halt_ns"] is None
    assert by_id(res)["idle_halt"]["basis"] == "inferred"


@pytest.mark.parametrize("idle_irq, disagrees", [(1.2e3 + 15e3, False), (1.2e3 + 4e3, True),
                                                 (1.2e3 + 40e3, True)])
def test_trace_and_model_disagree_beyond_3us_or_20_percent(monkeypatch, idle_irq, disagrees):
    """The model puts 15 µs of idle exit at 1 ms: a traced halt cost of
    15 µs agrees, 4 µs or 40 µs does not; the trace is used either way."""
    traced = {"nanosleep": summary(idle_irq=idle_irq), "timerfd": summary(slack=0)}
    res = diagnose(monkeypatch, VALUES, VM, traced)
    cause = next(c for c in res["model"]["causes"] if c["name"] == "idle_exit")
    halt = res["trace"]["methods"]["nanosleep"]["halt_ns"]
    assert cause["basis"] == "traced" and cause["ns"] == halt
    off = abs(cause["model_ns"] - halt) > max(3e3, 0.2 * abs(halt))
    assert off == disagrees == cause["disagrees"]
    named = [d["cause"] for d in res["model"]["disagreements"]]
    assert ("idle_exit" in named) == disagrees
    text = doctor.format_causes(res["model"]["causes"], res["model"]["disagreements"])
    assert ("disagree on idle exit" in text) == disagrees
    assert "(traced)" in text


def test_the_trace_section_prints_every_term_within_80_columns(monkeypatch):
    res = diagnose(monkeypatch, VALUES, VM, TRACED)
    text = doctor.format_trace(res["trace"])
    for term in sleepacc.records.TRACE_TERMS:
        assert term in text
    assert all(len(line) + 5 <= 80 for line in text.splitlines())
    res = diagnose(monkeypatch, VALUES, VM, None, "trace: needs root or CAP_DAC_OVERRIDE")
    assert doctor.format_trace(res["trace"]).startswith("not traced: trace: needs root")


def test_live_trace_section():
    """The real checks: the section is there, traced where a trace can run,
    with its reason where it cannot; complete counts within n."""
    res = doctor.diagnose(budget=0.01)
    t = res["trace"]
    if not t["available"]:
        assert t["why"] and t["methods"] == {}
        return
    assert set(t["methods"]) == set(doctor.TRACE_METHODS)
    for s in t["methods"].values():
        assert 0 <= s["complete"] <= s["n"] == doctor.TRACE_N
        assert s["idle_at_expiry"] + s["busy_at_expiry"] <= s["complete"]
    assert all(f["basis"] in doctor.BASES for f in res["findings"])


class NoisyPoint:
    """An arm whose median error is its setting's value plus noise."""

    def __init__(self, median):
        self.median, self.p99, self.cpu, self.invol, self.n = median, median * 2, 1.0, 0, 100
        self.d = {"stats": {"median": median, "p99": median * 2, "p25": median - 2e3,
                            "p75": median + 2e3}}


def _ladder(monkeypatch, effect, noise, seed):
    """The ladder where each setting changes the median by effect[key] (ns)
    and every arm adds uniform noise of +-noise."""
    import random
    rng = random.Random(seed)

    def arm(method, budget, mode="relative", **env):
        v = 100e3 + sum(effect.get(k, 0.0) for k in env) + (effect["periodic"] if
                                                             mode == "periodic" else 0.0)
        return NoisyPoint(v + rng.uniform(-noise, noise)), None
    monkeypatch.setattr(doctor, "_arm", arm)
    return doctor._cyclictest_table(0.01)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("noise", [0.0, 3e3, 30e3])
def test_ladder_intervals_hold_their_invariants(monkeypatch, seed, noise):
    effect = {"slack": -50e3, "policy": 0.0, "lock_memory": 0.0, "dma_latency": 0.0,
              "periodic": -2e3}
    table = _ladder(monkeypatch, effect, noise, seed)
    assert table[0]["term_ns"] is None and table[0]["interval_ns"] is None
    for r in table[1:]:
        lo, hi = r["interval_ns"]
        assert hi - lo >= 0 and lo <= r["term_ns"] <= hi
        assert r["within_noise"] == (lo <= 0 <= hi)
        if r["within_noise"]:     # printed as noise, never as a gain
            line = next(ln for ln in doctor.format_cyclictest(table).splitlines()
                        if ln.startswith(r["label"][:40]))
            assert "~0 (noise)" in line and "-" not in line.split()[-1]
    rows = {r["step"]: r for r in table}
    if noise == 0.0:    # no noise: only a setting that changes nothing holds 0
        for step in ("rt_policy", "lock_memory", "idle_exit"):
            assert rows[step]["within_noise"] and rows[step]["interval_ns"] == [0.0, 0.0]
        assert not rows["timer_slack"]["within_noise"]
    if noise < 20e3:    # a 50 µs effect against +-3 µs (or no) noise is never noise
        assert not rows["timer_slack"]["within_noise"]


def test_advice_stays_where_the_ladder_measured_a_saving_beyond_noise(monkeypatch):
    """The A/B saw nothing but the ladder's cpu_dma_latency step saves beyond
    its interval: the measurements disagree, so the model's line is kept."""
    res = diagnose(monkeypatch, dict(VALUES, dma0=VALUES["base"]), METAL, TRACED)
    step = next(r for r in res["cyclictest"] if r["step"] == "idle_exit")
    assert step["within_noise"] is False and step["term_ns"] < 0
    assert not doctor._measured_nothing(by_id(res)["idle_states"], res["cyclictest"])
    assert not any(d.startswith("idle_states") for d in res["model"]["dropped_advice"])


def test_a_halt_cost_whose_interval_holds_0_is_not_a_problem(monkeypatch):
    s = summary(idle_irq=9e3, busy_irq=1.2e3)
    s["timer_irq_idle"]["interval"] = [7e3, 11e3]
    s["timer_irq_busy"]["interval"] = [1e3, 1.5e3]
    res = diagnose(monkeypatch, VALUES, VM, {"nanosleep": s, "timerfd": summary(slack=0)})
    lo, hi = res["trace"]["methods"]["nanosleep"]["halt_interval_ns"]
    assert lo <= res["trace"]["methods"]["nanosleep"]["halt_ns"] <= hi
    assert by_id(res)["idle_halt"]["status"] == "problem"
    s["timer_irq_busy"]["interval"] = [0.5e3, 12e3]     # the two medians' intervals overlap
    res = diagnose(monkeypatch, VALUES, VM, {"nanosleep": s, "timerfd": summary(slack=0)})
    assert res["trace"]["methods"]["nanosleep"]["halt_interval_ns"][0] <= 0
    f = by_id(res)["idle_halt"]
    assert f["status"] == "ok" and f["fix"] is None and f["basis"] == "traced"


def test_a_median_interval_brackets_the_median():
    import numpy as np
    rng = np.random.default_rng(1)
    for n in (3, 10, 100, 1000):
        xs = rng.exponential(10e3, n)
        lo, hi = doctor._median_interval(xs)
        assert lo <= float(np.median(xs)) <= hi
    assert doctor._median_interval([1.0, 2.0]) is None


def test_a_traced_term_too_noisy_to_tell_leaves_the_cause_inferred(monkeypatch):
    """A halt cost whose interval holds the model's idle exit neither
    disagrees nor replaces it."""
    s = summary(idle_irq=1.2e3 + 4e3)
    s["timer_irq_idle"]["interval"] = [0.0, 60e3]
    s["timer_irq_busy"]["interval"] = [1e3, 1.5e3]
    res = diagnose(monkeypatch, VALUES, VM, {"nanosleep": s, "timerfd": summary(slack=0)})
    cause = next(c for c in res["model"]["causes"] if c["name"] == "idle_exit")
    assert cause["basis"] == "inferred" and not cause["disagrees"] and "model_ns" not in cause
    assert cause["traced_ns"] == res["trace"]["methods"]["nanosleep"]["halt_ns"]
    assert "idle_exit" not in [d["cause"] for d in res["model"]["disagreements"]]


class _FakeTrace:
    """What reconcile._trace_summaries reads of a Trace: 20 complete samples,
    ``busy`` of them on a CPU busy at the expiry, each 60 µs late (90 µs
    for the busy ones), traced 1 µs later than untraced."""

    def __init__(self, busy):
        import numpy as np
        n = 20
        self.complete = np.ones(n, dtype=bool)
        self.idle = np.array([1] * (n - busy) + [0] * busy)
        self.lateness = np.where(self.idle == 0, 90e3, 60e3)
        self.terms = {"timer_irq": np.where(self.idle == 0, 1e3, 9e3)}

    def summary(self):
        return {"traced": st(61e3), "untraced": st(60e3),
                "timer_irq_idle": st(9e3), "timer_irq_busy": st(1e3)}


@pytest.mark.parametrize("busy", [0, 1, 2, 3, 10])
def test_the_traced_wake_up_needs_min_traced_busy_samples(monkeypatch, busy):
    """Where the CPU halts when idle a busy one at the expiry is rare: a
    wake-up figure of one or two samples is not a median and must not
    replace the model's (on a haltpoll guest one busy sample would make
    the wake-up 122 µs "traced" against a model's 37 µs)."""
    from sleepacc import reconcile
    monkeypatch.setattr(sleepacc, "trace", lambda *a, **k: _FakeTrace(busy))
    out, why = reconcile._trace_summaries(n=20)
    assert why is None
    w = out["nanosleep"]["wakeup"]["median"]
    if busy < reconcile.MIN_TRACED:
        assert w is None
        s = summary()
        s["wakeup"] = out["nanosleep"]["wakeup"]
        res = diagnose(monkeypatch, VALUES, VM, {"nanosleep": s, "timerfd": summary(slack=0)})
        cause = next(c for c in res["model"]["causes"] if c["name"] == "wakeup")
        assert cause["basis"] == "inferred" and "model_ns" not in cause
    else:
        assert w == 90e3 - 1e3   # the busy samples' median less the tracer's cost
