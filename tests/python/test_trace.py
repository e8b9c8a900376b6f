"""sleepacc.trace: each sample's lateness in its parts, traced from the kernel.

Invariants and the kernel's rules (with tolerance), never latency gates:
the terms of a complete sample sum exactly to its lateness; a missing term is
NaN and only on an incomplete sample; the slack and rounding rules show as the
kernel states them; an unprivileged caller gets a PermissionError naming
trace and what it needs, with tracefs unchanged; tracefs not mounted is
mounted and said so, or (unprivileged) the mount command is named, both in a
private mount namespace; the top-level tracefs files
read the same after a run, after Ctrl-C, and after a SIGKILL followed by the
next run.  Needs root (or CAP_DAC_OVERRIDE) and tracefs: skipped with the
reason elsewhere (bad input is refused everywhere, before tracefs is touched).
"""
import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import sleepacc
from sleepacc.trace import Trace, format_table

from conftest import child_env, thread_slack_ns

TERMS = ("rounding", "slack", "timer_irq", "wake_to_run", "to_user", "other")


def _unavailable():
    if not sys.platform.startswith("linux"):
        return "tracefs is Linux's"
    try:
        sleepacc.trace("nanosleep", 1e-4, n=3)
    except OSError as e:   # PermissionError included: the core's words say what it needs
        return f"trace unavailable here: {e}"
    return None


REASON = _unavailable()
needs_trace = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def tracefs_root():
    with open("/proc/self/mounts") as f:
        for line in f:
            dev, at, kind = line.split()[:3]
            if kind == "tracefs":
                return Path(at)
    pytest.skip("tracefs is not mounted")


TOP_FILES = ("tracing_on", "current_tracer", "trace_clock", "buffer_size_kb", "set_event",
             "tracing_cpumask", "trace_options", "set_event_pid", "events/enable") + tuple(
    f"events/{ev}/{f}" for ev in ("timer/hrtimer_start", "timer/hrtimer_expire_entry",
                                  "sched/sched_wakeup", "sched/sched_switch", "power/cpu_idle")
    for f in ("enable", "filter"))


def _live_other(name):
    """An instance of another live process's own trace (a suite running
    beside this one): not ours to compare.  A dead process's leftover is."""
    pid = name[len("sleepacc-"):] if name.startswith("sleepacc-") else ""
    if not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    return True


def snapshot():
    """The top-level tracefs files a trace could change, and the instances."""
    root = tracefs_root()
    state = {}
    for rel in TOP_FILES:
        try:
            state[rel] = (root / rel).read_text()
        except OSError as e:
            state[rel] = f"unreadable: {e.errno}"
    state["instances"] = sorted(p.name for p in (root / "instances").iterdir()
                                if not _live_other(p.name))
    return state


def instance_of(pid):
    return tracefs_root() / "instances" / f"sleepacc-{pid}"


@pytest.mark.parametrize("method", ["nanosleep", "clock_nanosleep_abs", "timerfd", "select", "poll",
                                    "epoll_wait", "futex"])
@needs_trace
def test_terms_sum_exactly_to_the_lateness(method):
    if not next(m for m in sleepacc.methods() if m.name == method).available:
        pytest.skip(f"{method} is not available here")
    t = sleepacc.trace(method, 1e-3, n=30)
    assert isinstance(t, Trace) and t.method == method and t.n == 30
    assert t.lateness.dtype == np.int64 and len(t.lateness) == t.n == len(t.complete)
    assert set(t.terms) == set(TERMS)
    assert len(t.untraced) == 30
    total = np.zeros(t.n, dtype=np.int64)
    for name in TERMS:
        v = t.terms[name]
        assert len(v) == t.n
        assert np.isnan(v).tolist() == (~t.complete).tolist(), name   # missing exactly where incomplete
        total += np.where(t.complete, v, 0).astype(np.int64)
    assert (total[t.complete] == t.lateness[t.complete]).all()
    assert int(t.complete.sum()) + t.gaps == t.n
    assert t.complete.any(), "no sample's chain was complete"
    assert t.lost >= 0 and t.events > 0
    assert t.idle_at_expiry.dtype == bool and not t.idle_at_expiry[~t.complete].any()


# The kernel's rules as the trace shows them: the median of a term, in ns.
RULES = [
    ("nanosleep", 1e-3, 50_000, "slack", 49_000, 51_000),     # the thread's timer slack
    ("timerfd", 1e-3, 50_000, "slack", -1, 1_000),            # timerfd has none
    ("nanosleep", 1e-3, 1, "slack", -1, 100),                 # slack 1 ns
    ("select", 1e-3, 1, "slack", 900, 1_100),                 # 0.1% of the timeout
    ("epoll_wait", 1e-4, None, "rounding", 850_000, 1_000_000),  # whole milliseconds
]


@needs_trace
@pytest.mark.parametrize("method, duration, slack, term, lo, hi", RULES)
def test_kernel_rules_show_in_the_terms(method, duration, slack, term, lo, hi):
    t = sleepacc.trace(method, duration, n=30, slack=slack)
    done = t.terms[term][t.complete]
    assert len(done) > 0
    assert lo <= float(np.median(done)) <= hi, (method, term, np.median(done))


@needs_trace
def test_table_summary_and_frame():
    t = sleepacc.trace("nanosleep", 1e-3, n=20, slack=1)
    text = format_table(t)
    assert t.table() == text
    for name in TERMS + ("timer_irq idle", "timer_irq busy", "lateness traced", "lateness untraced"):
        assert name in text
    s = t.summary()
    assert s["complete"] == int(t.complete.sum()) and s["n"] == 20
    assert s["idle_at_expiry"] + s["busy_at_expiry"] <= s["complete"]
    for st in s["terms"].values():
        assert st["median"] is None or st["median"] <= st["p99"]
    d = t.to_dict()
    assert d["schema"] == "sleepacc-trace/1" and len(d["lateness"]) == 20
    assert all((v is None) == (not c) for v, c in zip(d["terms"]["slack"], d["complete"]))
    back = Trace.from_dict(json.loads(json.dumps(d)))
    assert back.to_dict() == d
    with pytest.raises(ValueError, match="schema"):
        Trace.from_dict({**d, "schema": "sleepacc-trace/0"})
    pytest.importorskip("pandas")
    f = t.to_frame()
    assert len(f) == 20 and set(TERMS) <= set(f.columns)


@needs_trace
def test_thread_and_tracefs_as_found():
    sleepacc.trace("nanosleep", 1e-4, n=2)   # tracefs mounted, if it was not
    before, slack = snapshot(), thread_slack_ns()
    sleepacc.trace("nanosleep", 1e-3, n=20, slack=1, cpu=0)
    assert thread_slack_ns() == slack
    assert snapshot() == before


@needs_trace
def test_affinity_restored():
    mask = os.sched_getaffinity(0)
    sleepacc.trace("nanosleep", 1e-3, n=5, cpu=sorted(mask)[0])
    assert os.sched_getaffinity(0) == mask


@pytest.mark.parametrize("kwargs, named", [
    (dict(n=30000), "n"), (dict(n=-1), "n"), (dict(slack=0), "slack"), (dict(cpu=10**6), "cpu"),
])
def test_bad_input_refused_before_anything_runs(kwargs, named):
    """Refused by the core's rules before tracefs is touched: also where no
    trace can run (then no snapshot to compare)."""
    before = snapshot() if REASON is None else None
    with pytest.raises((ValueError, TypeError), match=named):
        sleepacc.trace("nanosleep", 1e-3, **kwargs)
    with pytest.raises(ValueError, match="method"):
        sleepacc.trace("no_such_method", 1e-3, n=3)
    if before is not None:
        assert snapshot() == before


UNPRIVILEGED = textwrap.dedent("""
    import sleepacc
    try:
        sleepacc.trace("nanosleep", 1e-3, n=5)
    except PermissionError as e:
        print("PermissionError:", e)
        raise SystemExit(3)
    print("ran")
""")


@needs_trace
def test_unprivileged_gets_a_clear_permission_error():
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or not setpriv:
        pytest.skip("needs root and setpriv to drop to nobody")
    before = snapshot()
    out = subprocess.run([setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                          sys.executable, "-c", UNPRIVILEGED], capture_output=True, text=True,
                         timeout=60, env=child_env(), cwd="/")
    assert out.returncode == 3, out.stdout + out.stderr
    assert "trace" in out.stdout and "CAP_DAC_OVERRIDE" in out.stdout and "root" in out.stdout
    assert "Traceback" not in out.stderr
    assert snapshot() == before


LONG_TRACE = textwrap.dedent("""
    import sys
    import sleepacc
    sleepacc.trace("nanosleep", 1e-3, n=int(sys.argv[1]), slack=7)
""")


def _started(proc, traced):
    """Wait (bounded: 20 s) until proc runs its untraced run (its slack is
    LONG_TRACE's 7 ns: the run's environment is applied) or its traced one
    (the instance's events on).  A signal in the setup before them is seen
    when the trace ends."""
    on = instance_of(proc.pid) / "tracing_on"
    slack = Path(f"/proc/{proc.pid}/timerslack_ns")
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if (on.read_text().strip() == "1") if traced else (slack.read_text().strip() == "7"):
                return True
        except OSError:
            pass
        if proc.poll() is not None:
            return False
        time.sleep(0.02)
    return False


def _started_traced(proc):
    return _started(proc, True)


@needs_trace
@pytest.mark.parametrize("traced, n", [(False, 20000), (True, 3000)])
def test_ctrl_c_leaves_tracefs_as_found(traced, n):
    """Ctrl-C in the untraced run (20000 samples, about 20 s: it must end
    within 10 s) and in the traced one."""
    sleepacc.trace("nanosleep", 1e-4, n=2)
    before = snapshot()
    proc = subprocess.Popen([sys.executable, "-c", LONG_TRACE, str(n)], env=child_env(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert _started(proc, traced), "the run never started"
        # Ctrl-C, again every 0.5 s: one that lands outside a sleep (the thread
        # runnable under load) is seen only when the trace ends
        end = time.monotonic() + 10
        while proc.poll() is None and time.monotonic() < end:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=0.5)
            except subprocess.TimeoutExpired:
                pass
        _, err = proc.communicate(timeout=1)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode != 0 and "KeyboardInterrupt" in err
    assert not instance_of(proc.pid).exists()
    assert snapshot() == before


@needs_trace
def test_sigkill_leaves_an_instance_the_next_run_removes():
    sleepacc.trace("nanosleep", 1e-4, n=2)
    before = snapshot()
    proc = subprocess.Popen([sys.executable, "-c", LONG_TRACE, "3000"], env=child_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert _started_traced(proc), "the traced run never started"
    finally:
        proc.kill()
        proc.wait()
    assert instance_of(proc.pid).exists()
    sleepacc.trace("nanosleep", 1e-4, n=2)
    assert not instance_of(proc.pid).exists()
    assert snapshot() == before


UNMOUNTED = textwrap.dedent("""
    import sleepacc
    try:
        t = sleepacc.trace("nanosleep", 1e-3, n=5)
    except PermissionError as e:
        print("PermissionError:", e)
        raise SystemExit(3)
    print("mounted", t.mounted, t.tracefs)
""")


def _in_private_mounts(*cmd):
    """cmd in a private mount namespace whose tracefs is unmounted (the
    host's mounts are untouched); skipped without root or unshare."""
    unshare = shutil.which("unshare")
    if os.geteuid() != 0 or not unshare:
        pytest.skip("needs root and unshare for a private mount namespace")
    script = 'for m in $(awk \'$3 == "tracefs" {print $2}\' /proc/self/mounts); do umount "$m"; done; exec "$@"'
    return subprocess.run([unshare, "--mount", "--propagation", "private", "sh", "-c", script, "sh", *cmd],
                          capture_output=True, text=True, timeout=60, env=child_env(), cwd="/")


@needs_trace
def test_unmounted_tracefs_is_mounted_and_said():
    out = _in_private_mounts(sys.executable, "-c", UNMOUNTED)
    if "unshare failed" in out.stderr:
        pytest.skip(out.stderr.strip())
    assert out.returncode == 0, out.stdout + out.stderr
    assert out.stdout.split()[:2] == ["mounted", "True"], out.stdout


@needs_trace
def test_unmounted_and_unprivileged_names_the_mount_command():
    setpriv = shutil.which("setpriv")
    if not setpriv:
        pytest.skip("needs setpriv to drop to nobody")
    out = _in_private_mounts(setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                             sys.executable, "-c", UNMOUNTED)
    if "unshare failed" in out.stderr:
        pytest.skip(out.stderr.strip())
    assert out.returncode == 3, out.stdout + out.stderr
    assert "mount -t tracefs nodev /sys/kernel/tracing" in out.stdout
    assert "CAP_DAC_OVERRIDE" in out.stdout and "Traceback" not in out.stderr


@needs_trace
def test_repeated_traces_do_not_leak():
    """The core's room (one block per call) and the answer's lists are given
    back: traced memory does not grow over repeated calls, failing ones too."""
    import gc
    import tracemalloc

    def calls():
        sleepacc.trace("nanosleep", 1e-5, n=3)
        with pytest.raises(ValueError):
            sleepacc.trace("nanosleep", 1e-5, n=30000)

    tracemalloc.start()
    try:
        growth = []
        for window in range(3):   # a leak grows in every window, a one-off resize in one
            gc.collect()
            before = tracemalloc.get_traced_memory()[0]
            for _ in range(10):
                calls()
            gc.collect()
            if window:
                growth.append(tracemalloc.get_traced_memory()[0] - before)
    finally:
        tracemalloc.stop()
    assert min(growth) < 100_000, growth
