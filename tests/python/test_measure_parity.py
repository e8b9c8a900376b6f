"""The CLI, Python and Lua accept and refuse the same measure calls.

Each call below is made three ways: ``sleepacc measure`` (a child process,
the duration as typed), ``sleepacc.measure`` and Lua's ``sa.measure`` (on
every installed interpreter, each over its own build of the module).  A call
one of them accepts, the others accept; a call one refuses, the others
refuse naming the same option (the CLI by its flag), because the rules are
the core's alone.  The floor methods (syscall, clock) at a non-zero duration
are among them: they ignore the request, and every door measures them.
"""
import json
import re
import shutil
import subprocess
import sys

import pytest

import sleepacc
from conftest import ROOT, child_env

# (options as the core takes them, the duration as a user types it, the
# option refused or None)
CALLS = [
    (dict(method="nanosleep", duration=1e-3, n=2), "1ms", None),
    (dict(method="syscall", duration=1e-3, n=2), "1ms", None),        # a floor, at 1 ms
    (dict(method="clock", duration=5e-3, n=2), "5ms", None),          # a floor, at 5 ms
    (dict(method="syscall", duration=0, n=2), "0", None),
    (dict(method="hybrid", duration=1e-4, n=2, margin=1e-5), "100us", None),
    (dict(method="nanosleep", duration=1e-4, n=2, mode="periodic"), "100us", None),
    (dict(method="clock", duration=1e-6, n=2, mode="periodic"), "1us", "method"),
    (dict(method="nope", duration=1e-3, n=2), "1ms", "method"),
    (dict(method="nanosleep", duration=-1e-3, n=2), "-1ms", "duration"),
    (dict(method="nanosleep", duration=90000, n=2), "25h", "duration"),
    (dict(method="nanosleep", duration=0, n=2, mode="periodic"), "0", "duration"),
    (dict(method="nanosleep", duration=5.0, budget=1.0), "5s", "duration"),
    (dict(method="nanosleep", duration=1e-3, n=0), "1ms", "n"),
    (dict(method="nanosleep", duration=1e-3, n=2, budget=0), "1ms", "budget"),
    (dict(method="nanosleep", duration=1e-3, n=2, warmup=-1), "1ms", "warmup"),
    (dict(method="nanosleep", duration=1e-3, n=2, mode="sideways"), "1ms", "mode"),
    (dict(method="nanosleep", duration=1e-3, n=2, margin=1e-5), "1ms", "margin"),
    (dict(method="nanosleep", duration=1e-3, n=2, slack=0), "1ms", "slack"),
    (dict(method="nanosleep", duration=1e-3, n=2, policy="realtime"), "1ms", "policy"),
]

# the CLI's flag of each option
FLAG = {"method": "METHOD", "duration": "DURATION", "n": "-n", "budget": "--budget",
        "warmup": "--warmup", "mode": "--mode", "margin": "--margin", "slack": "--slack",
        "policy": "--policy"}
# the CLI's text of an option's value (the duration is typed per call)
TEXT = {"margin": lambda v: f"{round(v * 1e6)}us", "budget": lambda v: f"{v:g}"}

LUAS = [("lua5.4", "build/lua/sleepacc.so"), ("lua5.3", "build/lua-5.3/sleepacc.so"),
        ("lua5.1", "build/lua-5.1/sleepacc.so"), ("luajit", "build/lua-jit/sleepacc.so")]


def cli_argv(options, typed):
    argv = ["measure", options["method"], typed]
    for key, value in options.items():
        if key not in ("method", "duration"):
            argv += [FLAG[key], TEXT.get(key, str)(value)]
    return argv + ["--json"]


def python_outcome(options):
    try:
        sleepacc.measure(**options)
    except ValueError as exc:
        return str(exc).partition(":")[0]
    return None


def cli_outcome(options, typed):
    r = subprocess.run([sys.executable, "-m", "sleepacc", *cli_argv(options, typed)],
                       capture_output=True, text=True, timeout=60, env=child_env())
    if r.returncode == 0:
        assert json.loads(r.stdout)["method"] == options["method"]
        return None
    assert r.returncode == 2 and r.stdout == "", (r.returncode, r.stdout, r.stderr)
    m = re.match(r"sleepacc: error: argument (\S+): ", r.stderr)
    assert m, r.stderr
    return {flag: key for key, flag in FLAG.items()}.get(m.group(1), m.group(1))


def lua_value(v):
    return json.dumps(v) if isinstance(v, str) else repr(v)


LUA_SCRIPT = """local sa = require "sleepacc"
for i, call in ipairs(CALLS) do
  local ok, err = pcall(sa.measure, call)
  print(i .. " " .. (ok and "ok" or (tostring(err):match("^([%w_]+):") or tostring(err))))
end
"""


def lua_outcomes(lua, module):
    calls = ",\n".join("{" + ", ".join(f"{k} = {lua_value(v)}" for k, v in o.items()) + "}"
                       for o, _t, _r in CALLS)
    script = f"local CALLS = {{\n{calls}\n}}\n" + LUA_SCRIPT
    r = subprocess.run([lua, "-"], input=script, capture_output=True, text=True, timeout=120,
                       env=child_env(LUA_CPATH=f"{(ROOT / module).parent}/?.so;;"))
    assert r.returncode == 0, r.stderr
    out = dict(line.split(" ", 1) for line in r.stdout.splitlines())
    return [None if out[str(i)] == "ok" else out[str(i)] for i in range(1, len(CALLS) + 1)]


@pytest.mark.parametrize("options,typed,refused", CALLS,
                         ids=[" ".join(cli_argv(o, t)[1:-1]) for o, t, _r in CALLS])
def test_python_and_the_cli_accept_and_refuse_alike(options, typed, refused):
    assert python_outcome(dict(options)) == refused
    assert cli_outcome(options, typed) == refused


@pytest.mark.parametrize("lua,module", LUAS, ids=[lua for lua, _m in LUAS])
def test_lua_accepts_and_refuses_as_python(lua, module):
    if shutil.which(lua) is None:
        pytest.skip(f"{lua} is not installed (make deps installs it)")
    build = subprocess.run(["make", "-s", "-C", str(ROOT), module], env=child_env(),
                           capture_output=True, text=True)
    if build.returncode != 0:
        pytest.skip(f"the module for {lua} does not build here (its headers are missing?): "
                    + (build.stderr.strip().splitlines() or ["?"])[-1])
    assert lua_outcomes(lua, module) == [refused for _o, _t, refused in CALLS]
