"""`sleepacc monitor` beside flent and irtt: JSON Lines with Unix-epoch times
(-o FILE), SIGTERM and Ctrl-C as normal stops (summary, exit 0, whole
lines), irtt's JSON shape for the timer statistics (checked against a real
`irtt client -o` on loopback), and `plot --flent` with Debian's flent and
irtt on 127.0.0.1.  Every child is bounded in time; a missing tool skips."""
import gzip
import json
import shutil
import signal
import socket
import subprocess
import sys
import time

import pytest

import sleepacc
from sleepacc import plot, records

from test_cli import child_env, run


def start(*args):
    return subprocess.Popen([sys.executable, "-m", "sleepacc", *map(str, args)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            env=child_env())


def wait_lines(path, n, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if path.exists():
            lines = [ln for ln in path.read_text().splitlines() if '"monitor"' in ln]
            if len(lines) >= n:
                return lines
        time.sleep(0.05)
    raise AssertionError(f"fewer than {n} monitor lines in {path} after {timeout} s")


def test_output_lines_carry_unix_time(tmp_path):
    out = tmp_path / "mon.jsonl"
    before = time.time()
    r = run("monitor", "--interval", "5ms", "--report", "0.2s", "--duration", "0.6s",
            "-o", out, timeout=30)
    after = time.time()
    assert r.returncode == 0, r.stderr
    lines = out.read_text().splitlines()
    head = json.loads(lines[0])
    assert head["type"] == "header" and head["settings"]["command"] == "monitor"
    recs = records.read_monitor(lines, str(out))
    assert len(recs) >= 2
    # the text lines still go to the terminal (under a line naming the method)
    assert len([ln for ln in r.stdout.splitlines() if " count=" in ln]) == len(recs)
    last = before
    for rec in recs:
        assert before <= rec["t_start"] < rec["t"] <= after
        assert rec["t_start"] >= last - 1e-3                # in order, not overlapping
        last = rec["t"]
        assert rec["count"] > 0 and rec["median_ns"] <= rec["max_ns"]
        assert rec["time"].endswith("Z")
    assert sleepacc.load(out).settings["command"] == "monitor"   # the file is sleepacc/1
    r = run("monitor", "--duration", "0.2s", "-o", out, timeout=30)
    assert r.returncode == 2 and "already exists" in r.stderr


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_sigterm_and_ctrl_c_are_normal_stops(tmp_path, sig):
    out = tmp_path / "mon.jsonl"
    p = start("monitor", "--interval", "5ms", "--report", "0.1s", "-o", out,
              "--irtt-json", tmp_path / "irtt.json")
    try:
        wait_lines(out, 2)
        t = time.monotonic()
        p.send_signal(sig)
        stdout, stderr = p.communicate(timeout=10)
        took = time.monotonic() - t
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 0, stderr
    assert took < 2.0
    name = "SIGTERM" if sig == signal.SIGTERM else "Ctrl-C"
    assert f"(stopped by {name})" in stderr and "wake-ups" in stderr
    text = out.read_text()
    assert text.endswith("\n")                              # no torn line
    for line in text.splitlines():
        json.loads(line)
    doc = json.loads((tmp_path / "irtt.json").read_text())
    assert doc["stats"]["timer_error"]["n"] > 0


def _irtt_client_json(tmp_path):
    """`irtt client -o` against an irtt server on 127.0.0.1 (a free port)."""
    irtt = shutil.which("irtt")
    if irtt is None:
        pytest.skip("Debian's irtt is not installed (make deps installs it)")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = subprocess.Popen([irtt, "server", "-b", f"127.0.0.1:{port}"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.3)
        out = tmp_path / "irtt.json"
        subprocess.run([irtt, "client", "-q", "-i", "10ms", "-d", "1s", "-o", str(out),
                        f"127.0.0.1:{port}"], check=True, timeout=20,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    finally:
        server.terminate()
        server.wait(timeout=5)
    path = out if out.exists() else out.with_suffix(".json.gz")
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


TIMER_KEYS = ("timer_error", "timer_err_percent", "timer_misses", "timer_miss_percent")


def _shape(obj):
    if isinstance(obj, dict):
        return {k: _shape(v) for k, v in obj.items()}
    return "number" if isinstance(obj, (int, float)) and not isinstance(obj, bool) else \
        type(obj).__name__


def test_irtt_json_has_irtts_timer_shape(tmp_path):
    theirs = _irtt_client_json(tmp_path)
    want = {k: _shape(theirs["stats"][k]) for k in TIMER_KEYS}
    r = run("monitor", "--interval", "10ms", "--report", "0.25s", "--duration", "0.5s",
            "--irtt-json", tmp_path / "ours.json", timeout=30)
    assert r.returncode == 0, r.stderr
    ours = json.loads((tmp_path / "ours.json").read_text())
    assert {k: _shape(ours["stats"][k]) for k in TIMER_KEYS} == want
    assert isinstance(ours["config"]["params"]["interval"], int) == isinstance(
        theirs["config"]["params"]["interval"], int)
    te = ours["stats"]["timer_error"]
    assert 0 <= te["min"] <= te["mean"] <= te["max"] and te["n"] > 0
    # irtt's definition: the mean timer error as a share of the interval
    assert ours["stats"]["timer_err_percent"] == pytest.approx(
        100 * te["mean"] / ours["config"]["params"]["interval"], rel=1e-3)
    t_theirs = theirs["stats"]["timer_error"]
    assert theirs["stats"]["timer_err_percent"] == pytest.approx(
        100 * t_theirs["mean"] / theirs["config"]["params"]["interval"], rel=1e-2)


def test_irtt_json_on_the_standard_output_is_a_document_alone():
    # its document followed the text report lines (or --json's lines) on
    # stdout: `monitor --irtt-json - | jq` could parse neither
    r = run("monitor", "--interval", "10ms", "--report", "0.1s", "--duration", "0.25s",
            "--irtt-json", "-", timeout=30)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["stats"]["timer_error"]["n"] > 0
    assert "every 10ms: " in r.stderr and " count=" in r.stderr   # the report lines: on stderr
    for other in (["--json"], ["-o", "-"]):
        r = run("monitor", "--duration", "0.1s", "--irtt-json", "-", *other, timeout=30)
        assert r.returncode == 2 and r.stdout == "", (other, r.stdout[:200])
        assert r.stderr.startswith("sleepacc: error: argument --irtt-json: cannot share the "
                                   "standard output"), r.stderr


def test_pacer_stats_in_irtts_shape():
    p = sleepacc.Pacer(0.002)
    for _ in range(25):
        p.wait()
    st = p.stats
    doc = records.pacer_irtt_json(st)
    te = doc["stats"]["timer_error"]
    assert te["n"] == st["lateness"]["n"] and te["mean"] == round(st["lateness"]["mean"])
    assert doc["stats"]["timer_misses"] == st["timer_misses"]
    assert doc["stats"]["timer_err_percent"] == pytest.approx(st["timer_err_percent"], rel=1e-6)
    assert doc["config"]["params"]["interval"] == 2_000_000


def test_timer_totals_pool_intervals_exactly():
    import numpy as np
    rng = np.random.default_rng(7)
    parts = [rng.integers(1_000, 90_000, size=k) for k in (5, 40, 1, 17)]
    tot = records.TimerTotals()
    for a in parts:
        tot.add({"n": a.size, "mean": a.mean(), "std": a.std(ddof=1) if a.size > 1 else 0.0,
                 "min": int(a.min()), "max": int(a.max())}, missed=1)
    allv = np.concatenate(parts)
    late = tot.lateness()
    assert late["n"] == allv.size and late["mean"] == pytest.approx(allv.mean())
    assert late["std"] == pytest.approx(allv.std(ddof=1))
    assert (late["min"], late["max"]) == (allv.min(), allv.max()) and tot.misses == 4


def test_read_flent_without_raw_values(tmp_path):
    doc = {"metadata": {"T0": "2026-12-01T10:00:00.000000Z", "NAME": "ping"},
           "x_values": [0.0, 0.2, 0.4], "results": {"Ping (ms) ICMP": [0.05, None, 0.07]},
           "raw_values": {}, "version": 4}
    path = tmp_path / "x.flent.gz"
    with gzip.open(path, "wt") as f:
        json.dump(doc, f)
    fl = plot.read_flent(path)
    t0 = fl["t0"]
    assert fl["series"]["Ping (ms) ICMP"] == [(t0, 0.05), (t0 + 0.4, 0.07)]
    (path.parent / "bad.flent").write_text("{}")
    with pytest.raises(ValueError, match="not a flent data file"):
        plot.read_flent(path.parent / "bad.flent")


def _port_free(port):
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def test_flent_and_irtt_on_loopback_with_the_monitor_beside(tmp_path):
    for tool in ("flent", "irtt"):
        if shutil.which(tool) is None:
            pytest.skip(f"Debian's {tool} is not installed (make deps installs it)")
    if shutil.which("fping") is None and shutil.which("ping") is None:
        pytest.skip("flent's ping test needs fping or ping")
    # flent's UDP ping runs irtt against HOST's default port (flent takes no port)
    if not _port_free(2112):
        pytest.skip("127.0.0.1:2112 (irtt's default port, which flent uses) is busy")
    server = subprocess.Popen([shutil.which("irtt"), "server", "-b", "127.0.0.1:2112"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    mon_path = tmp_path / "monitor.jsonl"
    monitor = start("monitor", "--interval", "10ms", "--report", "0.25s", "--duration", "20s",
                    "-o", mon_path)
    try:
        time.sleep(0.4)
        wait_lines(mon_path, 1)
        r = subprocess.run(["flent", "ping", "-H", "127.0.0.1", "-l", "3", "-D", str(tmp_path),
                            "-t", "sleepacc-test"], capture_output=True, text=True, timeout=60)
        time.sleep(0.3)
        monitor.send_signal(signal.SIGTERM)
        _out, err = monitor.communicate(timeout=10)
    finally:
        for p in (monitor, server):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(timeout=5)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
    assert monitor.returncode == 0, err
    results = list(tmp_path.glob("*.flent.gz"))
    if not results:
        pytest.skip(f"flent wrote no data file (offline?): {r.stdout[-300:]} {r.stderr[-300:]}")
    fl = plot.read_flent(results[0])
    mon = records.read_monitor(mon_path.read_text().splitlines())
    assert fl["series"], "flent measured nothing"
    # one time axis: flent's points fall inside the monitor's span (both Unix time)
    t_lo, t_hi = mon[0]["t_start"], mon[-1]["t"]
    for name, pts in fl["series"].items():
        assert all(t_lo - 1.0 <= t <= t_hi + 1.0 for t, _v in pts), name
    fig_path = tmp_path / "overlay.png"
    rr = run("plot", "--flent", results[0], mon_path, "-o", fig_path, timeout=60)
    assert rr.returncode == 0, rr.stderr
    assert fig_path.read_bytes()[:4] == b"\x89PNG"
    fig = plot.flent_overlay(results[0], mon)
    top, bottom = fig.axes[:2]
    assert top.get_shared_x_axes().joined(top, bottom)
    assert len([ln for ln in top.lines if not ln.get_label().startswith("_")]) == len(fl["series"])
    assert any("UDP" in name for name in fl["series"]) or any(
        "ICMP" in name for name in fl["series"])
