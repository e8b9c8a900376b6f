"""The release wheels (`make wheel`) as a user gets them: each installs with
pip into a fresh venv of its CPython, with no C compiler on PATH and numpy
taken as a binary wheel, and `import sleepacc` there measures a sleep.

`make test-wheel` builds the wheels and runs this file with
SLEEPACC_WHEEL_DIR naming where they are, or SLEEPACC_WHEEL_SKIP saying why
they cannot be built here (a tool missing); anywhere else it skips, so a
stale wheel left in dist/ is never what a plain pytest run checks.  A
wheel whose CPython is not installed here is skipped naming it.
"""
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT

WHEEL_DIR = os.environ.get("SLEEPACC_WHEEL_DIR")
# set by `make test-wheel` when the wheels cannot be built here: the reason
NO_WHEELS = os.environ.get("SLEEPACC_WHEEL_SKIP")
COMPILERS = ("cc", "gcc", "clang", "tcc", "c99", "x86_64-linux-gnu-gcc")

# In the fresh venv: the package is the installed one, not the tree; a 1 ms
# nanosleep is never early and its statistics are ordered; the precise sleep
# does not return before its deadline; the stubs came with it.
PROBE = r"""
import importlib.metadata as md, os, sys, time
import sleepacc
here = os.path.dirname(sleepacc.__file__)
assert "site-packages" in here and not here.startswith(sys.argv[1]), here
m = sleepacc.measure("nanosleep", 1e-3, n=20, budget=None)
assert m.n == 20, m.n
assert min(m.samples) >= 1_000_000, min(m.samples)
s = m.stats
assert s.min <= s.median <= s.p99 <= s.max, (s.min, s.median, s.p99, s.max)
t0 = time.monotonic_ns()
sleepacc.sleep(0.002)
assert time.monotonic_ns() - t0 >= 2_000_000
for f in ("py.typed", "_core.pyi", "_api.pyi"):
    assert os.path.exists(os.path.join(here, f)), f
assert md.metadata("sleepacc")["License-Expression"] == "MIT"
print("ok", sys.version.split()[0], m.n, s.median)
"""


def _wheels():
    if not WHEEL_DIR:
        return []
    return sorted(Path(WHEEL_DIR).glob("sleepacc-*-cp3*-manylinux*.whl"))


def _interpreter(tag):
    """The CPython of wheel tag cpXY: pythonX.Y on PATH, else pyenv's newest."""
    ver = f"{tag[2]}.{tag[3:]}"
    exe = shutil.which(f"python{ver}")
    if exe and subprocess.run([exe, "-c", ""], capture_output=True).returncode == 0:
        return exe
    root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    found = sorted(root.glob(f"versions/{ver}.*/bin/python{ver}"),
                   key=lambda p: [int(x) for x in re.findall(r"\d+", p.parts[-3])])
    return str(found[-1]) if found else None


def _env(path):
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "PYTHONPATH", "PYTHONMALLOC", "VIRTUAL_ENV", "CC", "LDSHARED")
           and "SAN_OPTIONS" not in k}
    env["PATH"] = path
    return env


def test_wheels_were_built():
    if NO_WHEELS:
        pytest.skip(NO_WHEELS)
    if not WHEEL_DIR:
        pytest.skip("run by `make test-wheel` (after `make wheel`), which names the wheels")
    wheels = _wheels()
    assert wheels, f"no manylinux wheel in {WHEEL_DIR}"
    this = f"cp{sys.version_info[0]}{sys.version_info[1]}"
    assert any(f"-{this}-{this}-" in w.name for w in wheels), (this, wheels)
    for w in wheels:
        with zipfile.ZipFile(w) as z:
            names = z.namelist()
        assert {"sleepacc/py.typed", "sleepacc/_core.pyi"} <= set(names), w.name
        assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names), w.name


@pytest.mark.parametrize("wheel", _wheels() or [None],
                         ids=lambda w: w.name.split("-")[2] if w else "none")
def test_wheel_installs_and_measures(wheel, tmp_path):
    if wheel is None:
        pytest.skip(NO_WHEELS or "run by `make test-wheel` (after `make wheel`), which names the wheels")
    tag = wheel.name.split("-")[2]
    python = _interpreter(tag)
    if python is None:
        pytest.skip(f"{wheel.name}: no python{tag[2]}.{tag[3:]} installed here")
    venv = tmp_path / "venv"
    r = subprocess.run([python, "-m", "venv", str(venv)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    # PATH: the venv's bin and a directory of the few tools pip may call, no compiler
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in ("sh", "uname", "ldd"):
        exe = shutil.which(name)
        if exe:
            (tools / name).symlink_to(exe)
    path = f"{venv / 'bin'}:{tools}"
    assert not [c for c in COMPILERS if shutil.which(c, path=path)], path
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", "--only-binary", ":all:"]
    r = subprocess.run(pip + [str(wheel)], env=_env(path), capture_output=True, text=True,
                       timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    r = subprocess.run([str(venv / "bin" / "python"), "-c", PROBE, str(ROOT)], env=_env(path),
                       capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("ok "), r.stdout + r.stderr
    # the command the wheel installs
    r = subprocess.run([str(venv / "bin" / "sleepacc"), "--help"], env=_env(path),
                       capture_output=True, text=True, timeout=60, cwd=tmp_path)
    assert r.returncode == 0 and "sweep" in r.stdout, r.stdout + r.stderr
