"""The exporter under exhaustion.  At EMFILE in accept() (clients holding
connections at the descriptor limit) it stops accepting for a while and
logs once, instead of calling accept() again at once (a CPU spun at 100 %,
which CPUQuota then took from the measuring thread too); it accepts again
when a descriptor is free.  A scrape whose thread cannot start is one log
line, rate-limited, not an 11-line traceback; a server thread that cannot
start at all is an OSError naming the thread limit.  Each case runs in a
child process (its own descriptor limit, its own Thread.start, or a pids
cgroup made for it where cgroups are writable); the server binds
127.0.0.1."""
import json
import subprocess
import sys

import pytest

from conftest import child_env

pytest.importorskip("prometheus_client")

SERVE = r"""
import json, os, resource, socket, sys, threading, time
from sleepacc import exporter as ex
logs = []
svc = ex.Service(ex.Exporter(["nanosleep"], [1_000_000], doctor_every=None),
                 listen=("127.0.0.1", 0), log=logs.append)
svc.open()
port = svc.address[1]
"""

EMFILE = SERVE + r"""
calls = [0]
real_accept = socket.socket.accept
def counted(self):
    calls[0] += 1
    return real_accept(self)
socket.socket.accept = counted
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (64, hard))
held = []
try:
    while len(held) < 200:
        held.append(os.open("/dev/null", os.O_RDONLY))
except OSError:
    pass
os.close(held.pop())                       # one for the client's socket
client = socket.create_connection(("127.0.0.1", port))   # in the backlog: accept() fails
cpu0, t0 = time.process_time(), time.monotonic()
time.sleep(1.5)
cpu = time.process_time() - cpu0
wall = time.monotonic() - t0
short, tries = list(logs), calls[0]
for fd in held:
    os.close(fd)
client.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
client.settimeout(20)
reply = client.recv(64)
svc.close()
print(json.dumps({"share": cpu / wall, "tries": tries, "short": short, "logs": logs,
                  "reply": reply.decode("latin-1")}))
"""


def run(script):
    out = subprocess.run([sys.executable, "-c", script], env=child_env(), capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.splitlines()[-1]), out.stderr


def test_emfile_in_accept_backs_off_and_logs_once():
    out, err = run(EMFILE)
    assert out["tries"] < 50, out                   # a pause between tries, not a spin
    assert out["share"] < 0.5, out                  # (a spin took a whole CPU when it had one)
    assert len(out["short"]) == 1 and "Too many open files" in out["short"][0], out
    assert out["logs"][-1] == "accepting connections again", out
    assert out["reply"].startswith("HTTP/1."), out
    assert "Traceback" not in err


THREADS = SERVE + r"""
real_start = threading.Thread.start
def no_thread(self):
    if self.name.startswith("Thread-") or "process_request" in self.name:
        raise RuntimeError("can't start new thread")
    return real_start(self)
threading.Thread.start = no_thread
for _ in range(5):
    c = socket.create_connection(("127.0.0.1", port))
    c.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
    c.settimeout(20)
    c.recv(64)                              # the dropped request's connection closes
    c.close()
threading.Thread.start = real_start
svc.close()
print(json.dumps({"logs": logs}))
"""


def test_a_scrape_without_a_thread_is_one_line_rate_limited():
    out, err = run(THREADS)
    assert len(out["logs"]) == 1, out               # 5 failures, one line in 10 s
    assert "cannot start its thread" in out["logs"][0]
    assert "Traceback" not in err and "can't start new thread" not in err, err


START = r"""
import json, threading
from sleepacc import exporter as ex
start = threading.Thread.start
def no_thread(self):          # the measuring thread starts (it comes first); no other
    if self.name != "sleepacc-exporter" or ALL:
        raise RuntimeError("can't start new thread")
    start(self)
threading.Thread.start = no_thread
e = ex.Exporter(["nanosleep"], [1_000_000], doctor_every=None)
svc = ex.Service(e, listen=("127.0.0.1", 0))
try:
    svc.open()
    print(json.dumps("opened"))
except OSError as exc:
    print(json.dumps([exc.errno, exc.strerror, e.running, svc.address]))
except RuntimeError as exc:
    print(json.dumps(["RuntimeError", str(exc), e.running, svc.address]))
"""


def test_no_thread_for_the_server_is_an_oserror():
    out, err = run("ALL = False" + START)
    # EAGAIN, one line for the CLI; the measuring thread started first is stopped
    assert out[0] == 11 and "thread limit" in out[1] and out[2] is False, out


def test_no_thread_at_all_stops_before_the_server_listens():
    out, err = run("ALL = True" + START)
    assert out[0] == "RuntimeError" and "measuring thread" in out[1] and "thread limit" in out[1]
    assert out[2:] == [False, None], out


PIDS = "/sys/fs/cgroup/pids"


@pytest.fixture
def pids_group():
    """A pids cgroup (v1) made for the test, removed after; only a child joins it."""
    import os
    if os.geteuid() != 0 or not os.path.isdir(PIDS):
        pytest.skip(f"needs root and a cgroup-v1 pids hierarchy at {PIDS}")
    group = f"{PIDS}/sleepacc-test-{os.getpid()}"
    try:
        os.mkdir(group)
    except OSError as exc:
        pytest.skip(f"cannot make a pids cgroup: {exc}")
    try:
        yield group
    finally:
        os.rmdir(group)


def _exporter_in(group, limit, scrapes=0):
    """`sleepacc exporter` in the pids group at pids.max=limit (threads count),
    scraped `scrapes` times: (exit code, stderr)."""
    import os
    import re
    import socket
    import time
    with open(f"{group}/pids.max", "w") as f:
        f.write(str(limit))

    def enter():
        with open(f"{group}/cgroup.procs", "w") as f:
            f.write(str(os.getpid()))
    proc = subprocess.Popen([sys.executable, "-m", "sleepacc", "exporter", "--listen",
                             "127.0.0.1:0", "--stop-after", "30"], preexec_fn=enter,
                            env=child_env(OPENBLAS_NUM_THREADS="1", OMP_NUM_THREADS="1"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        first = proc.stderr.readline()
        port = re.search(r"http://127\.0\.0\.1:(\d+)/", first)
        for _ in range(scrapes if port else 0):
            with socket.create_connection(("127.0.0.1", int(port.group(1))), timeout=10) as c:
                c.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
                try:
                    c.recv(64)
                except OSError:
                    pass
            time.sleep(0.05)
        if port:      # scraped: stop it now (SIGTERM, a normal stop), not at --stop-after,
            proc.terminate()   # which only bounds it (a busy machine is slow to scrape)
        rest = proc.communicate(timeout=60)[1]
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return proc.returncode, first + rest


def test_a_pids_limit_is_one_line_at_start(pids_group):
    for limit in (1, 2):        # no thread for the server; none for the measuring thread
        code, err = _exporter_in(pids_group, limit)
        lines = [x for x in err.splitlines() if x.startswith("sleepacc: error:")]
        assert code == 1 and len(lines) == 1 and "thread limit" in lines[0], err
        assert "Traceback" not in err, err


def test_a_pids_limit_drops_scrapes_with_one_line(pids_group):
    # main, the server's thread and the measuring thread: no room for a scrape's thread
    code, err = _exporter_in(pids_group, 3, scrapes=5)
    assert "Traceback" not in err, err
    dropped = [x for x in err.splitlines() if "a scrape was dropped" in x]
    assert len(dropped) == 1, err
