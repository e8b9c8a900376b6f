"""Environment control through the API: applied for the run (observed from
another thread), restored after it, and EPERM reported as PermissionError
naming the setting."""
import os
import subprocess
import sys
import textwrap
import threading

import pytest

import sleepacc
from conftest import thread_slack_ns, thread_state


def _observe_during(fn, delay=0.15):
    """Run fn() on this thread while another thread reads this thread's
    policy, affinity, slack and locked memory `delay` s in."""
    tid = threading.get_native_id()
    seen = {}

    def look():
        seen["policy"] = os.sched_getscheduler(tid)
        seen["priority"] = os.sched_getparam(tid).sched_priority
        seen["affinity"] = os.sched_getaffinity(tid)
        seen["slack"] = thread_slack_ns(tid)
        seen["vmlck_kb"] = _vmlck_kb()

    timer = threading.Timer(delay, look)
    timer.start()
    try:
        result = fn()
    finally:
        timer.join()
    return result, seen


def _vmlck_kb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmLck:"):
                return int(line.split()[1])
    return 0


@pytest.mark.skipif(os.geteuid() != 0, reason="FIFO needs CAP_SYS_NICE (covered unprivileged "
                    "by test_fifo_without_permission_is_a_permission_error)")
@pytest.mark.parametrize("policy,priority", [("fifo", 10), ("rr", 5)])
def test_realtime_policy_is_applied_and_restored(policy, priority):
    before = thread_state()
    m, seen = _observe_during(lambda: sleepacc.measure("nanosleep", 1e-3, budget=0.3,
                                                       policy=policy, priority=priority))
    want = {"fifo": os.SCHED_FIFO, "rr": os.SCHED_RR}[policy]
    assert seen["policy"] == want and seen["priority"] == priority
    assert m.env["policy"] == policy and m.env["priority"] == priority
    assert thread_state() == before


def test_other_settings_are_applied_and_restored():
    before = thread_state()
    cpu = max(os.sched_getaffinity(0))
    m, seen = _observe_during(lambda: sleepacc.measure("nanosleep", 1e-3, budget=0.3,
                                                       cpu=cpu, slack=5000, policy="batch"))
    assert seen["affinity"] == {cpu} and seen["slack"] == 5000
    assert seen["policy"] == os.SCHED_BATCH
    assert m.env == {"slack_ns": 5000, "policy": "batch", "priority": 0, "cpu": cpu,
                     "lock_memory": False, "dma_latency_us": None}
    assert thread_state() == before


@pytest.mark.skipif(os.geteuid() != 0, reason="mlockall of the whole interpreter needs root")
def _under_asan():
    with open("/proc/self/maps") as f:
        return "libasan" in f.read()


@pytest.mark.skipif(_under_asan(),
                    reason="under ASan mlockall would have to lock terabytes of shadow memory")
def test_lock_memory_is_applied_and_released():
    assert _vmlck_kb() == 0
    m, seen = _observe_during(lambda: sleepacc.measure("nanosleep", 1e-3, budget=0.3,
                                                       lock_memory=True))
    assert seen["vmlck_kb"] > 0 and m.env["lock_memory"] is True
    assert _vmlck_kb() == 0


def test_hybrid_records_its_margin():
    m = sleepacc.measure("hybrid", 1e-3, n=20, margin=200e-6)
    assert m.env["margin_ns"] == 200_000
    assert m.stats.min >= 1_000_000


def test_fifo_without_permission_is_a_permission_error():
    # A child drops every privilege (RLIMIT_RTPRIO 0, then uid nobody) and
    # asks for FIFO: EPERM must surface as PermissionError naming the setting,
    # with the thread unchanged.
    code = textwrap.dedent("""
        import os, resource, sys
        import sleepacc
        sys.path.insert(0, sys.argv[1])
        from conftest import thread_state
        resource.setrlimit(resource.RLIMIT_RTPRIO, (0, 0))
        if os.geteuid() == 0:
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
        before = thread_state()
        try:
            sleepacc.measure("nanosleep", 1e-4, n=10, policy="fifo", priority=10)
        except PermissionError as e:
            assert thread_state() == before, (thread_state(), before)
            print("PermissionError:", e)
            sys.exit(0)
        print("no PermissionError")
        sys.exit(1)
    """)
    here = os.path.dirname(os.path.abspath(__file__))
    r = subprocess.run([sys.executable, "-c", code, here], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "policy='fifo'" in r.stdout and "CAP_SYS_NICE" in r.stdout, r.stdout
