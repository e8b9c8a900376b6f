"""The notebooks run headless, every cell, with a tiny budget, so they cannot rot.

They are stored without outputs; here each one is executed by a real
Jupyter kernel (ipykernel of this interpreter, through nbclient) with
SLEEPACC_NB_BUDGET set small, and the outputs are checked for the tables,
the figures and the model's explanation the notebook promises.
"""

import os
import pathlib
import sys

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = pathlib.Path(__file__).resolve().parents[2] / "notebooks"
NAMES = ["01-measure-this-host", "02-history", "03-precise-sleep"]


def _load(name):
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


@pytest.mark.parametrize("name", NAMES)
def test_stored_without_outputs(name):
    book = _load(name)
    code = [c for c in book.cells if c.cell_type == "code"]
    assert code
    for cell in code:
        assert cell.outputs == [] and cell.execution_count is None, name


def _run(name, monkeypatch):
    monkeypatch.setenv("SLEEPACC_NB_BUDGET", "0.01")
    # the kernel must import the same sleepacc as this test process
    pkg_dir = str(pathlib.Path(__import__("sleepacc").__file__).resolve().parents[1])
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(
        [pkg_dir] + [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]))
    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    book = _load(name)
    client = NotebookClient(book, timeout=300, kernel_name="python3",
                            resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()
    return book


def _texts(book):
    out = []
    for cell in book.cells:
        for o in cell.get("outputs", []):
            if o.output_type == "stream":
                out.append(o.text)
            elif o.output_type in ("execute_result", "display_data"):
                out.append(o.data.get("text/plain", ""))
            elif o.output_type == "error":
                out.append("ERROR " + o.ename + ": " + o.evalue)
    return "\n".join(out)


def _images(book):
    return sum(1 for cell in book.cells for o in cell.get("outputs", [])
               if o.output_type in ("execute_result", "display_data") and "image/png" in o.data)


def test_kernel_is_this_interpreter():
    from jupyter_client.kernelspec import KernelSpecManager
    spec = KernelSpecManager().get_kernel_spec("python3")
    # jupyter_client launches "python"/"python3"/"python3.X" as sys.executable
    aliases = {"python", f"python{sys.version_info[0]}", "python%d.%d" % sys.version_info[:2]}
    assert spec.argv[0] in aliases or \
        os.path.realpath(spec.argv[0]) == os.path.realpath(sys.executable)
    assert "ipykernel" in " ".join(spec.argv)


def test_01_measure_this_host(monkeypatch):
    book = _run("01-measure-this-host", monkeypatch)
    text = _texts(book)
    assert "Testing sleep accuracy..." in text           # the core's irtt table
    assert "median err" in text                          # the wide table
    assert "nanosleep(1 ms) = 1000 µs asked" in text     # the model's sentence
    assert "Pareto front at 1 ms:" in text
    assert "the model explains" in text
    assert _images(book) >= 4


def test_02_history(monkeypatch):
    book = _run("02-history", monkeypatch)
    text = _texts(book)
    assert "machine/configuration groups" in text
    assert "usleep(3 ms) = 3000 µs asked" in text and "one extra tick" in text
    assert "10ms+1" in text                              # the FreeBSD 4 row of the table
    assert "nanosleep(1 ms) = 1000 µs asked" in text     # this host, fitted
    assert _images(book) >= 1


def test_03_precise_sleep(monkeypatch):
    book = _run("03-precise-sleep", monkeypatch)
    text = _texts(book)
    assert "Pareto front:" in text and "hybrid" in text
    assert "margin" in text and "hybrid(1 ms) = 1000 µs asked" in text
    assert _images(book) >= 2
