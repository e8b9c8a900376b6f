"""irtt sleep's own text (the tables quoted in tests/data/seeds/004_*.txt)
read back and printed again is the same text, digit for digit, and
`compare` of such a table against a sweep compares what both measured: the
irtt rows (a Go timer sleep, means only) against a comparable method at the
shared durations, on the mean."""

import json
import pathlib
import subprocess
import sys

import pytest

from sleepacc import records

SEED = pathlib.Path(__file__).resolve().parents[1] / "data" / "seeds" / "004_7a9291a3c7971e45.txt"
HEAD = "Sleep Duration        Mean Error       % Error"


def irtt_tables():
    """Each irtt table of the seed as irtt printed it: the mail quotes the
    second and third with '>' and blank lines between rows, which are taken
    off (their rows lost a leading space to the quoting: compared by field)."""
    lines = SEED.read_text(encoding="utf-8").splitlines()
    tables = []
    for i, line in enumerate(lines):
        if line.lstrip("> ").startswith(HEAD):
            rows = []
            for x in lines[i + 1:]:
                x = x[1:] if x.startswith(">") else x
                if not x.strip():
                    continue
                if not records.files._IRTT_ROW.match(x):
                    break
                rows.append(x)
            tables.append("Testing sleep accuracy...\n\n" + HEAD + "\n" + "\n".join(rows) + "\n")
    assert len(tables) == 3
    return tables


@pytest.mark.parametrize("index", [0, 1, 2])
def test_irtt_text_round_trips(tmp_path, index):
    text = irtt_tables()[index]
    path = tmp_path / "irtt.txt"
    path.write_text(text, encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "sleepacc", "report", str(path), "--format",
                          "irtt"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    if index == 0:                       # unquoted: irtt's bytes
        assert out.stdout == text
    got = [x.split() for x in out.stdout.splitlines()[3:]]
    want = [x.split() for x in text.splitlines()[3:]]
    assert got == want and len(got) == 11       # every % Error digit kept


def test_mean_read_from_both_columns():
    rows = records.parse_irtt_table(HEAD + "\n           1ns             381ns       38194.1\n"
                                    "           1µs           9.041µs         904.2\n"
                                    "           1ms         263.256µs          26.3\n")
    (_, r1, e1), (_, r2, e2), (_, r3, e3) = rows
    assert (r1, r2, r3) == (1, 1000, 1_000_000)
    # within what both columns allow: the printed ns (truncated) and the percentage (to 0.1)
    assert 381 <= e1 < 382 and abs(100 * e1 / r1 - 38194.1) <= 0.05
    assert 9041 <= e2 < 9042 and abs(100 * e2 / r2 - 904.2) <= 0.05
    assert 263256 <= e3 < 263257


def test_compare_irtt_against_a_sweep(tmp_path):
    irtt = tmp_path / "irtt.txt"
    irtt.write_text(irtt_tables()[0], encoding="utf-8")
    sweep = tmp_path / "s.jsonl"
    r = subprocess.run([sys.executable, "-m", "sleepacc", "sweep", "--methods",
                        "nanosleep,hybrid", "--durations", "1ns,1ms,3ms", "--budget", "0.01",
                        "-o", str(sweep), "--format", "none"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    cmd = [sys.executable, "-m", "sleepacc", "compare", str(irtt), str(sweep)]
    text = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    assert text.returncode == 0, text.stderr
    out = " ".join(text.stdout.split())
    assert "Go timer sleep" in out and "compared with nanosleep on the mean error" in out
    assert "at the 2 duration(s) both measured" in out        # 1ns and 1ms, not 3ms
    assert "none (0 ns)" not in out and "means only" in out
    doc = json.loads(subprocess.run(cmd + ["--json"], capture_output=True, text=True,
                                    timeout=120).stdout)
    assert doc["stat"] == "mean" and doc["irtt"]["compared_with"] == "nanosleep"
    ranked = [h for h in doc["hosts"] if h["rank"] is not None]
    assert {h["method"] for h in ranked} == {"irtt", "nanosleep"}     # both ranked
    shared = [r for r in doc["rows"] if r["method"] == "nanosleep"
              and all(e is not None for e in r["errors_ns"])]
    assert sorted(r["requested_ns"] for r in shared) == [1, 1_000_000]
    assert all(r["irtt_in"] == [0] and r["ratios"][1] is not None for r in shared)
