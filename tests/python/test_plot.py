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
UNIT_WORDS = ("ns", "µs", "ms", " s")


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


def _labelled(ax):
    return [ln for ln in ax.lines if not ln.get_label().startswith("_")]


def _legend_texts(fig):
    return [t.get_text() for ax in fig.axes if ax.get_legend()
            for t in ax.get_legend().get_texts()]


def test_quantile_levels_are_the_cores():
    # the level of each order statistic is the core's (sleepacc_stats_level):
    # on 1..1000 the core's statistic at level q is q * 1000 (nearest rank)
    import array
    from sleepacc import _core
    st = _core.stats(array.array("q", range(1000, 0, -1)), 0)
    assert list(plot.data._QUANTILE_LEVEL) == ["min", "p1", "p10", "p25", "median", "p75", "p90",
                                          "p99", "p999", "max"]
    for name, q in plot.data._QUANTILE_LEVEL.items():
        assert st[name] == max(1, round(q * 1000)), name
    assert _core.stats_level("mean") == _core.stats_level("n") == -1.0
    with pytest.raises(TypeError):
        _core.stats_level(None)


def test_histogram_counts_undersleeps_by_the_core():
    # the footnote gives the record's (the core's) undersleeps, not a recount
    import array
    from sleepacc import _core
    m = sleepacc.measure("nanosleep", 1e-4, n=5).to_dict()
    m["samples"] = [50_000] * 3 + [150_000] * 197
    m["stats"] = _core.stats(array.array("q", m["samples"]), 100_000)
    assert plot.series([m])[0]["undersleeps"] == m["stats"]["undersleeps"] == 3
    fig = plot.histogram(m)
    assert any("3 undersleeps" in t.get_text() for t in fig.texts)


def test_families_come_from_the_registry():
    from types import SimpleNamespace as Row
    reg = {m.name: m for m in sleepacc.methods()}
    assert plot.method_family("nanosleep", reg) == "slack"
    assert plot.method_family("poll", reg) == "ms"
    assert plot.method_family("timerfd", reg) == "timer"
    assert plot.method_family("hybrid", reg) == "spin"
    assert plot.method_family("syscall", reg) == "floor"
    assert plot.method_family("go-timer", reg) == "other"
    # a new registry row is placed by its fields, no name list to edit
    reg["kqueue"] = Row(family="kernel", granularity_ns=1, honours_slack="no")
    reg["Sleep"] = Row(family="kernel", granularity_ns=1_000_000, honours_slack="unknown")
    assert plot.method_family("kqueue", reg) == "timer"
    assert plot.method_family("Sleep", reg) == "ms"
    assert [k for k, _l, _w in plot.FAMILIES][:5] == ["slack", "ms", "timer", "spin", "floor"]


def test_error_vs_requested(sweep, tmp_path):
    fig = plot.error_vs_requested(sweep, save=tmp_path / "err.png")
    assert isinstance(fig, Figure)
    fig.canvas.draw()
    # one panel per family; syscall (a floor, measured at 0) is a reference line
    assert [ax.get_title() for ax in fig.axes] == [
        "slack-bound kernel sleeps", "ms-unit APIs", "slack-free timers", "spin-based"]
    per_panel = [[ln.get_label().split(" (n=")[0] for ln in _labelled(ax)] for ax in fig.axes]
    assert per_panel == [["nanosleep"], ["poll"], ["timerfd"], ["hybrid", "spin"]]
    assert all(" (n=" in t for t in _legend_texts(fig))          # n is shown
    for ax in fig.axes:
        assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
        assert any("syscall floor" in t.get_text() for t in ax.texts)
    xt = [t for ax in fig.axes for t in _tick_texts(ax.xaxis)]
    yt = [t for ax in fig.axes for t in _tick_texts(ax.yaxis)]
    assert xt and all(any(u in t for u in UNIT_WORDS) for t in xt)
    assert yt and all(any(u in t for u in UNIT_WORDS) for t in yt)
    foot = " ".join(t.get_text() for t in fig.texts)
    assert "band" in foot and "100 samples" in foot
    _check_saved(fig, tmp_path, "err2")


def _synthetic(method, requested_ns, n, seed):
    """A Measurement of n samples (70-90 us late) with the core's statistics."""
    import numpy as np
    from sleepacc import _core
    arr = requested_ns + np.random.default_rng(seed).integers(70_000, 90_000, size=n)
    return sleepacc.Measurement(method=method, mode="relative", requested_ns=requested_ns,
                                n=n, stats=_core.stats(arr.astype(np.int64), 0), samples=arr)


def test_few_samples_get_no_band_and_an_open_mark():
    s = sleepacc.Sweep([_synthetic("nanosleep", 100_000, 250, 1),
                        _synthetic("nanosleep", 1_000_000, 120, 2),
                        _synthetic("nanosleep", 10_000_000, 5, 3)])
    fig = plot.error_vs_requested(s)
    ax = fig.axes[0]
    marks = [c for c in ax.collections if type(c).__name__ == "PathCollection"]
    bands = [c for c in ax.collections if c not in marks]
    assert len(marks) == 1 and len(marks[0].get_offsets()) == 1   # the 10 ms p99
    assert marks[0].get_offsets()[0][0] == 1e7
    # the band spans the points of >= 100 samples (100 us .. 1 ms), not the 10 ms one
    (band,) = bands
    xs = [v[0] for p in band.get_paths() for v in p.vertices]
    assert min(xs) == 1e5 and max(xs) == 1e6
    assert "fewer than 100" in " ".join(t.get_text() for t in fig.texts)


def _band_extent(ax, x):
    """(low, high) of what the panel draws of a band at x: the filled
    polygons' vertices and the bars (vlines) there; None when nothing."""
    ys = []
    for c in ax.collections:
        if type(c).__name__ == "LineCollection":
            ys += [v[1] for seg in c.get_segments() for v in seg if v[0] == x]
        elif type(c).__name__ != "PathCollection":
            ys += [v[1] for p in c.get_paths() for v in p.vertices if v[0] == x]
    return (min(ys), max(ys)) if ys else None


def test_a_well_sampled_point_alone_still_shows_its_band():
    # one duration (or a well-sampled point between points of few samples):
    # fill_between alone draws no width there, so its p1-p99 vanished while
    # the footnote promised a band where a point has >= 100 samples
    one = _synthetic("nanosleep", 1_000_000, 250, 4)
    fig = plot.error_vs_requested(sleepacc.Sweep([one]))
    assert _band_extent(fig.axes[0], 1e6) == (one.error("p1"), one.error("p99"))
    mid = _synthetic("nanosleep", 1_000_000, 300, 5)
    s = sleepacc.Sweep([_synthetic("nanosleep", 100_000, 5, 6), mid,
                        _synthetic("nanosleep", 10_000_000, 5, 7)])
    fig = plot.error_vs_requested(s)
    assert _band_extent(fig.axes[0], 1e6) == (mid.error("p1"), mid.error("p99"))
    assert _band_extent(fig.axes[0], 1e5) is None    # few samples: an open mark only
    fig = plot.model_fit(model.fit(sleepacc.Sweep([one, _synthetic("nanosleep", 100_000, 5, 8)])),
                         sleepacc.Sweep([one]))
    assert _band_extent(fig.axes[0], 1e6) == (one.error("p1"), one.error("p99"))


def test_lateness_cdf(sweep, tmp_path):
    fig = plot.lateness_cdf(sweep, requested=1e-3)
    fig.canvas.draw()
    assert all("1 ms" in ax.get_xlabel() for ax in fig.axes if ax.get_xlabel())
    curves = [ln for ax in fig.axes for ln in _labelled(ax)]
    assert len(curves) == 5
    for ln in curves:
        n = int(ln.get_label().split("n=")[1].split(")")[0].replace(",", ""))
        y = ln.get_ydata()
        # the tail on a log scale: the share above each sample, from (n-1)/n down to 1/n
        # (one sample, as a loaded machine may leave a point: its one point at 1/n)
        assert y[0] == pytest.approx(max(1 - 1 / n, 1 / n)) and min(y) == pytest.approx(1 / n)
    assert all(ax.get_yscale() == "log" and ax.get_xscale() == "log" for ax in fig.axes)
    assert any("p99" in t for ax in fig.axes for t in _tick_texts(ax.yaxis))
    assert all(any(u in t for u in UNIT_WORDS) for ax in fig.axes
               for t in _tick_texts(ax.xaxis))
    _check_saved(fig, tmp_path, "cdf")
    with pytest.raises(ValueError, match="no measurement"):
        plot.lateness_cdf(sweep, requested=0.123)


def test_lateness_cdf_of_one_sample_is_its_one_point():
    one = sleepacc.Sweep([sleepacc.measure("nanosleep", 1e-3, n=1)])
    fig = plot.lateness_cdf(one)
    (ln,) = _labelled(fig.axes[0])
    assert "(n=1)" in ln.get_label() and list(ln.get_ydata()) == [1.0]
    assert list(ln.get_xdata()) == [max(float(one[0].errors_ns[0]), 1.0)]  # ns, floored at 1


def test_lateness_cdf_from_the_core_quantiles(sweep):
    streamed = sleepacc.Sweep([sleepacc.measure("nanosleep", 1e-3, budget=0.03,
                                                keep_samples=False)])
    fig = plot.lateness_cdf(streamed)
    (ln,) = _labelled(fig.axes[0])
    n = streamed[0].n
    assert "quantiles" in ln.get_label()
    assert min(ln.get_ydata()) >= 1 / n                 # no level finer than 1/n


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
    # the legend is by family; a p99 of fewer than 100 samples is named and warned of
    assert "spin-based" in [t.get_text() for t in ax.get_legend().get_texts()]
    n_at_1ms = {m.method: m.n for m in sweep if m.requested_ns == 1_000_000}
    assert sorted(fig.few_samples) == sorted(n for n in names if n_at_1ms[n] < 100)
    foot = " ".join(t.get_text() for t in fig.texts)
    assert ("fewer than 100" in foot) == bool(fig.few_samples)
    _check_saved(fig, tmp_path, "pareto")


def test_histogram(sweep, tmp_path):
    m = next(m for m in sweep if m.method == "nanosleep" and m.requested_ns == 100_000)
    fig = plot.histogram(m, save=tmp_path / "h.png")
    ax = _draw(fig)
    assert f"n={m.n:,}" in ax.get_title() and "nanosleep" in ax.get_title()
    assert ax.get_yscale() == "log"
    marks = [t.get_text() for t in ax.texts]
    assert any(t.startswith("median") for t in marks) and any(t.startswith("max") for t in marks)
    assert any(t.startswith("p99") for t in marks) == (m.n >= 100)
    bars = ax.patches[0].get_data()                  # the StepPatch of the counts
    assert int(bars.values.sum()) == m.n             # every sample is in a bin
    _check_saved(fig, tmp_path, "histo")
    with pytest.raises(ValueError, match="kept no samples"):
        plot.histogram(sleepacc.measure("nanosleep", 1e-4, budget=0.01, keep_samples=False))


def test_cli_plot_kinds(tmp_path):
    from sleepacc import cli
    path = tmp_path / "s.jsonl"
    assert cli.main(["sweep", "--methods", "nanosleep,spin", "--durations", "100us,1ms",
                     "--budget", "0.02", "--samples", "-o", str(path), "--format", "none"]) == 0
    out = tmp_path / "h.png"
    assert cli.main(["plot", str(path), "--kind", "histogram", "--methods", "spin",
                     "--requested", "100us", "-o", str(out)]) == 0
    assert out.read_bytes()[:4] == b"\x89PNG"
    assert cli.main(["plot", str(path), "--kind", "histogram", "--requested", "5ms",
                     "-o", str(out)]) == 1
    assert cli.main(["plot", str(path), "--kind", "cdf", "--requested", "100us",
                     "-o", str(tmp_path / "c.svg")]) == 0


def test_cli_plot_compare_ranks_at_requested(tmp_path, monkeypatch):
    # --requested with --compare was ignored: the hosts were ranked at 1 ms
    from sleepacc import cli
    paths = []
    for i in range(2):
        paths.append(str(tmp_path / f"{i}.jsonl"))
        assert cli.main(["sweep", "--methods", "nanosleep", "--durations", "100us,1ms",
                         "--budget", "0.01", "-o", paths[-1], "--format", "none"]) == 0
    seen = {}
    real = plot.compare_hosts

    def spy(*a, **kw):
        seen.update(kw)
        return real(*a, **kw)
    monkeypatch.setattr(plot, "compare_hosts", spy)
    assert cli.main(["plot", "--compare", *paths, "--requested", "100us",
                     "-o", str(tmp_path / "c.png")]) == 0
    assert seen["requested"] == pytest.approx(1e-4)


def test_pareto_front_on_known_points():
    pts = [(1.0, 100.0, "a"), (2.0, 50.0, "b"), (3.0, 60.0, "c"), (50.0, 1.0, "d"),
           (60.0, 1.0, "e")]
    assert [pts[i][2] for i in plot.sweep._pareto(pts)] == ["a", "b", "d"]


def test_model_fit_over_seed_data(tmp_path):
    m = model.fit_groups(DATA / "seed_results.csv").find(host="XP1700")
    fig = plot.model_fit(m, save=tmp_path / "fit.svg")
    ax = _draw(fig)
    labels = _legend_texts(fig)
    assert any("10 ms tick +1" in t for t in labels)
    assert all(any(u in t for u in UNIT_WORDS) for t in _tick_texts(ax.xaxis))
    assert sum(len(_labelled(a)) for a in fig.axes) == len(m.params)  # a line per method
    _check_saved(fig, tmp_path, "fit")


def test_model_fit_over_live_sweep(sweep, tmp_path):
    m = model.fit(sweep)
    fig = plot.model_fit(m, sweep, methods=["nanosleep", "timerfd"])
    _draw(fig)
    assert [a.get_title() for a in fig.axes] == ["slack-bound kernel sleeps",
                                                 "slack-free timers"]
    assert sum(len(_labelled(a)) for a in fig.axes) == 2
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
    assert sum(len(_labelled(a)) for a in fig.axes) == 2


def test_over_time():
    m = sleepacc.measure("nanosleep", 1e-4, budget=0.05)
    fig = plot.over_time(m)
    ax = _draw(fig)
    (dots,) = [c for c in ax.collections]
    xy = dots.get_offsets()
    assert len(xy) == m.n
    starts = [s / 1e9 for s in m.starts]
    assert list(xy[:, 0]) == pytest.approx(starts)          # x: each sample's start
    assert xy[:, 0].min() >= 0 and f"n={m.n:,}" in ax.get_title()
    with pytest.raises(ValueError, match="start times"):
        plot.over_time(sleepacc.measure("nanosleep", 1e-4, budget=0.01, keep_samples=False))
