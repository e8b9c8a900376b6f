"""The `sleepacc` command, run for real: `python -m sleepacc` in a subprocess.

What is checked: every output format is what sleepacc.report renders (and
json/csv parse back, the irtt header is irtt's); result files survive
SIGKILL (three kills at random moments, each resumed: every point exactly
once, every finished point kept byte for byte, a torn line dropped);
Ctrl-C exits 130 within 0.5 s with a parseable file; bad invocations exit 2
with one line naming the argument; a full disk exits 1 with the points
already written intact; monitor prints one line per report interval; info,
doctor, compare and plot work end to end.  Budgets are tiny: the numbers
measured are not checked here, only the command's behaviour.
"""
import csv
import io
import json
import os
import platform
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

import pytest

import sleepacc
from sleepacc import report
from conftest import ROOT

# Under `make sanitize-python` every child starts a preloaded ASan runtime
# (seconds each).  Tests of argument parsing and text formatting run no C
# code that ASan would check, so they run in `make test` only.
UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")
python_only = pytest.mark.skipif(UNDER_ASAN, reason="pure Python (argparse, formatting): "
                                 "checked by make test, nothing for ASan to check")

# A small sweep: 2 methods x 3 durations, quick at any budget.
SMALL = ["--methods", "nanosleep,spin", "--durations", "0,10us,1ms", "--budget", "0.02"]


def child_env():
    """The environment of the commands run here.  Under `make sanitize-python`
    they inherit ASan; its exit-time leak check would report what the
    interpreter itself never frees (a CLI child imports far more than the
    suppressions cover), so children keep every other ASan check but not
    that one -- leaks of the binding are checked in-process by the API tests."""
    env = dict(os.environ)
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    return env


def run(*args, timeout=120, **kw):
    """Run `python -m sleepacc args...`; CompletedProcess with text output."""
    return subprocess.run([sys.executable, "-m", "sleepacc", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=child_env(), **kw)


def start(*args, **kw):
    return subprocess.Popen([sys.executable, "-m", "sleepacc", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=child_env(), **kw)


def lines_of(path):
    """The whole lines of a JSON Lines file, parsed (a torn tail is left out)."""
    data = path.read_bytes()
    whole = data[: data.rfind(b"\n") + 1].decode()
    return [json.loads(line) for line in whole.splitlines()]


def point_keys(path):
    return [(r["method"], r["mode"], r["requested_ns"]) for r in lines_of(path)
            if r.get("type") == "point"]


def wait_for_points(path, k, proc, timeout=30):
    """Wait until `path` holds at least k points (or the process ended)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and proc.poll() is None:
        if path.exists() and len(point_keys(path)) >= k:
            return True
        time.sleep(0.01)
    return False


@pytest.fixture(scope="module")
def small_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "small.jsonl"
    r = run("sweep", *SMALL, "-o", path, "--format", "none")
    assert r.returncode == 0, r.stderr
    return path


# ---------------------------------------------------------------- formats

@python_only
@pytest.mark.parametrize("fmt", ["irtt", "midas", "xmame", "testsleep", "wide", "markdown",
                                 "csv", "json"])
def test_report_prints_what_sleepacc_report_renders(small_file, fmt):
    r = run("report", small_file, "--format", fmt)
    assert r.returncode == 0, r.stderr
    assert r.stdout == report.format(sleepacc.load(small_file), fmt)


@python_only
def test_a_point_without_a_median_is_named_as_such_exit_1(small_file, tmp_path):
    """A point whose stats.median is null is not irtt's mean-only table: the
    message says what the point lacks, as a data error (exit 1)."""
    lines = small_file.read_text().splitlines()
    out = []
    for line in lines:
        d = json.loads(line)
        if d["type"] == "point" and d["method"] == "nanosleep" and d["requested_ns"] == 1_000_000:
            d["stats"]["median"] = None
        out.append(json.dumps(d))
    path = tmp_path / "nullmed.jsonl"
    path.write_text("\n".join(out) + "\n")
    r = run("report", path)
    msg = r.stderr.rstrip("\n")
    assert r.returncode == 1 and "\n" not in msg, msg
    assert msg.startswith(f"sleepacc: error: {path}: the point nanosleep(1ms) has no median "
                          "(null in the file)"), msg
    assert "irtt's table" not in msg and "Nonens" not in msg, msg
    assert run("report", path, "--format", "json").returncode == 0   # json shows what is there


IRTT_TABLE = """Testing sleep accuracy...

Sleep Duration        Mean Error       % Error
           1ns          13.353µs     1335336.9
         100µs          60.081µs          60.1
           1ms          62.314µs           6.2
"""


@pytest.fixture(scope="module")
def pointless(small_file, tmp_path_factory):
    """Files without a point: a header only, and a monitor -o file."""
    d = tmp_path_factory.mktemp("pointless")
    hdr = d / "hdr.jsonl"
    hdr.write_text(small_file.read_text().splitlines()[0] + "\n")
    mon = d / "mon.jsonl"
    r = run("monitor", "--interval", "10ms", "--report", "0.1s", "--duration", "0.25s", "-o", mon,
            timeout=30)
    assert r.returncode == 0, r.stderr
    return hdr, mon


@python_only
@pytest.mark.parametrize("argv,what", [
    (["report", "{hdr}"], "report"), (["report", "{mon}"], "report"),
    (["compare", "{hdr}", "{small}"], "compare"), (["doctor", "--from", "{hdr}"], "diagnose from"),
    (["model", "{hdr}"], "fit"), (["plot", "{hdr}", "-o", "{tmp}/x.png"], "plot")])
def test_a_file_without_points_is_one_line_exit_1(pointless, small_file, tmp_path, argv, what):
    """Every command that reads a result file says the same when it has no
    point: a data error, exit 1, naming the file; nothing printed."""
    hdr, mon = pointless
    names = {"hdr": hdr, "mon": mon, "small": small_file, "tmp": tmp_path}
    argv = [a.format(**names) for a in argv]
    path = mon if str(mon) in argv else hdr
    r = run(*argv, timeout=60)
    msg = r.stderr.rstrip("\n")
    assert r.returncode == 1 and r.stdout == "" and "\n" not in msg, (argv, r.stdout, msg)
    assert msg.startswith(f"sleepacc: error: {path} has no points to {what}"), msg
    if path == mon:
        assert "monitor -o file" in msg, msg


@python_only
def test_model_of_irtts_means_only_says_it_has_nothing_to_fit(tmp_path):
    path = tmp_path / "a.irtt"
    path.write_text(IRTT_TABLE)
    assert len(sleepacc.load(path)) == 3
    r = run("model", path)
    msg = r.stderr.rstrip("\n")
    assert r.returncode == 1 and r.stdout == "" and "\n" not in msg, (r.stdout, msg)
    assert msg == (f"sleepacc: error: {path} has no points the model can fit (irtt's table "
                   "holds means only; the model fits medians and tails)"), msg


@python_only
def test_model_method_narrows_the_json_too_and_an_empty_name_is_refused(small_file):
    # --method was applied to the text only: --json gave every method
    r = run("model", small_file, "--method", "nanosleep", "--json")
    assert r.returncode == 0, r.stderr
    assert list(json.loads(r.stdout)["methods"]) == ["nanosleep"]
    seeds = ROOT / "tests" / "data" / "seed_results.csv"
    r = run("model", seeds, "--method", "usleep", "--json")
    groups = json.loads(r.stdout)["groups"]
    assert groups and all(list(g["methods"]) == ["usleep"] for g in groups), r.stdout[:300]
    # an empty name named nothing and so showed every method (model), or
    # was looked up in the files (compare)
    for argv in (["model", small_file], ["compare", small_file, small_file]):
        r = run(*argv, "--method", "")
        assert r.returncode == 2 and r.stdout == "", (argv, r.stdout[:200])
        assert r.stderr == "sleepacc: error: argument --method: must be a method name, got ''\n"
    from sleepacc import model
    with pytest.raises(ValueError, match="no fit for method ''"):
        model.fit(sleepacc.load(small_file)).explain("")
    with pytest.raises(ValueError, match="no fit for method 'nosuch'"):
        model.fit_groups(seeds).explain("nosuch")


@python_only
def test_resume_warns_of_a_duplicate_point_once(small_file, tmp_path):
    # the file was read at open and again for the table: each warning twice
    lines = small_file.read_text().splitlines(keepends=True)
    path = tmp_path / "dup.jsonl"
    path.write_text("".join(lines[:-1] + [lines[1]]))       # no footer, point 1 again
    r = run("sweep", *SMALL, "-o", path, "--resume", "--format", "none")
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("duplicate point") == 1, r.stderr


def test_json_and_csv_parse_back(small_file):
    swept = sleepacc.load(small_file)
    rows = json.loads(run("report", small_file, "--format", "json").stdout)
    assert len(rows) == len(swept) == 6
    assert {(r["method"], r["requested_ns"]) for r in rows} == \
        {(m.method, m.requested_ns) for m in swept}
    table = list(csv.DictReader(io.StringIO(run("report", small_file, "--format", "csv").stdout)))
    assert len(table) == 6
    assert {r["method"] for r in table} == {"nanosleep", "spin"}


def test_sweep_irtt_format_is_irtt_sleeps_layout():
    r = run("sweep", "--methods", "nanosleep", "--durations", "1ns,10us,1ms", "--budget", "0.02",
            "--format", "irtt")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:3] == ["Testing sleep accuracy...", "",
                         "Sleep Duration        Mean Error       % Error"]
    assert [ln[:14].strip() for ln in lines[3:]] == ["1ns", "10µs", "1ms"]
    for ln in lines[3:]:
        # %14s%18s%14.1f, padded by characters as Go does
        assert len(ln) == 46 and re.fullmatch(r" *\S+ +\S+ +-?[0-9]+\.[0-9]", ln), ln


GO_DURATION = re.compile(r"-?[0-9]+(\.[0-9]+)?(ns|µs|ms|s)|-?[0-9]+m[0-9]+(\.[0-9]+)?s|0s")


def _irtt_shape(text):
    """irtt sleep's output with the measured numbers taken out: each line
    is kept as it is, except the rows, which become (requested, right edges
    of the three columns, the error's form); the error's unit follows its
    value, so only that it is a Go duration is kept."""
    assert text.endswith("\n"), repr(text[-40:])
    shape = []
    for line in text.splitlines():
        m = re.fullmatch(r"( *)(\S+)( +)(\S+)( +)(\S+)", line)
        if not m or not re.fullmatch(r"-?[0-9]+\.[0-9]", m.group(6)):
            shape.append(line)
            continue
        edges = [len(m.group(1)) + len(m.group(2))]
        edges.append(edges[0] + len(m.group(3)) + len(m.group(4)))
        edges.append(edges[1] + len(m.group(5)) + len(m.group(6)))
        err_form = "go-duration" if GO_DURATION.fullmatch(m.group(4)) else m.group(4)
        shape.append((m.group(2), tuple(edges), err_form))
    return shape


@python_only
def test_sweep_irtt_format_is_irtt_sleep_byte_for_byte():
    """Debian's irtt 0.9.0 `irtt sleep` (about 22 s; it takes no options)
    and `sleepacc sweep --methods nanosleep --format irtt` side by side:
    the same lines, header, widths, units, row count and order; only the
    measured numbers differ."""
    irtt = shutil.which("irtt")
    if irtt is None:
        pytest.skip("irtt is not installed (Debian package irtt; `make deps` installs it)")
    ref = subprocess.Popen([irtt, "sleep"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           stdin=subprocess.DEVNULL, text=True, encoding="utf-8")
    try:
        ours = run("sweep", "--methods", "nanosleep", "--format", "irtt", "--total", "3")
        ref_out, ref_err = ref.communicate(timeout=180)
    finally:
        if ref.poll() is None:
            ref.kill()
            ref.wait()
    assert ref.returncode == 0, ref_err
    assert ours.returncode == 0, ours.stderr
    want, got = _irtt_shape(ref_out), _irtt_shape(ours.stdout)
    rows = [x for x in want if isinstance(x, tuple)]
    assert [r[0] for r in rows] == ["1ns", "10ns", "100ns", "1µs", "10µs", "100µs", "1ms",
                                    "10ms", "100ms", "200ms", "500ms"], ref_out
    assert got == want, f"irtt sleep:\n{ref_out}\nsleepacc:\n{ours.stdout}"


def test_default_sweep_measures_floors_at_0_only():
    r = run("sweep", "--methods", "syscall,clock,nanosleep", "--total", "2", "--format", "json")
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    rows = rows["points"] if isinstance(rows, dict) else rows
    points = [(p["method"], p["requested_ns"]) for p in rows]
    assert points == [("syscall", 0), ("clock", 0)] + [
        ("nanosleep", d) for d in (1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000,
                                   100_000_000, 200_000_000, 500_000_000)], points


def test_sweep_json_format_parses_and_stdout_is_only_the_table():
    r = run("sweep", *SMALL, "--format", "json")
    assert r.returncode == 0, r.stderr
    assert len(json.loads(r.stdout)) == 6
    assert "ETA" not in r.stderr          # no progress line when not on a terminal


def test_periodic_sweep_skips_an_explicit_0_as_the_api_does():
    """The core's plan (sleepacc_sweep_plan) skips a duration of 0 in
    periodic mode (a period must be > 0): the CLI and sleepacc.sweep agree."""
    argv = ["--methods", "nanosleep", "--durations", "0,1ms", "--mode", "periodic"]
    r = run("sweep", *argv, "--budget", "0.02", "--format", "json")
    assert r.returncode == 0, r.stderr
    got = [(p["method"], p["requested_ns"]) for p in json.loads(r.stdout)]
    from sleepacc import _api
    assert got == [tuple(p) for p in _api.sweep_points(["nanosleep"], [0, 1e-3], "periodic")]
    assert got == [("nanosleep", 1_000_000)]


def test_progress_line_when_asked():
    r = run("sweep", "--methods", "nanosleep", "--durations", "1ms,2ms", "--budget", "0.02",
            "--progress", "--format", "none")
    assert r.returncode == 0, r.stderr
    assert "\x1b[K" in r.stderr and "ETA" in r.stderr and "0/2  nanosleep 1ms" in r.stderr


def test_progress_line_on_a_terminal():
    """On a terminal (a pty here) the progress line appears without asking."""
    import pty
    master, slave = pty.openpty()
    p = subprocess.Popen([sys.executable, "-m", "sleepacc", "sweep", "--methods", "nanosleep",
                          "--durations", "1ms,2ms", "--budget", "0.02", "--format", "none"],
                         stdin=subprocess.DEVNULL, stdout=slave, stderr=slave, env=child_env())
    os.close(slave)
    out = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:          # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    assert p.wait(timeout=60) == 0
    assert b"ETA" in out and b"\r" in out and b"0/2  nanosleep 1ms" in out


# ---------------------------------------------------------------- files that survive

def test_kill_and_resume_three_times(tmp_path):
    path = tmp_path / "kill.jsonl"
    # 15 points of 0.2 s: three kills, each at most ~0.4 s after a new point, leave at
    # least half the sweep to do, so no kill can come after its end (0.08 s a point did
    # once, on a loaded machine).
    args = ["sweep", "--methods", "nanosleep,clock_nanosleep_abs,select", "--durations",
            "0,10us,100us,1ms,5ms", "--budget", "0.2", "--format", "none", "-o", path]
    expected = {(m, "relative", d) for m in ("nanosleep", "clock_nanosleep_abs", "select")
                for d in (0, 10_000, 100_000, 1_000_000, 5_000_000)}
    rng = random.Random()
    seed = rng.randrange(1 << 30)
    rng.seed(seed)
    kept = {}                 # point key -> its line, as first seen on disk
    for kill in range(3):
        p = start(*args, *(["--resume"] if kill else []))
        assert wait_for_points(path, len(kept) + 1, p), f"seed {seed}: no progress"
        time.sleep(rng.uniform(0.0, 0.4))
        p.kill()
        p.wait()
        assert p.returncode == -signal.SIGKILL, f"seed {seed}: the sweep ended before the kill"
        recs = [r for r in lines_of(path) if r.get("type") == "point"]
        keys = [(r["method"], r["mode"], r["requested_ns"]) for r in recs]
        assert len(keys) == len(set(keys)), f"seed {seed}: a point twice after kill {kill}"
        for key, rec in zip(keys, recs):
            assert kept.setdefault(key, rec) == rec, f"seed {seed}: point {key} changed"
        assert set(kept) == set(keys), f"seed {seed}: a finished point was lost"
        if kill == 1:
            # A torn last line, as a kill in the middle of a write leaves it.
            with open(path, "ab") as f:
                f.write(b'{"type": "point", "method": "nanos')
    r = run(*args, "--resume")
    assert r.returncode == 0, f"seed {seed}: {r.stderr}"
    final = point_keys(path)
    assert sorted(final) == sorted(expected), f"seed {seed}"
    assert len(final) == len(set(final))
    recs = {(r["method"], r["mode"], r["requested_ns"]): r for r in lines_of(path)
            if r.get("type") == "point"}
    for key, rec in kept.items():
        assert recs[key] == rec
    assert len(sleepacc.load(path)) == len(expected)


def test_resume_of_a_complete_file_measures_nothing(small_file, tmp_path):
    copy = tmp_path / "copy.jsonl"
    copy.write_bytes(small_file.read_bytes())
    r = run("sweep", *SMALL, "-o", copy, "--resume", "--format", "wide")
    assert r.returncode == 0, r.stderr
    assert "0 points measured" in r.stderr
    assert copy.read_bytes().startswith(small_file.read_bytes())
    assert len(sleepacc.load(copy)) == 6


@pytest.mark.parametrize("method", ["nanosleep", "spin"])
def test_ctrl_c_exits_130_quickly_and_keeps_the_file(tmp_path, method):
    path = tmp_path / "int.jsonl"
    p = start("sweep", "--methods", method, "--durations", "1ms,10ms,100ms", "--budget", "20",
              "-o", path)
    # the header is on disk once the first point is being measured
    end = time.monotonic() + 30
    while not (path.exists() and path.stat().st_size > 0) and time.monotonic() < end:
        time.sleep(0.01)
    time.sleep(0.3)
    t0 = time.monotonic()
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=10)
    elapsed = time.monotonic() - t0
    assert p.returncode == 130, err
    # 0.5 s is the promise; an ASan-instrumented interpreter alone needs
    # about that long to tear itself down, so it gets more.
    assert elapsed <= (2.0 if UNDER_ASAN else 0.5), f"took {elapsed:.2f} s to stop"
    assert len(err.strip().splitlines()) == 1 and "interrupted" in err
    assert "--resume" in err
    swept = sleepacc.load(path)      # parses: header (and any finished point)
    assert swept.settings["methods"] == [method]


def test_full_disk_is_one_line_and_exit_1():
    r = run("sweep", *SMALL, "-o", "/dev/full")
    assert r.returncode == 1
    assert r.stderr.strip() == ("sleepacc: error: cannot write results to /dev/full: "
                                "No space left on device (ENOSPC)")


def test_write_failure_mid_sweep_keeps_written_points(tmp_path):
    """RLIMIT_FSIZE makes a write fail part-way, as a full disk does: the
    command stops with exit 1 and one line, and the file is cut back to its
    last whole line, so it parses with every point written before."""
    path = tmp_path / "limited.jsonl"
    header = len(json.dumps({"host": sleepacc.system_info()}))

    def limit():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)   # EFBIG instead of a signal
        resource.setrlimit(resource.RLIMIT_FSIZE, (header + 2500, header + 2500))

    r = subprocess.run([sys.executable, "-m", "sleepacc", "sweep", *SMALL, "-o", str(path)],
                       capture_output=True, text=True, timeout=120, preexec_fn=limit,
                       env=child_env())
    assert r.returncode == 1, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1
    assert r.stderr.startswith(f"sleepacc: error: cannot write results to {path}: ")
    data = path.read_bytes()
    assert data.endswith(b"\n")
    swept = sleepacc.load(path)
    assert 1 <= len(swept) < 6


# ---------------------------------------------------------------- usage errors

QUICK = ["--methods", "nanosleep", "--durations", "1ms", "--budget", "0.01"]
BAD = [
    (["sweep", "--durations", "5xs"], "--durations"),
    (["sweep", "--durations", "1ms,,2ms"], "--durations"),
    (["sweep", "--durations", "25h"], "--durations"),
    (["sweep", "--durations", "-1ms"], "--durations"),
    (["sweep", "--mode", "periodic", "--durations", "0"], "--durations"),
    (["sweep", "--budget", "-1"], "--budget"),
    (["sweep", "--budget", "0"], "--budget"),
    (["sweep", "--budget", "nan"], "--budget"),
    (["sweep", "--methods", "nope"], "--methods"),
    (["sweep", "--methods", "nanosleep,,spin"], "--methods"),
    (["sweep", "--mode", "sideways"], "--mode"),
    (["sweep", "--policy", "realtime"], "--policy"),
    (["sweep", "--priority", "5"], "--priority"),
    (["sweep", "--policy", "fifo", "--priority", "100"], "--priority"),
    (["sweep", "--cpu", "4095"], "--cpu"),
    (["sweep", "--slack", "0"], "--slack"),
    (["sweep", "--format", "yaml"], "--format"),
    (["sweep", "--resume"], "--resume"),
    (["sweep", "--total", "-5"], "--total"),
    (["sweep", "--bogus"], "--bogus"),
    (["measure", "nanosleep"], "DURATION"),
    (["measure", "nope", "1ms"], "METHOD"),
    (["measure", "nanosleep", "soon"], "DURATION"),
    (["measure", "nanosleep", "1ms", "-n", "0"], "-n"),
    (["measure", "nanosleep", "0", "--mode", "periodic"], "DURATION"),   # the core's rule
    (["measure", "nanosleep", "1ms", "--priority", "100", "--policy", "rr"], "--priority"),
    (["measure", "nanosleep", "1ms", "--cpu", "-1"], "--cpu"),
    (["measure", "nanosleep", "1ms", "--dma-latency", "-1"], "--dma-latency"),
    (["measure", "nanosleep", "1ms", "--dma-latency", "3000000000"], "--dma-latency"),
    (["monitor", "--interval", "0"], "--interval"),
    (["monitor", "--interval", "10ms", "--report", "1ms"], "--report"),
    (["monitor", "--method", "nope"], "--method"),
    (["compare", "only-one.jsonl"], "FILE"),
    (["plot", "x.jsonl"], "-o"),
    (["frobnicate"], "frobnicate"),
    ([], "COMMAND"),
    # an option that would be ignored is refused, as --resume without -o
    (["sweep", *QUICK, "--samples"], "argument --samples: needs -o FILE"),
    (["sweep", *QUICK, "--margin", "10us"],
     "argument --margin: only the hybrid family has a margin, and no method measured here is one"),
    (["measure", "nanosleep", "1ms", "-n", "2", "--samples"], "argument --samples: needs --json"),
    (["measure", "nanosleep", "1ms", "-n", "2", "--margin", "10us"], "argument --margin: only the hybrid family"),
    # plot's --labels and --stat name and rank the hosts of --compare: alone they were ignored
    (["plot", "x.jsonl", "-o", "x.png", "--labels", "A"], "argument --labels: needs --compare"),
    (["plot", "x.jsonl", "-o", "x.png", "--stat", "p99"], "argument --stat: needs --compare"),
    # the error and model plots draw every duration; --compare and --flent draw their
    # own figure: --requested and --kind were ignored there
    (["plot", "x.jsonl", "-o", "x.png", "--requested", "10ms"],
     "argument --requested: does not apply to --kind error"),
    (["plot", "x.jsonl", "-o", "x.png", "--kind", "model", "--requested", "10ms"],
     "argument --requested: does not apply to --kind model"),
    (["plot", "--compare", "a.jsonl", "b.jsonl", "-o", "x.png", "--kind", "cdf"],
     "argument --kind: does not apply to --compare"),
    (["plot", "--compare", "a.jsonl", "b.jsonl", "-o", "x.png", "--flent", "f.flent.gz"],
     "argument --flent: does not apply to --compare"),
    (["plot", "--flent", "f.flent.gz", "m.jsonl", "-o", "x.png", "--kind", "cdf"],
     "argument --kind: does not apply to --flent"),
    (["plot", "--flent", "f.flent.gz", "m.jsonl", "-o", "x.png", "--methods", "nanosleep"],
     "argument --methods: does not apply to --flent"),
    # --total plans the budgets of a sweep without --budget: with it, it was silently ignored
    (["sweep", *QUICK, "--total", "1"], "argument --total: plans the budgets of a sweep without"),
    # periodic mode cannot measure a floor at any duration (the core's rule): not "give DURATION 0"
    (["measure", "clock", "1us", "-n", "2", "--mode", "periodic"],
     "argument METHOD: is a floor (family 'baseline', measured at duration 0 only): periodic mode"),
    (["monitor", "--method", "syscall", "--duration", "0.1"], "argument --method: is a floor"),
]


@python_only
@pytest.mark.parametrize("argv,named", BAD, ids=[" ".join(a) or "(none)" for a, _ in BAD])
def test_bad_invocation_exits_2_with_one_line(argv, named):
    r = run(*argv, timeout=30)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stdout == ""
    msg = r.stderr.rstrip("\n")
    assert "\n" not in msg and msg.startswith("sleepacc: error: "), msg
    assert named in msg, msg


# The rules the CLI no longer writes itself: each bad value is
# refused by the core's rule (sleepacc_option_set, sleepacc_config_check),
# in the core's words, as a usage error naming the flag, before anything
# runs (no output, no result file; a sweep's header is not written).
CORE_RULES = [
    (["measure", "nanosleep", "1ms", "-n", "0"], "-n", "must be >= 1, got 0"),
    (["measure", "nanosleep", "1ms", "--budget", "0"], "--budget",
     "must be positive (or none: only n stops the run), got 0"),
    (["measure", "nanosleep", "1ms", "--warmup", "-1"], "--warmup", "must be >= 0, got -1"),
    (["measure", "nope", "1ms"], "METHOD", "must be an available method ("),
    (["measure", "nanosleep", "5s", "--budget", "1"], "DURATION",
     "one sample is longer than the budget"),
    (["sweep", "--budget", "0"], "--budget", "must be positive (or none: only n stops the run)"),
    (["sweep", "--budget", "-1"], "--budget", "must be positive (or none: only n stops the run)"),
    (["sweep", "--max-samples", "0"], "--max-samples", "must be >= 1, got 0"),
    (["sweep", "--methods", "nanosleep,nope"], "--methods", "must be an available method ("),
    (["sweep", "--mode", "periodic", "--durations", "0"], "--durations",   # the plan's rule
     "nothing to measure: periodic mode needs a duration above 0"),
    (["monitor", "--interval", "0"], "--interval",
     "must be > 0 in periodic mode (it is the period), got 0"),
    (["monitor", "--method", "nope"], "--method", "must be an available method ("),
    (["doctor", "--budget", "0"], "--budget", "must be positive (or none: only n stops the run)"),
    (["sweep", "--mode", "sideways"], "--mode", "must be 'relative' or 'periodic', got 'sideways'"),
    (["measure", "nanosleep", "1ms", "--mode", "sideways"], "--mode", "must be 'relative' or"),
    (["sweep", "--policy", "realtime"], "--policy", "must be one of 'other', 'batch', 'idle', "
                                                    "'fifo', 'rr', got 'realtime'"),
    (["monitor", "--policy", "x"], "--policy", "must be one of 'other',"),
]


@python_only
@pytest.mark.parametrize("argv,flag,words", CORE_RULES, ids=[" ".join(a) for a, _, _ in CORE_RULES])
def test_the_cores_rule_refuses_naming_the_flag_before_anything_runs(argv, flag, words, tmp_path):
    out = tmp_path / "out.jsonl"
    if argv[0] in ("sweep", "monitor"):
        argv = argv + ["-o", str(out)]
    t0 = time.monotonic()
    r = run(*argv, timeout=30)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert r.stdout == "" and not out.exists()
    msg = r.stderr.rstrip("\n")
    assert "\n" not in msg and msg.startswith(f"sleepacc: error: argument {flag}: {words}"), msg
    assert time.monotonic() - t0 < 20    # refused up front (nothing slept 5 s or a doctor run)


@pytest.mark.skipif(platform.machine() != "x86_64" or sys.platform != "linux",
                    reason="the seccomp filter is written for x86_64 Linux")
@pytest.mark.parametrize("argv,flag", [(["measure", "epoll_pwait2", "1ms"], "METHOD"),
                                       (["sweep", "--methods", "nanosleep,epoll_pwait2"],
                                        "--methods")])
def test_an_unavailable_method_is_the_cores_rule_naming_the_flag(argv, flag):
    # test_api_bad_input's child takes epoll_pwait2 away (a seccomp filter,
    # as a kernel before 5.11); the core's probe and check then refuse it
    from test_api_bad_input import UNAVAILABLE_CHILD
    child = (UNAVAILABLE_CHILD.split("import sleepacc\n")[0]
             + f"from sleepacc import cli\nraise SystemExit(cli.main({argv!r}))\n")
    r = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True,
                       timeout=60, env=child_env())
    if r.returncode == 1 and r.stderr.startswith("SKIP: "):
        pytest.skip(r.stderr.strip())
    assert r.returncode == 2 and r.stdout == "", (r.stdout, r.stderr)
    assert re.fullmatch(f"sleepacc: error: argument {flag}: is not available on this system; "
                        r"available methods: .*, got 'epoll_pwait2'\n", r.stderr), r.stderr


@python_only
def test_the_exporters_series_are_checked_by_the_cores_rules():
    pytest.importorskip("prometheus_client")
    for argv, flag, words in [
            (["--methods", "nanosleep,nope"], "--methods", "must be an available method ("),
            (["--methods", "auto,nanosleep", "--mode", "periodic", "--policy", "fifo",
              "--priority", "100"], "--priority", "must be 1..99 with policy fifo or rr"),
            (["--methods", "auto", "--mode", "sideways"], "--mode", "must be 'relative' or"),
            (["--methods", "clock"], "--methods", "'clock' is a floor")]:   # the exporter's own
        r = run("exporter", *argv, "--stop-after", "5", timeout=30)
        assert r.returncode == 2, (r.stdout, r.stderr)
        msg = r.stderr.rstrip("\n")
        assert msg.startswith(f"sleepacc: error: argument {flag}: {words}"), msg


@python_only
def test_help_shows_the_cores_defaults():
    from sleepacc import _core
    default = _core.config_default()
    text = " ".join(run("measure", "--help").stdout.split())
    assert f"time to measure (default {default['budget_ns'] / 1e9:g})" in text, text
    assert f"method's state; default {default['warmup']})" in text, text
    assert f"(default {_core.format_duration(default['margin_ns'])};" in text, text


def test_measure_takes_any_warmup_the_core_takes():
    # the CLI's old cap (1000) is gone: a warm-up only uses the budget
    assert _measure_json("nanosleep", "1us", "-n", "2", "--warmup", "1500")["n"] == 2


def test_monitor_last_report_shorter_than_the_interval_still_runs():
    # 0.27 s in reports of 0.2 s: the last one has ~0.07 s left, less than
    # one 100 ms period (the core refuses such a budget); it waits one period
    r = run("monitor", "--interval", "100ms", "--report", "0.2s", "--duration", "0.27s",
            timeout=30)
    assert r.returncode == 0, r.stderr
    assert "error" not in r.stderr and r.stdout.count("every 100ms") >= 1, (r.stdout, r.stderr)


# Unit traps: each is refused, naming the argument and
# saying what is wrong with the unit, before anything sleeps.
UNIT_TRAPS = [
    (["measure", "nanosleep", "1ms", "--slack", "1.0", "-n", "1"], "--slack", "nanoseconds"),
    (["sweep", "--slack", "1e3"], "--slack", "nanoseconds"),
    (["sweep", "--slack", "-5"], "--slack", "must be >= 0, got -5"),   # the core's slack row
    (["sweep", "--durations", "1ms,10"], "--durations", "'10'"),
    (["sweep", "--durations", "10,1us"], "--durations", "'10'"),
    (["measure", "nanosleep", "-1ms"], "DURATION", "negative"),
    (["measure", "nanosleep", "-1"], "DURATION", "negative"),
    (["sweep", "--durations", "1ms,-1ms"], "--durations", "negative"),
    (["measure", "nanosleep", "1ms", "--budget", "-1ms"], "--budget", "must be positive"),
    (["measure", "hybrid", "1ms", "--margin", "-1us"], "--margin", "negative"),
    (["monitor", "--interval", "-10ms"], "--interval", "negative"),
    (["monitor", "--duration", "-1s"], "--duration", "negative"),
    # a duration's range is the core's seconds rule, in its words (_units only parses)
    # ... quoting the value as typed, not its conversion (-0.001, 90000.0, 300.0)
    (["measure", "nanosleep", "-1ms"], "DURATION", "must be non-negative, got -1ms"),
    (["measure", "nanosleep", "25h"], "DURATION", "must be at most 86400 s (one day), got 25h"),
    (["measure", "nanosleep", "5m"], "DURATION", "one sample is longer than the budget: give n "
                                                 "explicitly or a longer budget, got 5m"),
    (["measure", "nanosleep", "1ms", "--budget", "-1ms"], "--budget", ", got -1ms"),
    (["sweep", "--durations", "1ms,25h"], "--durations", "(one day), got 25h"),
    (["measure", "hybrid", "1ms", "--margin", "-1us"], "--margin", "must be non-negative, got -1us"),
    (["monitor", "--interval", "25h"], "--interval", "(one day), got 25h"),
    (["compare", "a.jsonl", "b.jsonl", "--duration", "-1ms"], "--duration", ", got -1ms"),
    (["sweep", "--durations", "1ms,25h"], "--durations", "must be at most 86400 s (one day)"),
    (["measure", "hybrid", "1ms", "--margin", "25h"], "--margin", "must be at most 86400 s"),
    (["monitor", "--interval", "25h"], "--interval", "must be at most 86400 s (one day)"),
    (["compare", "a.jsonl", "b.jsonl", "--duration", "-1ms"], "--duration", "must be non-negative"),
    (["plot", "a.jsonl", "-o", "a.png", "--requested", "25h"], "--requested", "must be at most"),
]


@python_only
@pytest.mark.parametrize("argv,named,says", UNIT_TRAPS, ids=[" ".join(a) for a, _, _ in UNIT_TRAPS])
def test_unit_traps_are_refused_naming_the_unit(argv, named, says):
    t0 = time.monotonic()
    r = run(*argv, timeout=30)
    assert r.returncode == 2, (r.stdout, r.stderr)
    msg = r.stderr.rstrip("\n")
    assert "\n" not in msg and msg.startswith("sleepacc: error: argument " + named), msg
    assert says in msg, msg
    assert "required" not in msg, msg
    assert time.monotonic() - t0 < 25  # refused up front (a 1 s slack run would take far longer)


def _measure_json(*argv):
    r = run("measure", *argv, "--json", timeout=60)
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@python_only
def test_times_take_units_and_bare_numbers_are_seconds():
    d = _measure_json("nanosleep", "0.001", "-n", "2", "--budget", "0.5", "--slack", "50us")
    assert d["requested_ns"] == 1_000_000 and d["n"] == 2
    assert d["env"]["slack_ns"] == 50_000
    d = _measure_json("nanosleep", "1ms", "-n", "2", "--slack", "7")   # bare slack: int ns
    assert d["env"]["slack_ns"] == 7
    d = _measure_json("hybrid", "500µs", "-n", "2", "--margin", "20us")
    assert d["requested_ns"] == 500_000 and d["env"]["margin_ns"] == 20_000
    # 0 needs no unit in a suffixed list; bare lists are seconds
    r = run("sweep", "--methods", "spin", "--durations", "0,1us", "--budget", "10ms",
            "--format", "json", timeout=60)
    assert r.returncode == 0, r.stderr
    rows = json.loads(r.stdout)
    rows = rows["points"] if isinstance(rows, dict) else rows
    assert sorted(p["requested_ns"] for p in rows) == [0, 1000]


@python_only
def test_a_sample_longer_than_the_budget_is_refused_unless_n_is_given():
    t0 = time.monotonic()
    r = run("measure", "nanosleep", "5s", "--budget", "1", timeout=30)
    assert r.returncode == 2, (r.stdout, r.stderr)
    msg = r.stderr.rstrip("\n")
    assert "\n" not in msg and "argument DURATION: " in msg and "longer than the budget" in msg, msg
    assert time.monotonic() - t0 < 4.5          # refused up front, nothing slept 5 s
    d = _measure_json("nanosleep", "300ms", "--budget", "100ms", "-n", "1", "--warmup", "0")
    assert d["n"] == 1 and d["requested_ns"] == 300_000_000


@python_only
def test_help_explains_mode_warmup_and_margin():
    for cmd in ("measure", "sweep"):
        text = " ".join(run(cmd, "--help").stdout.split())
        assert "--mode {relative,periodic} relative:" in text, text
        assert "--margin D the hybrid method's margin" in text, text
        assert "a bare integer is ns" in text, text
    text = " ".join(run("measure", "--help").stdout.split())
    assert "--warmup N sleeps taken first and not counted" in text, text


@python_only
def test_every_duration_option_lists_the_units_m_being_minutes():
    """5m is five minutes (Go's and irtt's unit), one letter away from 5ms:
    each option that takes a duration says which units it reads."""
    units = ("units: ns, us or µs, ms, s or sec, m or min (minutes), h (hours); "
             "m is minutes, not ms; a bare number is seconds")
    for cmd, option in (("sweep", "--durations D,D,..."), ("measure", "DURATION"),
                        ("exporter", "--duration D,D,..."), ("compare", "--duration D"),
                        ("monitor", "--duration D")):
        text = " ".join(run(cmd, "--help").stdout.split())
        help_text = text.split(f" {option} ", 1)[1][:400]     # this option's help
        assert units in help_text, (cmd, help_text)
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "`m` or `min` (minutes)" in readme and "`5m` is five minutes, not `5ms`" in readme


@python_only
def test_the_readme_command_list_names_every_subcommand():
    from sleepacc import cli
    sub = next(a for a in cli.build_parser()._actions if a.dest == "command")
    listed = re.search(r"`sleepacc ([a-z|]+)`", (ROOT / "README.md").read_text(encoding="utf-8"))
    assert listed and set(listed.group(1).split("|")) == set(sub.choices), listed


@python_only
def test_the_command_table_lists_every_command_and_only_the_one_run_is_built():
    from sleepacc import cli
    from sleepacc.cli.commands import COMMANDS
    top = run("--help").stdout
    for name, info in COMMANDS.items():   # the listing: each command by its summary
        assert re.search(rf"^ +{name} +{re.escape(info.summary)}$", top, re.M), (name, top)
        sub = next(a for a in cli.build_parser(name)._actions if a.dest == "command")
        assert list(sub.choices) == [name]          # only this command's parser is built
        parser = sub.choices[name]
        assert parser.description and parser.description.strip(), name   # its one line
        assert {a.dest for a in parser._actions} - {"help"}, name      # with its flags
        helped = "".join(run(name, "--help").stdout.split())   # wrapped at blanks and hyphens
        assert "".join(parser.description.split()) in helped, name


@python_only
def test_moved_names_stay_importable_from_the_cli():
    from sleepacc import cli, plan
    assert cli.plan_budget is plan.plan_budget and cli.warmup_for is plan.warmup_for
    assert cli.DEFAULT_TOTAL_S == plan.DEFAULT_TOTAL_S
    assert callable(cli.cmd_measure) and cli.UsageError.code == 2
    with pytest.raises(AttributeError):
        cli.no_such_name


def test_unknown_method_lists_the_valid_names():
    msg = run("sweep", "--methods", "nope").stderr   # the core's words: the available ones
    assert all(m.name in msg for m in sleepacc.methods() if m.available)


def test_existing_output_is_not_overwritten(small_file):
    before = small_file.read_bytes()
    r = run("sweep", *SMALL, "-o", small_file)
    assert r.returncode == 2 and "-o" in r.stderr and "--resume" in r.stderr
    assert small_file.read_bytes() == before


def test_resume_with_other_settings_is_refused(small_file, tmp_path):
    copy = tmp_path / "other.jsonl"
    copy.write_bytes(small_file.read_bytes())
    r = run("sweep", *SMALL, "--slack", "1", "-o", copy, "--resume")
    assert r.returncode == 2 and "--resume" in r.stderr
    assert copy.read_bytes() == small_file.read_bytes()


def test_help_and_version_exit_0():
    assert run("--help").returncode == 0
    r = run("--version")
    assert r.returncode == 0 and sleepacc.__version__ in r.stdout


# ---------------------------------------------------------------- other subcommands

def test_monitor_prints_one_line_per_report():
    # --wide: each line whole (test_terminal checks the lines within COLUMNS)
    r = run("monitor", "--method", "clock_nanosleep_abs", "--interval", "10ms",
            "--report", "0.2s", "--duration", "0.4s", "--wide", timeout=30)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert len(lines) == 2, r.stdout
    for ln in lines:
        assert re.search(r"count=\d+ median=.+ p99=.+ max=.+ misses=\d+$", ln), ln
        assert re.match(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}", ln), ln


def test_monitor_json_lines():
    r = run("monitor", "--interval", "5ms", "--report", "0.25s", "--duration", "0.5s",
            "--json", timeout=30)
    assert r.returncode == 0, r.stderr
    recs = [json.loads(ln) for ln in r.stdout.splitlines()]
    assert len(recs) == 2
    for rec in recs:
        assert rec["schema"] == "sleepacc/1" and rec["type"] == "monitor"
        assert rec["count"] > 0 and rec["interval_ns"] == 5_000_000
        assert rec["median_ns"] <= rec["p99_ns"] <= rec["max_ns"]


def test_measure_text_and_json():
    r = run("measure", "nanosleep", "100us", "--budget", "0.1")
    assert r.returncode == 0, r.stderr
    assert "histogram" in r.stdout and "CPU cost" in r.stdout
    r = run("measure", "nanosleep", "100us", "--budget", "0.1", "--json")
    rec = json.loads(r.stdout)
    assert rec["method"] == "nanosleep" and rec["requested_ns"] == 100_000
    assert rec["stats"]["n"] == rec["n"] > 0 and rec["samples"] is None


def test_info_json():
    r = run("info", "--json")
    assert r.returncode == 0, r.stderr
    info = json.loads(r.stdout)
    assert info["schema"] == "sleepacc/1" and info["type"] == "info"
    assert {m["name"] for m in info["methods"]} == {m.name for m in sleepacc.methods()}
    assert "clocksource" in info["host"] and "monotonic" in info["clocks"]
    assert run("info").returncode == 0


def test_doctor_json(small_file):
    r = run("doctor", "--json", "--budget", "0.02")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["type"] == "doctor" and doc["findings"]
    ids = {f["id"] for f in doc["findings"]}
    assert {"timer_slack", "clocksource", "idle_states", "tick", "rt_policy",
            "virtualisation", "busy_host"} <= ids
    for f in doc["findings"]:
        assert f["status"] in ("problem", "option", "ok", "unknown")
        assert f["evidence"] and isinstance(f["title"], str)
    # ranked: problems first, by expected gain
    ranks = [("problem", "option", "unknown", "ok").index(f["status"]) for f in doc["findings"]]
    assert ranks == sorted(ranks)
    r = run("doctor", "--from", small_file, "--top", "3", "--budget", "0.02")
    assert r.returncode == 0, r.stderr
    assert re.search(r"^3\. ", r.stdout, re.M) and not re.search(r"^4\. ", r.stdout, re.M)


def test_compare(small_file, tmp_path):
    other = tmp_path / "other.jsonl"
    assert run("sweep", *SMALL, "-o", other, "--format", "none").returncode == 0
    r = run("compare", small_file, other)
    assert r.returncode == 0, r.stderr
    assert "B/A" in r.stdout and r.stdout.count("nanosleep") >= 3
    doc = json.loads(run("compare", small_file, other, "--json").stdout)
    assert len(doc["rows"]) == 6 and all(len(row["errors_ns"]) == 2 for row in doc["rows"])
    assert run("compare", small_file, tmp_path / "missing.jsonl").returncode == 1


@pytest.mark.skipif(UNDER_ASAN,
                    reason="matplotlib's C++ extension aborts under a preloaded ASan runtime")
def test_plot_writes_a_png(small_file, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "fig.png"
    r = run("plot", small_file, "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_measure_environment_line_shows_a_setting_of_0():
    # --cpu 0 pins the thread to CPU 0: the env records cpu 0, which the
    # text showed as "the thread's own settings" (0 was taken for False)
    r = run("measure", "nanosleep", "1ms", "-n", "2", "--cpu", "0")
    assert r.returncode == 0, r.stderr
    line = next(s for s in r.stdout.splitlines() if s.startswith("environment:"))
    assert line == "environment: cpu 0", line


def test_monitor_irtt_json_that_cannot_be_written_fails_before_the_run(tmp_path):
    # written at the end: a bad path was found only after the whole run
    # (its statistics lost); now one line, exit 1, before anything runs,
    # as -o and the exporter's --textfile
    for bad in (tmp_path / "no" / "such" / "x.json", tmp_path):
        t0 = time.monotonic()
        r = run("monitor", "--duration", "60s", "--irtt-json", bad)   # refused, not run
        assert r.returncode == 1, r.stderr
        assert r.stderr.startswith(f"sleepacc: error: cannot write results to {bad}: ")
        assert len(r.stderr.splitlines()) == 1 and "every 10ms" not in r.stdout
        assert time.monotonic() - t0 < 30    # far below the 60 s the run would take
