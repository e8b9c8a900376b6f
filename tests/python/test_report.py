"""sleepacc.report: the seeds' own layouts, line for line.

Each seed style is checked by reading the seed's text (tests/data/seeds/,
copies of ../shared/seeds) into records and formatting them again: the
output must equal the seed's lines exactly.  The tidy reference CSV is also
rendered and compared with the seed text where the CSV is lossless.
"""

import csv
import io
import json
import math
import pathlib
import re

import pytest

from sleepacc import report
from sleepacc.model import load_records

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
SEEDS = DATA / "seeds"


def seed(name_prefix):
    (path,) = SEEDS.glob(name_prefix + "_*.txt")
    return path.read_text(encoding="utf-8")


def seed_records(prefix, **match):
    return [r for r in load_records(DATA / "seed_results.csv")
            if r["seed"].startswith(prefix) and all(m in str(r[k]) for k, m in match.items())]


# --------------------------------------------------------------------- midas

def midas_blocks():
    text = seed("003")
    blocks = re.findall(r"\$ \./bin/test_sleep\n(.*?)\n\S+:midas", text, re.S)
    assert len(blocks) == 4
    return [b.splitlines() for b in blocks]


@pytest.mark.parametrize("block", range(4))
def test_midas_round_trip_matches_seed_lines(block):
    lines = midas_blocks()[block]
    assert len(lines) == 8
    recs = report.parse("\n".join(lines), "midas")
    assert len(recs) == 8
    out = report.format(recs, "midas").splitlines()
    assert out == lines


def test_midas_from_reference_csv_matches_seed_numbers():
    # The CSV keeps the mean per loop to the ns, so the totals agree with the
    # seed to the ns-per-loop rounding; every other field must agree exactly.
    recs = seed_records("003", host="Ryzen", method="select")
    lines = midas_blocks()[0]
    out = report.format(recs, "midas").splitlines()
    assert len(out) == len(lines)
    for mine, theirs in zip(out, lines):
        a = mine.split(", ")
        b = theirs.split(", ")
        assert a[0:3] == b[0:3]            # loops, sec per loop, sec total
        loops = int(a[0].split()[1])
        # the CSV rounded the mean per loop to 1 ns: numbers agree to that
        nums_a = [float(re.findall(r"[\d.]+", x)[0]) for x in a[3:6]]
        nums_b = [float(re.findall(r"[\d.]+", x)[0]) for x in b[3:6]]
        assert nums_a[0] == pytest.approx(nums_b[0], abs=0.0005 * loops + 0.001)
        assert nums_a[1] == pytest.approx(nums_b[1], abs=0.0011)
        assert nums_a[2] == pytest.approx(nums_b[2], abs=0.0011)
        pct_a, pct_b = float(a[6].rstrip("%")), float(b[6].rstrip("%"))
        per_req_us = float(a[1].split()[0]) * 1e6 or float(a[2].split()[0]) * 1e6 / loops
        assert pct_a == pytest.approx(pct_b, abs=0.1 + 100 * 0.0006 / per_req_us)


# --------------------------------------------------------------------- xmame

def xmame_log(name):
    text = seed("000")
    part = text.split(f'filename="{name}"', 1)[1].split("--9/GiYV45wF7IL3Iq", 1)[0]
    lines = [ln for ln in part.splitlines()[1:]]
    lines = [ln for ln in lines if not ln.startswith("Script ")]
    # drop the leading blank line of the attachment and trailing blanks
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


@pytest.mark.parametrize("log,host", [("sleep-bsd-1700.log", "XP1700"),
                                      ("sleep-lnx-1200.log", "Thunderbird"),
                                      ("sleep-lnx-1400.log", "1400XP")])
def test_xmame_from_reference_csv_matches_seed_log(log, host):
    recs = seed_records("000", host=host)
    assert len(recs) == 18
    out = report.format(recs, "xmame").splitlines()
    while out and not out[-1].strip():
        out.pop()
    assert out == xmame_log(log)


def test_xmame_round_trip_including_wrapped_lines():
    # the 2100 log was wrapped by a mail client ("estimated\noverhead"):
    # the parser reads it, the formatter writes the program's real layout
    text = seed("000").split('filename="sleep-lnx-2100.log"', 1)[1]
    recs = report.parse(text, "xmame")
    assert len(recs) == 18
    assert recs[0]["method"] == "select" and recs[0]["requested_ns"] == 3_000_000
    out = report.format(recs, "xmame")
    assert report.parse(out, "xmame") == recs
    assert out.splitlines()[:2] == [
        "Testing _select_sleep (x 1000), delay 3",
        "Total time: 9992.307000 ms; unit time: 9.992307 ms; estimated overhead: 6.992307 ms"]


def test_xmame_seed_002_flattened_log_reads_back_to_the_same_numbers():
    # seed 002 is the Thunderbird log with its line breaks lost
    recs = report.parse(seed("002"), "xmame")
    ref = seed_records("000", host="Thunderbird")
    assert [(r["method"], r["requested_ns"], round(r["actual_ns"])) for r in recs] == \
        [(r["method"], r["requested_ns"], r["actual_ns"]) for r in ref]
    # and formatting restores the program's real layout, line for line
    assert report.format(recs, "xmame").splitlines()[:-1] == xmame_log("sleep-lnx-1200.log")


def test_xmame_quoted_excerpt_in_the_mail_body():
    recs = seed_records("000", host="XP1700", method="select")
    out = report.format([r for r in recs if r["requested_ns"] == 8_000_000], "xmame")
    # the mail quotes this block (wrapped at "1=\n2.000027" by quoted-printable)
    assert out == ("Testing _select_sleep (x 1000), delay 8\n"
                   "Total time: 20000.027000 ms; unit time: 20.000027 ms; "
                   "estimated overhead: 12.000027 ms\n\n")


# ----------------------------------------------------------------- testsleep

def _testsleep_table(which):
    text = seed("001")
    marker = "With calloutng_12_26.patch..." if which == "calloutng" else "With no patches..."
    part = text.split(marker, 1)[1]
    lines = []
    started = False
    for ln in part.splitlines():
        body = ln[2:] if ln.startswith("> ") else ln.lstrip(">")
        if not started:
            if body.strip():
                started = True
            else:
                continue
        if not body.strip():
            break
        lines.append(body.rstrip())
    return lines


@pytest.mark.parametrize("which", ["calloutng", "stock"])
def test_testsleep_from_reference_csv_matches_seed_table(which):
    recs = seed_records("001", os=which)
    assert len(recs) == 3 * 7 * 5
    out = report.format(recs, "testsleep").splitlines()
    assert out == _testsleep_table(which)


@pytest.mark.parametrize("which", ["calloutng", "stock"])
def test_testsleep_round_trip(which):
    lines = _testsleep_table(which)
    recs = report.parse("\n".join(lines), "testsleep")
    assert len(recs) == 105
    assert {r["timer_config"] for r in recs} == {"HZ=100", "HZ=250", "HZ=1000"}
    assert report.format(recs, "testsleep").splitlines() == lines


# ---------------------------------------------------------------------- irtt

def irtt_table_lines(which):
    text = seed("004")
    if which == "osx":
        part = text.split("tron:~/src/github.com/peteheist/irtt:% ./irtt sleep\n", 1)[1]
        lines = part.split("\n\n> On Dec", 1)[0].splitlines()
        return lines
    host = {"nanopi": "root@nanopineo2:~# irtt sleep", "nemesis": "d@nemesis:~$ irtt sleep"}[which]
    part = text.split(host, 1)[1].split("\n> \n> \n", 1)[0] if which == "nanopi" else \
        text.split(host, 1)[1].split("\n> \n> \n> --", 1)[0]
    # quoted with ">" in front of each line of the original output
    lines = [ln[1:] if ln.startswith(">") else ln for ln in part.splitlines()]
    lines = [ln.strip() if ln.strip().startswith(("Testing", "Sleep")) else ln.rstrip()
             for ln in lines if ln.strip()]
    # the mail quoting lost the blank line after the title: put it back
    return [lines[0], ""] + lines[1:]


def _irtt_records(lines, method):
    """Records whose mean error reproduces the seed's (truncated) error and
    its percentage: the table prints the mean error truncated to 1 ns and the
    percentage from the unrounded mean."""
    recs = []
    for r in report.parse("\n".join(lines), "irtt", method=method):
        d = r["requested_ns"]
        err = r["error_ns"]
        frac = min(max(r["percent_error"] * d / 100.0 - err, 0.0), 0.999)
        if abs(100 * (err + frac) / d - r["percent_error"]) > 0.05:
            frac = 0.0
        recs.append({"method": method, "requested_ns": d, "mean_ns": d + err + frac,
                     "actual_ns": d + err + frac, "n": 1000})
    return recs


@pytest.mark.parametrize("which", ["osx", "nanopi", "nemesis"])
def test_irtt_matches_seed_table(which):
    lines = irtt_table_lines(which)
    assert lines[0] == "Testing sleep accuracy..."
    assert len(lines) == 3 + 11
    recs = _irtt_records(lines, "nanosleep")
    out = report.format(recs, "irtt").splitlines()
    assert out == lines


def test_irtt_several_methods_one_table_each_and_back():
    import sleepacc
    sw = sleepacc.sweep(["nanosleep", "spin"], [1e-6, 1e-4], budget=0.01)
    text = report.format(sw, "irtt")
    blocks = text.split("\n\n== ")
    assert text.startswith("== nanosleep\n") and len(blocks) == 2
    assert blocks[1].startswith("spin\n")
    assert text.count("Testing sleep accuracy...") == 2
    back = report.parse(text, "irtt")
    assert [(r["method"], r["requested_ns"]) for r in back] == [
        ("nanosleep", 1000), ("nanosleep", 100000), ("spin", 1000), ("spin", 100000)]
    # one method: irtt's own bytes, no header
    one = report.format(sleepacc.sweep(["spin"], [1e-6], budget=0.01), "irtt")
    assert one.startswith("Testing sleep accuracy...\n")


def test_irtt_from_reference_csv_rows():
    # the CSV stores the actual duration to the ns: the error column matches
    # the seed exactly (the percent column needs the sub-ns fraction)
    recs = seed_records("004", host="i7-2860QM")
    out = report.format(recs, "irtt").splitlines()
    seed_lines = irtt_table_lines("osx")
    assert [ln[:32] for ln in out[3:]] == [ln[:32] for ln in seed_lines[3:]]


# ------------------------------------------------------- markdown, csv, json, wide

def _sample_records():
    return [r for r in seed_records("003") if r["host"].startswith("AMD")]


def test_csv_round_trips():
    recs = _sample_records()
    text = report.format(recs, "csv")
    back = list(csv.DictReader(io.StringIO(text)))
    assert len(back) == len(recs)
    for a, b in zip(recs, back):
        assert b["method"] == a["method"]
        assert int(b["requested_ns"]) == a["requested_ns"]
        assert int(b["actual_ns"]) == a["actual_ns"]


def test_json_round_trips():
    recs = _sample_records()
    back = json.loads(report.format(recs, "json"))
    assert back == recs


def test_markdown_has_a_row_per_record_and_aligned_pipes():
    recs = _sample_records()
    lines = report.format(recs, "markdown").splitlines()
    assert len(lines) == 2 + len(recs)
    assert all(ln.startswith("| ") and ln.endswith(" |") for ln in lines)
    assert len({ln.count("|") for ln in lines}) == 1
    assert "| select | relative | 1ms | 1000 | 1.062138ms |" in lines[2 + 2]


def test_wide_from_records_has_header_and_rows():
    recs = _sample_records()
    lines = report.format(recs, "wide").splitlines()
    assert lines[0].split()[:3] == ["method", "request", "n"]
    assert len(lines) == 1 + len(recs)


def test_bad_style_and_type():
    with pytest.raises(ValueError, match="midas"):
        report.format([], "nope")
    with pytest.raises(TypeError):
        report.format([], 3)
    with pytest.raises(ValueError):
        report.parse("", "wide")


# ------------------------------------------------------------- live Sweep

def test_formats_of_a_live_sweep():
    import sleepacc
    sw = sleepacc.sweep(["nanosleep", "select"], [0.0, 1e-4, 1e-3], budget=0.03)
    assert report.format(sw, "irtt") == sw.table("irtt")
    assert report.format(sw, "wide") == sw.table("wide")
    text = report.format(sw, "midas")
    midas = [ln for ln in text.splitlines() if ln.startswith("sleep ")]
    assert len(midas) == len(sw)
    # MIDAS lines carry no method: one block per method under "== <method>"
    assert [ln for ln in text.splitlines() if ln.startswith("== ")] == [
        "== nanosleep", "== select"]
    assert [r["method"] for r in report.parse(text, "midas")] == [m.method for m in sw]
    for line, m in zip(midas, sw):
        loops = int(line.split()[1])
        assert loops == m.n
        per_us = float(line.split(", ")[4].split()[0])
        assert per_us == pytest.approx(m.stats["mean"] / 1e3, abs=0.0006)
    xm = report.format(sw, "xmame")
    assert xm.count("Testing _nanosleep_sleep (x ") == 3
    back = report.parse(xm, "xmame")
    assert [r["method"] for r in back] == [m.method for m in sw]
    ts = report.format(sw, "testsleep").splitlines()
    # the configuration header names the host (rows carry it), then one row a point
    assert ts[0].strip() == sw.host["hostname"] and len(ts) == len(sw) + 2
    assert json.loads(report.format(sw, "json"))[0]["method"] == sw[0].method
    assert not math.isnan(float(report.format(sw, "csv").splitlines()[1].split(",")[4]))
