"""Non-finite numbers in result files: NaN and infinities are not JSON, no
writer here writes one, and a file that holds one (written by hand or by
another tool) is refused on read with the field named -- in the CPU figures,
the environment, a statistic -- so that no command fails later on it with a
traceback (the model's explanation of an infinite timer slack).  What the
report's json format writes from a Measurement that holds one is strict
JSON (null)."""

import json
import math
import subprocess
import sys

import pytest

import sleepacc
from sleepacc import records, report

POINT = {"type": "point", "method": "nanosleep", "mode": "relative", "requested_ns": 10000,
         "n": 3, "stats": {"n": 3, "min": 60000, "max": 70000, "mean": 65000.0, "std": 1.0,
                           "median": 65000, "p99": 70000},
         "missed": 0, "cpu_ns_per_call": 1000.0, "cpu_percent": 2.5,
         "ctx_switches": {"voluntary": 3, "involuntary": 0}, "wall_ns": 1000000,
         "env": {"slack_ns": 50000, "policy": None}, "samples": [60000, 65000, 70000]}
HEADER = {"schema": records.SCHEMA, "type": "header", "host": {}, "settings": {},
          "started": None}


def write(tmp_path, point):
    path = tmp_path / "r.jsonl"
    # json.dumps writes NaN and Infinity as the bare tokens another tool might
    path.write_text(json.dumps(HEADER) + "\n" + json.dumps(point) + "\n")
    return path


def with_value(key, value):
    p = json.loads(json.dumps(POINT))
    obj = p
    *head, last = key.split(".")
    for k in head:
        obj = obj[k]
    obj[last] = value
    return p


CASES = ["cpu_percent", "cpu_ns_per_call", "env.slack_ns", "stats.mean",
         "ctx_switches.voluntary"]


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf], ids=["nan", "inf", "-inf"])
@pytest.mark.parametrize("key", CASES)
def test_refused_on_read_naming_the_field(tmp_path, key, value):
    path = write(tmp_path, with_value(key, value))
    with pytest.raises(ValueError) as exc:
        sleepacc.load(path)
    assert str(exc.value).startswith(f"{path}:2: {key} must be a finite number"), exc.value


def test_refused_in_the_header(tmp_path):
    path = tmp_path / "r.jsonl"
    head = dict(HEADER, host={"loadavg_1m": math.nan})
    path.write_text(json.dumps(head) + "\n" + json.dumps(POINT) + "\n")
    with pytest.raises(ValueError, match=r":1: host\.loadavg_1m must be a finite number"):
        sleepacc.load(path)


def test_a_finite_file_still_reads(tmp_path):
    s = sleepacc.load(write(tmp_path, POINT))
    assert len(s) == 1 and s[0].env["slack_ns"] == 50000


def test_report_json_is_strict(tmp_path):
    s = sleepacc.load(write(tmp_path, POINT))
    s[0].cpu_percent = math.nan
    s[0].cpu_ns_per_call = math.inf

    def bare(token):
        raise AssertionError(f"{token} written")
    rows = json.loads(report.format(s, "json"), parse_constant=bare)
    assert rows[0]["cpu_percent"] is None and rows[0]["cpu_ns_per_call"] is None


@pytest.mark.parametrize("command", ["model", "report", "plot"])
def test_infinite_slack_is_one_line(tmp_path, command):
    path = write(tmp_path, with_value("env.slack_ns", math.inf))
    args = [path, "-o", tmp_path / "f.svg"] if command == "plot" else [path]
    p = subprocess.run([sys.executable, "-m", "sleepacc", command, *map(str, args)],
                       capture_output=True, text=True, timeout=120)
    assert "Traceback" not in p.stderr
    assert p.returncode == 1
    assert p.stderr.strip() == (f"sleepacc: error: {path}:2: env.slack_ns must be a finite "
                                "number, got inf")
