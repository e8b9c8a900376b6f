"""Human text fits the terminal: the doctor, the sweep's table, info and
measure keep every line within COLUMNS (80 when COLUMNS is unset and the
output is not a terminal), --wide prints lines whole, a value the host
could not tell is "unknown" (never "None"), and a histogram of one value is
one line.  Layout only: the numbers come from fixed arms or tiny runs."""

import os
import subprocess
import sys

import pytest

import sleepacc
from sleepacc import doctor, report
from sleepacc.cli import doctor as cli_doctor
from sleepacc.cli._text import wrap
from sleepacc.cli.measure import histogram_lines

from test_doctor import SWEEP, fake_arms, VALUES


def sleepacc_cmd(*args, columns="80"):
    env = dict(os.environ)
    env.pop("COLUMNS", None)
    if columns is not None:
        env["COLUMNS"] = columns
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    r = subprocess.run([sys.executable, "-m", "sleepacc", *args], capture_output=True,
                       text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    return r.stdout


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
