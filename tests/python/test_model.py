"""sleepacc.model: the oversleep model, on the seed facts and on this host.

The seed numbers (tests/data/seed_results.csv, a copy of
../shared/reference/seed_results.csv) are published facts; the model must
recover the documented mechanisms from them: HZ=100 ticks with the extra
tick of usleep/nanosleep, FreeBSD's stock ticks, calloutng's proportional
slack and Linux's constant 50 µs timer slack.  The live test sets the
thread's timer slack and checks invariants of the fit (non-negative, slack=1
lowers the constant).
"""

import collections
import pathlib

import numpy as np
import pytest

from sleepacc import model

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
CSV = DATA / "seed_results.csv"


@pytest.fixture(scope="module")
def seeds():
    return model.fit_groups(CSV)


def group(ms, **match):
    return ms.find(**match)


# ------------------------------------------------------------------ seed 000

@pytest.mark.parametrize("host", ["XP1700", "1400XP", "Athlon 2100"])
def test_hz100_hosts_have_a_10ms_tick(seeds, host):
    m = group(seeds, host=host)
    for name in ("select", "usleep", "nanosleep"):
        p = m.params[name]
        assert p.tick_ns == pytest.approx(10e6), (host, name)
        assert p.identified["tick"], (host, name)
        # what is left after the ticks is tiny
        assert abs(p.constant_ns) <= 0.01 * p.tick_ns, (host, name, p.constant_ns)


@pytest.mark.parametrize("host", ["XP1700", "1400XP", "Athlon 2100"])
def test_usleep_and_nanosleep_add_one_tick(seeds, host):
    m = group(seeds, host=host)
    for name in ("usleep", "nanosleep"):
        assert m.params[name].extra_ticks == 1, (host, name)
        assert m.params[name].identified["extra_ticks"]
    # 3 ms asked -> 20 ms
    assert m.predict("usleep", 0.003) == pytest.approx(0.020, rel=0.01)


def test_select_adds_no_tick_on_linux_24_but_does_on_freebsd4(seeds):
    for host in ("1400XP", "Athlon 2100"):
        p = group(seeds, host=host).params["select"]
        assert p.extra_ticks == 0 and p.identified["extra_ticks"], host
        assert group(seeds, host=host).predict("select", 0.003) == pytest.approx(0.010, rel=0.01)
    p = group(seeds, host="XP1700").params["select"]
    assert p.extra_ticks == 1
    assert group(seeds, host="XP1700").predict("select", 0.003) == pytest.approx(0.020, rel=0.01)


def test_low_latency_kernel_is_not_called_a_10ms_tick(seeds):
    m = group(seeds, host="Thunderbird")
    for name in ("select", "usleep", "nanosleep"):
        assert m.params[name].tick_ns in (0.0, 1e6)
    # usleep/nanosleep add 1 ms: a constant or one extra tick of a 1 ms clock;
    # whole-ms requests cannot tell which, and the model says so
    p = m.params["usleep"]
    assert (p.tick_ns + p.extra_ticks * p.tick_ns + p.constant_ns) == pytest.approx(1e6, rel=0.05)
    if not p.tick_ns:
        assert not p.identified["tick"]
        assert "1 ms" in p.notes["tick"]


# ------------------------------------------------------------------ seed 001

def _table_tick(m):
    ticks = [p.tick_ns for name, p in m.params.items()
             if p.sleeps and p.tick_ns and p.identified["tick"]]
    return collections.Counter(ticks).most_common(1)[0][0]


@pytest.mark.parametrize("hz,tick_ms", [("HZ=100", 10), ("HZ=250", 4), ("HZ=1000", 1)])
def test_freebsd_stock_ticks(seeds, hz, tick_ms):
    m = group(seeds, os="stock", timer_config=hz)
    assert _table_tick(m) == pytest.approx(tick_ms * 1e6)
    # every sleeping method of the table: either that tick, or (poll/kqueue
    # counting whole ms at HZ=1000) an equivalent ms unit
    for name, p in m.params.items():
        if not p.sleeps:
            continue
        assert p.tick_ns == pytest.approx(tick_ms * 1e6) or (
            tick_ms == 1 and p.granularity_ns == 1_000_000), (hz, name)
    # kqueue's EVFILT_TIMER does not add the extra tick, the others do
    assert m.params["kqueue"].extra_ticks == 0
    assert m.params["nanosleep"].extra_ticks == 1


@pytest.mark.parametrize("hz", ["HZ=100", "HZ=250", "HZ=1000"])
def test_calloutng_proportional_slack_about_five_percent(seeds, hz):
    m = group(seeds, os="calloutng", timer_config=hz)
    # the share of the timeout calloutng lets a timer slip: an uncapped
    # proportional term, or a capped one whose cap lies beyond most requests
    props = [p.proportional or p.coalescing_share for p in m.params.values()
             if p.sleeps and (p.identified["proportional"] or p.identified["coalescing"])]
    assert len(props) >= 4
    share = float(np.median(props))
    assert 0.03 <= share <= 0.08, share
    for name, p in m.params.items():
        assert p.tick_ns == 0.0, (hz, name)     # calloutng: no tick any more
    assert not m.params["syscall"].sleeps


def test_poll_and_kqueue_count_whole_ms_on_calloutng(seeds):
    m = group(seeds, os="calloutng", timer_config="HZ=1000")
    assert m.params["poll"].granularity_ns == 1_000_000
    assert m.params["kqueue"].granularity_ns == 1_000_000
    assert m.params["nanosleep"].granularity_ns == 1


# ------------------------------------------------------------------ seed 003

def test_linux58_constant_slack_plus_latency(seeds):
    m = group(seeds, host="Ryzen")
    for name in ("select", "nanosleep"):
        p = m.params[name]
        assert 50_000 <= p.constant_ns <= 60_000, (name, p.constant_ns)
        assert p.tick_ns == 0.0
    # one slack setting: for nanosleep the split is an assumption, and says so
    p = m.params["nanosleep"]
    assert p.slack_source == "assumed" and not p.identified["slack"]
    assert p.slack_ns == 50_000
    # select may locate the slack where 0.1% of the timeout overtakes it
    p = m.params["select"]
    assert p.slack_source in ("assumed", "fitted")
    assert 0 <= p.slack_ns <= p.constant_ns
    assert "timer slack" in m.explain("nanosleep")
    assert "PR_SET_TIMERSLACK" in m.explain("nanosleep")


def test_select_zero_timeout_shortcut(seeds):
    p = group(seeds, host="Ryzen").params["select"]
    assert p.granularity_ns == 1000 and p.rounding == "down"
    assert p.identified["zero_shortcut"]
    assert 100 <= p.zero_return_ns <= 400          # ~0.2 µs: a system call
    assert group(seeds, host="Ryzen").predict("select", 1e-7) == pytest.approx(2.08e-7, rel=0.1)
    # nanosleep has no such shortcut: 10 ns still sleeps the slack
    assert group(seeds, host="Ryzen").predict("nanosleep", 1e-8) > 50e-6


# ------------------------------------------------------------------ all seeds

def test_predicted_medians_within_tolerance_on_95_percent(seeds):
    within = total = 0
    for m in seeds.values():
        for p in m.params.values():
            meas = np.asarray(p.measured_ns)
            pred = np.asarray([m.params[p.method].predict_ns(r) for r in p.requested_ns])
            ok = np.abs(pred - meas) <= np.maximum(0.05 * meas, 5_000)
            within += int(ok.sum())
            total += ok.size
    rows = sum(1 for _ in open(CSV)) - 1
    assert total == rows            # every published number was predicted
    assert within / total >= 0.95, (within, total)


def test_explain_sentences_and_advice(seeds):
    text = group(seeds, host="XP1700").explain("usleep")
    assert "usleep(3 ms) = 3000 µs asked" in text
    assert "rounded up to the 10 ms tick" in text and "one extra tick" in text
    assert "(measured 20.0 ms)" in text
    assert "HZ=100" in text and "save about" in text
    assert "the fitted 10 ms tick matches HZ=100." in text   # documented HZ vs fitted tick
    text = group(seeds, os="calloutng", timer_config="HZ=100").explain("nanosleep")
    assert "proportional slack" in text and "alloweddeviation" in text
    text = group(seeds, os="stock", timer_config="HZ=100").explain("select")
    assert "tick phase" in text


def test_predict_and_explain_reject_bad_input(seeds):
    m = group(seeds, host="Ryzen")
    with pytest.raises(ValueError, match="select"):
        m.predict("kqueue", 1e-3)
    with pytest.raises(ValueError):
        m.predict("select", -1.0)
    with pytest.raises(ValueError):
        m.predict("select", float("nan"))
    with pytest.raises(TypeError):
        m.predict("select", True)
    with pytest.raises(ValueError):
        m.explain("nope")
    with pytest.raises(ValueError):
        model.fit([])
    with pytest.raises(ValueError):
        model.fit([{"x": 1}])


def test_inputs_csv_dicts_and_single_group_give_the_same_fit():
    recs = [r for r in model.load_records(CSV) if r["host"] == "Athlon XP1700+"]
    a = model.fit(recs)
    assert isinstance(a, model.Model)
    b = model.fit_groups(CSV).find(host="XP1700")
    for name in a.params:
        assert a.params[name].predict_ns(3e6) == b.params[name].predict_ns(3e6)


def test_pandas_frame_input():
    import pandas as pd  # optional for users; the "test" extra installs it
    frame = pd.read_csv(CSV)
    a = model.fit(frame[frame["host"] == "Athlon 1400XP"])
    b = model.fit_groups(CSV).find(host="1400XP")
    assert a.params["select"].extra_ticks == 0 and a.params["usleep"].extra_ticks == 1
    for name in a.params:
        assert a.params[name].predict_ns(13e6) == b.params[name].predict_ns(13e6)


def test_medians_of_samples_make_the_fit_robust_to_outliers():
    rng = np.random.default_rng(1)
    recs = []
    for req in (10e3, 100e3, 1e6, 10e6):
        samples = (req + 55e3 + rng.normal(0, 1e3, 501)).astype(np.int64)
        samples[:40] += 50_000_000          # 8% of wild outliers (preemptions)
        st = {"n": 501, "min": int(samples.min()), "max": int(samples.max()),
              "mean": float(samples.mean()), "std": float(samples.std()),
              "median": int(np.median(samples)), "p90": 0, "p99": 0, "p999": 0,
              "undersleeps": 0}
        recs.append({"method": "nanosleep", "mode": "relative", "requested_ns": int(req),
                     "n": 501, "stats": st, "env": {}, "samples": samples.tolist()})
    m = model.fit(recs)
    p = m.params["nanosleep"]
    assert p.constant_ns == pytest.approx(55e3, abs=2e3)
    assert p.tick_ns == 0.0


def test_summary_rows_name_every_component(seeds):
    rows = seeds.summary()
    assert len(rows) == sum(len(m.params) for m in seeds.values())
    for key in ("tick_ns", "extra_ticks", "constant_ns", "proportional", "idle_exit_ns",
                "granularity_ns", "zero_return_ns", "slack_ns", "wakeup_ns"):
        assert key in rows[0]


# ------------------------------------------------------------------ live

def _physical_values(p):
    """Every fitted amount that is physically >= 0 (the tick phase of a tick
    structure is the one signed term)."""
    vals = {"proportional": p.proportional, "coalescing_share": p.coalescing_share,
            "coalescing_cap_ns": p.coalescing_cap_ns, "idle_exit_ns": p.idle_exit_ns,
            "idle_exit_half_ns": p.idle_exit_half_ns, "tick_ns": p.tick_ns,
            "granularity_ns": p.granularity_ns}
    if not p.tick_ns:
        vals["constant_ns"] = p.constant_ns
    for k in ("slack_ns", "wakeup_ns", "zero_return_ns", "select_slack_ns"):
        if getattr(p, k) is not None:
            vals[k] = getattr(p, k)
    for name, prm in p.parameters.items():
        if name != "constant_ns" or not p.tick_ns:
            vals[f"parameters.{name}"] = prm["value"]
            if prm["interval"]:
                vals[f"parameters.{name}.lo"] = prm["interval"][0]
    return vals


def test_live_fit_invariants():
    """On this host: every fitted amount is >= 0, a kernel sleep is never
    predicted below its request, and a 1 ns slack is predicted less late than
    a 200 µs one over the requests measured.  The constants themselves are not
    compared: the fit may choose a tick structure (it did, idle and loaded), whose
    constant is a signed phase.  No accuracy figure is asserted
    (bench/model_live.py gives them)."""
    import sleepacc
    runs = [sleepacc.measure("nanosleep", d, budget=0.04, slack=s)
            for d in (10e-6, 100e-6, 1e-3, 2e-3) for s in (1, 200_000)]
    fitted = model.fit(runs)
    assert isinstance(fitted, model.ModelSet) and len(fitted) == 2
    for m in fitted.values():
        p = m.params["nanosleep"]
        for name, v in _physical_values(p).items():
            assert v >= 0, (m.label, name, v)
        req = np.asarray(p.requested_ns)
        assert np.all(np.asarray(p.predict_ns(req)) >= req)
        assert p.verdict in ("explained", "partly", "unexplained")
    def mean_lateness(slack_ns):
        p = fitted.find(slack_ns=slack_ns).params["nanosleep"]
        req = np.asarray(p.requested_ns, dtype=float)
        return float(np.mean(np.asarray(p.predict_ns(req)) - req))
    assert mean_lateness(1) < mean_lateness(200_000)


def test_live_sweep_fit_uses_host_facts():
    import sleepacc
    sw = sleepacc.sweep(["nanosleep", "timerfd", "syscall"], [1e-5, 1e-4, 1e-3], budget=0.05)
    m = model.fit(sw)
    assert isinstance(m, model.Model)
    assert set(m.params) == {"nanosleep", "timerfd", "syscall"}
    assert not m.params["syscall"].sleeps
    assert m.params["timerfd"].slack_ns == 0.0           # timerfd ignores slack
    p = m.params["nanosleep"]
    assert p.slack_source == "host"
    assert p.slack_ns == min(sw.host["timer_slack_ns"], max(p.constant_ns, 0))
    text = m.explain()
    assert "nanosleep(1 ms) = 1000 µs asked" in text and "(measured" in text
    assert f"host: HZ={sw.host['hz']}" in text


def test_two_fits_of_one_structure_can_be_told_apart():
    # _fit_method moves the best candidate first with cands.remove(best);
    # when an earlier candidate had the same structure (its Huber refit),
    # the dataclass == compared their numpy arrays and fit() raised
    # "The truth value of an array ... is ambiguous" (seen in notebook 03)
    spec = model.terms._Spec(unit=1, rounding="up", tick=0.0, k=0, zero=False)
    a = model.solve._Fit(spec, np.array([1.0, 2.0]), None, 1.0, 1.0, np.array([3.0, 4.0]))
    b = model.solve._Fit(spec, np.array([1.0, 2.5]), None, 1.0, 0.5, np.array([3.0, 4.5]))
    cands = [a, b]
    cands.remove(b)
    assert cands == [a] and a != b
