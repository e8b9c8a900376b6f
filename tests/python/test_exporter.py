"""`sleepacc exporter`: the measuring loop, its metrics, and real Prometheus parts.

What is checked: the histogram counts every sample in "le" buckets 100 ns ..
100 ms (cumulative, +Inf = _count); the CPU budget is enforced (a spinning
method at a 5% budget stays near 5% of the wall time, not 100%); the
thread-environment helper puts the thread back; the doctor runs in a child
process (no doctor import and no growth left in the exporter; its CPU in the
budget's count; a failure one line and a doctor_failed finding while the
measuring goes on; stop() reaps it) and its finding's labels are ids from a
fixed vocabulary; a scrape never fails (even with a broken snapshot) and a
slow scraper does not stop the measuring; the systemd unit runs from a venv
whose commands its comments and the README give;
SIGTERM stops the command with exit 0 and leaves the text file and the
snapshot whole; bad input exits 2 with one line; `promtool check metrics`
accepts a scrape and the text file, `promtool check rules`/`check config` the
contrib files; and a real `prometheus` scrapes the exporter, and its
histogram_quantile(0.99, ...) lands in the range of a direct measure.
Timing figures are not checked here (bench/exporter.py gives them).
"""
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

import numpy as np
import pytest

import sleepacc
from conftest import ROOT, thread_slack_ns
from conftest import thread_state as conftest_thread_state

prometheus_client = pytest.importorskip(
    "prometheus_client", reason="prometheus_client missing: pip install 'sleepacc[exporter]'")
from sleepacc import exporter as ex  # noqa: E402

PROMTOOL = shutil.which("promtool")
PROMETHEUS = shutil.which("prometheus")
need_promtool = pytest.mark.skipif(PROMTOOL is None, reason="promtool not installed "
                                   "(Debian package prometheus; `make deps` installs it)")
need_prometheus = pytest.mark.skipif(PROMETHEUS is None, reason="prometheus not installed "
                                     "(Debian package prometheus; `make deps` installs it)")


def child_env():
    env = dict(os.environ)
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    return env


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def get(url, timeout=10):
    with urllib.request.urlopen(url, timeout=timeout) as r:
        return r.status, r.read().decode()


def sample_value(text, name, **labels):
    """The value of one sample line of the text format."""
    for line in text.splitlines():
        if not line.startswith(name):
            continue
        m = re.match(r"([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$", line)
        if not m or m.group(1) != name:
            continue
        got = dict(re.findall(r'(\w+)="([^"]*)"', m.group(2) or ""))
        if all(got.get(k) == v for k, v in labels.items()):
            return float(m.group(3))
    return None


# ---------------------------------------------------------------- the histogram

def test_buckets_are_log_spaced_from_100ns_to_100ms():
    b = np.asarray(ex.BUCKETS_NS, dtype=float)
    assert b[0] == 100 and b[-1] == 100_000_000
    ratios = b[1:] / b[:-1]
    assert np.all(ratios > 1.4) and np.all(ratios < 1.8)   # R5: 10 ** 0.2 = 1.585
    assert len(b) == 31


def test_every_sample_lands_in_its_le_bucket():
    s = ex._Series("nanosleep", 1_000_000)
    late = np.array([-5, 0, 100, 101, 63_000, 63_001, 100_000_000, 100_000_001, 5 * 10**9])
    s.add(late, late + 1_000_000)
    f = s.frozen()
    assert f["count"] == late.size and s.undersleeps == 1
    cum = dict(zip(ex.BUCKETS_NS, f["buckets"]))
    assert cum[100] == 3                       # -5 (as 0), 0 and 100 are <= 100 ns
    assert cum[160] == 4
    assert cum[63_000] == 5 and cum[100_000] == 6
    assert cum[100_000_000] == 7 and f["count"] - f["buckets"][-1] == 2   # above 100 ms
    assert f["sum_s"] == pytest.approx(sum(max(0, v) for v in late) / 1e9)
    assert list(f["buckets"]) == sorted(f["buckets"])


def test_the_reservoir_keeps_the_newest_samples():
    s = ex._Series("nanosleep", 1000)
    for k in range(3):
        vals = np.arange(k * 15_000, (k + 1) * 15_000, dtype=np.int64)
        s.add(vals, vals)
    r = s.recent()
    assert r.size == ex.RESERVOIR and r[-1] == 44_999 and r[0] == 45_000 - ex.RESERVOIR
    assert np.all(np.diff(r) == 1)


# ---------------------------------------------------------------- the loop

def run_exporter(seconds, **kw):
    e = ex.Exporter(**kw)
    e.check()
    e.start()
    time.sleep(seconds)
    assert e.stop(15)
    return e


def test_the_loop_feeds_every_sample_into_the_histogram():
    e = run_exporter(2.0, methods=["nanosleep", "auto"], durations_ns=[200_000],
                     cpu_budget=0.05, doctor_every=None, turn_s=0.05)
    snap = e.snapshot
    assert e.failure is None
    for s in snap.series:
        assert s["errors"] == 0, s["last_error"]
        assert s["turns"] >= 1 and s["count"] > s["turns"]       # many samples a turn
        assert s["count"] >= s["buckets"][-1] and list(s["buckets"]) == sorted(s["buckets"])
        assert s["sum_s"] > 0
    # the snapshot's point records: statistics of the kept samples, the core's order
    for p in snap.points:
        st = p["stats"]
        assert st["min"] <= st["median"] <= st["p99"] <= st["max"]
        assert p["exporter"]["samples_total"] == next(
            s["count"] for s in snap.series if s["method"] == p["method"])
    nano = next(p for p in snap.points if p["method"] == "nanosleep")
    assert nano["stats"]["min"] >= 200_000                        # never ends early


def test_periodic_mode_observes_the_lateness_against_the_schedule():
    e = run_exporter(1.0, methods=["clock_nanosleep_abs", "nanosleep"], durations_ns=[500_000],
                     mode="periodic", cpu_budget=0.05, doctor_every=None, turn_s=0.05)
    for s, p in zip(e.snapshot.series, e.snapshot.points):
        assert s["errors"] == 0, s["last_error"]
        assert s["count"] > 0 and s["missed"] >= 0 and s["undersleeps"] == 0
        assert p["mode"] == "periodic" and p["stats"]["min"] >= 0   # never before the deadline
    text = ex.render(ex.registry_for(e, process=False))
    assert sample_value(text, "sleepacc_missed_deadlines_total", method="nanosleep") == \
        e.snapshot.series[1]["missed"]


def test_the_cpu_budget_is_enforced_on_a_spinning_method():
    # spin uses a whole CPU while it runs: without the budget the thread
    # would use ~100% of the wall time (all the CPU the machine gives it).
    # The invariant, read in the measuring thread on its own CPU clock around
    # each of the exporter's rests: when a rest ends (not by a stop request),
    # the thread's CPU time since the loop began is at most the budget's share
    # of the wall time since then.  It holds however long a turn takes and
    # whatever share of a CPU the machine gives the thread (a fixed allowance
    # for the last turn's CPU did not: a 20 ms turn took 10-25 ms of CPU here,
    # up to 54 ms under ASan), and it fails as soon as a turn starts over the budget.
    budget = 0.05
    e = ex.Exporter(["spin"], [1_000_000], cpu_budget=budget, doctor_every=None, turn_s=0.02)
    rests = []        # (CPU before the rest, wall after it) since the loop began, ns
    turns_cpu = []    # each turn's CPU, ns
    rest, turn = e._rest, e._turn

    def watched_rest(cpu0, wall0):
        cpu = time.thread_time_ns()
        rest(cpu0, wall0)
        wall = time.monotonic_ns()
        if not e._stop.is_set():         # a stop request ends a rest early
            rests.append((cpu - cpu0, wall - wall0, sum(turns_cpu)))

    def watched_turn(s, n=None):
        cpu = time.thread_time_ns()
        try:
            turn(s, n)
        finally:
            turns_cpu.append(time.thread_time_ns() - cpu)

    e.check()
    e._rest, e._turn = watched_rest, watched_turn
    e.start()
    time.sleep(3.0)
    assert e.stop(15)
    snap = e.snapshot
    assert e.failure is None and snap.series[0]["errors"] == 0, snap.series[0]["last_error"]
    assert snap.series[0]["count"] > 0 and rests         # it measured, and a rest ended
    for cpu, wall, in_turns in rests:
        assert in_turns <= cpu, (in_turns, cpu)          # the budget counts every turn
        assert cpu <= budget * wall, (cpu / 1e9, wall / 1e9, len(rests))
    # the published figures count every turn's CPU too (the thread's clock)
    assert sum(turns_cpu) <= snap.cpu_s * 1e9 and snap.cpu_s <= snap.wall_s
    print(f"cpu_s/wall_s {snap.cpu_s / snap.wall_s:.4f} ({snap.cpu_s:.3f} s / {snap.wall_s:.3f} s); "
          f"at a rest's end <= {max(c / w for c, w, _ in rests):.4f} ({len(rests)} rests); "
          f"longest turn {max(turns_cpu) / 1e6:.1f} ms of CPU")


def test_thread_env_is_applied_and_restored(unchanged_thread):
    cpu = min(os.sched_getaffinity(0))
    with ex._ThreadEnv({"slack": 1, "cpu": cpu}):
        assert thread_slack_ns() == 1
        assert os.sched_getaffinity(0) == {cpu}


def test_auto_turns_set_and_restore_the_thread_through_the_core(unchanged_thread, monkeypatch):
    # slack, affinity and policy are the core's env control (env_hold and
    # env_release: sleepacc_env_apply/restore), not a copy of it in Python
    calls = []
    for name in ("env_hold", "env_release"):
        real = getattr(sleepacc._core, name)
        monkeypatch.setattr(sleepacc._core, name,
                            lambda *a, _real=real, _name=name: calls.append(_name) or _real(*a))
    slack, policy, _, cpus, _ = unchanged_thread
    cpu = max(cpus)
    want_slack = 7 if slack != 7 else 9
    seen = []
    e = ex.Exporter(["auto"], [100_000], env={"slack": want_slack, "cpu": cpu, "policy": "batch"},
                    doctor_every=None)
    real_sleep = sleepacc.Sleeper.sleep_until

    def watching(self, deadline):     # the thread as each of auto's sleeps sees it
        seen.append((thread_slack_ns(), os.sched_getscheduler(0), frozenset(os.sched_getaffinity(0))))
        return real_sleep(self, deadline)
    monkeypatch.setattr(sleepacc.Sleeper, "sleep_until", watching)
    e._turn(e.series[0], n=3)
    assert calls == ["env_hold", "env_release"]
    assert seen and set(seen) == {(want_slack, os.SCHED_BATCH, frozenset({cpu}))}
    assert conftest_thread_state() == unchanged_thread       # restored as found, at once
    assert not hasattr(ex, "ctypes")                          # no second copy of csrc/env.c
    assert sleepacc._core.env_release() is False      # nothing held: nothing to restore
    assert conftest_thread_state() == unchanged_thread


def test_the_environment_is_the_cores_for_auto_too():
    # auto's turns apply it from Python: its rules and defaults are still the core's
    with pytest.raises(ValueError, match=r"^slack: must be 1 ns \.\. 1 s .*, got 0$"):
        ex.Exporter(["auto"], [1_000_000], env={"slack": 0}, doctor_every=None)
    with pytest.raises(ValueError, match=r"^priority: must be 0 unless the policy is fifo or rr"):
        ex._ThreadEnv({"priority": 3})
    cfg = ex._env_config({"policy": "fifo"})
    assert cfg["priority"] == 1 and sleepacc._core.policy_names[cfg["policy"]] == "fifo"
    assert ex._env_config({})["slack_ns"] == -1 and ex._env_config({})["policy"] == -1
    # RT threads get no timer slack: the label says 0 (nothing runs to know it)
    e = ex.Exporter(["nanosleep"], [1_000_000], env={"policy": "rr", "slack": 5},
                    doctor_every=None)
    assert e.host_labels()["slack_ns"] == "0"
    e = ex.Exporter(["nanosleep"], [1_000_000], env={"slack": 5}, doctor_every=None)
    assert e.host_labels()["slack_ns"] == "5"


def test_the_measuring_thread_uses_the_environment():
    seen = {}
    real = sleepacc.measure

    def spy(*a, **kw):
        seen.update(kw)
        seen["thread"] = threading.current_thread().name
        return real(*a, **kw)
    e = ex.Exporter(["nanosleep"], [100_000], env={"slack": 1}, doctor_every=None,
                    cpu_budget=0.05, turn_s=0.02)
    try:
        sleepacc.measure = spy
        e.start()
        time.sleep(0.5)
        assert e.stop(10)
    finally:
        sleepacc.measure = real
    assert seen["slack"] == 1 and seen["thread"] == "sleepacc-exporter"
    assert e.host_labels()["slack_ns"] == "1"
    assert e.snapshot.points[0]["env"]["slack_ns"] == 1


def _dma_fds():
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == "/dev/cpu_dma_latency":
                out.append(fd)
        except OSError:
            pass
    return out


def test_dma_latency_is_held_while_measuring_and_released_after():
    if "dma_latency" not in __import__("inspect").signature(sleepacc.measure).parameters:
        with pytest.raises(ValueError, match="dma_latency"):
            ex.Exporter(["nanosleep"], [1_000_000], env={"dma_latency": 0})
        pytest.skip("this build's sleepacc.measure has no dma_latency=")
    if not os.access("/dev/cpu_dma_latency", os.W_OK):
        pytest.skip("/dev/cpu_dma_latency is not writable here (needs root)")
    assert _dma_fds() == []
    e = ex.Exporter(["nanosleep", "auto"], [100_000], env={"dma_latency": 0},
                    doctor_every=None, cpu_budget=0.2, turn_s=0.05)
    e.check()
    e.start()
    seen = []
    end = time.monotonic() + 5
    while time.monotonic() < end and not (e.snapshot.series[0]["count"]
                                          and e.snapshot.series[1]["count"]):
        seen.append(len(_dma_fds()))
        time.sleep(0.01)
    assert e.stop(10)
    assert max(seen) >= 1                      # held while measuring
    assert _dma_fds() == []                    # and released: the Sleeper closed at the end
    assert e.snapshot.points[0]["env"]["dma_latency_us"] == 0
    assert e.snapshot.points[1]["env"]["dma_latency_us"] == 0


def test_the_doctor_finding_is_published_with_ids_only_in_its_labels():
    e = ex.Exporter(["nanosleep"], [1_000_000], doctor_every=600, cpu_budget=0.2,
                    turn_s=0.05)
    e._turn(e.series[0])
    e._run_doctor()
    e._publish(0.0, 0.0)
    assert e.snapshot.finding["id"] != "doctor_failed", e.snapshot.finding
    text = ex.render(ex.registry_for(e, process=False))
    m = re.search(r'^sleepacc_doctor_top_finding\{(.*)\} (\S+)$', text, re.M)
    assert m, text
    labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
    assert set(labels) == {"id", "status"}, labels        # no free text (a title) in a label
    assert labels["id"] == e.snapshot.finding["id"] and labels["id"] in ex.DOCTOR_IDS
    assert labels["status"] in ex.DOCTOR_STATUSES and float(m.group(2)) >= 0
    assert sample_value(text, "sleepacc_doctor_last_run_timestamp_seconds") > 1.6e9
    assert sample_value(text, "sleepacc_doctor_cpu_seconds_total") > 0
    assert sample_value(text, "sleepacc_doctor_failures_total") == 0
    # the title is in the snapshot file
    head = json.loads(e.snapshot_jsonl().splitlines()[0])
    assert head["settings"]["doctor_top_finding"]["title"] == e.snapshot.finding["title"]


def test_a_finding_id_outside_the_vocabulary_is_other_and_every_doctor_id_is_in_it():
    e = ex.Exporter(["nanosleep"], [1_000_000], doctor_every=None)
    e._finding = {"id": "new 50 µs thing", "status": "worse \"than\" ever", "title": "x",
                  "gain_us": 3.0}
    e._publish(0.0, 0.0)
    text = ex.render(ex.registry_for(e, process=False))
    assert 'sleepacc_doctor_top_finding{id="other",status="unknown"} 3e-06' in text, text
    source = (ROOT / "python" / "sleepacc" / "doctor.py").read_text(encoding="utf-8")
    ids = set(re.findall(r'_finding\(\s*"(\w+)"', source))
    assert ids and ids <= set(ex.DOCTOR_IDS), ids - set(ex.DOCTOR_IDS)
    statuses = set(re.findall(r'_finding\(\s*"\w+",\s*"(\w+)"', source))
    assert statuses and statuses <= set(ex.DOCTOR_STATUSES), statuses


def test_the_doctor_runs_in_a_child_and_leaves_no_imports_and_no_memory_behind():
    """The doctor's imports and what its mlockall row makes resident stay in
    the child: the exporter's process neither imports the doctor nor grows
    by the child's size."""
    code = """if True:
        import json, sys, resource
        from sleepacc import exporter as ex
        def rss_kb():
            with open("/proc/self/status") as f:
                return next(int(l.split()[1]) for l in f if l.startswith("VmRSS"))
        e = ex.Exporter(["nanosleep"], [1_000_000], doctor_every=600, turn_s=0.05)
        e._turn(e.series[0])
        before = rss_kb()
        e._run_doctor()
        print(json.dumps({"before": before, "after": rss_kb(), "child": e.doctor_max_rss_kb,
                          "cpu_ns": e.doctor_cpu_ns, "finding": e._finding,
                          "modules": [m for m in ("sleepacc.doctor", "sleepacc.model")
                                      if m in sys.modules]}))
    """
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, env=child_env())
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["finding"]["id"] != "doctor_failed", got["finding"]
    assert got["modules"] == []
    assert got["cpu_ns"] > 0
    # the child held far more than the parent gained (the parent keeps none of it)
    assert got["after"] - got["before"] < got["child"] / 2, got


def test_a_failed_doctor_is_one_line_and_a_finding_and_the_measuring_goes_on(monkeypatch):
    from sleepacc import _doctor_child
    monkeypatch.setattr(_doctor_child, "TIMEOUT_S", 0.001)     # every run times out
    lines = []
    e = ex.Exporter(["nanosleep"], [100_000], doctor_every=0.2, cpu_budget=0.2, turn_s=0.02,
                    log=lines.append)
    e.start()
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end and e.snapshot.doctor_failures < 2:
            time.sleep(0.05)
        assert e.snapshot.doctor_failures >= 2
        count = sum(s["count"] for s in e.snapshot.series)
        while time.monotonic() < end and sum(s["count"] for s in e.snapshot.series) <= count:
            time.sleep(0.05)
        assert e.running and sum(s["count"] for s in e.snapshot.series) > count
    finally:
        assert e.stop(20)
    f = e.snapshot.finding
    assert f["id"] == "doctor_failed" and f["status"] == "unknown"
    assert "took more than" in f["title"]
    assert len(lines) >= 2 and all("\n" not in ln and "the doctor failed" in ln for ln in lines)
    text = ex.render(ex.registry_for(e, process=False))
    assert sample_value(text, "sleepacc_doctor_top_finding", id="doctor_failed") == 0
    assert sample_value(text, "sleepacc_doctor_failures_total") >= 2


def test_the_doctors_cpu_counts_against_the_budget():
    e = ex.Exporter(["nanosleep"], [100_000], doctor_every=600, cpu_budget=0.5, turn_s=0.02)
    e.start()
    try:
        end = time.monotonic() + 60
        while time.monotonic() < end and e.snapshot.doctor_time is None:
            time.sleep(0.05)
        assert e.snapshot.doctor_time is not None
    finally:
        assert e.stop(20)
    snap = e.snapshot
    assert snap.finding["id"] != "doctor_failed", snap.finding
    assert 0 < snap.doctor_cpu_s <= snap.cpu_s
    # the thread's own CPU is what is left: at most its wall time
    assert snap.cpu_s - snap.doctor_cpu_s <= snap.wall_s


def test_stop_kills_a_doctor_run_under_way():
    e = ex.Exporter(["nanosleep"], [100_000], doctor_every=600, cpu_budget=0.5, turn_s=0.02)
    e.start()
    end = time.monotonic() + 60
    while time.monotonic() < end and e._doctor_proc is None and e.snapshot.doctor_time is None:
        time.sleep(0.002)
    proc = e._doctor_proc
    assert e.stop(20)
    if proc is None:
        pytest.skip("the doctor's run ended before it could be seen")
    assert proc.returncode is not None          # reaped, not left running
    assert e.snapshot.finding is None or e.snapshot.finding["id"] != "doctor_failed"


def test_the_doctor_child_answers_one_line_and_fails_in_one_line():
    from sleepacc import _doctor_child
    run = _doctor_child.run([{"method": "nanosleep"}], {}, budget=0.02)   # not a point record
    assert run.finding is None and run.error and "\n" not in run.error
    assert "exited with status 1" in run.error and "point 1" in run.error, run.error
    run = _doctor_child.run([], {}, budget=0.02, timeout=0.001)
    assert run.error == "the doctor took more than 0.001 s and was stopped"


# ---------------------------------------------------------------- scrapes

@pytest.fixture
def served():
    e = ex.Exporter(["nanosleep", "timerfd"], [100_000], doctor_every=None, cpu_budget=0.05,
                    turn_s=0.05)
    svc = ex.Service(e, listen=("127.0.0.1", 0))
    svc.open()                       # starts the measuring thread, then listens
    yield e, svc, f"http://127.0.0.1:{svc.address[1]}/metrics"
    e.stop(10)
    svc.close()


def test_a_scrape_has_the_metric_families(served):
    e, svc, url = served
    time.sleep(0.5)
    status, text = get(url)
    assert status == 200
    for name in ("sleepacc_lateness_seconds_bucket", "sleepacc_lateness_seconds_count",
                 "sleepacc_lateness_seconds_sum", "sleepacc_undersleeps_total",
                 "sleepacc_missed_deadlines_total", "sleepacc_measuring_cpu_seconds_total",
                 "sleepacc_host_info", "process_cpu_seconds_total"):
        assert re.search(rf"^{name}[{{ ]", text, re.M), name
    assert 'duration="100us"' in text and 'method="timerfd"' in text
    info = re.search(r"^sleepacc_host_info\{(.*)\} 1\.0$", text, re.M)
    assert info and set(re.findall(r"(\w+)=", info.group(1))) == {
        "clocksource", "hz", "kernel", "virt", "slack_ns"}
    inf = sample_value(text, "sleepacc_lateness_seconds_bucket", method="nanosleep", le="+Inf")
    assert inf == sample_value(text, "sleepacc_lateness_seconds_count", method="nanosleep")


def test_a_served_exporter_has_one_measuring_thread(served):
    e, svc, url = served
    def loops():
        return [t for t in threading.enumerate() if t.name == "sleepacc-exporter"]
    before, first = loops(), e._thread
    assert first in before and first.is_alive()
    with pytest.raises(RuntimeError, match="already running"):
        e.start()                    # a second loop would share the series
    assert loops() == before and e._thread is first
    assert e.stop(10) and first not in loops()


def test_a_broken_snapshot_never_fails_a_scrape(served):
    e, svc, url = served
    assert e.stop(10)                # the loop has published its last snapshot
    e.snapshot = object()            # what a rendering bug would meet
    status, text = get(url)
    assert status == 200
    assert sample_value(text, "sleepacc_exporter_render_failures_total") >= 1
    assert "process_cpu_seconds_total" in text


def test_a_slow_scraper_does_not_stop_the_measuring(served):
    e, svc, url = served
    time.sleep(0.3)
    slow = socket.create_connection(("127.0.0.1", svc.address[1]), timeout=10)
    try:
        slow.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")   # never finishes its request
        before = sum(s["count"] for s in e.snapshot.series)
        t0 = time.monotonic()
        while time.monotonic() - t0 < 10:
            time.sleep(0.2)
            if sum(s["count"] for s in e.snapshot.series) > before + 50:
                break
        assert sum(s["count"] for s in e.snapshot.series) > before + 50
        assert get(url)[0] == 200          # and other scrapers are still served
    finally:
        slow.close()


@need_promtool
def test_promtool_accepts_a_scrape_and_the_textfile(served, tmp_path):
    e, svc, url = served
    time.sleep(0.5)
    _, text = get(url)
    r = subprocess.run([PROMTOOL, "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0 and r.stdout.strip() == "" and r.stderr.strip() == "", r
    out = tmp_path / "sleepacc.prom"
    ex.Service(e, textfile=str(out)).write_outputs()
    r = subprocess.run([PROMTOOL, "check", "metrics"], stdin=out.open(), capture_output=True,
                       text=True, timeout=30)
    assert r.returncode == 0 and r.stdout.strip() == "" and r.stderr.strip() == "", r
    assert "process_cpu_seconds_total" not in out.read_text()   # node_exporter has its own
    assert [p.name for p in tmp_path.iterdir()] == ["sleepacc.prom"]   # no temp file left


def test_atomic_write_replaces_whole_files(tmp_path):
    path = tmp_path / "m.prom"
    path.write_text("old\n")
    ex.atomic_write(str(path), "new\n" * 1000)
    assert path.read_text() == "new\n" * 1000
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.prom"]
    with pytest.raises(OSError):
        ex.atomic_write(str(tmp_path / "no" / "m.prom"), "x")


def test_a_failed_write_is_logged_and_retried(tmp_path):
    e = ex.Exporter(["nanosleep"], [100_000], doctor_every=None)
    d = tmp_path / "gone"
    d.mkdir()
    logged = []
    svc = ex.Service(e, textfile=str(d / "m.prom"), log=logged.append)
    svc.open()
    d.rmdir()                                   # the directory disappears while it runs
    assert svc.write_outputs() == [str(d / "m.prom")] and "cannot write" in logged[0]
    d.mkdir()
    assert svc.write_outputs() == [] and (d / "m.prom").exists()


# ---------------------------------------------------------------- the command

def start(*args):
    return subprocess.Popen([sys.executable, "-m", "sleepacc", "exporter", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=child_env())


def wait_serving(proc, timeout=30):
    """The first stderr line ("... publishing to ..."), or fail with what it said."""
    import select
    ready, _, _ = select.select([proc.stderr], [], [], timeout)
    if not ready:
        proc.kill()
        pytest.fail(f"the exporter said nothing in {timeout} s")
    line = proc.stderr.readline()
    assert "publishing to" in line, (line, proc.poll())
    return line


def test_sigterm_stops_it_cleanly_with_the_files_whole(tmp_path):
    prom, snap = tmp_path / "sleepacc.prom", tmp_path / "snap.jsonl"
    p = start("--textfile", prom, "--every", "0.5s", "--snapshot", snap,
              "--methods", "nanosleep", "--duration", "100us", "--doctor-every", "0",
              "--cpu-budget", "5")
    try:
        wait_serving(p)
        end = time.monotonic() + 20
        while time.monotonic() < end and not prom.exists():
            time.sleep(0.1)
        time.sleep(0.6)
        p.send_signal(signal.SIGTERM)
        out, err = p.communicate(timeout=20)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, err
    assert "stopped after" in err and "of one CPU" in err
    text = prom.read_text()
    assert sample_value(text, "sleepacc_lateness_seconds_count", method="nanosleep") > 0
    sw = sleepacc.load(snap)
    assert sw.settings["source"] == "exporter" and len(sw) == 1
    m = sw[0]
    assert m.method == "nanosleep" and m.requested_ns == 100_000 and m.n > 0
    assert m.stats["min"] >= 100_000
    assert sorted(x.name for x in tmp_path.iterdir()) == ["sleepacc.prom", "snap.jsonl"]


def test_the_config_file_gives_options_and_the_command_line_wins(tmp_path):
    conf = tmp_path / "exporter.conf"
    snap = tmp_path / "snap.jsonl"
    conf.write_text(f"# sleepacc exporter\nmethods = timerfd\nduration = 50us\n"
                    f"doctor_every = 0\nsnapshot = {snap}\ncpu-budget = 5%\n"
                    f"listen = 127.0.0.1:{free_port()}\n")
    r = subprocess.run([sys.executable, "-m", "sleepacc", "exporter", "--config", conf,
                        "--duration", "80us", "--stop-after", "1s"],
                       capture_output=True, text=True, timeout=60, env=child_env())
    assert r.returncode == 0, r.stderr
    assert "timerfd at 80µs" in r.stderr and "5% of one CPU" in r.stderr
    sw = sleepacc.load(snap)
    assert [(m.method, m.requested_ns) for m in sw] == [("timerfd", 80_000)]


def test_the_contrib_config_file_is_valid(tmp_path):
    conf = ROOT / "contrib" / "exporter.conf"
    snap = tmp_path / "snap.jsonl"
    r = subprocess.run([sys.executable, "-m", "sleepacc", "exporter", "--config", conf,
                        "--listen", f"127.0.0.1:{free_port()}", "--snapshot", snap,
                        "--doctor-every", "0", "--stop-after", "1s"],
                       capture_output=True, text=True, timeout=60, env=child_env())
    assert r.returncode == 0, r.stderr
    assert "nanosleep, timerfd, auto at 1ms, 10ms" in r.stderr
    assert {(m.method, m.requested_ns) for m in sleepacc.load(snap)} <= {
        (m, d) for m in ("nanosleep", "timerfd", "auto") for d in (1_000_000, 10_000_000)}


BAD = [
    (["--listen", "nope"], "--listen"),
    (["--listen", "127.0.0.1:70000"], "--listen"),
    (["--methods", "nanosleep,bogus"], "--methods"),
    (["--methods", "clock"], "--methods"),
    (["--textfile", "x.prom", "--every", "soon"], "--every"),
    (["--every", "-1s"], "--every"),
    (["--every", "10s"], "--every"),                     # nothing to write every 10 s
    (["--duration", "0"], "--duration"),
    (["--duration", "1ms,2h"], "longer than a measuring turn (--turn 250ms)"),
    (["--turn", "25h"], "--turn: must be at most 86400 s"),
    (["--cpu-budget", "0"], "--cpu-budget"),
    (["--cpu-budget", "150%"], "--cpu-budget"),
    (["--priority", "3"], "--priority"),
]


@pytest.mark.parametrize("argv,named", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_exits_2_with_one_line(argv, named):
    r = subprocess.run([sys.executable, "-m", "sleepacc", "exporter", *argv],
                       capture_output=True, text=True, timeout=60, env=child_env())
    assert r.returncode == 2, (r.stdout, r.stderr)
    msg = r.stderr.rstrip("\n")
    assert "\n" not in msg and msg.startswith("sleepacc: error: ") and named in msg, msg


def test_listen_documents_that_an_empty_host_is_every_interface():
    assert ex.parse_listen(":9851") == ("0.0.0.0", 9851)
    r = subprocess.run([sys.executable, "-m", "sleepacc", "exporter", "--help"],
                       capture_output=True, text=True, timeout=60, env=child_env())
    text = " ".join(r.stdout.split())
    assert "default 127.0.0.1:9851, this host only" in text, text
    assert "an empty host, as in :9851, means every interface (0.0.0.0)" in text, text
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "`--listen :9851`, binds every interface (`0.0.0.0`)" in readme


def test_the_cpu_budget_is_documented_as_an_average_the_doctor_runs_ahead_of():
    r = subprocess.run([sys.executable, "-m", "sleepacc", "exporter", "--help"],
                       capture_output=True, text=True, timeout=60, env=child_env())
    text = " ".join(r.stdout.split())
    assert "on average since it started: each turn and each doctor run is paid for" in text
    assert "the first run just after the first round of turns" in text
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "The CPU budget is an average since the thread started" in readme
    assert "`--doctor-every 0` keeps even a short run within it" in readme


def test_a_bad_config_line_exits_2_naming_the_file(tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("methods = nanosleep\nthis is not an option\n")
    r = subprocess.run([sys.executable, "-m", "sleepacc", "exporter", "--config", conf],
                       capture_output=True, text=True, timeout=60, env=child_env())
    assert r.returncode == 2 and "--config" in r.stderr and "bad.conf:2" in r.stderr, r.stderr
    conf.write_text("frobnicate = 1\n")
    r = subprocess.run([sys.executable, "-m", "sleepacc", "exporter", "--config", conf],
                       capture_output=True, text=True, timeout=60, env=child_env())
    assert r.returncode == 2 and "frobnicate" in r.stderr, r.stderr


def test_a_config_file_names_the_line_of_a_bad_value_and_reads_a_bom(tmp_path):
    from sleepacc import cli
    from sleepacc.cli.exporter import _exporter_config
    parser = cli.build_parser().parse_args(["exporter"]).exporter_parser
    conf = tmp_path / "c.conf"
    # a byte-order mark (Notepad) became part of the first key: "--\ufeffmethods"
    conf.write_bytes(b"\xef\xbb\xbfmethods = nanosleep\r\nstop-after = 1s\r\n")
    args = _exporter_config(conf, parser)
    assert args.methods == ["nanosleep"] and args.stop_after == 1.0
    # a bad value or option named the file but not its line
    for text, line in (("methods = nanosleep\nfrobnicate = 1\n", 2),
                       ("# c\nmethods = \n", 2), ("lock-memory = 1\n", 1)):
        conf.write_text(text)
        with pytest.raises(cli.UsageError, match=rf"--config: {re.escape(str(conf))}:{line}: "):
            _exporter_config(conf, parser)
    conf.write_bytes(b"methods = nanosleep\n\xff\n")   # a traceback's words, no option named
    with pytest.raises(cli.UsageError, match=r"--config: .*c\.conf: not UTF-8 text"):
        _exporter_config(conf, parser)


def test_a_port_in_use_exits_1_with_one_line():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        r = subprocess.run([sys.executable, "-m", "sleepacc", "exporter", "--listen",
                            f"127.0.0.1:{port}", "--methods", "nanosleep", "--stop-after", "1"],
                           capture_output=True, text=True, timeout=60, env=child_env())
    assert r.returncode == 1, r.stderr
    msg = r.stderr.rstrip("\n")
    assert "\n" not in msg and f"cannot listen on 127.0.0.1:{port}" in msg, msg


def test_a_file_in_a_missing_directory_is_refused_before_measuring(tmp_path):
    for option in ("--textfile", "--snapshot"):      # the snapshot as the text file
        path = tmp_path / "missing" / "out"
        r = subprocess.run([sys.executable, "-m", "sleepacc", "exporter", option, str(path),
                            "--listen", "127.0.0.1:0", "--methods", "nanosleep",
                            "--doctor-every", "0", "--stop-after", "1s"],
                           capture_output=True, text=True, timeout=60, env=child_env())
        assert r.returncode == 1, (option, r.stderr)
        msg = r.stderr.rstrip("\n")   # one line: nothing was published, nothing measured
        assert "\n" not in msg and f"cannot write {path}" in msg and "does not exist" in msg, msg


# ---------------------------------------------------------------- contrib

@need_promtool
def test_promtool_accepts_the_rules_and_the_scrape_config(tmp_path):
    rules = ROOT / "contrib" / "prometheus" / "sleepacc-rules.yml"
    r = subprocess.run([PROMTOOL, "check", "rules", rules], capture_output=True, text=True,
                       timeout=30)
    assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr
    doc = rules.read_text()
    assert "offset 1w" in doc and "histogram_quantile(0.99" in doc
    assert doc.count("- alert:") == 2
    r = subprocess.run([PROMTOOL, "check", "config", ROOT / "contrib" / "prometheus" /
                        "prometheus.yml"], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_systemd_unit_is_hardened():
    unit = (ROOT / "contrib" / "systemd" / "sleepacc-exporter.service").read_text()
    lines = {ln.split("=", 1)[0]: ln.split("=", 1)[1] for ln in unit.splitlines()
             if "=" in ln and not ln.startswith("#") and not ln.startswith(" ")}
    assert lines["DynamicUser"] == "yes" and lines["ProtectSystem"] == "strict"
    assert lines["CapabilityBoundingSet"] == "" and lines["NoNewPrivileges"] == "yes"
    assert "--listen 127.0.0.1:9851" in unit
    # it runs from its own venv, and says how to make it (PEP 668: no system-wide pip)
    assert lines["ExecStart"].startswith("/opt/sleepacc/bin/sleepacc exporter ")
    comments = " ".join(ln.lstrip("# ") for ln in unit.splitlines() if ln.startswith("#"))
    assert "python3 -m venv /opt/sleepacc" in comments
    pip = "/opt/sleepacc/bin/pip install --find-links dist 'sleepacc[exporter]'"
    assert pip in comments
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"python3 -m venv /opt/sleepacc\n{pip}\n" in readme
    dropin = ROOT / "contrib" / "systemd" / "sleepacc-exporter.service.d" / \
        "realtime.conf.example"
    assert "CAP_SYS_NICE" in dropin.read_text()
    assert "ExecStart=/opt/sleepacc/bin/sleepacc exporter " in dropin.read_text()
    verify = shutil.which("systemd-analyze")
    if verify:
        with tempfile.TemporaryDirectory() as d:
            # the unit as installed, with ExecStart pointing at a binary that exists
            text = unit.replace("/opt/sleepacc/bin/sleepacc", shutil.which("true") or "/bin/true")
            path = Path(d) / "sleepacc-exporter.service"
            path.write_text(text)
            r = subprocess.run([verify, "verify", path], capture_output=True, text=True,
                               timeout=60)
            problems = [ln for ln in (r.stdout + r.stderr).splitlines()
                        if "sleepacc-exporter.service" in ln]
            assert not problems, problems


# ---------------------------------------------------------------- a real Prometheus

@need_prometheus
def test_a_real_prometheus_scrapes_it(tmp_path):
    """The whole route, bounded to about 60 s: exporter on 127.0.0.1, a real
    prometheus scraping it every second, a PromQL quantile over the buckets."""
    t_end = time.monotonic() + 60
    port, web = free_port(), free_port()
    exp = start("--listen", f"127.0.0.1:{port}", "--methods", "nanosleep", "--duration", "1ms",
                "--doctor-every", "0", "--cpu-budget", "2")
    prom = None
    try:
        wait_serving(exp)
        (tmp_path / "prometheus.yml").write_text(
            "global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
            "scrape_configs:\n  - job_name: sleepacc\n    static_configs:\n"
            f"      - targets: ['127.0.0.1:{port}']\n")
        prom = subprocess.Popen(
            [PROMETHEUS, f"--config.file={tmp_path / 'prometheus.yml'}",
             f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{web}"],
            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "prometheus.log", "w"))
        api = f"http://127.0.0.1:{web}/api/v1/query?query="
        query = "histogram_quantile(0.99, rate(sleepacc_lateness_seconds_bucket[10s]))"
        answer = None
        while time.monotonic() < t_end - 15 and answer is None:
            time.sleep(1)
            try:
                _, body = get(api + urllib.parse.quote("count_over_time(up[1m])"), timeout=5)
                ups = json.loads(body)["data"]["result"]
                if not ups or float(ups[0]["value"][1]) < 2:
                    continue                                   # two scrapes first
                _, body = get(api + urllib.parse.quote(query), timeout=5)
            except OSError:
                continue
            res = json.loads(body)["data"]["result"]
            if res and res[0]["value"][1] not in ("NaN", "+Inf"):
                answer = res[0]
                # the direct run, under the same conditions as the last 10 s
                direct = sleepacc.measure("nanosleep", 0.001, budget=1.0)
        assert answer is not None, (tmp_path / "prometheus.log").read_text()[-2000:]
        assert answer["metric"]["method"] == "nanosleep" and answer["metric"]["duration"] == "1ms"
        q99_s = float(answer["value"][1])
    finally:
        for proc in (prom, exp):
            if proc is not None and proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(15)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
    assert exp.returncode == 0
    lo_ns = direct.stats["median"] - 1_000_000
    hi_ns = direct.stats["max"] - 1_000_000
    p99_ns = direct.stats["p99"] - 1_000_000
    figures = (f"PromQL p99 {q99_s * 1e6:.1f} us; direct measure: median {lo_ns / 1e3:.1f} us, "
               f"p99 {p99_ns / 1e3:.1f} us, max {hi_ns / 1e3:.1f} us")
    print(figures)
    assert q99_s > 0, figures
    # same order of magnitude: within a factor of ten of the direct run's range
    assert lo_ns / 10 <= q99_s * 1e9 <= max(hi_ns, p99_ns) * 10, figures


@pytest.mark.parametrize("methods,durations,turn,words", [
    (["clock"], [1_000_000], 0.25, "methods: 'clock' is a floor"),
    (["nanosleep"], [0], 0.25, "durations_ns: must be above 0"),
    (["nanosleep"], [1_000_000, 300_000_000], 0.25,
     "durations_ns: 300ms is longer than a measuring turn (turn_s 250ms)"),
    ([], [1_000_000], 0.25, "methods: must name at least one method"),
])
def test_the_library_holds_the_exporters_own_rules(methods, durations, turn, words):
    # the rules of its series are the exporter's, not its command line's: a
    # program that builds an Exporter is refused the same, before anything runs
    with pytest.raises(ValueError) as err:
        ex.Exporter(methods, durations, turn_s=turn)
    assert str(err.value).startswith(words), err.value
