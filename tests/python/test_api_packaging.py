"""Packaging: the sdist carries the C core and the binding, and a wheel
built from that sdist alone (not from the working tree) installs and runs."""
import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _clean_env():
    """The environment without sanitizer preloads and without PYTHONPATH, so
    the compiler runs normally and imports come from the built wheel."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_PRELOAD", "PYTHONPATH", "PYTHONMALLOC") and "SAN_OPTIONS" not in k}
    return env


def test_sdist_and_wheel(tmp_path):
    env = _clean_env()
    # the egg-info goes to tmp_path too: `make wheel` (test-wheel, which may run
    # beside this suite) writes the tree's own
    r = subprocess.run([sys.executable, "setup.py", "-q", "egg_info", "--egg-base", str(tmp_path),
                        "sdist", "-d", str(tmp_path)],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    sdist, = tmp_path.glob("sleepacc-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    assert "csrc/sleepacc.h" in names
    assert {p.relative_to(ROOT).as_posix() for p in ROOT.glob("csrc/*.c")} <= names
    assert {"python/_ext/module.c", "python/_ext/binding.h", "setup.py", "pyproject.toml",
            "python/sleepacc/__init__.py", "python/sleepacc/py.typed",
            "python/sleepacc/_core.pyi"} <= names
    # what the README and `sleepacc --help` point at, and the licence
    assert {"LICENSE", "docs/schema.md", "docs/privileges.md",
            "contrib/systemd/sleepacc-exporter.service"} <= names
    assert {p.relative_to(ROOT).as_posix() for p in ROOT.glob("examples/*")} <= names

    # build from the sdist in an empty directory: nothing from the tree
    r = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps",
                        "--no-build-isolation", "-w", str(tmp_path), str(sdist)],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    wheel, = tmp_path.glob("sleepacc-*.whl")
    with zipfile.ZipFile(wheel) as z:
        files = set(z.namelist())
        z.extractall(tmp_path / "site")
    assert any(f.startswith("sleepacc/_core.") and f.endswith(".so") for f in files)
    assert {"sleepacc/py.typed", "sleepacc/_core.pyi", "sleepacc/records/__init__.py",
            "sleepacc/model/__init__.py", "sleepacc/model/__init__.pyi"} <= files
    meta = next(f for f in files if f.endswith(".dist-info/METADATA"))
    with zipfile.ZipFile(wheel) as z:
        text = z.read(meta).decode()
    assert "Requires-Dist: numpy" in text and "Requires-Python: >=3.10" in text
    # the licence, its file, the authors and where the project lives
    assert "License-Expression: MIT" in text, text
    assert any(f.endswith(".dist-info/licenses/LICENSE") for f in files), files
    assert "Author: The sleepacc authors" in text, text
    assert "Project-URL: Source, https://" in text, text
    assert "example.invalid" not in text

    code = ("import sys; sys.path.insert(0, sys.argv[1]); import sleepacc; "
            "assert sleepacc.__file__.startswith(sys.argv[1]), sleepacc.__file__; "
            "m = sleepacc.measure('nanosleep', 1e-5, n=10); print(m.n)")
    r = subprocess.run([sys.executable, "-c", code, str(tmp_path / "site")], cwd=tmp_path,
                       env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout.strip() == "10", r.stdout + r.stderr
