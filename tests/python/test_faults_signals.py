"""Signal methods under a blocked signal mask (a worker thread's, or one a
parent left over exec): timer_signal and sigtimedwait need a real-time
signal of their own, and with SIGRTMIN+2..SIGRTMAX all blocked none is free.
That is one clear error naming the blocked signals (an OSError EBUSY, not
"Sleeper is sleeping in another thread"), in Python and Lua; the default
sweep leaves those methods out (the core's plan) and says why in one line
each (sweep_skips), and goes on.  The caller's mask is left as found."""
import json
import signal
import subprocess
import sys


from conftest import LUA_MODULE, child_env, lua54_with_module

RT = range(signal.SIGRTMIN, signal.SIGRTMAX + 1)
BLOCKED = f"blocked on this thread: {signal.SIGRTMIN + 2}-{signal.SIGRTMAX}"

PY = r"""
import json, signal, sleepacc
from sleepacc import _core
signal.pthread_sigmask(signal.SIG_BLOCK, range(signal.SIGRTMIN, signal.SIGRTMAX + 1))
mask = signal.pthread_sigmask(signal.SIG_BLOCK, [])
def outcome(fn):
    try:
        fn()
        return "ok"
    except Exception as e:
        return [type(e).__name__, getattr(e, "errno", None), str(e)]
out = {"sleeper": outcome(lambda: sleepacc.Sleeper("timer_signal")),
       "measure": outcome(lambda: sleepacc.measure("timer_signal", 1e-4, n=3)),
       "skips": _core.sweep_skips()}
sw = sleepacc.sweep(durations=[1e-4], budget=0.005)
out["swept"] = sorted({m.method for m in sw.measurements})
out["mask_kept"] = signal.pthread_sigmask(signal.SIG_BLOCK, []) == mask
print(json.dumps(out))
"""


def test_python_blocked_mask_is_one_clear_error_and_the_sweep_goes_on():
    run = subprocess.run([sys.executable, "-c", PY], env=child_env(), capture_output=True,
                         text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    for case in ("sleeper", "measure"):
        kind, err, text = out[case]
        assert kind == "OSError" and err == 16, out[case]                       # EBUSY
        assert BLOCKED in text and "another thread" not in text, text
    assert [s.split(":")[0] for s in out["skips"]] == ["timer_signal", "sigtimedwait"], out
    assert all(BLOCKED in s and "\n" not in s for s in out["skips"]), out["skips"]
    assert "timer_signal" not in out["swept"] and "nanosleep" in out["swept"], out["swept"]
    assert out["mask_kept"]


def test_free_signal_again_the_default_sweep_has_them():
    from sleepacc import _core
    assert _core.sweep_skips() == []
    assert {"timer_signal", "sigtimedwait"} <= {p["method"] for p in _core.sweep_plan({})}


LUA = r"""
local sa = require "sleepacc"
local s, msg, ename = sa.sleeper("timer_signal")
assert(s == nil and ename == "EBUSY", tostring(msg))
io.write(msg, "\n")
local rs = assert(sa.sweep{durations = {1e-4}, budget = 0.005})
for _, r in ipairs(rs) do assert(r.method ~= "timer_signal") end
io.write(#rs, "\n")
"""


def test_lua_blocked_mask_inherited_over_exec():
    lua = lua54_with_module()
    run = subprocess.run([lua, "-"], input=LUA, capture_output=True, text=True, timeout=120,
                         env=child_env(LUA_CPATH=f"{LUA_MODULE.parent}/?.so;;"),
                         preexec_fn=lambda: signal.pthread_sigmask(signal.SIG_BLOCK, RT))
    assert run.returncode == 0, run.stderr
    msg, count = run.stdout.splitlines()
    assert BLOCKED in msg and "another thread" not in msg, msg
    assert int(count) > 10
