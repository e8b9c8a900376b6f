"""Timer_signal and sigtimedwait leave the caller's signals alone.

Before: `timer_signal` consumed every SIGRTMIN+2 sent to the process during a
run, `sigtimedwait` every SIGRTMIN+3, and instances queued (blocked) before
the call vanished too: "sent 6 (1 queued before the call), still queued
after: 0" for both.  Now each waiter picks a real-time signal the caller is
not using (default disposition, not blocked, not pending; or the one named
by SLEEPACC_TIMER_SIGNAL / SLEEPACC_SIGTIMEDWAIT_SIGNAL), consumes only its
own instances (SI_TIMER with its si_value) and queues every other instance
again with its siginfo.  Each scenario runs in a fresh interpreter (signal
state is process-wide), bounded by a timeout.
"""
import os
import signal
import subprocess
import sys
import textwrap

import pytest

METHODS = [("timer_signal", 2, "SLEEPACC_TIMER_SIGNAL"),
           ("sigtimedwait", 3, "SLEEPACC_SIGTIMEDWAIT_SIGNAL")]

QUEUED = textwrap.dedent("""
    import os, signal, sys, threading, time
    import sleepacc
    method, sig, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    signal.signal(sig, lambda s, f: None)
    signal.pthread_sigmask(signal.SIG_BLOCK, [sig])
    os.kill(os.getpid(), sig)            # queued before the call
    main = threading.main_thread().ident
    def sender():                        # during the run; this thread blocks it too
        for _ in range(5):
            time.sleep(0.01)
            if how == "thread":
                signal.pthread_kill(main, sig)
            else:
                os.kill(os.getpid(), sig)
    t = threading.Thread(target=sender)
    t.start()
    m = sleepacc.measure(method, 1e-3, n=60)
    t.join()
    infos = []
    while True:
        si = signal.sigtimedwait([sig], 0)
        if si is None:
            break
        infos.append((si.si_code, si.si_pid))
    print(m.n, len(infos), sorted(set(infos)))
""")

HANDLED = textwrap.dedent("""
    import os, signal, sys, threading, time
    import sleepacc
    method, sig = sys.argv[1], int(sys.argv[2])
    got = []
    signal.signal(sig, lambda s, f: got.append(s))
    def sender():
        for _ in range(5):
            time.sleep(0.02)
            os.kill(os.getpid(), sig)
    t = threading.Thread(target=sender)
    t.start()
    m = sleepacc.measure(method, 1e-3, n=150)
    t.join()
    time.sleep(0.05)
    print(m.n, len(got))
""")


def run(script, *args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    out = subprocess.run([sys.executable, "-c", script, *map(str, args)], capture_output=True,
                         text=True, timeout=60, env=e)
    assert out.returncode == 0, out.stderr
    return out.stdout.split(maxsplit=2)


@pytest.mark.parametrize("method, off, var", METHODS)
@pytest.mark.parametrize("forced", [False, True])
@pytest.mark.parametrize("how", ["process", "thread"])
def test_queued_instances_survive(method, off, var, forced, how):
    """forced: the waiter is told to use the caller's own signal, so it must
    dequeue, recognise and put back the caller's instances; otherwise it
    picks another signal and never touches them."""
    sig = signal.SIGRTMIN + off
    n, left, infos = run(QUEUED, method, sig, how, env={var: str(sig)} if forced else {})
    assert n == "60"
    assert left == "6", (method, forced, how, left, infos)
    infos = eval(infos)   # [(si_code, si_pid)]: the siginfo is the sender's, kept
    assert {c for c, _ in infos} <= {0, -6} and len({p for _, p in infos}) == 1, infos
    assert infos[0][1] not in (0, os.getpid()), infos   # the child sent them all


@pytest.mark.parametrize("method, off, var", METHODS)
@pytest.mark.parametrize("forced", [False, True])
def test_caller_handler_runs_during_a_run(method, off, var, forced):
    """The caller's handler for the method's old signal runs while the run
    goes on (before: never), and the run still completes its n samples."""
    sig = signal.SIGRTMIN + off
    n, got = run(HANDLED, method, sig, env={var: str(sig)} if forced else {})
    assert n == "150"
    assert int(got) >= 1


@pytest.mark.parametrize("method, off, var", METHODS)
def test_bad_signal_choice_is_an_error(method, off, var):
    e = dict(os.environ, **{var: "5"})   # not a real-time signal
    script = ("import sleepacc\ntry:\n    sleepacc.measure(%r, 1e-4, n=2)\n"
              "except Exception as e:\n    print(type(e).__name__, e)\n") % method
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=60, env=e)
    assert out.returncode == 0 and out.stdout.startswith("ValueError"), out
