"""`sleepacc trace`, run for real: `python -m sleepacc trace` in a subprocess.

What is checked (invariants, no latency figures): the table names every
term, the complete count and the traced and untraced lateness, in lines of
at most 80 columns; --json is the Trace's dict and reads back with
Trace.from_dict; bad input is refused naming the argument as typed (exit 2)
before tracefs is touched; unprivileged (setpriv to nobody) the command
prints one line naming `trace` and what it needs, exits non-zero, shows no
traceback, and leaves the top-level tracefs files as they were.  Runs that
trace need root and tracefs: skipped with the reason elsewhere.
"""
import json
import os
import shutil
import subprocess
import sys

import pytest

from sleepacc.trace import Trace
from conftest import child_env
from test_trace import REASON, TERMS, snapshot

needs_trace = pytest.mark.skipif(REASON is not None, reason=REASON or "")


def run(*args, timeout=120, prefix=()):
    return subprocess.run([*prefix, sys.executable, "-m", "sleepacc", "trace", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=child_env(),
                          cwd="/")


@needs_trace
def test_table_has_every_term_and_fits_80_columns():
    before = snapshot()
    out = run("nanosleep", "1ms", "-n", 30, "--slack", "50us")
    assert out.returncode == 0, out.stderr
    for name in TERMS + ("timer_irq idle", "timer_irq busy", "lateness traced",
                         "lateness untraced"):
        assert name in out.stdout
    assert "/30 samples complete" in out.stdout
    assert all(len(line) <= 80 for line in out.stdout.splitlines())
    assert snapshot() == before


@needs_trace
def test_json_is_the_traces_dict():
    out = run("timerfd", "1ms", "-n", 10, "--json")
    assert out.returncode == 0, out.stderr
    d = json.loads(out.stdout)
    assert d["schema"] == "sleepacc-trace/1" and d["method"] == "timerfd" and d["n"] == 10
    assert set(d["terms"]) == set(TERMS)
    assert Trace.from_dict(d).to_dict() == d


@pytest.mark.parametrize("argv, named, typed", [
    (("nanosleep", "1ms", "-n", "30000"), "-n", "30000"),
    (("nanosleep", "1ms", "--slack", "0"), "--slack", "0"),
    (("nanosleep", "1ms", "--cpu", "100000"), "--cpu", "100000"),
    (("no_such_method", "1ms", "-n", "3"), "METHOD", "no_such_method"),
    (("nanosleep", "-1ms"), "DURATION", "-1ms"),
    (("nanosleep", "1ms", "--budget", "abc"), "--budget", "abc"),
])
def test_bad_input_is_refused_naming_the_argument(argv, named, typed):
    before = snapshot() if REASON is None else None
    out = run(*argv)
    assert out.returncode == 2, out.stdout + out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and named in lines[0] and typed in lines[0], out.stderr
    assert out.stdout == ""
    if before is not None:
        assert snapshot() == before


@needs_trace
def test_unprivileged_is_one_line_naming_trace_and_what_it_needs():
    setpriv = shutil.which("setpriv")
    if os.geteuid() != 0 or not setpriv:
        pytest.skip("needs root and setpriv to drop to nobody")
    before = snapshot()
    out = run("nanosleep", "1ms", "-n", 5,
              prefix=(setpriv, "--reuid=nobody", "--regid=nogroup", "--clear-groups"))
    assert out.returncode != 0
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert "trace" in lines[0] and "root" in lines[0] and "CAP_DAC_OVERRIDE" in lines[0]
    assert "Traceback" not in out.stderr and out.stdout == ""
    assert snapshot() == before
