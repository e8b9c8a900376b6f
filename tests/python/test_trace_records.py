"""A results file carries a trace under its versioned key (docs/schema.md):
Sweep.save and the JSON Lines form write a point's trace, sleepacc.load
reads it back equal, and the reader checks it like every other field (a bad
field is one ValueError naming it; a trace of an unknown schema tag is
ignored).  Built from a synthetic trace, so it runs everywhere; one run with
a real trace where one can run (root and tracefs).
"""
import copy
import json

import pytest

import sleepacc
from sleepacc import records
from sleepacc.trace import Trace

from test_trace import REASON

TERMS = records.TRACE_TERMS


def synthetic(n=4):
    """A trace dict of n samples, the last incomplete: each complete
    sample's terms sum to its lateness."""
    terms = {name: [] for name in TERMS}
    lateness, complete = [], []
    for i in range(n):
        parts = [300 + i, 50_000, 8_000 + 10 * i, 5_000, 1_200, 2_000 + i]
        done = i < n - 1
        for name, v in zip(TERMS, parts):
            terms[name].append(v if done else None)
        lateness.append(sum(parts))
        complete.append(done)
    return {"schema": records.TRACE_SCHEMA, "method": "nanosleep", "mode": "relative",
            "requested_ns": 1_000_000, "slack_ns": None, "cpu": None, "n": n,
            "lateness": lateness, "terms": terms, "complete": complete,
            "idle": [1, 0, -1, 0][:n] + [0] * max(0, n - 4), "idle_state": [-1] * n,
            "untraced": [x - 900 for x in lateness], "gaps": 1, "lost": 0,
            "missed_pages": 0, "events": 6 * n, "interrupted": False, "mounted": False,
            "tracefs": "/sys/kernel/tracing"}


def sweep_of(trace):
    m = sleepacc.Measurement.from_trace(trace)
    return sleepacc.Sweep([m], host={"hostname": "h"}, settings={"command": "trace"})


@pytest.mark.parametrize("form", ["json", "jsonl"])
def test_a_trace_round_trips_through_a_results_file(tmp_path, form):
    t = Trace.from_dict(synthetic())
    s = sweep_of(t)
    m = s[0]
    assert m.trace is t and m.n == t.n
    assert m.stats["min"] <= m.stats["median"] <= m.stats["p99"] <= m.stats["max"]
    path = tmp_path / f"t.{form}"
    if form == "json":
        s.save(path)
    else:
        path.write_text("\n".join([records.jsonl_header(s.host, s.settings, "now"),
                                   records.jsonl_point(m)]) + "\n")
    back = sleepacc.load(path)
    assert back[0].trace is not None and back[0].trace.to_dict() == t.to_dict()
    assert back[0] == m
    if form == "json":
        assert back == s


def test_a_point_without_a_trace_writes_no_trace_key():
    m = sleepacc.measure("nanosleep", 1e-5, n=3)
    assert m.trace is None and "trace" not in m.to_dict()


def _bad(mutate):
    d = synthetic()
    mutate(d)
    return d


@pytest.mark.parametrize("mutate, named", [
    (lambda d: d["lateness"].pop(), "trace.lateness"),
    (lambda d: d["terms"].pop("slack"), "trace.terms"),
    (lambda d: d["terms"]["slack"].__setitem__(0, None), "trace.terms.slack[0]"),
    (lambda d: d["terms"]["other"].__setitem__(3, 5), "trace.terms.other[3]"),
    (lambda d: d["complete"].__setitem__(0, 1), "trace.complete"),
    (lambda d: d.__setitem__("mode", "sideways"), "trace.mode"),
    (lambda d: d.__setitem__("requested_ns", "1ms"), "trace.requested_ns"),
    (lambda d: d["untraced"].__setitem__(0, 1.5), "trace.untraced[0]"),
    (lambda d: d.pop("idle"), "trace.idle"),
])
def test_a_bad_trace_field_is_named_on_read(tmp_path, mutate, named):
    s = sweep_of(Trace.from_dict(synthetic())).to_dict()
    s["measurements"][0]["trace"] = _bad(mutate)
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(s))
    with pytest.raises(ValueError) as exc:
        sleepacc.load(path)
    assert str(path) in str(exc.value) and named in str(exc.value), exc.value
    with pytest.raises(ValueError, match="trace"):
        Trace.from_dict(_bad(mutate))


def test_a_trace_of_an_unknown_schema_is_ignored(tmp_path):
    s = sweep_of(Trace.from_dict(synthetic())).to_dict()
    s["measurements"][0]["trace"] = {"schema": "sleepacc-trace/9", "anything": [1]}
    path = tmp_path / "future.json"
    path.write_text(json.dumps(s))
    back = sleepacc.load(path)
    assert back[0].trace is None and back[0].n == 4


def test_the_reader_does_not_change_what_it_checks():
    d = synthetic()
    before = copy.deepcopy(d)
    Trace.from_dict(d)
    assert d == before


@pytest.mark.skipif(REASON is not None, reason=REASON or "")
def test_a_real_trace_saved_by_the_cli_loads_back(tmp_path):
    import subprocess
    import sys
    from conftest import child_env
    path = tmp_path / "trace.json"
    out = subprocess.run([sys.executable, "-m", "sleepacc", "trace", "timerfd", "1ms", "-n", "20",
                          "-o", str(path), "--json"], capture_output=True, text=True,
                         timeout=120, env=child_env())
    assert out.returncode == 0, out.stderr
    printed = json.loads(out.stdout)
    back = sleepacc.load(path)
    assert len(back) == 1 and back[0].trace.to_dict() == printed
    assert back[0].n == len(printed["untraced"])
