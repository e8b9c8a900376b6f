"""The dma_latency knob: measure/sweep hold
/dev/cpu_dma_latency for the run, Sleeper/Pacer for their life; the request
is released on every path; PermissionError names dma_latency when the file
is not writable (as user nobody, in a forked child).

The file reads back the current PM QoS target (4 bytes, the minimum of every
request held on the machine), so while our request is held the value read
is at most ours; other processes may hold lower ones, so "released" is
checked by the open descriptors of this process, not by the value."""
import errno
import os
import signal
import struct
import threading

import pytest

import sleepacc
from test_reliability_privileges import as_nobody, outcome

DEV = "/dev/cpu_dma_latency"
pytestmark = pytest.mark.skipif(not os.access(DEV, os.W_OK),
                                reason=f"{DEV} is not writable here (needs root)")


def current_us():
    with open(DEV, "rb") as f:
        return struct.unpack("i", f.read(4))[0]


def held_fds():
    """Descriptors of this process open on /dev/cpu_dma_latency."""
    out = []
    for fd in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{fd}") == DEV:
                out.append(fd)
        except OSError:
            pass
    return out


def during(fn, delay=0.1):
    """fn()'s result, and (value, fds) read from another thread `delay` s in."""
    seen = {}

    def look():
        seen["value"] = current_us()
        seen["fds"] = held_fds()

    t = threading.Timer(delay, look)
    t.start()
    try:
        result = fn()
    finally:
        t.join()
    return result, seen


def test_measure_holds_the_value_for_the_run_and_releases_it():
    before = held_fds()
    m, seen = during(lambda: sleepacc.measure("nanosleep", 1e-3, budget=0.3, dma_latency=7))
    assert seen["value"] <= 7 and len(seen["fds"]) == len(before) + 1
    assert held_fds() == before
    assert m.env["dma_latency_us"] == 7 and m.to_dict()["env"]["dma_latency_us"] == 7


def test_measure_without_dma_latency_records_none_and_holds_nothing():
    before = held_fds()
    m, seen = during(lambda: sleepacc.measure("nanosleep", 1e-3, budget=0.2))
    assert m.env["dma_latency_us"] is None and seen["fds"] == before


def test_released_when_the_run_is_interrupted():
    """Ctrl-C (a KeyboardInterrupt from a SIGALRM handler) mid-run."""
    def stop(*_):
        raise KeyboardInterrupt
    before = held_fds()
    old = signal.signal(signal.SIGALRM, stop)
    try:
        signal.setitimer(signal.ITIMER_REAL, 0.05)
        with pytest.raises(KeyboardInterrupt):
            sleepacc.measure("nanosleep", 1e-3, budget=2.0, dma_latency=0)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)
    assert held_fds() == before


def test_sweep_passes_dma_latency_through():
    before = held_fds()
    s = sleepacc.sweep(["nanosleep"], [1e-4, 1e-3], budget=0.05, dma_latency=0)
    assert [m.env["dma_latency_us"] for m in s] == [0, 0]
    assert s.settings["dma_latency"] == 0 and held_fds() == before


@pytest.mark.parametrize("make", [
    lambda: sleepacc.Sleeper("auto", dma_latency=5),
    lambda: sleepacc.Sleeper("nanosleep", dma_latency=5),
    lambda: sleepacc.Pacer(1e-3, dma_latency=5),
])
def test_sleeper_and_pacer_hold_it_for_their_life(make):
    before = held_fds()
    obj = make()
    try:
        assert current_us() <= 5 and len(held_fds()) == len(before) + 1
        obj.sleep(1e-3) if isinstance(obj, sleepacc.Sleeper) else obj.wait()
        assert len(held_fds()) == len(before) + 1
    finally:
        obj.close()
    assert held_fds() == before
    obj.close()  # twice is fine
    assert held_fds() == before


def test_sleeper_released_by_the_context_manager_and_by_gc():
    before = held_fds()
    with sleepacc.Sleeper(dma_latency=0):
        assert len(held_fds()) == len(before) + 1
    assert held_fds() == before
    s = sleepacc.Pacer(1e-3, dma_latency=0)
    del s
    assert held_fds() == before


@pytest.mark.parametrize("bad, exc", [(-1, ValueError), (2**31, ValueError), (1.5, TypeError),
                                      ("0", TypeError), (True, TypeError)])
def test_bad_values_are_refused_up_front(bad, exc):
    before = held_fds()
    with pytest.raises(exc, match="dma_latency"):
        sleepacc.measure("nanosleep", 1e-3, n=1, dma_latency=bad)
    with pytest.raises(exc, match="dma_latency"):
        sleepacc.Sleeper(dma_latency=bad)
    with pytest.raises(exc, match="dma_latency"):
        sleepacc.Pacer(1e-3, dma_latency=bad)
    assert held_fds() == before


def test_permission_error_names_dma_latency_as_nobody():
    def child():
        return [outcome(lambda: sleepacc.measure("nanosleep", 1e-4, budget=0.01, dma_latency=0)),
                outcome(lambda: sleepacc.Sleeper(dma_latency=0)),
                outcome(lambda: sleepacc.Pacer(1e-3, dma_latency=0)),
                outcome(lambda: sleepacc.sweep(["nanosleep"], [1e-4], budget=0.01,
                                               dma_latency=0))]
    for res in as_nobody(child):
        assert not res["ok"] and res["unchanged"], res
        assert res["type"] == "PermissionError", res
        assert res["errno"] in (errno.EACCES, errno.EPERM), res
        assert "dma_latency" in res["msg"], res["msg"]


def test_cli_dma_latency_and_lock_memory_options():
    import json
    import subprocess
    import sys
    from conftest import child_env
    out = subprocess.run([sys.executable, "-m", "sleepacc", "measure", "nanosleep", "1ms",
                          "-n", "3", "--dma-latency", "0", "--lock-memory", "--json"],
                         capture_output=True, text=True, timeout=60, env=child_env())
    assert out.returncode == 0, out.stderr
    env = json.loads(out.stdout)["env"]
    assert env["dma_latency_us"] == 0 and env["lock_memory"] is True
    bad = subprocess.run([sys.executable, "-m", "sleepacc", "measure", "nanosleep", "1ms",
                          "-n", "1", "--dma-latency", "-1"],
                         capture_output=True, text=True, timeout=60, env=child_env())
    assert bad.returncode != 0 and "--dma-latency" in bad.stderr
