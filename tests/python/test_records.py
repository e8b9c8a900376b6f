"""One sweep loop and one record: sleepacc.iter_sweep is the only loop over
points (the API's sweep, the CLI's sweep and the doctor's short sweep use
it, with the ladder and the floor rule in sweep_points); sleepacc.records
holds the one error rule and the one flattener, the file forms and the
results file, and never imports the measuring API (no import cycle)."""
import ast
import json
import os
import pathlib

import numpy as np
import pytest

import sleepacc
from sleepacc import _api, cli, doctor, records, report

PKG = pathlib.Path(sleepacc.__file__).resolve().parent
# the repository (docs, test data): from this file, not from the package,
# which the sanitizer run imports from a copy under build/
ROOT = pathlib.Path(__file__).resolve().parents[2]


def floors():
    return [m.name for m in sleepacc.methods() if m.family == "baseline" and m.available]


# --------------------------------------------------------------- the points


def test_default_ladder_is_irtts_eleven_rows_and_floors_run_at_zero_only():
    assert [round(d * 1e9) for d in sleepacc.DEFAULT_DURATIONS] == [
        1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000,
        200_000_000, 500_000_000]
    points = _api.sweep_points()
    by_method = {}
    for p in points:
        by_method.setdefault(p.method, []).append(p.duration_ns)
    assert floors(), "the registry has floor methods"
    for name, ds in by_method.items():
        if name in floors():
            assert ds == [0], name
        else:
            assert ds == [round(d * 1e9) for d in sleepacc.DEFAULT_DURATIONS], name
    assert set(by_method) == {m.name for m in sleepacc.methods() if m.available}


def test_floor_rule_with_an_explicit_ladder_and_periodic_mode():
    pts = _api.sweep_points(["nanosleep", "syscall"], [1e-3, 0, 1e-3, 1e-5])
    assert [tuple(p) for p in pts] == [("nanosleep", 1_000_000), ("nanosleep", 0),
                                      ("nanosleep", 10_000), ("syscall", 0)]
    pts = _api.sweep_points(["nanosleep"], [0, 1e-3], "periodic")
    assert [tuple(p) for p in pts] == [("nanosleep", 1_000_000)]
    with pytest.raises(ValueError, match="'syscall' is a floor"):
        _api.sweep_points(["syscall"], [1e-3], "periodic")
    assert all(p.method not in floors() for p in _api.sweep_points(None, [1e-3], "periodic"))
    with pytest.raises(ValueError, match="nothing to measure"):
        _api.sweep_points(["nanosleep"], [0], "periodic")


# --------------------------------------------------------------- the loop


def test_iter_sweep_validates_at_the_call_and_yields_one_point_at_a_time(monkeypatch):
    runs = []
    real_run = _api._run
    monkeypatch.setattr(_api, "_run", lambda plan: runs.append(plan) or real_run(plan))
    with pytest.raises(ValueError, match=r"durations\[1\]"):
        _api.iter_sweep(["nanosleep"], [1e-5, -1])
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        _api.iter_sweep(["nanosleep"], [1e-5], colour=1)
    with pytest.raises(ValueError, match="must be an available method"):
        _api.iter_sweep(["nanosleep", "nope"], [1e-5])
    assert runs == []
    it = _api.iter_sweep(["nanosleep", "clock"], [1e-5, 1e-4], budget=0.01)
    assert runs == []                          # nothing runs before next()
    first = next(it)
    assert isinstance(first, sleepacc.Measurement) and len(runs) == 1
    rest = list(it)
    assert [(m.method, m.requested_ns) for m in [first] + rest] == [
        ("nanosleep", 10_000), ("nanosleep", 100_000), ("clock", 0)]


def test_iter_sweep_skip_and_per_point_hook():
    seen = []

    def per_point(rest):
        seen.append([tuple(p) for p in rest])
        return {"n": 3, "budget": None}

    out = list(_api.iter_sweep(["nanosleep", "spin"], [1e-5, 1e-4], budget=0.01,
                               skip=[("nanosleep", 100_000)], per_point=per_point))
    assert [(m.method, m.requested_ns) for m in out] == [
        ("nanosleep", 10_000), ("spin", 10_000), ("spin", 100_000)]
    assert [m.n for m in out] == [3, 3, 3]     # the hook's keywords were applied
    assert seen[0] == [("nanosleep", 10_000), ("spin", 10_000), ("spin", 100_000)]
    assert [len(s) for s in seen] == [3, 2, 1]


def test_the_cli_and_the_doctor_use_the_one_loop(monkeypatch, tmp_path, capsys):
    calls = []
    real = _api.iter_sweep

    def spy(*a, **kw):
        calls.append((a, kw))
        return real(*a, **kw)
    monkeypatch.setattr(_api, "iter_sweep", spy)
    monkeypatch.setattr(sleepacc, "iter_sweep", spy)
    out = tmp_path / "run.jsonl"
    assert cli.main(["sweep", "--methods", "nanosleep,syscall", "--durations", "0,10us",
                     "--budget", "0.01", "-o", str(out), "--format", "none"]) == 0
    assert len(calls) == 1
    back = sleepacc.load(out)
    assert [(m.method, m.requested_ns) for m in back] == [
        ("nanosleep", 0), ("nanosleep", 10_000), ("syscall", 0)]
    assert doctor.short_sweep(0.005)
    assert len(calls) == 2


# --------------------------------------------------------------- the record


def test_error_rule():
    assert records.error_ns("relative", 1000, 1070) == 70
    assert records.error_ns("periodic", 1000, 70) == 70
    assert records.error_ns(None, 1000, 990) == -10
    assert records.error_ns("relative", 1000, None) is None
    # the one rule's origin, also the undersleep threshold the exporter gives the core
    assert records.origin_ns("relative", 1000) == 1000
    assert records.origin_ns("periodic", 1000) == 0
    arr = np.arange(3, dtype=np.int64)
    assert records.error_ns("periodic", 1000, arr) is arr           # lateness: no copy
    assert list(records.error_ns("relative", 0, arr)) == [0, 1, 2]
    assert records.error_ns("relative", 0, arr) is not arr         # relative: a new array


def test_flatten_of_a_measurement_and_of_its_dict_agree():
    for mode in ("relative", "periodic"):
        m = sleepacc.measure("nanosleep", 1e-4, budget=0.01, mode=mode)
        row = records.flatten(m)
        assert row == records.flatten(m.to_dict()) == m.to_record()
        assert row["error_ns"] == m.error("median") == records.stat_error(row)
        assert records.stat_error(row, "p99") == m.error("p99") == records.stat_error(
            m.to_dict(), "p99")
        assert row["actual_ns"] == row["requested_ns"] + row["error_ns"]
        for f in sleepacc._core.stats_fields:
            key = f if f in records.COUNT_FIELDS else f"{f}_ns"
            assert row[key] == m.stats[f]
    s = sleepacc.Sweep([m])
    assert s.to_records() == [records.flatten(m)]


def test_records_does_not_import_the_api():
    """The import graph is records <- _api, never back (no cycle)."""
    package = set()   # what records imports from the sleepacc package, outside itself
    files = sorted((PKG / "records").glob("*.py"))
    assert files
    for path in files:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                package.update(a.name for a in node.names if a.name.startswith("sleepacc"))
            elif isinstance(node, ast.ImportFrom) and node.level == 1:
                continue   # a room of records itself
            elif isinstance(node, ast.ImportFrom) and (node.level or "sleepacc" in (node.module or "")):
                package.update(f"{node.module or ''}:{a.name}" for a in node.names)
    assert package <= {":_core"}, package   # only the compiled core, below everything
    api = ast.parse((PKG / "_api.py").read_text())
    top = [n for n in api.body if isinstance(n, ast.ImportFrom) and n.module is None
           and n.level == 1]
    assert any("records" in [a.name for a in n.names] for n in top)


def test_no_copies_of_the_writer_or_the_table_in_the_cli():
    src = "".join(f.read_text() for f in sorted((PKG / "cli").glob("*.py")))
    assert "def main" in src
    assert "class ResultsFile" not in src and "def _table" not in src
    assert "os.fsync" not in src


# --------------------------------------------------------------- the results file


def test_results_file_append_torn_tail_and_resume(tmp_path):
    m = sleepacc.measure("nanosleep", 1e-5, budget=0.005, keep_samples=False)
    path = tmp_path / "r.jsonl"
    with records.ResultsFile(path) as f:
        f.open()
        f.write_header({"hostname": "h"}, {"mode": "relative"}, "2026-01-01T00:00:00+00:00")
        f.write_point(m)
    good = path.read_bytes()
    path.write_bytes(good + b'{"type": "point", "meth')       # killed mid-write
    with pytest.raises(FileExistsError):
        records.ResultsFile(path).open()
    f = records.ResultsFile(path)
    f.open(resume=True)
    assert f.keys == {("nanosleep", "relative", 10_000)}
    assert path.read_bytes() == good                          # the torn tail is cut off
    f.write_footer("2026-01-01T00:00:01+00:00")
    f.close()
    doc = records.read(path)
    assert doc["finished"] == "2026-01-01T00:00:01+00:00"
    assert sleepacc.Sweep.from_dict(doc)[0] == m
    assert sleepacc.load(path)[0] == m
    path.write_text('{"schema": "sleepacc/1", "type": "header"}\n{"type": "point"}\n{}\n')
    with pytest.raises(ValueError, match=":2: bad point record"):
        records.ResultsFile(path).open(resume=True)


def test_a_point_of_an_unknown_mode_is_refused_naming_the_cores_modes():
    m = sleepacc.measure("nanosleep", 1e-4, n=2).to_dict()
    records.check_point(m, "f:2")
    m["mode"] = "sideways"
    with pytest.raises(ValueError, match=r"^f:2: mode must be 'relative' or 'periodic', "
                                         r"got 'sideways'$"):
        records.check_point(m, "f:2")


@pytest.mark.parametrize("name", ["nanosleep\0x", "nano\nsleep", "", 7])
def test_a_method_name_that_is_not_printable_text_is_refused(name):
    # a NUL in a file's method name was read, and the model explained
    # "nanosleep\0x" as nanosleep, printing the NUL in its table
    m = sleepacc.measure("nanosleep", 1e-4, n=2).to_dict()
    m["method"] = name
    with pytest.raises(ValueError, match=r"^f:2: method must be a method name \(printable text\)"):
        records.check_point(m, "f:2")


def test_a_method_name_the_core_writes_is_read():
    # the reader's rule is the core's (control characters): a name sa.save
    # writes, with a no-break space or a line separator, is read, not refused
    m = sleepacc.measure("nanosleep", 1e-4, n=2).to_dict()
    for name in ("caf\u00e9 sleep", "a\u00a0b", "a\u2028b"):
        m["method"] = name
        records.check_point(m, "f:2")


def test_a_null_where_the_reader_allows_one_is_read_as_absent(tmp_path):
    # check_point lets missed, wall_ns, cpu_ns_per_call and cpu_percent be
    # null (an absent key in Lua); load raised "bad point record
    # (TypeError(\"float() argument must be ...\"))" for them
    sw = sleepacc.sweep(["nanosleep"], [1e-4], budget=0.01)
    doc = sw.to_dict()
    for k in ("missed", "wall_ns", "cpu_ns_per_call", "cpu_percent"):
        doc["measurements"][0][k] = None
    path = tmp_path / "nulls.json"
    path.write_text(json.dumps(doc))
    m = sleepacc.load(path)[0]
    assert (m.missed, m.wall_ns, m.cpu_percent) == (0, 0, -1.0)
    assert m.stats == sw[0].stats


@pytest.mark.parametrize("change,exc,match", [
    # each was taken as it came: 1.7 ns truncated to 1 ns, a mode of no
    # meaning kept, or a KeyError/TypeError/AttributeError without a name
    ({"requested_ns": 1.7}, ValueError, r"^record: requested_ns must be an integer, got float"),
    ({"mode": "x"}, ValueError, r"^record: mode must be 'relative' or 'periodic', got 'x'$"),
    ({"stats": "x"}, ValueError, r"^record: stats must be a JSON object, got str"),
    ({"stats": {"median": 5}}, ValueError, r"^record: bad point record \(no stats\.n\)$"),
    ({"stats": None}, ValueError, r"^record: stats must be a JSON object, got null"),
    ({"n": "3"}, ValueError, r"^record: n must be an integer, got str"),
])
def test_from_dict_checks_a_point_as_the_reader_does(change, exc, match):
    d = {**sleepacc.measure("nanosleep", 1e-4, n=2).to_dict(), **change}
    with pytest.raises(exc, match=match):
        sleepacc.Measurement.from_dict(d)
    with pytest.raises(exc, match=match.replace("^record:", "^record: measurement 1:")):
        sleepacc.Sweep.from_dict({"schema": records.SCHEMA, "measurements": [d]})


def test_from_dict_of_no_dict_or_no_list_names_what_it_got(tmp_path):
    with pytest.raises(TypeError, match=r"^record: must be a point record \(a dict\), got list$"):
        sleepacc.Measurement.from_dict([1, 2])
    with pytest.raises(TypeError, match=r"^s: must be a sweep's JSON form \(a dict\), got list$"):
        sleepacc.Sweep.from_dict([], "s")
    for ms in (5, "abc"):
        with pytest.raises(ValueError, match=r"^record: measurements must be a list, got "):
            sleepacc.Sweep.from_dict({"schema": records.SCHEMA, "measurements": ms})
    # a file's point without stats.n: its line, not "is not a result file: 'n'"
    sw = sleepacc.sweep(["nanosleep"], [1e-4], budget=0.01)
    doc = sw.to_dict()
    del doc["measurements"][0]["stats"]["n"]
    path = tmp_path / "non.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(ValueError, match=r"non\.json:1: measurement 1: bad point record "
                                         r"\(no stats\.n\)$"):
        sleepacc.load(path)


def test_save_never_writes_a_file_load_refuses(tmp_path):
    # a NaN statistic was written as the token NaN, which load (and any
    # strict JSON reader) then refused: the sweep was saved and lost
    sw = sleepacc.sweep(["nanosleep"], [1e-4], budget=0.01)
    sw[0].stats = sleepacc.Stats({**sw[0].stats, "mean": float("nan")})
    path = tmp_path / "nan.json"
    with pytest.raises(ValueError, match=r"^save: measurement 1: stats\.mean must be a finite "
                                         r"number, got nan$"):
        sw.save(path)
    assert not path.exists()
    sw = sleepacc.sweep(["nanosleep"], [1e-4], budget=0.01)
    sw[0].cpu_percent = float("nan")                 # unknown: written as null
    sw.save(path)
    json.loads(path.read_text(), parse_constant=lambda c: pytest.fail(f"{c} in the file"))
    assert sleepacc.load(path)[0].cpu_percent == -1.0


def test_save_where_no_file_can_be_made_names_the_file_asked_for(tmp_path):
    # it named the temporary file beside it ('.../.x.json.55u9evdf.tmp.json')
    sw = sleepacc.Sweep([sleepacc.measure("nanosleep", 1e-4, n=2)])
    path = tmp_path / "no" / "x.json"
    with pytest.raises(FileNotFoundError) as info:
        sw.save(path)
    assert info.value.filename == str(path) and ".tmp" not in str(info.value)


def test_results_file_write_failure_names_the_file_and_keeps_whole_lines(tmp_path):
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full")
    f = records.ResultsFile("/dev/full")
    f.open()
    with pytest.raises(OSError) as exc:
        f.write_line(json.dumps({"x": 1}))
    assert exc.value.filename == "/dev/full"
    f.close()


# --------------------------------------------------------------- for analysis tools


def test_rows_carry_the_experiment_variables_and_frames_concatenate():
    pd = pytest.importorskip("pandas")
    a = sleepacc.sweep(["nanosleep"], [1e-5], budget=0.01)
    b = sleepacc.sweep(["nanosleep"], [1e-5], budget=0.01, slack=1)
    ra, rb = a.to_records()[0], b.to_records()[0]
    for col in records.CONTEXT_COLUMNS:
        assert col in ra and col in rb
    assert ra["schema"] == "sleepacc/1" and ra["host"] == os.uname().nodename
    assert ra["os"] == os.uname().sysname and ra["kernel"] == os.uname().release
    assert ra["slack_ns"] == a.host["timer_slack_ns"]     # the thread's own, in effect
    assert rb["slack_ns"] == 1                            # what sleepacc applied
    assert ra["policy"] == a.host["sched_policy"] and ra["cpu"] is None
    both = pd.concat([a.to_frame(), b.to_frame()], ignore_index=True)
    assert list(both.columns) == list(ra) and len(both) == 2
    assert sorted(both["slack_ns"]) == sorted([1, a.host["timer_slack_ns"]])


def test_per_sample_frame():
    pytest.importorskip("pandas")
    s = sleepacc.sweep(["nanosleep", "spin"], [1e-5], budget=0.01)
    df = s.to_frame(samples=True)
    assert len(df) == sum(m.n for m in s)
    for m in s:
        part = df[df["method"] == m.method]
        assert list(part["sample"]) == list(range(m.n))
        assert list(part["value_ns"]) == list(m.samples)
        assert list(part["error_ns"]) == list(m.errors_ns)
        starts = getattr(m, "starts", None)
        if starts is not None:   # the core's start times: ns since the run began, rising
            assert list(part["start_ns"]) == list(starts)
            assert part["start_ns"].is_monotonic_increasing
    assert (df["host"] == os.uname().nodename).all()
    streamed = sleepacc.measure("nanosleep", 1e-5, budget=0.005, keep_samples=False)
    with pytest.raises(ValueError, match="no samples"):
        streamed.to_frame()
    with pytest.raises(ValueError, match="kept its samples"):
        sleepacc.Sweep([streamed]).to_frame(samples=True)


def test_html_reprs():
    s = sleepacc.sweep(["nanosleep"], [1e-5, 1e-4], budget=0.01)
    html = s._repr_html_()
    assert html.startswith("<table>") and html.count("<tr>") == 3      # head + 2 rows
    assert "median error" in html and "nanosleep" in html and s.host["hostname"] in html
    one = s[0]._repr_html_()
    assert one.count("<tr>") == 2 and "10µs" in one


def test_notebook_progress_only_in_a_kernel_and_only_when_long(monkeypatch):
    import sys
    import types
    shown = []

    class Handle:
        def update(self, data, raw):
            shown.append(("update", data["text/plain"]))

    def display(data, raw, display_id):
        shown.append(("display", data["text/plain"]))
        return Handle()
    fake = types.ModuleType("IPython")
    fake.get_ipython = lambda: None
    fake_display = types.ModuleType("IPython.display")
    fake_display.display = display
    monkeypatch.setitem(sys.modules, "IPython", fake)
    monkeypatch.setitem(sys.modules, "IPython.display", fake_display)
    assert not _api._in_notebook()                  # IPython without a kernel: a terminal
    fake.get_ipython = lambda: types.SimpleNamespace(kernel=object())
    assert _api._in_notebook()
    sleepacc.sweep(["nanosleep"], [1e-5], budget=0.005)
    assert shown == []                              # a short sweep shows nothing
    bar = _api._NotebookProgress(after=0.0)
    for i in range(1, 4):
        bar(i, 3, "nanosleep", 1e-3)
    assert [k for k, _ in shown] == ["display", "update", "update"]
    assert shown[0][1].startswith("sweep: 1/3 points") and "3 points in" in shown[-1][1]


def test_times_of_day_are_the_schemas():
    import re
    s = sleepacc.sweep(["nanosleep"], [1e-5], budget=0.005)
    for t in (s.started, s.finished):
        assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", t), t
    assert "2026-12-01T06:21:38.017Z" in (ROOT / "docs" / "schema.md").read_text()


def test_sweep_to_stdout(capfd):
    assert cli.main(["sweep", "--methods", "nanosleep", "--durations", "10us,100us",
                     "--budget", "0.01", "-o", "-"]) == 0
    out = capfd.readouterr().out
    doc = records.loads(out)
    assert [p["requested_ns"] for p in doc["measurements"]] == [10_000, 100_000]
    assert not os.path.exists("-")
    assert cli.main(["sweep", "--methods", "nanosleep", "--durations", "10us", "-o", "-",
                     "--format", "wide"]) == 2
    assert cli.main(["sweep", "--methods", "nanosleep", "--durations", "10us", "-o", "-",
                     "--resume"]) == 2


# --------------------------------------------------------------- irtt's table text

IRTT_SEED = (ROOT / "tests" / "data" / "seeds").glob("004_*.txt")


def _irtt_rows(text):
    return [ln.split() for ln in text.splitlines()
            if len(ln.split()) == 3 and ln.split()[0][0].isdigit()]


def test_irtt_table_text_is_read_by_load(tmp_path):
    (seed,) = IRTT_SEED
    text = seed.read_text(encoding="utf-8")
    table = text[text.index("Sleep Duration"):text.index("500ms") + 40].split("\n\n")[0]
    path = tmp_path / "irtt.txt"
    path.write_text("Testing sleep accuracy...\n\n" + table + "\n")
    s = sleepacc.load(path)
    assert s.settings == {"source": "irtt sleep"} and len(s) == 11
    assert [m.requested_ns for m in s] == [round(d * 1e9) for d in sleepacc.DEFAULT_DURATIONS]
    first = s[0]
    assert first.method == "irtt" and first.n is None and first.stats.median is None
    # 1ns asked, 381ns mean error; its % Error (38194.1) pins the fraction irtt dropped
    assert int(first.stats.mean) == 1 + 381 and first.stats.mean == pytest.approx(382.941)
    assert records.flatten(first)["mean_ns"] == first.stats.mean   # a mean is a double, as the core's
    # irtt's layout back, the durations and mean errors as irtt printed them
    mine = _irtt_rows(s.table("irtt"))
    assert [r[:2] for r in mine] == [r[:2] for r in _irtt_rows(table)]
    with pytest.raises(ValueError, match="only the mean"):
        s.table("wide")
    assert cli.main(["report", str(path), "--format", "csv"]) == 0
    assert cli.main(["report", str(path)]) == 0      # default: irtt's layout (means only)
    assert cli.main(["report", str(path), "--format", "markdown"]) == 0   # n shown as "?"
    # MIDAS and xmame print loop counts: refused, not invented
    with pytest.raises(ValueError, match="loop count is unknown"):
        report.format(s, "midas")


def test_irtt_several_method_blocks_and_go_durations():
    assert records.go_duration_ns("2.000929ms") == 2_000_929
    assert records.go_duration_ns("1m30s") == 90_000_000_000
    assert records.go_duration_ns("-3µs") == -3_000
    with pytest.raises(ValueError):
        records.go_duration_ns("3 parsecs")
    s = sleepacc.sweep(["nanosleep", "spin"], [1e-5, 1e-4], budget=0.01)
    doc = records.loads(s.table("irtt"))
    assert [(p["method"], p["requested_ns"]) for p in doc["measurements"]] == [
        (m.method, m.requested_ns) for m in s]


def test_real_irtt_sleep_output_is_read(tmp_path):
    import shutil
    import subprocess
    irtt = shutil.which("irtt")
    if irtt is None:
        pytest.skip("Debian's irtt is not installed (make deps installs it)")
    try:   # each row takes irtt a few seconds: read what it printed in 8 s
        out = subprocess.run([irtt, "sleep"], capture_output=True, text=True, timeout=8).stdout
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
    rows = _irtt_rows(out)
    if not rows:
        pytest.skip("irtt sleep printed no row within 8 s on this (busy) machine")
    path = tmp_path / "irtt.txt"
    path.write_text(out)
    s = sleepacc.load(path)
    assert len(s) == len(rows)
    for m, (d, err, _pct) in zip(s, rows):
        assert m.method == "irtt" and sleepacc._core.format_duration(m.requested_ns) == d
        # irtt prints a Go duration: the mean error truncated to whole ns
        assert sleepacc._core.format_duration(int(m.stats.mean - m.requested_ns)) == err


def test_a_statistic_outside_int64_names_the_range():
    # it said "outside int64..9223372036854775807 (int64)"
    m = sleepacc.measure("nanosleep", 1e-4, n=2).to_dict()
    m["stats"]["median"] = 10**30
    with pytest.raises(ValueError, match=r"^f:2: stats\.median = 10+ is outside "
                                         r"-9223372036854775808\.\.9223372036854775807 \(int64\)$"):
        records.check_point(m, "f:2")
    m = sleepacc.measure("nanosleep", 1e-4, n=2).to_dict()
    m["requested_ns"] = -5
    with pytest.raises(ValueError, match=r"^f:2: requested_ns = -5 is outside 0\.\.9223372036854775807$"):
        records.check_point(m, "f:2")


def test_an_empty_path_is_refused_naming_path(tmp_path):
    # the core's path row (lo 1): Sweep.save("") was the OS's FileNotFoundError of ''
    sw = sleepacc.sweep(["clock"], [0], budget=0.01)
    for call in (lambda: sw.save(""), lambda: records.write_atomic("", lambda f: f.write("x"))):
        with pytest.raises(ValueError, match=r"^path: must not be empty, got ''$"):
            call()
    assert list(tmp_path.iterdir()) == []
