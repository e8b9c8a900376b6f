"""Explicit Sleeper/Pacer objects survive fork().

Before: `s = Sleeper("timerfd"); os.fork(); s.sleep(0.005)` in both hung one
of them for ever in timerfd's read() (both armed the one shared timerfd and
only one read its expiry): "sleeper - parent: HUNG in timerfd read (>3 s) /
child: done", "pacer - parent: done / child: HUNG ...".  And an object busy
in another thread at fork time raised "RuntimeError: Sleeper is sleeping in
another thread" for every call in the child, close() included.

Now the core counts forks (pthread_atfork) and a sleeper that sees a new
generation reopens its waiter in the child (csrc/sleeper.c, methods.c
sleepacc_waiter_reopen); the binding's busy mark is per fork generation.
Every wait is bounded: the loops run in a daemon thread joined with a
timeout, and the child reports through a pipe.
"""
import json
import os
import threading
import time

import pytest

from conftest import read_child_report

import sleepacc

METHODS = ["timerfd", "timer_signal", "epoll_wait", "cond_timedwait", "auto", "hybrid"]


def bounded(fn, timeout=5.0):
    """Run fn() in a daemon thread; 'done', 'hung' or the exception's text."""
    out = []

    def body():
        try:
            fn()
            out.append("done")
        except Exception as e:  # noqa: BLE001 - reported
            out.append(f"{type(e).__name__}: {e}")
    t = threading.Thread(target=body, daemon=True)
    t.start()
    t.join(timeout)
    return out[0] if out else "hung"


def fork_both(work):
    """Run work() in the parent and a forked child at once; both results."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            os.write(w, json.dumps(work()).encode())
        finally:
            os._exit(0)
    os.close(w)
    mine = work()
    raw, _ = read_child_report(r, pid)
    return mine, json.loads(raw or b'"no report"')


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("kind", ["Sleeper", "Pacer"])
def test_parent_and_child_both_sleep_after_fork(kind, method):
    if method not in ("auto", "hybrid") and not any(
            m.name == method and m.available for m in sleepacc.methods()):
        pytest.skip(f"{method} is not available here")
    obj = sleepacc.Sleeper(method) if kind == "Sleeper" else sleepacc.Pacer(0.005, method)
    use = (lambda: obj.sleep(0.005)) if kind == "Sleeper" else obj.wait
    use()

    def work():
        t0 = time.monotonic()
        res = bounded(lambda: [use() for _ in range(20)])
        return [res, time.monotonic() - t0 >= 0.09]   # 20 x 5 ms, never early
    parent, child = fork_both(work)
    assert parent == ["done", True] and child == ["done", True], (parent, child)
    obj.close()


@pytest.mark.parametrize("kind", ["Sleeper", "Pacer"])
def test_object_busy_at_fork_is_usable_in_the_child(kind):
    obj = sleepacc.Sleeper("timerfd") if kind == "Sleeper" else sleepacc.Pacer(0.3, "timerfd")
    long_wait = (lambda: obj.sleep(0.3)) if kind == "Sleeper" else obj.wait
    t = threading.Thread(target=long_wait)
    t.start()
    time.sleep(0.05)   # the thread is inside the wait now
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(r)
            use = (lambda: obj.sleep(0.001)) if kind == "Sleeper" else obj.wait
            os.write(w, json.dumps([bounded(use), bounded(obj.close)]).encode())
        finally:
            os._exit(0)
    os.close(w)
    # meanwhile the parent's object is still busy in its thread
    with pytest.raises(RuntimeError, match="another thread"):
        (obj.sleep if kind == "Sleeper" else (lambda _: obj.wait()))(0.001)
    child = json.loads(os.read(r, 4096) or b'"no report"')
    os.close(r)
    os.waitpid(pid, 0)
    t.join(5)
    assert not t.is_alive()
    assert child == ["done", "done"], child
    assert bounded(lambda: obj.sleep(0.001) if kind == "Sleeper" else obj.wait()) == "done"
    obj.close()


def test_forked_child_leaves_the_parents_timerfd_alone():
    """The child's reopen closes only its own copy: the parent keeps its
    descriptor and keeps sleeping on it."""
    s = sleepacc.Sleeper("timerfd")
    s.sleep(0.001)
    fds_before = set(os.listdir("/proc/self/fd"))

    def work():
        return bounded(lambda: [s.sleep(0.002) for _ in range(10)])
    parent, child = fork_both(work)
    assert parent == child == "done"
    assert set(os.listdir("/proc/self/fd")) - fds_before <= set(), "parent fds changed"
    s.close()
