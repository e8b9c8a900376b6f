"""Figures and axes, apart from what they show: a Figure without pyplot, saving it,
duration axes (ns/µs/ms, never bare seconds), panels, legends, colours, bands
and labels placed without overlap.
"""
from __future__ import annotations

import math
import os
from typing import Sequence, Union

import numpy as np

from .._units import format_ns
from .data import _FAMILY_LABEL


PathLike = Union[str, os.PathLike]


def _figure(width=8.0, height=5.0):
    try:
        from matplotlib.figure import Figure
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError("sleepacc.plot needs matplotlib: pip install 'sleepacc[plot]' "
                          "or pip install matplotlib") from e
    fig = Figure(figsize=(width, height), layout="constrained")
    return fig


def save_figure(fig, save: Union[None, PathLike, Sequence[PathLike]]):
    """Save fig to each path (format from the suffix: .png, .svg, .pdf)."""
    if save is None:
        return fig
    paths = [save] if isinstance(save, (str, os.PathLike)) else list(save)
    for p in paths:
        fig.savefig(os.fspath(p), dpi=120)
    return fig


def _duration_formatter():
    from matplotlib.ticker import FuncFormatter

    def fmt(v, _pos):
        if v <= 0:
            return "0"
        return format_ns(v, digits=3)
    return FuncFormatter(fmt)


def _log_duration_axis(axis, sparse: bool = False):
    """Duration labels (ns/µs/ms) on a log axis; 1-2-5 steps when the data
    span less than three decades, so a narrow range still gets labels.
    sparse: ticks at every decade but labels only at 1 ns, 1 µs, 1 ms, 1 s
    (a narrow panel spanning nine decades)."""
    from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter
    axis.axes.autoscale_view()
    lo, hi = sorted(axis.get_view_interval())
    narrow = lo > 0 and math.isfinite(lo) and math.isfinite(hi) and hi / lo < 1000
    subs = (1.0, 2.0, 5.0) if narrow else (1.0,)
    axis.set_major_locator(LogLocator(base=10, subs=subs, numticks=15))
    if sparse and not narrow:
        def fmt(v, _pos):
            k = round(math.log10(v)) if v > 0 else 1
            return format_ns(v, digits=3) if k % 3 == 0 and abs(math.log10(v) - k) < 1e-6 \
                else ""
        axis.set_major_formatter(FuncFormatter(fmt))
    else:
        axis.set_major_formatter(_duration_formatter())
    axis.set_minor_formatter(NullFormatter())


def _panels(count: int, width: float = 4.3, height: float = 3.3, sharey: bool = True):
    """A figure with `count` axes in a grid (1, 2 or 3 columns), shared
    axes; unused cells removed.  Returns (fig, [axes])."""
    cols = 1 if count == 1 else 2 if count in (2, 4) else 3
    rows = -(-count // cols)
    if count == 1:   # one panel: the usual single-figure size
        width, height = 8.0, 4.4
    fig = _figure(width * cols, height * rows + 0.9)
    grid = fig.subplots(rows, cols, sharex=True, sharey=sharey, squeeze=False)
    axes = [a for row in grid for a in row]
    for ax in axes[count:]:
        ax.remove()
    return fig, axes[:count]


def _footnote(fig, text: str, lines: int = 2) -> None:
    """A caption under the axes (what the marks mean), `lines` lines tall,
    wrapped to the figure's width."""
    import textwrap
    width_in = fig.get_figwidth()
    wrapped = "\n".join(textwrap.wrap(text, width=int(width_in * 17)))
    lines = max(lines, wrapped.count("\n") + 1)
    height = (lines * 0.13 + 0.08) / fig.get_figheight()
    fig.text(0.01, 0.008, wrapped, fontsize=7, color="0.25", ha="left", va="bottom")
    layout = fig.get_layout_engine()
    if layout is not None and hasattr(layout, "set"):
        layout.set(rect=(0, height, 1, 1 - height))
    return height


def _legend_room(groups) -> float:
    """How far above the data (a factor on a log axis) the shared y axis
    must reach so that the tallest panel legend sits above the data."""
    rows = max(len(ns) if len(ns) <= 4 else -(-len(ns) // 2) for _k, ns in groups)
    return 10 ** (0.5 + 0.33 * rows)


def _finish_panel(ax, family: str, entries: int, loc: str, one_column: int = 4) -> None:
    """A family panel's title, grid and legend (two columns past `one_column`)."""
    ax.set_title(_FAMILY_LABEL[family], fontsize=9.5)
    ax.grid(True, which="major", alpha=0.3)
    ax.legend(fontsize=6, loc=loc, framealpha=0.85, ncol=1 if entries <= one_column else 2,
              columnspacing=0.8, handlelength=1.6)


def _sup_labels(fig, axes, xlabel: str, ylabel: str, note: str) -> None:
    """The shared axis labels of a panel figure and its footnote: x labels
    under the bottom panels, y labels left of the first column."""
    _footnote(fig, note)
    for ax in axes:
        ss = ax.get_subplotspec()
        if ss is None:
            continue
        if ss.is_last_row() or not any(
                o.get_subplotspec() is not None and o.get_subplotspec().rowspan.start
                == ss.rowspan.stop and o.get_subplotspec().colspan == ss.colspan for o in axes):
            ax.set_xlabel(xlabel, fontsize=8.5)
        if ss.is_first_col():
            ax.set_ylabel(ylabel, fontsize=8.5)


_MARKERS = "osD^v<>ph*X"


def _legend(ax, n):
    """Inside when few entries, outside on the right when many."""
    if n > 6:
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), framealpha=0.85)
    else:
        ax.legend(fontsize=8, loc="best", framealpha=0.85)


def _colors(names: Sequence[str]):
    from matplotlib import colormaps
    cmap = colormaps["tab10" if len(names) <= 10 else "tab20"]
    return {n: cmap(i % cmap.N) for i, n in enumerate(names)}


_FLOOR = 1.0  # ns: errors below this are drawn at 1 ns on log axes


def _band(ax, x, lo, hi, where, color, alpha):
    """The lo-hi band over the points `where` is true: filled between
    neighbouring such points, and a point with no such neighbour (the only
    duration, or one between points of few samples) as a bar of the band's
    colour at its x, which fill_between alone leaves out (zero width)."""
    x, lo, hi = np.asarray(x, dtype=float), np.asarray(lo, dtype=float), np.asarray(hi, dtype=float)
    where = np.asarray(where, dtype=bool)
    if len(x) > 1:
        ax.fill_between(x, lo, hi, where=where, color=color, alpha=alpha, linewidth=0)
    prev = np.concatenate([[False], where[:-1]])
    nxt = np.concatenate([where[1:], [False]])
    alone = where & ~prev & ~nxt
    if alone.any():
        ax.vlines(x[alone], lo[alone], hi[alone], color=color, alpha=min(1.0, 2 * alpha),
                  linewidth=5)


def _n_label(name: str, ns: Sequence) -> str:
    ns = [int(n) for n in ns if n is not None]
    if not ns:
        return name
    lo, hi = min(ns), max(ns)
    return f"{name} (n={lo:,})" if lo == hi else f"{name} (n={lo:,}–{hi:,})"


def _panel_colors(names: Sequence[str]):
    from matplotlib import colormaps
    cmap = colormaps["tab10"]
    return {n: cmap(i % 10) for i, n in enumerate(names)}


def _signed_duration_formatter():
    from matplotlib.ticker import FuncFormatter

    def fmt(v, _pos):
        if v == 0:
            return "0"
        return ("−" if v < 0 else "") + format_ns(abs(v), digits=3)
    return FuncFormatter(fmt)


def _place_labels(fig, ax, labels):
    """Annotate points without overlapping text or leaving the axes: each
    label tries positions around its marker at growing distances (display
    space, after the layout is fixed by one draw); a label moved away from
    its marker gets a thin leader line."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    if not hasattr(fig.canvas, "get_renderer"):
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    from matplotlib.transforms import Bbox
    renderer = fig.canvas.get_renderer()
    frame = ax.get_window_extent(renderer=renderer)
    boxes = []
    for _text, x, y in labels:   # the markers themselves are obstacles too
        px, py = ax.transData.transform((x, y))
        boxes.append(Bbox([[px - 5, py - 5], [px + 5, py + 5]]))
    directions = [(1, -0.4), (-1, -0.4), (1, 0.6), (-1, 0.6), (0, -1.4), (0, 1.2),
                  (1, -1.4), (-1, -1.4), (1, 1.4), (-1, 1.4)]
    for text, x, y in labels:
        ann = ax.annotate(text, (x, y), textcoords="offset points", xytext=(7, -3),
                          fontsize=7, ha="left", va="center")
        best = None
        for step in range(8):
            dist = 7 + 9 * step
            for dx, dy in directions:
                ha = "left" if dx > 0 else "right" if dx < 0 else "center"
                ann.set_position((dx * dist, dy * max(dist, 9)))
                ann.set_ha(ha)
                box = ann.get_window_extent(renderer=renderer)
                inside = (box.x0 >= frame.x0 and box.x1 <= frame.x1 and box.y0 >= frame.y0
                          and box.y1 <= frame.y1)
                if inside and not any(box.overlaps(b) for b in boxes):
                    best = (ann.xyann, ha, step)
                    break
            if best:
                break
        if best is None:   # nowhere free: keep the first place inside the axes
            best = ((7, -3), "left", 0)
        pos, ha, step = best
        ann.remove()
        arrow = dict(arrowstyle="-", color="0.4", lw=0.6) if step >= 1 else None
        ann = ax.annotate(text, (x, y), textcoords="offset points", xytext=pos, fontsize=7,
                          ha=ha, va="center", arrowprops=arrow)
        boxes.append(ann.get_window_extent(renderer=renderer))
