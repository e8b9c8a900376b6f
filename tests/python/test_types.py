"""Typed public API.

- `mypy --strict` passes on examples/*.py, scripts written as a user
  writes them, and what they see is typed: a probe script's revealed types
  are the real classes, not Any.
- stubtest: the stubs (python/sleepacc/*.pyi) agree with the modules at
  run time, so they cannot drift from the code silently.
- Each example runs.
"""
import subprocess
import sys

import pytest

from conftest import ROOT, child_env

EXAMPLES = sorted((ROOT / "examples").glob("*.py"))
STUBBED = ["sleepacc._api", "sleepacc.model", "sleepacc.plot", "sleepacc.precise"]
# stubtest's known false reports (none now: the C methods' one-line docs
# carry no "()" __text_signature__ that read as taking no self).
ALLOW: list = []
# pandas ships no types (pandas-stubs is a separate package): DataFrame is Any
MYPY_INI = "[mypy]\n[mypy-pandas.*]\nignore_missing_imports = True\n"

pytestmark = pytest.mark.skipif(
    subprocess.run([sys.executable, "-c", "import mypy"], capture_output=True).returncode != 0,
    reason="mypy is not installed (pip install -e '.[test]')")


@pytest.fixture(scope="module")
def cache(tmp_path_factory):
    """One mypy cache for the module's runs (numpy/pandas/matplotlib once)."""
    return tmp_path_factory.mktemp("mypy-cache")


def _mypy(*args, cwd, cache):
    return subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(cache), *args],
                          cwd=cwd, capture_output=True, text=True, timeout=300, env=child_env())


def test_examples_pass_mypy_strict(tmp_path, cache):
    assert len(EXAMPLES) >= 3, EXAMPLES
    (tmp_path / "mypy.ini").write_text(MYPY_INI)
    r = _mypy("--strict", "--config-file", "mypy.ini", *map(str, EXAMPLES), cwd=tmp_path,
              cache=cache)
    assert r.returncode == 0, r.stdout + r.stderr


PROBE = '''
import sleepacc
from sleepacc import model, plot
m = sleepacc.measure("nanosleep", 1e-3)
sw = sleepacc.sweep(["nanosleep"])
reveal_type(m)
reveal_type(m.stats)
reveal_type(m.stats.median)
reveal_type(m.errors_ns)
reveal_type(sw)
reveal_type(sw[0])
reveal_type(sleepacc.model.fit(sw))
reveal_type(plot.error_vs_requested(sw))
reveal_type(sleepacc.Pacer(0.01).wait())
reveal_type(sleepacc.load("x.jsonl").host)
'''

REVEALED = [
    "sleepacc._api.Measurement",
    "sleepacc._api.Stats",
    "int",
    "numpy.ndarray[tuple[Any, ...], numpy.dtype[numpy.signedinteger[numpy._typing._nbit_base._64Bit]]] | None",
    "sleepacc._api.Sweep",
    "sleepacc._api.Measurement",
    "sleepacc.model.ModelSet",
    "matplotlib.figure.Figure",
    "int",
    "dict[str, Any]",
]


def test_results_are_typed_not_any(tmp_path, cache):
    (tmp_path / "probe.py").write_text(PROBE)
    (tmp_path / "mypy.ini").write_text(MYPY_INI)
    r = _mypy("--strict", "--config-file", "mypy.ini", "probe.py", cwd=tmp_path, cache=cache)
    revealed = [line.split('Revealed type is "', 1)[1].rstrip('"')
                for line in r.stdout.splitlines() if "Revealed type is" in line]
    assert len(revealed) == len(REVEALED), r.stdout
    for got, want in zip(revealed, REVEALED):
        if want.startswith("numpy.ndarray"):     # numpy's spelling varies by version
            assert got.startswith("numpy.ndarray") and "64" in got and got.endswith("| None"), got
        else:
            assert got == want, r.stdout


def test_stubs_match_the_runtime(tmp_path, cache):
    (tmp_path / "mypy.ini").write_text(MYPY_INI.replace("[mypy]\n", f"[mypy]\ncache_dir = {cache}\n"))
    (tmp_path / "allow.txt").write_text("\n".join(ALLOW) + "\n")
    # (--ignore-missing-stub: a name the runtime gains before its stub, e.g. a
    # new Measurement field, is not an error; everything the stubs say is checked)
    r = subprocess.run([sys.executable, "-m", "mypy.stubtest", *STUBBED, "--mypy-config-file",
                        "mypy.ini", "--allowlist", "allow.txt", "--ignore-missing-stub"],
                       cwd=tmp_path,
                       capture_output=True, text=True, timeout=300, env=child_env())
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("example", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_runs(example, tmp_path):
    r = subprocess.run([sys.executable, str(example), str(tmp_path / "out")], cwd=tmp_path,
                       capture_output=True, text=True, timeout=120, env=child_env(MPLBACKEND="Agg"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip(), "the example printed nothing"
