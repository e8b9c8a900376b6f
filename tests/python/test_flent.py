"""The flent recipes of contrib/flent/ run with Debian's flent on 127.0.0.1:
the batch file (flent's ping test, `sleepacc monitor` beside it, the overlay
figure as a post command) and the test definition that carries sleepacc's
series inside the .flent.gz.  Each checks that the timer's points fall inside
flent's run on the one Unix-time axis.  A missing tool skips with the reason;
every child is bounded in time."""
import gzip
import json
import os
from pathlib import Path
import shutil
import subprocess
import sys

import pytest

from sleepacc import plot, records

from conftest import ROOT, child_env
from test_monitor import _port_free

FLENT_DIR = ROOT / "contrib" / "flent"


def _need(*tools):
    for tool in tools:
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed (make deps installs it)")
    if shutil.which("fping") is None and shutil.which("ping") is None:
        pytest.skip("flent's ping test needs fping or ping")


def _env():
    """The suite's sleepacc first on PATH: flent runs `sleepacc` by name."""
    env = child_env()
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    return env


def _flent_span(path):
    """(first, last) Unix time of flent's own ping points in a data file."""
    with gzip.open(path, "rt") as f:
        doc = json.load(f)
    ts = [v["t"] for name, vals in doc["raw_values"].items() if name.startswith("Ping")
          for v in vals]
    assert ts, "flent's ping measured nothing"
    return doc, min(ts), max(ts)


def test_batch_file_runs_the_monitor_beside_flent(tmp_path):
    _need("flent", "irtt")
    if not _port_free(2112):
        pytest.skip("127.0.0.1:2112 (irtt's default port, which flent's UDP ping uses) is busy")
    r = subprocess.run(["flent", "-B", str(FLENT_DIR / "sleepacc.batch"), "-b", "ping-loopback"],
                       cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    (out,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    data = list(out.glob("*.flent.gz"))
    mons = list(out.glob("*.sleepacc.jsonl"))
    figs = list(out.glob("*.sleepacc.png"))
    assert len(data) == len(mons) == len(figs) == 1, sorted(p.name for p in out.iterdir())
    _doc, lo, hi = _flent_span(data[0])
    mon = records.read_monitor(mons[0].read_text().splitlines(), str(mons[0]))
    # one time axis: the monitor (started by flent just before the test; its
    # command takes a moment to start) ran while flent measured, and its
    # reports that end inside flent's run hold wake-ups
    assert mon[0]["t_start"] < hi and mon[-1]["t"] > lo
    inside = [m for m in mon if lo <= m["t"] <= hi]
    assert inside and all(m["count"] > 0 for m in inside)
    assert all(a["t"] <= b["t_start"] + 1e-3 for a, b in zip(mon, mon[1:]))
    assert figs[0].read_bytes()[:4] == b"\x89PNG"
    # the monitor was stopped with the batch: no sleepacc monitor left running
    left = subprocess.run(["pgrep", "-f", f"sleepacc monitor .*{out.name}"],
                          capture_output=True, text=True)
    assert left.stdout == ""


def test_test_definition_carries_the_timer_series_inside_the_flent_file(tmp_path):
    _need("flent")
    conf = FLENT_DIR / "sleepacc_ping.conf"
    # flent takes a test by name, or by its path without the .conf suffix
    r = subprocess.run(["flent", str(conf.with_suffix("")), "-H", "127.0.0.1", "-l", "3",
                        "-D", str(tmp_path), "--test-parameter", "sleepacc_stat=max"],
                       cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    (path,) = tmp_path.glob("sleepacc_ping-*.flent.gz")    # in -D, not beside the .conf
    assert not list(FLENT_DIR.glob("*.flent.gz"))
    doc, lo, hi = _flent_span(path)
    raw = doc["raw_values"]["Timer lateness (ms)"]
    assert raw, "no sleepacc point in the flent file"
    step = doc["metadata"]["STEP_SIZE"]
    # one time axis (Unix time): the monitor starts with the test (its command
    # takes a moment) and runs for the test's length
    assert raw[0]["t_start"] < hi and all(lo - step <= p["t_start"] for p in raw)
    assert all(a["t"] <= b["t_start"] + 1e-3 for a, b in zip(raw, raw[1:]))
    for p in raw:
        assert p["count"] > 0 and p["val"] == p["max_ns"] / 1e6
        assert p["median_ns"] <= p["p99_ns"] <= p["max_ns"]
    assert doc["metadata"]["SERIES_META"]["Timer lateness (ms)"]["SLEEPACC_STAT"] == "max"
    # flent's aggregated series holds them too, and sleepacc reads the file
    assert any(v is not None for v in doc["results"]["Timer lateness (ms)"])
    assert "Timer lateness (ms)" in plot.read_flent(path)["series"]
    # flent draws it with its own plot definition: as CSV always, as a PNG
    # where flent's Python has matplotlib (without it flent says so and exits 0)
    csv = tmp_path / "flent.csv"
    rr = subprocess.run(["flent", "-i", str(path), "-p", "sleepacc", "-f", "csv", "-o", str(csv)],
                        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert rr.returncode == 0, rr.stderr[-2000:]
    head, *rows = csv.read_text().splitlines()
    col = head.split(",").index("Timer lateness (ms)")
    assert any(r.split(",")[col] for r in rows), "the plot's CSV has no timer point"


def test_test_definition_draws_a_png_with_flents_own_plot(tmp_path):
    _need("flent")
    flent_py = Path(shutil.which("flent")).read_text(errors="replace").splitlines()[0][2:].split()
    if subprocess.run(flent_py + ["-c", "import matplotlib"], capture_output=True,
                      timeout=60).returncode != 0:
        pytest.skip("flent's Python has no matplotlib, so flent draws no PNG "
                    "(Debian: python3-matplotlib)")
    conf = FLENT_DIR / "sleepacc_ping.conf"
    r = subprocess.run(["flent", str(conf.with_suffix("")), "-H", "127.0.0.1", "-l", "2",
                        "-D", str(tmp_path)],
                       cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    (path,) = tmp_path.glob("sleepacc_ping-*.flent.gz")
    fig = tmp_path / "flent.png"
    rr = subprocess.run(["flent", "-i", str(path), "-p", "sleepacc", "-o", str(fig)],
                        cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert rr.returncode == 0, rr.stderr[-2000:]
    assert fig.read_bytes()[:4] == b"\x89PNG"


def test_test_definition_refuses_a_bad_statistic(tmp_path):
    _need("flent")
    conf = FLENT_DIR / "sleepacc_ping.conf"
    r = subprocess.run(["flent", str(conf.with_suffix("")), "-H", "127.0.0.1", "-l", "1",
                        "-D", str(tmp_path), "--test-parameter", "sleepacc_stat=p50"],
                       cwd=tmp_path, env=_env(), capture_output=True, text=True, timeout=120)
    assert "sleepacc_stat must be p99, median or max, got 'p50'" in r.stdout + r.stderr
    assert not list(tmp_path.glob("*.flent.gz"))
