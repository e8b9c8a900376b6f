"""`sleepacc compare` across many hosts, and `sleepacc plot --compare`.

What is checked: any number of result files (sweep output, an exporter
snapshot, a minimal sleepacc/1 file such as a Lua writer makes) give one row
per host, ranked by the chosen statistic at the chosen duration; n is shown;
ns resolution is kept (the hybrid's tens of ns are not rounded to 0.1 µs);
csv and json carry the same rows; labels name the hosts; the two-file
side-by-side view with ratios is still there; bad input exits 2; the plot is
a PNG.  The numbers measured are not checked, only what compare makes of them.
"""
import csv
import io
import json
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

import sleepacc
from sleepacc import fleet
from sleepacc._units import format_ns
from conftest import LUA_MODULE, ROOT
from conftest import child_env as lua_env

UNDER_ASAN = "libasan" in os.environ.get("LD_PRELOAD", "")


def child_env():
    env = dict(os.environ)
    if "ASAN_OPTIONS" in env:
        env["ASAN_OPTIONS"] += ":detect_leaks=0"
    return env


def run(*args, timeout=120):
    return subprocess.run([sys.executable, "-m", "sleepacc", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, env=child_env())


SLACKS = ("1", "50us", "500us")


@pytest.fixture(scope="module")
def hosts(tmp_path_factory):
    """This host at three slack settings: three result files."""
    d = tmp_path_factory.mktemp("fleet")
    paths = []
    for slack in SLACKS:
        p = d / f"slack-{slack}.jsonl"
        r = run("sweep", "--methods", "nanosleep,hybrid", "--durations", "100us,1ms",
                "--budget", "0.03", "--slack", slack, "-o", p, "--format", "none")
        assert r.returncode == 0, r.stderr
        paths.append(p)
    return paths


def compare_json(*args):
    r = run("compare", *args, "--format", "json")
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_one_row_per_host_ranked_by_the_stat(hosts):
    for stat in ("median", "p99", "max"):
        doc = compare_json(*hosts, "--stat", stat, "--labels", ",".join(SLACKS))
        rows = doc["hosts"]
        assert len(rows) == 3 and {r["label"] for r in rows} == set(SLACKS)
        assert doc["method"] == "nanosleep" and doc["requested_ns"] == 1_000_000
        vals = [r[f"{stat}_ns"] for r in rows]
        assert vals == sorted(vals) and [r["rank"] for r in rows] == [1, 2, 3]
        for r in rows:
            sw = sleepacc.load(r["path"])
            point = next(m for m in sw if m.method == "nanosleep" and m.requested_ns == 1_000_000)
            assert r["n"] == point.n > 0
            assert r[f"{stat}_ns"] == point.stats[stat] - 1_000_000
            assert isinstance(r["top_cause"], str) and r["top_cause"]
        assert {r["slack_ns"] for r in rows} == {1, 50_000, 500_000}
        # what of each run changes its figures is on its row (here the applied slack)
        assert {r["settings"] for r in rows} == {"slack 1 ns", "slack 50 µs", "slack 500 µs"}


def test_a_real_time_run_is_marked_and_its_cause_is_not_slack(tmp_path):
    """A SCHED_FIFO run gets no timer slack: its row says fifo, and its top
    cause is not timer slack (the model names the right one); a run with the
    thread's own settings is not marked."""
    paths = []
    for name, extra in (("fifo", ["--policy", "fifo", "--priority", "1"]), ("plain", [])):
        p = tmp_path / f"{name}.jsonl"
        r = run("sweep", "--methods", "nanosleep", "--durations", "100us,1ms,10ms",
                "--budget", "0.05", *extra, "-o", p, "--format", "none")
        if r.returncode != 0 and "permission" in r.stderr.lower():
            pytest.skip(f"SCHED_FIFO is not permitted here: {r.stderr.strip()}")
        assert r.returncode == 0, r.stderr
        paths.append(p)
    rows = {pathlib.Path(r["path"]).stem: r for r in compare_json(*paths)["hosts"]}
    assert rows["fifo"]["policy"] == "fifo" and rows["fifo"]["settings"] == "fifo"
    assert rows["fifo"]["top_cause_id"] != "timer_slack", rows["fifo"]
    assert rows["plain"]["settings"] is None
    text = run("compare", *paths, "--wide").stdout      # a row and its file on one line
    assert "[fifo]" in next(ln for ln in text.splitlines() if str(paths[0]) in ln)


def test_the_text_table_shows_n_and_keeps_ns(hosts):
    r = run("compare", *hosts, "--method", "hybrid", "--duration", "100us", "--points", "--wide")
    assert r.returncode == 0, r.stderr
    doc = compare_json(*hosts, "--method", "hybrid", "--duration", "100us")
    assert "hybrid(100µs)" in r.stdout
    for h in doc["hosts"]:
        line = next(ln for ln in r.stdout.splitlines() if h["path"] in ln)
        assert f" {h['n']} " in line
        assert format_ns(h["median_ns"], 4) in line
    # every point side by side: the hybrid's error in ns, never "0.1"
    hyb = [row for row in doc["rows"] if row["method"] == "hybrid"]
    assert hyb
    for row in hyb:
        line = next(ln for ln in r.stdout.splitlines()
                    if ln.startswith("hybrid ") and sleepacc._units.format_go(
                        row["requested_ns"]) in ln.split()[1:2])
        for e in row["errors_ns"]:
            assert format_ns(e, 4) in line
        assert all(str(n) in line.split() for n in row["n"])


def test_csv_has_the_same_rows(hosts):
    r = run("compare", *hosts, "--format", "csv", "--stat", "p99")
    assert r.returncode == 0, r.stderr
    rows = list(csv.DictReader(io.StringIO(r.stdout)))
    doc = compare_json(*hosts, "--stat", "p99")
    assert len(rows) == 3
    for got, want in zip(rows, doc["hosts"]):
        assert got["path"] == want["path"] and int(got["n"]) == want["n"]
        assert float(got["p99_ns"]) == want["p99_ns"] and got["rank"] == str(want["rank"])
    # same host name three times: told apart by the file name
    assert len({r["label"] for r in rows}) == 3


def test_two_files_keep_the_side_by_side_ratios(hosts):
    r = run("compare", hosts[0], hosts[2])
    assert r.returncode == 0, r.stderr
    assert "B/A" in r.stdout and "n A" in r.stdout
    doc = compare_json(hosts[0], hosts[2])
    assert len(doc["rows"]) == 4 and all(len(row["errors_ns"]) == 2 for row in doc["rows"])


def test_an_exporter_snapshot_and_a_minimal_writer_file_compare_with_a_sweep(hosts, tmp_path):
    pytest.importorskip("prometheus_client")
    from sleepacc import exporter as ex
    e = ex.Exporter(["nanosleep", "auto"], [1_000_000], doctor_every=None, cpu_budget=0.1,
                    turn_s=0.05)
    e._turn(e.series[0])
    e._turn(e.series[1])
    e._publish(0.0, 0.0)
    snap = tmp_path / "exporter.jsonl"
    snap.write_text(e.snapshot_jsonl())
    # the fewest fields a writer (Lua's save) must give; a record from before the core
    # added p1, p10, p25 and p75 (a router on an older version) lacks them
    minimal = tmp_path / "router.jsonl"
    minimal.write_text(
        json.dumps({"schema": "sleepacc/1", "type": "header", "host": {"hostname": "router"},
                    "settings": {}, "started": "2026-01-01T00:00:00Z"}) + "\n"
        + json.dumps({"type": "point", "method": "nanosleep", "mode": "relative",
                      "requested_ns": 1_000_000, "n": 50,
                      "stats": {"n": 50, "min": 1_050_000, "max": 1_300_000, "mean": 1_080_000,
                                "std": 10_000.0, "median": 1_070_000, "p90": 1_100_000,
                                "p99": 1_200_000, "p999": 1_300_000, "undersleeps": 0}})
        + "\n")
    doc = compare_json(hosts[0], snap, minimal)
    labels = [r["label"] for r in doc["hosts"]]
    assert "router" in labels and len(doc["hosts"]) == 3
    router = next(r for r in doc["hosts"] if r["label"] == "router")
    assert router["median_ns"] == 70_000 and router["n"] == 50
    assert compare_json(hosts[0], minimal, "--stat", "p1")["hosts"][-1]["p1_ns"] is None
    doc = compare_json(snap, minimal, "--method", "auto")
    assert doc["hosts"][0]["method"] == "auto" and doc["hosts"][0]["n"] > 0
    assert doc["hosts"][-1]["rank"] is None and doc["hosts"][-1]["n"] == 0   # router has no auto


def test_a_lua_save_file_compares_with_a_sweep(hosts, tmp_path):
    """A router's results: Lua's sa.save writes sleepacc/1 JSON Lines."""
    exe = shutil.which("lua5.4")
    if exe is None:
        pytest.skip("lua5.4 not installed (make deps installs it)")
    build = subprocess.run(["make", "-s", "-C", str(ROOT), "lua-module"], env=lua_env(),
                           capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stdout + build.stderr
    out = tmp_path / "router.jsonl"
    script = ('local sa = require "sleepacc"\n'
              'if not sa.save then os.exit(3) end\n'
              'local r = sa.measure{method = "nanosleep", duration = 1e-3, budget = 0.1}\n'
              f'assert(sa.save({{r}}, "{out}"))\n')
    r = subprocess.run([exe, "-e", script], capture_output=True, text=True, timeout=60,
                       env=lua_env(LUA_CPATH=f"{LUA_MODULE.parent}/?.so;;"))
    if r.returncode == 3:
        pytest.skip("this build's Lua module has no sa.save yet")
    assert r.returncode == 0, r.stderr
    doc = compare_json(hosts[0], out, "--labels", "this host,router")
    router = next(h for h in doc["hosts"] if h["label"] == "router")
    assert router["n"] > 0 and router["median_ns"] is not None and router["rank"] in (1, 2)


def test_an_irtt_sleep_table_ranks_by_its_mean(hosts, tmp_path):
    """irtt sleep's table text has a mean per duration and no n: it ranks by
    --stat mean under its own method name, with n shown as unknown."""
    table = tmp_path / "irtt.txt"
    table.write_text("Testing sleep accuracy...\n\nSleep Duration        Mean Error       % Error\n"
                     "           1ms          81.123µs           8.1\n"
                     "          10ms          90.456µs           0.9\n")
    doc = compare_json(hosts[1], table, "--stat", "mean", "--labels", "sweep,irtt")
    irtt = next(h for h in doc["hosts"] if h["label"] == "irtt")
    assert irtt["method"] != "nanosleep" and irtt["mean_ns"] == pytest.approx(81_123, abs=1)
    assert irtt["n"] is None and irtt["rank"] in (1, 2)
    r = run("compare", hosts[1], table, "--stat", "mean", "--wide")
    line = next(ln for ln in r.stdout.splitlines() if str(table) in ln)
    assert " ? " in line and "81.12 µs" in line


def test_fleet_picks_the_reference_point():
    def sw(host, *points):
        return sleepacc.Sweep([sleepacc.Measurement.from_dict(dict(
            method=m, mode="relative", requested_ns=d, n=10,
            stats={"n": 10, "min": d + 5, "max": d + 50, "mean": d + 9, "std": 1.0,
                   "median": d + 7, "p90": d + 9, "p99": d + 40, "p999": d + 50,
                   "undersleeps": 0})) for m, d in points], host={"hostname": host})
    a = sw("a", ("timerfd", 100_000), ("nanosleep", 100_000), ("nanosleep", 1_000_000))
    b = sw("b", ("timerfd", 100_000), ("nanosleep", 100_000))
    assert fleet.pick([a, b]) == ("nanosleep", 100_000)      # 1 ms is not everywhere
    assert fleet.pick([a]) == ("nanosleep", 1_000_000)
    assert fleet.pick([a, b], "timerfd") == ("timerfd", 100_000)
    t = fleet.fleet([a, b], ["a.jsonl", "b.jsonl"], causes=False)
    assert [r["label"] for r in t["hosts"]] == ["a", "b"] and t["hosts"][0]["median_ns"] == 7
    with pytest.raises(ValueError, match="stat"):
        fleet.fleet([a, b], ["a", "b"], stat="p42")
    for labels, says in ((["x", " "], "label 2 is empty"), (["x", "x"], "'x' is given twice")):
        with pytest.raises(ValueError, match=f"^labels: {says}"):
            fleet.fleet([a, b], ["a", "b"], labels=labels, causes=False)


@pytest.mark.parametrize("argv,named", [
    (["only-one.jsonl"], "FILE"),
    (["a.jsonl", "b.jsonl", "--labels", "x"], "--labels"),
    (["a.jsonl", "b.jsonl", "--labels", "x,"], "--labels: label 2 is empty"),
    (["a.jsonl", "b.jsonl", "--labels", "x, x"], "--labels: 'x' is given twice"),
    (["a.jsonl", "b.jsonl", "--stat", "p42"], "--stat"),
    (["a.jsonl", "b.jsonl", "--format", "yaml"], "--format"),
    (["a.jsonl", "b.jsonl", "--duration", "soon"], "--duration"),
])
def test_bad_input_exits_2(argv, named):
    r = run("compare", *argv, timeout=30)
    assert r.returncode == 2, r.stderr
    msg = r.stderr.rstrip("\n")
    assert "\n" not in msg and named in msg, msg


@pytest.mark.parametrize("argv,says", [
    (["--duration", "5ms"], "no file has nanosleep at 5ms; nanosleep is at 100µs, 1ms"),
    (["--method", "bogus"], "no file has the method 'bogus'; they have hybrid, nanosleep"),
    (["--method", "bogus", "--duration", "1ms"], "no file has the method 'bogus'"),
    (["--method", "hybrid", "--duration", "2ms"], "no file has hybrid at 2ms"),
])
def test_a_point_no_file_has_is_one_line_exit_1(hosts, argv, says):
    """The files are fine and the options are well formed, but no file has
    what was asked: a data error (exit 1), never an empty table (exit 0)."""
    for fmt in ("text", "json"):
        r = run("compare", *hosts[:2], *argv, "--format", fmt)
        msg = r.stderr.rstrip("\n")
        assert r.returncode == 1 and r.stdout == "", (argv, r.stdout, msg)
        assert "\n" not in msg and msg.startswith(f"sleepacc: error: {says}"), msg


def test_a_missing_file_exits_1(hosts, tmp_path):
    r = run("compare", hosts[0], tmp_path / "missing.jsonl")
    assert r.returncode == 1 and "missing.jsonl" in r.stderr


@pytest.mark.skipif(UNDER_ASAN,
                    reason="matplotlib's C++ extension aborts under a preloaded ASan runtime")
def test_plot_compare_writes_a_png(hosts, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "hosts.png"
    r = run("plot", "--compare", *hosts, "--labels", ",".join(SLACKS), "--stat", "p99",
            "-o", out)
    assert r.returncode == 0, r.stderr
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and out.stat().st_size > 10_000
    assert run("plot", "--compare", hosts[0], "-o", out).returncode == 2
    assert run("plot", "-o", out).returncode == 2


def test_a_method_the_file_lacks_is_the_same_data_error_in_model_compare_and_plot(hosts, tmp_path):
    """--method naming a method the file has not measured is the data's lack:
    model says so as compare and plot do, one line, exit 1, naming what it has."""
    r = run("model", hosts[0], "--method", "bogus")
    msg = r.stderr.rstrip("\n")
    assert r.returncode == 1 and r.stdout == "", (r.stdout, msg)
    assert "\n" not in msg and msg.startswith("sleepacc: error: no fit for 'bogus'"), msg
    assert "it has hybrid, nanosleep" in msg, msg
    assert run("compare", *hosts[:2], "--method", "bogus").returncode == 1
