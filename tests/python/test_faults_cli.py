"""The `sleepacc` command in a hostile process environment, run for real in
a child: a closed standard output or error (as cron and daemon wrappers
leave them), a reader that leaves the pipe, /dev/full, an allocation that
fails, an ASCII-only standard output, a results directory deleted while a
sweep runs, and a figure name that is not UTF-8.

What is checked: each ends with one line on the stream that is left (never
a traceback) and the documented exit code (2 for a usage error, 1 for a
failure), and what was measured before the failure is kept (the -o file,
the table).  Budgets are tiny: no number measured is checked here.
"""

import json
import os
import subprocess
import sys
import time

import pytest

SMALL = ["--methods", "nanosleep,spin", "--durations", "0,10us", "--budget", "0.02"]
COMMANDS = [
    ["info"], ["doctor", "--top", "1", "--budget", "0.02"], ["sweep", *SMALL],
    ["measure", "nanosleep", "10us", "--budget", "0.02"],
]


def child_env(**extra):
    env = dict(os.environ)
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    env.update(extra)
    return env


def sleepacc_cmd(*args):
    return [sys.executable, "-m", "sleepacc", *map(str, args)]


def run_closed(args, closed, timeout=120, **kw):
    """The command with descriptor `closed` (1 or 2) closed, as `cmd >&-`
    leaves it; the other stream captured."""
    def close():
        os.close(closed)
    other = {"stdout": subprocess.PIPE} if closed == 2 else {"stderr": subprocess.PIPE}
    if closed == 2:
        other["stderr"] = None
    p = subprocess.run(sleepacc_cmd(*args), preexec_fn=close, timeout=timeout,
                       env=child_env(), text=True, **other, **kw)
    return p


def one_line(text):
    lines = [ln for ln in text.splitlines() if ln.strip()]
    assert "Traceback" not in text, text
    return lines


@pytest.mark.parametrize("args", COMMANDS + [["report", "/nonexistent/x.jsonl"]],
                         ids=lambda a: a[0])
def test_closed_stdout_is_one_line_not_a_traceback(args):
    p = run_closed(args, 1)
    lines = one_line(p.stderr)
    assert p.returncode == 1, p.stderr
    assert len(lines) <= 2, p.stderr   # sweep says how many points it measured first
    assert lines[-1].startswith("sleepacc: error: "), p.stderr


def test_closed_stdout_usage_error_exits_2():
    p = run_closed(["sweep", "--no-such-flag"], 1)
    assert p.returncode == 2
    assert one_line(p.stderr) == ["sleepacc: error: unrecognized arguments: --no-such-flag"]


def test_closed_stderr_error_goes_to_stdout():
    p = run_closed(["sweep", "--no-such-flag"], 2)
    assert p.returncode == 2
    assert one_line(p.stdout) == ["sleepacc: error: unrecognized arguments: --no-such-flag"]


def test_closed_stdout_sweep_keeps_its_file(tmp_path):
    out = tmp_path / "r.jsonl"
    p = run_closed(["sweep", *SMALL, "-o", out], 1)
    assert p.returncode == 1
    assert one_line(p.stderr)[-1] == ("sleepacc: error: cannot write to the standard output: "
                                      "it is closed")
    kinds = [json.loads(ln)["type"] for ln in out.read_text().splitlines()]
    assert kinds.count("point") == 4 and kinds[-1] == "footer"


def test_dev_full_is_one_line():
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    with open("/dev/full", "w") as full:
        p = subprocess.run(sleepacc_cmd("info"), stdout=full, stderr=subprocess.PIPE,
                           text=True, timeout=120, env=child_env())
    assert p.returncode == 1
    assert len(one_line(p.stderr)) == 1 and "No space left" in p.stderr


def test_broken_pipe_is_quiet():
    p = subprocess.Popen(sleepacc_cmd("report", "--format", "csv", "-"), stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=child_env())
    p.stdout.close()      # the reader left before anything was written
    _out, err = p.communicate(b"", timeout=120)
    assert b"Traceback" not in err
    assert p.returncode in (1, 2)


def test_broken_pipe_after_output_is_quiet(tmp_path):
    r, w = os.pipe()
    os.close(r)           # no reader at all
    try:
        p = subprocess.run(sleepacc_cmd("info"), stdout=w, stderr=subprocess.PIPE,
                           timeout=120, env=child_env())
    finally:
        os.close(w)
    assert b"Traceback" not in p.stderr and b"Exception ignored" not in p.stderr
    assert p.returncode == 1


def test_out_of_memory_is_one_line():
    # report's reading allocates more than the address space allows
    code = ("import sys, sleepacc.cli.report as r\n"
            "r.load = lambda path: bytearray(1 << 62)\n"
            "from sleepacc.cli import main\n"
            "sys.exit(main(['report', 'x.jsonl']))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, env=child_env())
    assert p.returncode == 1
    assert one_line(p.stderr) == ["sleepacc: error: out of memory"]


def test_out_of_memory_under_rlimit_as_is_one_line(tmp_path):
    # a real limit of the address space, set in the child once it is started
    code = ("import resource, sys\n"
            "from sleepacc.cli import main\n"
            "import sleepacc.cli.info, sleepacc.cli.report\n"
            "import sleepacc.cli.report as r\n"
            "big = 1 << 34\n"
            "r.load = lambda path: [bytearray(1 << 26) for _ in range(big >> 26)]\n"
            "soft, hard = resource.getrlimit(resource.RLIMIT_AS)\n"
            "resource.setrlimit(resource.RLIMIT_AS, (4 << 30, hard))\n"
            "sys.exit(main(['report', 'x.jsonl']))\n")
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       timeout=120, env=child_env())
    if "libasan" in os.environ.get("LD_PRELOAD", ""):
        pytest.skip("ASan reserves address space of its own")
    assert p.returncode == 1, p.stderr
    assert one_line(p.stderr) == ["sleepacc: error: out of memory"]


def test_ascii_stdout_keeps_the_sweep(tmp_path):
    p = subprocess.run(sleepacc_cmd("sweep", *SMALL), capture_output=True, timeout=120,
                       env=child_env(PYTHONIOENCODING="ascii"))
    assert p.returncode == 0, p.stderr
    assert b"Traceback" not in p.stderr
    assert b"nanosleep" in p.stdout and b"spin" in p.stdout
    p.stdout.decode("ascii")     # every byte is ASCII: what it lacks is escaped


def test_ascii_stdout_report_does_not_blame_the_file(tmp_path):
    out = tmp_path / "r.jsonl"
    p = subprocess.run(sleepacc_cmd("sweep", *SMALL, "-o", out, "--format", "none"),
                       capture_output=True, timeout=120, env=child_env())
    assert p.returncode == 0, p.stderr
    p = subprocess.run(sleepacc_cmd("report", out), capture_output=True, timeout=120,
                       env=child_env(PYTHONIOENCODING="ascii", LC_ALL="C"))
    assert p.returncode == 0, p.stderr
    assert b"not a sleepacc result file" not in p.stderr and str(out).encode() not in p.stderr
    p.stdout.decode("ascii")


def test_in_process_main_restores_the_streams(capsys):
    from sleepacc.cli import main
    before = (sys.stdout, sys.stderr, getattr(sys.stdout, "errors", None))
    assert main(["sweep", "--no-such-flag"]) == 2
    assert (sys.stdout, sys.stderr, getattr(sys.stdout, "errors", None)) == before


def test_results_directory_deleted_mid_sweep_keeps_the_table(tmp_path):
    d = tmp_path / "out"
    d.mkdir()
    out = d / "r.jsonl"
    args = ["--methods", "nanosleep,spin", "--durations", "0,10us,1ms,2ms",
            "--budget", "0.3", "-o", out]
    p = subprocess.Popen(sleepacc_cmd("sweep", *args), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=child_env())
    try:
        deadline = time.monotonic() + 60
        while not out.exists() and time.monotonic() < deadline and p.poll() is None:
            time.sleep(0.01)
        assert out.exists(), "the sweep never opened its file"
        out.unlink()
        d.rmdir()
        stdout, stderr = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert "Traceback" not in stderr
    assert p.returncode == 1, stderr
    rows = [ln for ln in stdout.splitlines() if ln.startswith(("nanosleep", "spin"))]
    assert len(rows) == 8, stdout
    last = one_line(stderr)[-1]
    assert last.startswith(f"sleepacc: error: {out} was removed while the sweep ran")
    assert "no longer exists" in last and "cannot read" not in stderr


def _block_rt_signals():
    import signal
    signal.pthread_sigmask(signal.SIG_BLOCK, range(signal.SIGRTMIN, signal.SIGRTMAX + 1))


def test_default_sweep_under_a_blocked_mask_says_what_it_leaves_out(tmp_path):
    # a blocked signal mask survives exec: the child starts with every
    # real-time signal blocked, as a worker thread's child does
    out = tmp_path / "r.jsonl"
    p = subprocess.run(sleepacc_cmd("sweep", "--durations", "1us", "--budget", "0.01",
                                    "-o", out, "--format", "none"),
                       preexec_fn=_block_rt_signals, capture_output=True, text=True,
                       timeout=300, env=child_env())
    assert p.returncode == 0, p.stderr
    skipped = [ln for ln in p.stderr.splitlines() if ln.startswith("sleepacc: skipping ")]
    names = [ln.split()[2].rstrip(":") for ln in skipped]
    assert "timer_signal" in names, p.stderr
    assert all("blocked" in ln for ln in skipped), skipped
    lines = [json.loads(ln) for ln in out.read_text().splitlines()]
    listed = lines[0]["settings"]["methods"]
    measured = {ln["method"] for ln in lines if ln["type"] == "point"}
    assert not set(names) & set(listed), listed
    assert set(listed) == measured


def test_named_methods_print_no_skip_lines(tmp_path):
    p = subprocess.run(sleepacc_cmd("sweep", "--methods", "nanosleep", "--durations", "1us",
                                    "--budget", "0.01", "--format", "none"),
                       preexec_fn=_block_rt_signals, capture_output=True, text=True,
                       timeout=120, env=child_env())
    assert p.returncode == 0, p.stderr
    assert "skipping" not in p.stderr


def test_plot_to_a_name_that_is_not_utf8(tmp_path):
    pytest.importorskip("matplotlib", reason="plot needs matplotlib")
    data = tmp_path / "r.jsonl"
    p = subprocess.run(sleepacc_cmd("sweep", *SMALL, "-o", data, "--format", "none"),
                       capture_output=True, timeout=120, env=child_env())
    assert p.returncode == 0, p.stderr
    name = os.fsencode(tmp_path) + b"/\xff.png"
    cmd = [os.fsencode(a) for a in sleepacc_cmd("plot", data, "--kind", "error", "-o")] + [name]
    p = subprocess.run(cmd, capture_output=True, timeout=120, env=child_env())
    assert p.returncode == 0, p.stderr
    assert b"Traceback" not in p.stderr
    with open(name, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    assert [e for e in os.listdir(os.fsencode(tmp_path)) if e != b"r.jsonl"] == [b"\xff.png"]


def test_closed_stdout_refuses_results_to_it_before_measuring():
    # -o - on a closed standard output: said before anything runs, not
    # written into the /dev/null that holds its descriptor
    p = run_closed(["sweep", *SMALL, "-o", "-"], 1)
    assert p.returncode == 1
    assert one_line(p.stderr) == ["sleepacc: error: cannot write results to the standard "
                                  "output (-o -): it is closed"]
