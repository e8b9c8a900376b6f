"""irtt's timer_misses by irtt's rule (expected - sent) in every form: a
monitor stopped with SIGSTOP for 1 s on a 10 ms schedule passes over about
100 deadlines, and the monitor's JSON lines, its --irtt-json file and the
record all say so (they said 1: the one wake-up that found them passed)."""
import json
import os
import signal
import subprocess
import sys
import time

from conftest import child_env


def test_monitor_stopped_counts_every_missed_tick(tmp_path):
    irtt = tmp_path / "irtt.json"
    proc = subprocess.Popen([sys.executable, "-m", "sleepacc", "monitor", "--duration", "3s",
                             "--report", "3s", "--json", "--irtt-json", str(irtt)],
                            env=child_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    try:
        time.sleep(1.0)                  # the child is measuring (its first report is at 3 s)
        os.kill(proc.pid, signal.SIGSTOP)
        time.sleep(1.0)
        os.kill(proc.pid, signal.SIGCONT)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    lines = [json.loads(x) for x in out.splitlines() if x.strip()]
    missed = sum(x["missed"] for x in lines)
    doc = json.loads(irtt.read_text())
    assert doc["stats"]["timer_misses"] == missed             # the same count in every form
    assert missed >= 80, (missed, lines)                       # ~100 ticks of 10 ms in 1 s
    wakeups = sum(x["count"] for x in lines)
    assert wakeups + missed <= 3.5 / 0.01                      # never more than were due
    # irtt's percent: of the expected ticks (sent + missed), so at most 100
    expected = 100 * missed / (wakeups + missed)
    assert abs(doc["stats"]["timer_miss_percent"] - expected) < 1e-9, doc["stats"]

