"""Reading a big result file: the JSON Lines form is parsed one line at a
time, each point turned into its Measurement as soon as it is checked, and
a point holds little: its statistics packed (8 bytes a field), its env and
ctx_switches shared with the points that have the same ones until read,
the duplicate check a set entry.  Checked in a child (its own peak RSS):
20,000 points without samples (~610-byte lines), read by sleepacc.load,
may grow the RSS by at most 1.35x the file: about 1.1x here.  A Stats of
number objects (1.6x), or a dict per point for env and ctx_switches
(1.8x), takes the read past it; so did the reader before either (2.4x).
The points read stay independent: changing one point's env changes no
other."""

import json
import os
import pickle
import subprocess
import sys

import pytest

import sleepacc
from sleepacc import records

N = 20_000


def _write(path, n=N):
    m = sleepacc.measure("nanosleep", 1e-5, n=3, keep_samples=False)
    point = json.loads(records.jsonl_point(m))
    with open(path, "w") as f:
        f.write(records.jsonl_header({}, {}, "2026-01-01T00:00:00Z") + "\n")
        for i in range(n):
            point["requested_ns"] = 1000 + i
            f.write(json.dumps(point) + "\n")


# The child's growth: its resident memory after the import, against its peak
# (VmHWM) over the read, the peak first reset (clear_refs 5, Linux 4.0 on),
# so that the import's own peak (compiling the package where no bytecode
# is cached) hides nothing of the read's.
_CHILD = """
import re, sys, sleepacc
def kb(field):
    with open("/proc/self/status") as f:
        return int(re.search(field + r":\\s+(\\d+)", f.read()).group(1))
try:
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
except OSError as e:
    sys.exit(f"SKIP: the peak RSS cannot be reset here ({e})")
base = kb("VmRSS")
s = sleepacc.load(sys.argv[1])
assert len(s) == %d and s[-1].requested_ns == %d
print(kb("VmHWM") - base)
"""


def _grown_by_load(path, points, last):
    """Bytes of RSS a child grew by loading `path` (`points` points, the last
    requesting `last`), measured from its peak reset after the import."""
    p = subprocess.run([sys.executable, "-c", _CHILD % (points, last), str(path)],
                       capture_output=True, text=True, timeout=120)
    if p.stderr.startswith("SKIP: "):
        pytest.skip(p.stderr[6:].strip())
    assert p.returncode == 0, p.stderr
    return int(p.stdout) * 1024


def test_load_holds_points_not_the_parse(tmp_path):
    path = tmp_path / "big.jsonl"
    _write(path)
    size = os.path.getsize(path)
    grown = _grown_by_load(path, N, 999 + N)
    assert grown < 1.35 * size, f"reading {size} bytes took {grown} more bytes of RSS"


def test_irtt_table_read_a_row_at_a_time(tmp_path):
    # irtt sleep's table: ~47 bytes a row, each row a Measurement with the
    # mean only: about 7x the file here; 9.7x when each None statistic took
    # 8 bytes, 26x when every row was a point record (two dicts) first
    rows = 20_000
    path = tmp_path / "irtt.txt"
    with open(path, "w", encoding="utf-8") as f:
        f.write("Sleep Duration        Mean Error       % Error\n")
        for i in range(1, rows + 1):
            err = 50 + i % 9000
            f.write(f"{i}ns".rjust(14) + f"{err}ns".rjust(18) + f"{100 * err / i:.1f}".rjust(14)
                    + "\n")
    size = os.path.getsize(path)
    grown = _grown_by_load(path, rows, rows)
    assert grown < 8.5 * size, f"reading {size} bytes of irtt's table took {grown} more bytes"


def test_points_read_share_nothing_a_caller_changes(tmp_path):
    path = tmp_path / "r.jsonl"
    _write(path, 3)
    s = sleepacc.load(path)
    before = [m.to_dict() for m in s]
    assert before[0]["env"] == before[1]["env"]
    assert before[0]["ctx_switches"] == before[1]["ctx_switches"]
    s[0].env["cpu"] = 3
    s[0].ctx_switches["voluntary"] += 1
    assert s[0].env["cpu"] == 3 and s[0].to_dict()["env"]["cpu"] == 3
    voluntary = before[0]["ctx_switches"]["voluntary"]
    assert s[0].to_dict()["ctx_switches"]["voluntary"] == voluntary + 1
    assert [m.to_dict() for m in s[1:]] == before[1:]
    again = pickle.loads(pickle.dumps(s))
    assert again == s and again[0].env["cpu"] == 3 and again[1].to_dict() == before[1]


def test_packed_stats_keep_each_value_and_its_type():
    # an int stays an int and a float a float, at the ends of int64 too;
    # what does not pack (a bool, an int beyond int64, a NaN) is kept as given
    nan = float("nan")
    for values in ({"n": 3, "min": -(2**63), "max": 2**63 - 1, "mean": 5.0, "std": -0.0},
                   {"n": 1, "min": True, "max": 2**63, "mean": nan}):
        st = sleepacc.Stats(values)
        want = {k: values.get(k) for k in st}
        got = st.to_dict()
        assert list(got) == list(want) and got == want
        assert [type(v) for v in got.values()] == [type(v) for v in want.values()]
        assert [st[k] for k in st] == [getattr(st, k) for k in st] == list(want.values())
        assert repr(pickle.loads(pickle.dumps(st)).to_dict()) == repr(got)
    assert str(sleepacc.Stats({"n": 3, "std": -0.0}).std) == "-0.0"


def test_streamed_read_keeps_the_reader_rules(tmp_path):
    # a torn last line dropped, a duplicate warned with both lines, the footer read
    path = tmp_path / "r.jsonl"
    m = sleepacc.measure("nanosleep", 1e-5, n=3, keep_samples=False)
    line = records.jsonl_point(m)
    path.write_text(records.jsonl_header({}, {}, "2026-01-01T00:00:00Z") + "\n" + line + "\n"
                    + line + "\n" + records.jsonl_footer("2026-01-01T00:00:01Z") + "\n"
                    + line[:20])
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        s = sleepacc.load(path)
    assert len(s) == 2 and s.finished == "2026-01-01T00:00:01Z"
    assert [str(w.message) for w in caught] == [
        f"{path}:3: duplicate point nanosleep relative 10000 ns (first at line 2)"]
    assert s[0].to_dict() == m.to_dict()
