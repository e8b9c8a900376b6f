"""SCHED_FIFO refused to root by its cgroup: in a cgroup-v1 cpu group whose
cpu.rt_runtime_us is 0 (a new group's default under RT group scheduling)
even root gets EPERM.  The error names the group's cpu.rt_runtime_us, not
"needs CAP_SYS_NICE or root", and the doctor says the same.  The group is
made for the test (root and a writable v1 cpu hierarchy; skipped otherwise)
and removed after; only a child process joins it."""
import json
import os
import subprocess
import sys

import pytest

from conftest import child_env

CPU = "/sys/fs/cgroup/cpu"

CHILD = r"""
import json, sleepacc
from sleepacc import doctor
try:
    sleepacc.measure("nanosleep", 1e-4, n=3, policy="fifo", priority=1)
    err = None
except Exception as e:
    err = [type(e).__name__, str(e)]
print(json.dumps({"err": err, "doctor": doctor._arm("nanosleep", 0.01, policy="fifo", priority=1)[1]}))
"""


@pytest.fixture
def rt_less_group():
    if os.geteuid() != 0:
        pytest.skip("needs root to make a cgroup")
    if not os.path.exists(f"{CPU}/cpu.rt_runtime_us"):
        pytest.skip(f"no cgroup-v1 cpu hierarchy with RT group scheduling at {CPU}")
    group = f"{CPU}/sleepacc-test-{os.getpid()}"
    try:
        os.mkdir(group)
    except OSError as exc:
        pytest.skip(f"cannot make a cpu cgroup: {exc}")
    try:
        with open(f"{group}/cpu.rt_runtime_us") as f:
            if f.read().strip() != "0":
                pytest.skip("a new group gets RT time here")
        yield group
    finally:
        os.rmdir(group)


def test_fifo_refused_by_the_group_names_its_rt_runtime(rt_less_group):
    def enter():
        with open(f"{rt_less_group}/cgroup.procs", "w") as f:
            f.write(str(os.getpid()))
    run = subprocess.run([sys.executable, "-c", CHILD], env=child_env(), preexec_fn=enter,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    kind, text = out["err"]
    assert kind == "PermissionError"
    assert f"{rt_less_group} has cpu.rt_runtime_us 0" in text, text
    assert "CAP_SYS_NICE" not in text, text
    assert "cpu.rt_runtime_us 0" in out["doctor"] and "CAP_SYS_NICE" not in out["doctor"], out
