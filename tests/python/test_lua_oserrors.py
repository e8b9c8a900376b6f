"""Run-time OS failures in the Lua module return nil, "ENAME: message",
"ENAME" (the luv convention) and leave the thread as it was.  The failures
are real: lua5.4 runs as user nobody (setpriv), where a real-time policy is
refused with EPERM.  Needs root to drop to nobody."""
import os
import shutil
import subprocess

import pytest

from conftest import LUA_MODULE as MODULE, ROOT, child_env



# Prints the thread state, the three return values of `call`, the state again.
SCRIPT = r"""
local sa = require "sleepacc"
local function state()
  local f = assert(io.open("/proc/self/stat"))
  local s = f:read("a")
  f:close()
  local t = {}
  for w in s:match("%) (.*)$"):gmatch("%S+") do t[#t + 1] = w end
  f = assert(io.open("/proc/self/timerslack_ns"))
  local slack = f:read("n")
  f:close()
  return string.format("slack=%d policy=%s prio=%s", slack, t[39], t[38])
end
local call = assert(load("return " .. arg[1]))()
print(state())
local r, msg, name = call(sa)
print(type(r))
print(tostring(msg))
print(tostring(name))
print(state())
"""


@pytest.fixture(scope="module")
def as_nobody():
    if os.geteuid() != 0:
        pytest.skip("needs root to run lua5.4 as user nobody")
    build = subprocess.run(["make", "-s", "-C", str(ROOT), "lua-module"], env=child_env(),
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    exe, setpriv = shutil.which("lua5.4"), shutil.which("setpriv")
    assert exe and setpriv, "lua5.4 and setpriv (util-linux) are needed"

    def run(call):
        env = child_env(LUA_CPATH=f"{MODULE.parent}/?.so;;")
        out = subprocess.run([setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups",
                              exe, "-", call], input=SCRIPT, env=env, capture_output=True,
                             text=True, timeout=30)  # the script on stdin: nobody reads no tmp dir
        assert out.returncode == 0, out.stderr
        before, rtype, msg, name, after = out.stdout.splitlines()
        return before, rtype, msg, name, after
    return run


def test_fifo_without_privilege_returns_eperm(as_nobody):
    before, rtype, msg, name, after = as_nobody(
        'function(sa) return sa.measure{method = "nanosleep", duration = 1e-4, n = 3, '
        'policy = "fifo", slack = 1000} end')
    assert rtype == "nil"
    assert name == "EPERM"
    assert msg.startswith("EPERM: ") and "not permitted" in msg, msg
    # the core's words of what the option needs, as Python's PermissionError gives them
    assert msg.endswith(" (policy='fifo' (priority 1) needs CAP_SYS_NICE or an "
                        "RLIMIT_RTPRIO/RLIMIT_NICE allowance)"), msg
    assert after == before  # slack (applied first) and policy are as they were


def test_sweep_failure_names_the_point(as_nobody):
    before, rtype, msg, name, after = as_nobody(
        'function(sa) return sa.sweep{methods = {"nanosleep"}, durations = {1e-4}, budget = 0.01, '
        'policy = "rr"} end')
    assert (rtype, name) == ("nil", "EPERM")
    assert msg.startswith("EPERM: ") and "method nanosleep" in msg, msg
    assert "(policy='rr' (priority 1) needs CAP_SYS_NICE or an RLIMIT_RTPRIO/RLIMIT_NICE allowance, " \
        "method nanosleep, duration 100000 ns)" in msg, msg
    assert after == before


def test_idle_without_privilege_leaves_thread_unchanged(as_nobody):
    # Without CAP_SYS_NICE (and RLIMIT_NICE 0) SCHED_IDLE could not be left
    # again, so the core refuses to enter it: EPERM, thread unchanged.
    before, rtype, msg, name, after = as_nobody(
        'function(sa) return sa.measure{method = "nanosleep", duration = 1e-4, n = 3, '
        'policy = "idle"} end')
    assert (rtype, name) == ("nil", "EPERM"), (rtype, msg)
    assert after == before
