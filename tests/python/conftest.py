"""Shared helpers of the Python suite: the calling thread's state (timer
slack, scheduling policy, affinity), read from the OS, not from sleepacc."""
import contextlib
import json
import os
from pathlib import Path
import signal
import threading
import time

import pytest

# The Ctrl-C tests need SIGINT's ordinary disposition.  A run started as a
# background job of a non-interactive shell inherits SIGINT ignored: Python
# then installs no KeyboardInterrupt handler, and every child it starts
# ignores SIGINT too, so a test's SIGINT would be lost and its 30 s measure
# run to the end.  Install what Python installs at a normal start.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

# `make sanitize-python` runs this process over the ASan/UBSan build of the
# extension (libasan preloaded, the build first on PYTHONPATH).  Child
# processes that tests start (the CLI, notebook kernels, privilege drops)
# run the normal build instead: an instrumented interpreter per child would
# make the run many times slower and sanitizes nothing new (the same C runs
# in this process).
SANITIZED = bool(os.environ.pop("SLEEPACC_SANITIZE_RUN", None))
if SANITIZED:
    for _var in ("LD_PRELOAD", "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS", "PYTHONMALLOC",
                 "PYTHONPATH"):
        os.environ.pop(_var, None)


ROOT = Path(__file__).resolve().parents[2]
LUA_MODULE = ROOT / "build" / "lua" / "sleepacc.so"


def child_env(**extra):
    """The environment for make and lua5.4: without the sanitizer settings
    `make sanitize-python` gives this interpreter (LD_PRELOAD=libasan would
    follow into gcc and lua5.4; the Lua module is checked under valgrind)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "ASAN_OPTIONS", "LSAN_OPTIONS", "UBSAN_OPTIONS",
                        "PYTHONMALLOC")}
    env.update(extra)
    return env


def lua54_with_module():
    """The lua5.4 interpreter, with the Lua module built for it (make
    lua-module); the test skips naming what is missing."""
    import shutil
    import subprocess
    lua = shutil.which("lua5.4")
    if lua is None:
        pytest.skip("lua5.4 is missing (Debian package lua5.4)")
    build = subprocess.run(["make", "-s", "-C", str(ROOT), "lua-module"], env=child_env(),
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stdout + build.stderr
    return lua


def thread_slack_ns(tid=None):
    """Timer slack of thread `tid` (default: the calling thread) from /proc.
    /proc/<tid>/timerslack_ns reads that thread's value (Linux has no
    task/<tid>/timerslack_ns entry)."""
    tid = threading.get_native_id() if tid is None else tid
    paths = (f"/proc/self/task/{tid}/timerslack_ns", f"/proc/{tid}/timerslack_ns")
    for path in paths:
        try:
            with open(path) as f:
                return int(f.read())
        except FileNotFoundError:
            continue
    raise FileNotFoundError(paths[-1])


def thread_slice_ns():
    """The calling thread's scheduler slice (se.slice of
    /proc/thread-self/sched, a scheduler-debug kernel's), or None."""
    try:
        with open("/proc/thread-self/sched") as f:
            for line in f:
                if line.startswith("se.slice"):
                    return int(line.split(":")[1])
    except (OSError, ValueError):
        pass
    return None


def thread_state():
    """(slack, policy, priority, affinity, slice) of the calling thread."""
    return (thread_slack_ns(), os.sched_getscheduler(0), os.sched_getparam(0).sched_priority,
            frozenset(os.sched_getaffinity(0)), thread_slice_ns())


@pytest.fixture
def unchanged_thread():
    """Asserts at teardown that the test left the thread as it found it."""
    before = thread_state()
    yield before
    assert thread_state() == before


@contextlib.contextmanager
def counting_thread():
    """A thread counting as fast as it can while the block runs: yields its
    count (a one-element list, read as count[0]); stopped and joined on
    exit.  It advances only while this thread does not hold the GIL."""
    count = [0]
    stop = threading.Event()

    def counter():
        while not stop.is_set():
            count[0] += 1

    t = threading.Thread(target=counter)
    t.start()
    try:
        yield count
    finally:
        stop.set()
        t.join()


def interrupt_after(delay, seen):
    """SIGINT to the main thread after `delay` s (a started threading.Timer,
    returned); records in `seen` when it was sent ("sent", monotonic) and
    the main thread's timer slack just before sending ("slack_during")."""
    main = threading.main_thread()

    def fire():
        seen["slack_during"] = thread_slack_ns(main.native_id)
        seen["sent"] = time.monotonic()
        signal.pthread_kill(main.ident, signal.SIGINT)

    timer = threading.Timer(delay, fire)
    timer.start()
    return timer


def read_child_report(r, pid):
    """Read a forked child's report from pipe fd r to its end, close r and
    reap the child: (the bytes, the wait status)."""
    chunks = []
    while True:
        b = os.read(r, 1 << 16)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    return b"".join(chunks), status


def run_forked(child):
    """Fork; the child runs child() and sends back the dict it returns (as
    JSON), then exits.  An exception in the child fails the test here (its
    repr reported); so does a child that did not exit 0.  Returns the dict."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 0
        try:
            os.close(r)
            os.write(w, json.dumps(child()).encode())
        except BaseException as e:  # noqa: BLE001 - reported to the parent
            os.write(w, json.dumps({"child_error": repr(e)}).encode())
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    raw, status = read_child_report(r, pid)
    out = json.loads(raw or b"{}")
    assert "child_error" not in out, out
    assert os.waitstatus_to_exitcode(status) == 0
    return out


# Lua for the parity tests: `sa` loaded, and show(name, t [, values]) prints
# one line "<name> key=type key=type ..." (nested keys dotted, integers
# "int", floats "float", "=value" appended when values is true; samples
# "buffer"; sleeper margins left out), sorted.
LUA_WALK = r"""
local sa = require "sleepacc"
local function walk(prefix, t, out, values)
  for k, v in pairs(t) do
    local key = prefix .. tostring(k)
    if k == "samples" then
      out[#out + 1] = key .. "=buffer"
    elseif type(v) == "table" and k ~= "margins" then walk(key .. ".", v, out, values)
    elseif k ~= "margins" then
      local ty = type(v)
      if ty == "number" then ty = math.type(v) == "integer" and "int" or "float" end
      if ty == "boolean" then ty = "bool" elseif ty == "string" then ty = "str" end
      out[#out + 1] = key .. "=" .. ty .. (values and ("=" .. tostring(v)) or "")
    end
  end
  return out
end
local function show(name, t, values)
  local out = walk("", t, {}, values)
  table.sort(out)
  print(name .. " " .. table.concat(out, " "))
end
"""


# `make test` runs this suite on several pytest-xdist workers.  Tests that
# use something only one process on the host can hold (irtt's fixed UDP port
# 2112, which flent's UDP ping and the irtt recipes use) share one worker
# and so run one after another.
ONE_AT_A_TIME = {"test_flent.py": "irtt-port", "test_monitor.py": "irtt-port"}


def pytest_collection_modifyitems(config, items):
    for item in items:
        group = ONE_AT_A_TIME.get(item.path.name)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
