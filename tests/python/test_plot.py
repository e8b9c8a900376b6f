"""sleepacc.plot: every plot returns a Figure, saves PNG and SVG, labels its
axes in ns/µs/ms, and imports matplotlib only when drawing."""

import pathlib
import subprocess
import sys

import pytest

import sleepacc
from matplotlib.figure import Figure  # the "test" extra installs matplotlib
from sleepacc import model, plot

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"
UNIT_WORDS = ("ns", "µs", "ms")


@pytest.fixture(scope="module")
def sweep():
    return sleepacc.sweep(["nanosleep", "timerfd", "hybrid", "spin", "poll", "syscall"],
                          [0.0, 1e-5, 1e-4, 1e-3], budget=0.04)


def _tick_texts(axis):
    return [t.get_text() for t in axis.get_ticklabels() if t.get_text()]


def _check_saved(fig, tmp_path, stem):
    png, svg = tmp_path / f"{stem}.png", tmp_path / f"{stem}.svg"
    plot.save_figure(fig, [png, svg])
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert png.stat().st_size > 10_000
    assert b"<svg" in svg.read_bytes()[:500]


def _draw(fig):
    fig.canvas.draw()
    return fig.axes[0]


def test_import_does_not_load_matplotlib():
    code = "import sys, sleepacc.plot; print('matplotlib' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=str(DATA), check=True)
    assert out.stdout.strip() == "False"


def test_error_vs_requested(sweep, tmp_path):
    fig = plot.error_vs_requested(sweep, save=tmp_path / "err.png")
    assert isinstance(fig, Figure)
    ax = _draw(fig)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    xt, yt = _tick_texts(ax.xaxis), _tick_texts(ax.yaxis)
    assert xt and all(any(u in t for u in UNIT_WORDS) for t in xt)
    assert yt and all(any(u in t for u in UNIT_WORDS) for t in yt)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    # the baseline (syscall) does not sleep and is left out by default
    assert labels == ["nanosleep", "timerfd", "hybrid", "spin", "poll"]
    # one median line per method and one p1-p99 band per method
    assert len(ax.lines) == 5 and len(ax.collections) == 5
    assert (tmp_path / "err.png").exists()
    _check_saved(fig, tmp_path, "err2")


def test_lateness_cdf(sweep, tmp_path):
    fig = plot.lateness_cdf(sweep, requested=1e-3)
    ax = _draw(fig)
    assert "1 ms" in ax.get_xlabel()
    ys = [line.get_ydata() for line in ax.lines]
    assert all(abs(y[-1] - 1.0) < 1e-12 for y in ys)       # each curve reaches 1
    assert all(any(u in t for u in UNIT_WORDS) for t in _tick_texts(ax.xaxis))
    _check_saved(fig, tmp_path, "cdf")
    with pytest.raises(ValueError, match="no measurement"):
        plot.lateness_cdf(sweep, requested=0.123)


def test_cost_pareto(sweep, tmp_path):
    fig = plot.cost_pareto(sweep, requested=1e-3)
    ax = _draw(fig)
    names = [t.get_text() for t in ax.texts]
    assert set(names) == {"nanosleep", "timerfd", "hybrid", "spin", "poll"}
    pts = {n: (max(r["cpu_percent"], 0.01), max(r["p99"], 1.0))
           for r in plot.series(sweep) if r["requested_ns"] == 1e6
           for n in [r["method"]] if n in names}

    def beaten(n):
        c, e = pts[n]
        return any(c2 <= c and e2 <= e and (c2, e2) != (c, e) for m, (c2, e2) in pts.items()
                   if m != n)
    assert fig.pareto_front and all(not beaten(n) for n in fig.pareto_front)
    assert all(beaten(n) for n in names if n not in fig.pareto_front)
    assert "%" in ax.get_xlabel() and all("%" in t for t in _tick_texts(ax.xaxis))
    _check_saved(fig, tmp_path, "pareto")


def test_pareto_front_on_known_points():
    pts = [(1.0, 100.0, "a"), (2.0, 50.0, "b"), (3.0, 60.0, "c"), (50.0, 1.0, "d"),
           (60.0, 1.0, "e")]
    assert [pts[i][2] for i in plot._pareto(pts)] == ["a", "b", "d"]


def test_model_fit_over_seed_data(tmp_path):
    m = model.fit_groups(DATA / "seed_results.csv").find(host="XP1700")
    fig = plot.model_fit(m, save=tmp_path / "fit.svg")
    ax = _draw(fig)
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert any("10 ms tick +1" in t for t in labels)
    assert all(any(u in t for u in UNIT_WORDS) for t in _tick_texts(ax.xaxis))
    assert len(ax.lines) == 3                       # one model line per method
    _check_saved(fig, tmp_path, "fit")


def test_model_fit_over_live_sweep(sweep, tmp_path):
    m = model.fit(sweep)
    fig = plot.model_fit(m, sweep, methods=["nanosleep", "timerfd"])
    ax = _draw(fig)
    assert len(ax.lines) == 2
    _check_saved(fig, tmp_path, "fitlive")
    with pytest.raises(ValueError, match="nanosleep"):
        plot.model_fit(m, methods=["kqueue"])


def test_history(tmp_path):
    fig = plot.history([{"label": "FreeBSD 4", "year": 2002, "value_ns": 17e6, "kind": "tick"},
                        {"label": "Linux 5.8", "year": 2020, "value_ns": 53e3, "kind": "slack"}])
    ax = _draw(fig)
    assert any("ms" in t for t in _tick_texts(ax.yaxis))
    _check_saved(fig, tmp_path, "hist")
    with pytest.raises(ValueError):
        plot.history([])


def test_bad_methods_are_named():
    recs = [r for r in model.load_records(DATA / "seed_results.csv") if r["host"] == "AMD Ryzen 3700X"]
    with pytest.raises(ValueError, match="select"):
        plot.error_vs_requested(recs, methods=["kqueue"])
    fig = plot.error_vs_requested(recs)             # records work too (no samples: min band)
    assert len(fig.axes[0].lines) == 2
