"""Reading a big result file: the JSON Lines form is parsed one line at a
time, each point turned into its Measurement as soon as it is checked, so
that the memory a read needs is the file's text plus what the Sweep holds,
not a parsed record of every point beside it.  Checked in a child (its own
peak RSS): 20,000 points without samples, read by sleepacc.load.  The bound
(6x the file: the text, the Measurements, the interpreter) is one the old
reader, at about 11x, did not meet; figures for 10^6 points are in the
change that made it."""

import json
import os
import subprocess
import sys

import sleepacc
from sleepacc import records

N = 20_000


def _write(path):
    m = sleepacc.measure("nanosleep", 1e-5, n=3, keep_samples=False)
    point = json.loads(records.jsonl_point(m))
    with open(path, "w") as f:
        f.write(records.jsonl_header({}, {}, "2026-01-01T00:00:00Z") + "\n")
        for i in range(N):
            point["requested_ns"] = 1000 + i
            f.write(json.dumps(point) + "\n")


def test_load_holds_points_not_the_parse(tmp_path):
    path = tmp_path / "big.jsonl"
    _write(path)
    size = os.path.getsize(path)
    code = ("import resource, sys, sleepacc\n"
            "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "s = sleepacc.load(sys.argv[1])\n"
            "assert len(s) == %d and s[-1].requested_ns == %d\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base)\n" % (N, 999 + N))
    p = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    grown = int(p.stdout) * 1024
    assert grown < 6 * size, f"reading {size} bytes took {grown} more bytes of RSS"


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
