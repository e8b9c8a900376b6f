"""Probes that recover, and a resource error that names the resource.  A
method first probed while descriptors are exhausted (RLIMIT_NOFILE) or with
no queued signal allowed (RLIMIT_SIGPENDING 0) is not "not available" for
the life of the process: the failure is an OSError with its errno (not a
ValueError blaming `method`), and the method works once the resource is
free.  sleepacc.sleep and an auto Sleeper fall back to a wait that needs no
descriptor, and their stats say so.  Each case runs in a child process whose
limits it sets."""
import json
import subprocess
import sys

from conftest import child_env

PRELUDE = r"""
import errno, json, os, resource, sys
def exhaust():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
    held = []
    try:
        while len(held) < 200:
            held.append(os.open("/dev/null", os.O_RDONLY))
    except OSError as e:
        assert e.errno == errno.EMFILE, e
    return held
def free(held):
    for fd in held:
        os.close(fd)
def outcome(fn):
    try:
        fn()
        return "ok"
    except Exception as e:
        return [type(e).__name__, getattr(e, "errno", None), str(e)]
"""

EMFILE = PRELUDE + r"""
import sleepacc                       # imports open files: before the limit
held = exhaust()                      # before sleepacc's first probe
out = {}
out["measure"] = outcome(lambda: sleepacc.measure("timerfd", 1e-4, n=3))
out["sleeper"] = outcome(lambda: sleepacc.Sleeper("timerfd"))
out["sleep"] = outcome(lambda: sleepacc.sleep(1e-3))
st = sleepacc.precise._local.sleepers["auto"].stats    # sleepacc.sleep's own sleeper
out["sleep_stats"] = [st["kernel"], st["kernel_skipped"], st["kernel_skipped_err"]]
s = sleepacc.Sleeper("auto")
s.sleep(1e-3)
st = s.stats
out["auto"] = [st["kernel"], st["kernel_skipped"], st["kernel_skipped_err"]]
s.close()
free(held)
for _ in range(sleepacc.precise._RETRY_AFTER + 1):   # sleepacc.sleep tries timerfd again
    sleepacc.sleep(0)
out["sleep_after"] = sleepacc.precise._local.sleepers["auto"].stats["kernel"]
out["after"] = outcome(lambda: sleepacc.measure("timerfd", 1e-4, n=3))
out["listed"] = [m.available for m in sleepacc.methods() if m.name == "timerfd"]
s = sleepacc.Sleeper("auto")
out["auto_after"] = [s.stats["kernel"], s.stats["kernel_skipped"]]
print(json.dumps(out))
"""


def run(script):
    out = subprocess.run([sys.executable, "-c", script], env=child_env(), capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1])


def test_emfile_is_an_oserror_and_not_cached_and_auto_falls_back():
    out = run(EMFILE)
    for case in ("measure", "sleeper"):
        kind, err, text = out[case]
        assert kind == "OSError" and err == 24, out[case]      # EMFILE, not ValueError
        assert "EMFILE" in text and not text.startswith("method"), text
    assert "too many open files" in out["measure"][2] and "RLIMIT_NOFILE" in out["sleeper"][2]
    assert out["sleep"] == "ok"                                # a wait with no descriptor
    assert out["sleep_stats"] == out["auto"], out
    assert out["auto"][0] != "timerfd" and out["auto"][1:] == ["timerfd", "EMFILE"], out
    assert out["after"] == "ok" and out["listed"] == [True], out
    assert out["sleep_after"] == "timerfd", out
    assert out["auto_after"] == ["timerfd", None], out


SIGPENDING = PRELUDE + r"""
soft, hard = resource.getrlimit(resource.RLIMIT_SIGPENDING)
resource.setrlimit(resource.RLIMIT_SIGPENDING, (0, hard))
import sleepacc
out = {"measure": outcome(lambda: sleepacc.measure("timer_signal", 1e-4, n=3))}
resource.setrlimit(resource.RLIMIT_SIGPENDING, (soft, hard))
out["after"] = outcome(lambda: sleepacc.measure("timer_signal", 1e-4, n=3))
out["listed"] = [m.available for m in sleepacc.methods() if m.name == "timer_signal"]
print(json.dumps(out))
"""


def test_signal_limit_is_an_oserror_and_not_cached():
    out = run(SIGPENDING)
    kind, err, text = out["measure"]
    assert kind in ("OSError", "BlockingIOError") and err == 11, out     # EAGAIN
    assert "RLIMIT_SIGPENDING" in text, text
    assert out["after"] == "ok" and out["listed"] == [True], out
