"""Sweep a few methods, keep the result, explain it, draw it.

    python examples/sweep_explain_plot.py [OUT_DIR]
"""
import pathlib
import sys

import sleepacc
from sleepacc import model, plot


def main(out: pathlib.Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    sw = sleepacc.sweep(["nanosleep", "timerfd", "hybrid"], [1e-4, 1e-3, 1e-2], budget=0.05)
    sw.save(out / "sweep.json")
    assert sleepacc.load(out / "sweep.json") == sw
    print(sw.table("irtt"))
    worst = max(sw, key=lambda m: m.stats.p99 - m.requested_ns)
    print(f"worst p99: {worst.method} at {worst.requested * 1e3:g} ms")
    fitted = model.fit(sw)
    print(fitted.explain())
    if isinstance(fitted, model.Model):      # one machine and configuration
        p = fitted.params["nanosleep"]
        print(f"nanosleep: slack {p.slack_ns} ns, wake-up {p.wakeup_ns} ns ({p.verdict})")
        plot.model_fit(fitted, sw, save=out / "model.png")
    fig = plot.error_vs_requested(sw, save=out / "error.png")
    print(f"figures in {out} ({fig.get_figwidth():g} x {fig.get_figheight():g} in)")


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else "sleepacc-out"))
