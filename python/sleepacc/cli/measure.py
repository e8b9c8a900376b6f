"""``sleepacc measure``: one method at one duration, in detail: the
statistics, the environment, the CPU cost and a histogram of the errors.

The command hands its options to ``sleepacc.measure`` once, as typed (the
duration in seconds, what the core's option takes); the core checks them
before anything runs, and a broken rule is a usage error naming the flag.
"""

from __future__ import annotations

import math

import sleepacc
from sleepacc import records
from sleepacc._units import format_go, format_ns
from sleepacc.cli._common import (DEFAULTS, UNITS_HELP, add_env_options, add_margin_option,
                                  add_mode_option, arg_error, core_error, duration, env_options,
                                  int_range, integer, plain, time_s)
from sleepacc.cli._files import SCHEMA, print_json
from sleepacc.cli.commands import add_command
from sleepacc.cli._text import add_wide, columns, echo

# the core's option -> the flag that gave it
FLAGS = {"method": "METHOD", "duration": "DURATION", "n": "-n"}


def add_parser(sub):
    s = add_command(sub, "measure",
                    "Measure one method at one duration: statistics, CPU cost, error histogram.")
    s.add_argument("method", metavar="METHOD",
                   help="a method of `sleepacc info` (the floor methods, syscall and clock, "
                        "ignore the requested duration)")
    s.add_argument("duration", type=duration, metavar="DURATION",
                   help=f"the requested duration ({UNITS_HELP})")
    # --budget, -n, --warmup: their ranges and defaults are the core's
    s.add_argument("--budget", type=time_s, default=None, metavar="SECONDS",
                   help=f"time to measure (default {DEFAULTS['budget_ns'] / 1e9:g})")
    s.add_argument("-n", type=integer, default=None, metavar="N",
                   help="stop after N samples")
    s.add_argument("--warmup", type=integer, default=None, metavar="N",
                   help="sleeps taken first and not counted (they warm caches and the "
                        f"method's state; default {DEFAULTS['warmup']})")
    add_mode_option(s)
    add_margin_option(s)
    add_env_options(s)
    s.add_argument("--bins", type=int_range(1, 200), default=16, metavar="N",
                   help="histogram rows (default 16)")
    s.add_argument("--json", action="store_true", help="the point as JSON")
    add_wide(s)
    s.add_argument("--samples", action="store_true", help="with --json: include the samples")
    s.set_defaults(func=run)
    return s


def histogram_lines(errors_ns, bins, width=40):
    """A text histogram of errors (ns), in µs: `bins` rows between the 1st
    and 99th percentiles, and what lies outside counted in two end rows."""
    import numpy as np
    e = np.asarray(errors_ns, dtype=np.float64) / 1e3
    if e.size == 0:
        return ["(no samples)"]
    if np.unique(e).size < 2:         # one value: one row (no range to divide)
        return [f"  {e[0]:.3f} |{'#' * width} {e.size}"]
    lo, hi = np.percentile(e, [1, 99]) if e.size >= 100 else (e.min(), e.max())
    if hi <= lo:
        lo, hi = lo - 0.0005, lo + 0.0005
    counts, edges = np.histogram(e, bins=bins, range=(lo, hi))
    below, above = int((e < lo).sum()), int((e > hi).sum())
    digits = max(0, min(3, 1 - int(math.floor(math.log10((hi - lo) / bins)))))
    rows = [(f"< {lo:.{digits}f}", below)] if below else []
    rows += [(f"{a:.{digits}f} .. {b:.{digits}f}", int(c))
             for a, b, c in zip(edges[:-1], edges[1:], counts)]
    if above:
        rows.append((f"> {hi:.{digits}f}", above))
    peak = max(c for _, c in rows) or 1
    label_w = max(len(r[0]) for r in rows)
    return [f"  {lab:>{label_w}} |{'#' * int(round(width * c / peak)):<{width}} {c}"
            for lab, c in rows]


def run(args):
    if args.samples and not args.json:
        raise arg_error("--samples", "needs --json (the samples go into the JSON point; "
                                     "the text shows statistics only)")
    given = {"method": args.method, "duration": args.duration, "mode": args.mode,
             **{k: v for k, v in (("n", args.n), ("budget", args.budget),
                                  ("warmup", args.warmup)) if v is not None},   # None: the core's
             **env_options(args)}
    try:   # the core reads and checks every option once, before anything runs
        m = sleepacc.measure(keep_samples=True, **{k: plain(v) for k, v in given.items()})
    except ValueError as exc:
        raise core_error(exc, FLAGS, given, unnamed=None) from None
    errors = m.errors_ns
    if not (args.json and args.samples):
        m.samples = None     # to_dict() would copy every sample into a list
    d = m.to_dict()
    if args.json:
        print_json({"schema": SCHEMA, "type": "point", **d}, allow_nan=False)
        return 0
    _print_point(d, errors, args.bins, columns(args))
    return 0


def _print_point(d, errors, bins, width=None):
    from sleepacc.report import text_table
    st = d["stats"]
    periodic = d["mode"] == "periodic"
    what = "lateness" if periodic else "error"
    print(f"{d['method']}({format_go(d['requested_ns'])}), {d['mode']} mode: "
          f"{st['n']} sample{'' if st['n'] == 1 else 's'} in {d['wall_ns'] / 1e9:.3f} s")
    if d["requested_ns"] and _is_floor(d["method"]):
        print(f"note: {d['method']} is a floor (family 'baseline'): it ignores the request")
    # a setting of 0 (cpu 0, dma_latency_us 0) was applied: only None and False were not
    applied = [f"{k} {v}" for k, v in (d.get("env") or {}).items()
               if v is not None and v is not False]
    echo(", ".join(applied) if applied else "the thread's own settings", width, "environment: ",
         "  ")
    cols = ["min", "median", "p90", "p99", "p999", "max", "mean"]
    rows = []
    if st["n"] > 0:
        def err(value):   # records.error_ns, the one rule
            return records.error_ns(d.get("mode"), d["requested_ns"], value)
        if not periodic:
            rows.append(["actual"] + [format_ns(st[c], 4) for c in cols] + [format_ns(st["std"], 3)])
        rows.append([what] + [format_ns(err(st[c]), 4) for c in cols] + [format_ns(st["std"], 3)])
        print()
        heads = ["min", "median", "p90", "p99", "p99.9", "max", "mean", "std"]
        table = text_table([""] + heads, rows)
        if width is not None and max(map(len, table.splitlines())) > width:
            # too wide for the terminal: one line per statistic instead
            table = text_table([""] + [r[0] for r in rows],
                               [[h] + [r[i + 1] for r in rows] for i, h in enumerate(heads)])
        print(table)
    print()
    print(f"undersleeps {st['undersleeps']}, missed deadlines {d.get('missed', 0)}")
    cpu = d.get("cpu_ns_per_call")
    ctx = d.get("ctx_switches") or {}
    pct = d.get("cpu_percent", -1)
    echo(f"{format_ns(cpu) if cpu is not None and cpu >= 0 else 'unknown'} per call"
         f" ({f'{pct:.1f}%' if pct >= 0 else 'unknown share'} of one CPU); context switches: "
         f"{ctx.get('voluntary', '?')} voluntary, {ctx.get('involuntary', '?')} involuntary",
         width, "CPU cost: ", "  ")
    if st["n"] > 0:
        print()
        print(f"{what} histogram (µs):")
        print("\n".join(histogram_lines(errors, bins)))


def _is_floor(name):
    """Whether a method is a floor (registry family "baseline")."""
    return any(m.name == name and m.family == "baseline" for m in sleepacc.methods())
