"""Reliability (d): privileges and what sleepacc touches.

  - Without CAP_SYS_NICE (a forked child that drops to nobody after importing
    sleepacc, with RLIMIT_RTPRIO 0) FIFO and RR are refused as a clean
    PermissionError (errno EPERM) naming the setting, and the thread is left
    as it was; SCHED_IDLE, which an unprivileged thread could not leave
    again, is refused the same way; lock_memory without CAP_IPC_LOCK is a
    PermissionError/OSError with an errno naming lock_memory; an
    RLIMIT_RTPRIO allowance is honoured (fifo priority within it works).
  - The Lua module as nobody (lua5.4 under setpriv): nil, "EPERM: ...",
    "EPERM" -- the luv convention the Lua API documents.
  - Spin methods under FIFO/RR: refused (ValueError) without a budget; with
    one (as root) a 0.2 s spin measure under fifo stops at its budget, well
    under 1 s, and the thread's policy is restored.
  - Nothing shells out: no subprocess/os.system/popen/exec/spawn anywhere in
    python/sleepacc (an AST scan against an allowed list, empty today).
  - Only /proc and /sys are read for facts: system_info() and clock_info()
    under `strace -f -e trace=open,openat,openat2,execve`, between two
    markers written to stderr, open nothing else and exec nothing.
"""
import ast
import ctypes
import errno
import os
import pathlib
import re
import resource
import shutil
import subprocess
import sys
import time

import pytest

from conftest import run_forked

import sleepacc

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "sleepacc"
NOBODY = 65534
_libc = ctypes.CDLL(None, use_errno=True)
with open("/proc/self/maps") as _f:   # sanitize-python preloads libasan
    UNDER_ASAN = "libasan" in _f.read()


def thread_state():
    return (_libc.prctl(30, 0, 0, 0, 0), os.sched_getscheduler(0),
            os.sched_getparam(0).sched_priority, frozenset(os.sched_getaffinity(0)))


def as_nobody(fn, rtprio=0):
    """Run fn() in a forked child that became uid/gid nobody (no
    capabilities, RLIMIT_RTPRIO = rtprio) after sleepacc was imported;
    returns what fn returned (JSON-able)."""
    if os.geteuid() != 0:
        pytest.skip("dropping to nobody needs root (setresuid)")
    def child():
        try:
            resource.setrlimit(resource.RLIMIT_RTPRIO, (rtprio, rtprio))
        except (ValueError, OSError) as e:
            return {"rlimit_error": str(e)}
        os.setgroups([])
        os.setresgid(NOBODY, NOBODY, NOBODY)
        os.setresuid(NOBODY, NOBODY, NOBODY)
        with open("/proc/self/status") as f:
            cap_eff = re.search(r"CapEff:\s*(\w+)", f.read()).group(1)
        return {"uid": os.geteuid(), "cap_eff": int(cap_eff, 16), "result": fn()}

    out = run_forked(child)
    if "rlimit_error" in out:
        pytest.skip(f"cannot set RLIMIT_RTPRIO={rtprio} here (root without "
                    f"CAP_SYS_RESOURCE, hard limit {resource.getrlimit(resource.RLIMIT_RTPRIO)[1]}):"
                    f" {out['rlimit_error']}")
    assert out["uid"] == NOBODY and out["cap_eff"] == 0, out
    return out["result"]


def outcome(call):
    """{"ok"} or {"type", "errno", "msg"} of call(), plus whether the thread
    state changed."""
    before = thread_state()
    try:
        call()
        res = {"ok": True}
    except Exception as e:  # noqa: BLE001 - classified by the parent
        res = {"ok": False, "type": type(e).__name__, "errno": getattr(e, "errno", None),
               "msg": str(e), "is_oserror": isinstance(e, OSError)}
    res["unchanged"] = thread_state() == before
    return res


@pytest.mark.parametrize("kw, names", [
    (dict(policy="fifo"), "policy='fifo'"),
    (dict(policy="rr"), "policy='rr'"),
    (dict(policy="fifo", priority=99), "policy='fifo'"),
    (dict(policy="rr", priority=50), "policy='rr'"),
    (dict(policy="idle"), "policy='idle'"),
])
def test_realtime_refused_without_cap_sys_nice(kw, names):
    def child():
        return [outcome(lambda: sleepacc.measure(m, 1e-4, budget=0.01, **kw))
                for m in ("nanosleep", "timerfd", "spin")]
    for res in as_nobody(child):
        assert res["unchanged"], res
        assert not res["ok"], res
        assert res["type"] == "PermissionError" and res["errno"] == errno.EPERM, res
        assert names in res["msg"] and "CAP_SYS_NICE" in res["msg"], res["msg"]


def test_unprivileged_settings_work_as_nobody():
    """slack, batch, other and a cpu in the allowed set need no privilege."""
    cpu = min(os.sched_getaffinity(0))

    def child():
        return [outcome(lambda: sleepacc.measure("nanosleep", 1e-5, budget=0.01, **kw))
                for kw in (dict(slack=1), dict(policy="batch"), dict(policy="other"),
                           dict(cpu=cpu), dict(slack=1, policy="batch", cpu=cpu))]
    for res in as_nobody(child):
        assert res["ok"] and res["unchanged"], res


def test_rtprio_allowance_is_honoured_and_restored():
    def child():
        return [outcome(lambda: sleepacc.measure("nanosleep", 1e-5, budget=0.01,
                                                 policy="fifo", priority=5)),
                outcome(lambda: sleepacc.measure("nanosleep", 1e-5, budget=0.01,
                                                 policy="fifo", priority=6))]
    within, beyond = as_nobody(child, rtprio=5)
    assert within["ok"] and within["unchanged"], within
    assert not beyond["ok"] and beyond["type"] == "PermissionError" and beyond["unchanged"]


@pytest.mark.skipif(UNDER_ASAN, reason="mlockall would pin ASan's shadow memory "
                    "(this test runs in the normal `make test`)")
def test_lock_memory_without_cap_ipc_lock_is_a_clean_oserror():
    def child():
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (64 * 1024, 64 * 1024))
        return outcome(lambda: sleepacc.measure("nanosleep", 1e-5, budget=0.01,
                                                lock_memory=True))
    res = as_nobody(child)
    assert res["unchanged"] and not res["ok"], res
    assert res["is_oserror"] and res["errno"] in (errno.EPERM, errno.ENOMEM), res
    assert "lock_memory" in res["msg"], res["msg"]


# ------------------------------------------------------------------ Lua

def _lua_module():
    lua = shutil.which("lua5.4")
    if lua is None:
        pytest.skip("lua5.4 is not installed (make test-lua installs it as root)")
    mod = ROOT / "build" / "lua" / "sleepacc.so"
    if not mod.exists():  # make test runs the Python suite before the Lua one
        r = subprocess.run(["make", "-s", "-C", str(ROOT), "lua-module"], capture_output=True,
                           text=True, timeout=600)
        assert r.returncode == 0 and mod.exists(), r.stderr
    return lua, mod


LUA_PROBE = r'''
local sa = require "sleepacc"
for _, p in ipairs{"fifo", "rr"} do
  local r, msg, name = sa.measure{method = "nanosleep", duration = 1e-4, budget = 0.01, policy = p}
  print(p, tostring(r), tostring(msg), tostring(name))
end
local ok, err = pcall(sa.measure, {method = "spin", duration = 1e-4, n = 5, budget = false,
                                   policy = "fifo"})
print("spin", tostring(ok), tostring(err))
'''


def test_lua_realtime_refused_as_nobody():
    if os.geteuid() != 0 or not shutil.which("setpriv"):
        pytest.skip("needs root and setpriv to run lua5.4 as nobody")
    lua, mod = _lua_module()
    env = dict(os.environ, LUA_CPATH=f"{mod.parent}/?.so;;")
    env.pop("LD_PRELOAD", None)   # lua5.4 is not the interpreter ASan was preloaded for
    r = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                        "--inh-caps=-all", "--bounding-set=-all", lua, "-e", LUA_PROBE],
                       capture_output=True, text=True, timeout=60, env=env, cwd="/")
    assert r.returncode == 0, r.stderr
    rows = {ln.split("\t")[0]: ln.split("\t")[1:] for ln in r.stdout.splitlines()}
    for p in ("fifo", "rr"):
        res, msg, name = rows[p]
        assert res == "nil" and name == "EPERM" and msg.startswith("EPERM: "), rows[p]
    ok, err = rows["spin"]
    assert ok == "false" and "budget" in err, rows["spin"]


# The core's words of what a refused run's privileged options need
# (sleepacc_privilege_explain), the same from both bindings.
REFUSED_WORDS = ("policy='fifo' (priority 3) needs CAP_SYS_NICE or an RLIMIT_RTPRIO/RLIMIT_NICE "
                 "allowance; dma_latency=0 needs write access to /dev/cpu_dma_latency (root)")


def test_refused_run_is_explained_alike_by_python_and_lua():
    if not shutil.which("setpriv"):
        pytest.skip("needs setpriv to run lua5.4 as nobody")
    py = as_nobody(lambda: outcome(lambda: sleepacc.measure(
        "nanosleep", 1e-4, budget=0.01, policy="fifo", priority=3, dma_latency=0)))
    assert py["type"] == "PermissionError" and py["errno"] == errno.EPERM and py["unchanged"], py
    assert py["msg"].startswith("[Errno 1] EPERM: ") and py["msg"].endswith(f" ({REFUSED_WORDS})"), \
        py["msg"]
    lua, mod = _lua_module()
    env = dict(os.environ, LUA_CPATH=f"{mod.parent}/?.so;;")
    env.pop("LD_PRELOAD", None)
    probe = ('local r, msg, name = require("sleepacc").measure{method = "nanosleep", duration = 1e-4, '
             'budget = 0.01, policy = "fifo", priority = 3, dma_latency = 0} '
             'print(tostring(r)) print(msg) print(name)')
    r = subprocess.run(["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups",
                        "--inh-caps=-all", "--bounding-set=-all", lua, "-e", probe],
                       capture_output=True, text=True, timeout=60, env=env, cwd="/")
    assert r.returncode == 0, r.stderr
    res, msg, name = r.stdout.splitlines()
    assert (res, name) == ("nil", "EPERM"), r.stdout
    assert msg.startswith("EPERM: ") and msg.endswith(f" ({REFUSED_WORDS})"), msg


def test_refused_sweep_point_is_named_alike_by_python_and_lua():
    """A sweep's failed point: the core's words with the point named
    (SLEEPACC_RUN_POINT), Python's sweep as Lua's (test_lua_oserrors)."""
    py = as_nobody(lambda: outcome(lambda: list(sleepacc.sweep(
        ["nanosleep"], [1e-4], budget=0.01, policy="rr"))))
    assert py["type"] == "PermissionError" and py["errno"] == errno.EPERM and py["unchanged"], py
    assert py["msg"].startswith("[Errno 1] EPERM: ") and py["msg"].endswith(
        " (policy='rr' (priority 1) needs CAP_SYS_NICE or an RLIMIT_RTPRIO/RLIMIT_NICE allowance, "
        "method nanosleep, duration 100000 ns)"), py["msg"]


# ------------------------------------------------------------------ spin under FIFO/RR

@pytest.mark.parametrize("policy", ["fifo", "rr"])
@pytest.mark.parametrize("method", ["spin", "hybrid", "sched_yield"])
def test_spin_under_realtime_needs_a_budget(method, policy):
    before = thread_state()
    with pytest.raises(ValueError, match="budget"):
        sleepacc.measure(method, 1e-4, n=10, budget=None, policy=policy)
    assert thread_state() == before


@pytest.mark.parametrize("policy", ["fifo", "rr"])
def test_spin_under_realtime_with_budget_is_bounded(policy):
    if os.geteuid() != 0:
        pytest.skip("SCHED_FIFO/RR needs CAP_SYS_NICE (root here)")
    before = thread_state()
    t0 = time.monotonic()
    m = sleepacc.measure("spin", 0.05, budget=0.2, policy=policy, priority=1)
    elapsed = time.monotonic() - t0
    assert thread_state() == before, "policy not restored"
    assert m.n >= 1 and m.env["policy"] == policy
    assert 0.2 <= elapsed < 1.0, elapsed


# ------------------------------------------------------------------ no shelling out

# (module, kind, call) allowed to start processes: only the exporter's doctor,
# which runs this interpreter on its own module (sys.executable -m
# sleepacc._doctor_child, no shell, an argument list) so that the doctor's
# imports and the memory its checks lock leave with the child.
ALLOWED_PROCESS_CALLS: set = {("_doctor_child.py", "import", "subprocess"),
                              ("_doctor_child.py", "call", "subprocess.Popen")}
PROCESS_MODULES = {"subprocess", "pty", "commands", "popen2"}
PROCESS_FUNCS = {"system", "popen", "popen2", "popen3", "spawnl", "spawnle", "spawnlp",
                 "spawnlpe", "spawnv", "spawnve", "spawnvp", "spawnvpe", "posix_spawn",
                 "posix_spawnp", "execl", "execle", "execlp", "execlpe", "execv", "execve",
                 "execvp", "execvpe", "Popen", "run", "call", "check_call", "check_output",
                 "getoutput", "getstatusoutput", "spawn", "startfile"}


def _process_uses(path):
    tree = ast.parse(path.read_text(), str(path))
    uses = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            uses |= {("import", a.name) for a in node.names
                     if a.name.split(".")[0] in PROCESS_MODULES}
        elif isinstance(node, ast.ImportFrom) and node.module and \
                node.module.split(".")[0] in PROCESS_MODULES | {"os"}:
            uses |= {("from", f"{node.module}.{a.name}") for a in node.names
                     if node.module.split(".")[0] in PROCESS_MODULES or a.name in PROCESS_FUNCS}
        elif isinstance(node, ast.Call):
            f = node.func
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and \
                    f.value.id in PROCESS_MODULES | {"os"} and f.attr in PROCESS_FUNCS:
                uses.add(("call", f"{f.value.id}.{f.attr}"))
    return {(path.name, kind, what) for kind, what in uses}


def test_nothing_shells_out():
    files = sorted(PACKAGE.rglob("*.py"))   # the subpackages (cli/) too
    assert len(files) >= 5
    found = set().union(*(_process_uses(p) for p in files))
    assert found <= ALLOWED_PROCESS_CALLS, f"process-starting code in sleepacc: {found}"
    # and the scanner does see such code (a check that cannot fail is a defect)
    probe = PACKAGE.parent.parent / "build" / "reliability-probe.py"
    probe.parent.mkdir(parents=True, exist_ok=True)
    probe.write_text("import subprocess, os\nos.system('x')\nsubprocess.run(['x'])\n")
    try:
        assert len(_process_uses(probe)) == 3
    finally:
        probe.unlink()


# ------------------------------------------------------------------ /proc and /sys only

STRACE_PROBE = r'''
import os, sleepacc
os.write(2, b"@@facts-begin@@\n")
facts = sleepacc.system_info()
clocks = sleepacc.clock_info()
os.write(2, b"@@facts-end@@\n")
assert facts and clocks
'''


def test_host_facts_read_only_proc_and_sys(tmp_path):
    strace = shutil.which("strace")
    if strace is None:
        pytest.skip("strace is not installed (Debian package strace; `make deps` installs it)")
    log = tmp_path / "strace.log"
    env = dict(os.environ)
    # under sanitize-python the traced interpreter keeps libasan, strace does not
    preload = env.pop("LD_PRELOAD", None)
    r = subprocess.run([strace, "-f", "-qq", "-o", str(log), "-e",
                        "trace=open,openat,openat2,execve,write", "-s", "200",
                        *(["-E", f"LD_PRELOAD={preload}"] if preload else []),
                        sys.executable, "-c", STRACE_PROBE],
                       capture_output=True, text=True, timeout=120, env=env)
    if r.returncode != 0 and "ptrace" in r.stderr:
        pytest.skip(f"strace cannot trace here: {r.stderr.strip()}")
    assert r.returncode == 0, r.stderr
    lines = log.read_text().splitlines()
    begin = next(i for i, ln in enumerate(lines) if 'write(2, "@@facts-begin@@' in ln)
    end = next(i for i, ln in enumerate(lines) if 'write(2, "@@facts-end@@' in ln)
    window = lines[begin + 1:end]
    opened = [m.group(1) for ln in window
              for m in [re.search(r'open(?:at2?)?\((?:[A-Z_]+|\d+), "([^"]*)"', ln)] if m]
    opened += [m.group(1) for ln in window for m in [re.search(r'\bopen\("([^"]*)"', ln)] if m]
    assert opened, "no file was opened between the markers (strace filter broken?)"
    outside = [p for p in opened if not p.startswith(("/proc/", "/sys/"))]
    assert not outside, f"facts read from outside /proc and /sys: {outside}"
    assert not [ln for ln in window if "execve(" in ln], "something was executed"
