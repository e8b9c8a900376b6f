"""Human text fits the terminal: the doctor, the sweep's table and its
summary line, info, measure, monitor and compare keep every line within
COLUMNS (80 when COLUMNS is unset and the output is not a terminal; a path
is never cut, so a line may pass only by a path too long for any line),
--wide prints lines whole, a value the host could not tell is "unknown"
(never "None"), and a histogram of one value is one line.  Layout only:
the numbers come from fixed arms or tiny runs."""

import json
import os
import re
import subprocess
import sys

import pytest

import sleepacc
from sleepacc import doctor, report
from sleepacc.cli import doctor as cli_doctor
from sleepacc.cli._text import wrap
from sleepacc.cli.measure import histogram_lines

from test_doctor import SWEEP, fake_arms, VALUES


def sleepacc_run(*args, columns="80"):
    """The command's CompletedProcess (exit 0 asserted), COLUMNS as given
    (None: unset, the output a pipe: 80)."""
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    if columns is not None:
        env["COLUMNS"] = columns
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    r = subprocess.run([sys.executable, "-m", "sleepacc", *map(str, args)], capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    return r


def sleepacc_cmd(*args, columns="80"):
    return sleepacc_run(*args, columns=columns).stdout


def fits(line, width):
    """Within width, or passed only by a word too long to break (a path, a
    list of flags: wrapping does not cut a word)."""
    return len(line) <= width or len(max(line.split(), key=len)) >= width // 2


def longest(text):
    return max((len(line) for line in text.splitlines()), default=0)


def diagnose_missing_facts(monkeypatch):
    """The doctor's result on fixed arms, with every host fact unknown."""
    real = dict(sleepacc.system_info())
    monkeypatch.setattr(doctor.sleepacc, "system_info", lambda: {k: None for k in real})
    monkeypatch.setattr(doctor, "_arm", fake_arms(VALUES))
    return doctor.diagnose(SWEEP, budget=0.01)


@pytest.mark.parametrize("width", [80, 60])
def test_doctor_text_fits_and_says_unknown(monkeypatch, capsys, width):
    res = diagnose_missing_facts(monkeypatch)
    cli_doctor._print_report(res, res["findings"], width)
    text = capsys.readouterr().out
    assert "None" not in text
    assert "tickless mode unknown" in text
    # every line fits, but for a single word longer than a line (a path is not cut)
    for line in text.splitlines():
        assert fits(line, width), line
    # nothing is lost: every evidence's words are in the text, in order
    words = text.split()
    for f in res["findings"]:
        for e in f["evidence"]:
            first = e.split()[0]
            assert first in words


def test_doctor_wide_prints_whole_lines(monkeypatch, capsys):
    res = diagnose_missing_facts(monkeypatch)
    cli_doctor._print_report(res, res["findings"], None)
    text = capsys.readouterr().out
    evidence = [e for f in res["findings"] for e in f["evidence"]]
    long = [e for e in evidence if len(e) > 66]
    assert long, "the fixed arms give evidence longer than a line"
    for e in long:
        assert f"     evidence: {e}" in text.splitlines()


def test_wrap_keeps_numbers_with_units_and_hangs():
    lines = wrap("a " * 30 + "idle exit adds 15.6 µs at 1 ms", 30, "     evidence: ", "       ")
    assert all(len(x) <= 30 for x in lines)
    assert lines[0].startswith("     evidence: ") and all(x.startswith("       ") for x in lines[1:])
    assert "15.6 µs" in "\n".join(lines) and "1 ms" in "\n".join(lines)
    assert wrap("x " * 100, None) == ["x " * 100]


def test_wide_table_fits_80_columns():
    """The core's wide table with the longest method name, a long request,
    millions of samples and errors of every size stays within 80 columns."""
    names = [m.name for m in sleepacc.methods()]
    rows = [{"method": max(names, key=len), "requested_ns": 123_456_789, "mode": "relative",
             "n": 9_999_999, "median_ns": 123_456_789 + 3_831_636, "mean_ns": 130e6,
             "p99_ns": 123_456_789 + 1_234_567_891, "max_ns": 123_456_789 + 59_123_456_789,
             "cpu_percent": 100.0},
            {"method": "spin", "requested_ns": 1, "mode": "periodic", "n": 1,
             "median_ns": 999_950, "mean_ns": 1e6, "p99_ns": 9_999_500, "max_ns": 99_999_999,
             "cpu_percent": None}]
    text = report._wide(rows)
    assert longest(text) <= 80, text
    assert len(text.splitlines()) == 3 and "method" in text and "median err" in text


def test_cli_sweep_and_info_fit_columns(tmp_path):
    out = sleepacc_cmd("sweep", "--methods", "nanosleep,hybrid", "--durations", "1ms,10ms",
                       "--budget", "0.01", columns=None)
    assert "nanosleep" in out and longest(out) <= 80
    for cols in ("80", "60"):
        out = sleepacc_cmd("info", columns=cols)
        assert "methods:" in out
        assert all(fits(x, int(cols)) for x in out.splitlines()), out
    assert longest(sleepacc_cmd("info", "--wide")) > 80   # the descriptions, whole


def test_histogram_of_one_value_is_one_line():
    assert len(histogram_lines([82_957] * 5, 16)) == 1
    assert len(histogram_lines([82_957], 16)) == 1
    assert histogram_lines([82_957], 16)[0].rstrip().endswith(" 1")
    assert len(histogram_lines([1_000, 2_000], 16)) == 16        # two values: the bins


def test_measure_one_sample_text():
    out = sleepacc_cmd("measure", "nanosleep", "1us", "-n", "1")
    hist = out[out.index("histogram"):].splitlines()[1:]
    assert len(hist) == 1 and longest(out) <= 80 and "None" not in out


def test_monitor_lines_fit_columns_and_wide_keeps_them_whole():
    """Within 80 columns: the method and period once above the lines, each
    report one line from its time of day, the summary wrapped.  --wide:
    every report line with the whole stamp, method and period."""
    args = ("monitor", "--interval", "5ms", "--report", "0.1s", "--duration", "0.2s")
    r = sleepacc_run(*args, columns=None)
    for line in (r.stdout + r.stderr).splitlines():
        assert len(line) <= 80, line
    head, *reports = r.stdout.splitlines()
    assert head.startswith("clock_nanosleep_abs every 5ms: one line per 100ms, times UTC")
    assert len(reports) == 2, r.stdout
    for line in reports:
        assert re.fullmatch(r"\d\d:\d\d:\d\d\.\d{3}  count=\d+ median=.+ p99=.+ max=.+ "
                            r"misses=\d+", line), line
    assert r.stderr.startswith("--- clock_nanosleep_abs every 5ms: 2 reports, ")
    r = sleepacc_run(*args, "--wide", columns=None)
    reports = r.stdout.splitlines()
    assert len(reports) == 2 and all(len(line) > 80 for line in reports), r.stdout
    for line in reports:
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z  clock_nanosleep_abs "
                            r"every 5ms: count=\d+ median=.+ misses=\d+", line), line
    assert len(r.stderr.splitlines()) == 1 and r.stderr.rstrip().endswith(" ---")


@pytest.fixture(scope="module")
def long_paths(tmp_path_factory):
    """A one-point sweep written under a path longer than a line, its
    summary line at 80 columns; a second host's file (applied slack and
    FIFO: a longer host label); irtt sleep's table (a method column)."""
    d = tmp_path_factory.mktemp("w")
    d = d / ("a_directory_whose_name_alone_is_long_" * 2) / "results"
    d.mkdir(parents=True)
    sweep = d / "this-host-at-the-default-settings.jsonl"
    r = sleepacc_run("sweep", "--methods", "nanosleep", "--durations", "1ms", "--budget", "0.01",
                     "-o", sweep, "--format", "none", columns=None)
    host = sleepacc.load(sweep).host["hostname"]
    other = d / "this-host-with-slack-and-fifo.jsonl"
    stats = {"n": 50, "min": 1_050_000, "max": 1_300_000, "mean": 1_080_000, "std": 10_000.0,
             "median": 1_070_000, "p90": 1_100_000, "p99": 1_200_000, "p999": 1_300_000,
             "undersleeps": 0}
    other.write_text(
        json.dumps({"schema": "sleepacc/1", "type": "header", "host": {"hostname": host},
                    "settings": {}, "started": "2026-01-01T00:00:00Z"}) + "\n"
        + json.dumps({"type": "point", "method": "nanosleep", "mode": "relative",
                      "requested_ns": 1_000_000, "n": 50, "stats": stats,
                      "env": {"slack": 50_000, "policy": "fifo"}}) + "\n")
    irtt = d / "irtt-sleep.txt"
    irtt.write_text("Testing sleep accuracy...\n\nSleep Duration        Mean Error       % Error\n"
                    "           1ms          81.123µs           8.1\n")
    return sweep, other, irtt, r.stderr


def test_sweep_summary_puts_a_long_path_on_its_own_line(long_paths):
    sweep, _, _, stderr = long_paths
    assert len(str(sweep)) > 80
    lines = stderr.splitlines()
    assert lines == ["sleepacc: 1 point measured in " + lines[0].split(" in ", 1)[1],
                     f"  {sweep}"], stderr
    assert lines[0].endswith("; results in") and len(lines[0]) <= 80
    # --wide: one line (a resumed sweep with nothing left measures nothing)
    r = sleepacc_run("sweep", "--methods", "nanosleep", "--durations", "1ms", "--budget", "0.01",
                     "-o", sweep, "--resume", "--format", "none", "--wide", columns=None)
    line, = r.stderr.splitlines()
    assert line.startswith("sleepacc: 0 points measured in ") and line.endswith(
        f" s (1 already in the file); results in {sweep}"), line


def test_compare_fits_columns_and_wide_keeps_rows_whole(long_paths):
    """The ranking moves a row's file, then its top cause, then its host to
    lines under the row; the points spread over tables that repeat the
    method and the duration.  Nothing is lost: every path whole, every
    file's column.  --wide: one line a host, its file on it."""
    files = long_paths[:3]
    text = sleepacc_cmd("compare", *files, "--points", columns=None)
    for line in text.splitlines():
        assert len(line) <= 80 or len(line.split()[-1]) > 60, line    # passed by a path only
    for path in files:
        assert f"   file: {path}" in text.splitlines()
    assert "[slack 50 µs, fifo]" in text and "top cause: " in text
    heads = [line.split() for line in text.splitlines() if line.startswith("method ")]
    assert len(heads) >= 2 and all(h[:2] == ["method", "requested"] for h in heads)
    assert sorted(c for h in heads for c in h[2:]) == sorted(
        ["A", "B", "C", "B/A", "C/A", "n", "A", "n", "B", "n", "C"])
    wide = sleepacc_cmd("compare", *files, "--points", "--wide", columns=None)
    for path, n in zip(files, (None, "50", "?")):
        row = [line for line in wide.splitlines() if line.endswith(f"  {path}")]
        assert len(row) == 1 and (n is None or f" {n} " in row[0]), wide
    assert "file: " not in wide and longest(wide) > 80
