"""``sleepacc compare``: hosts side by side, one row per result file, ranked
by sleepacc.fleet; with two files (or --points) every point side by side.
Its file inputs are plot --compare's too."""

from __future__ import annotations

import sys

from sleepacc._units import format_go, format_ns
from sleepacc.cli._common import CliError, arg_error, method_name, requested, UNITS_HELP
from sleepacc.cli._files import SCHEMA, load, need_points, print_json
from sleepacc.cli.commands import add_command
from sleepacc.cli._text import add_wide, columns, echo, fit_table, split_table


def add_parser(sub):
    from sleepacc.fleet import STAT_FIELDS
    s = add_command(sub, "compare",
                    "One row per result file (sweep -o, Lua save, exporter --snapshot), ranked "
                    "by --stat of one method at one duration, with n and the top cause the "
                    "model finds in the file's data.  With two files (or --points) every point "
                    "side by side, with ratios.")
    s.add_argument("files", nargs="+", metavar="FILE")
    s.add_argument("--stat", choices=STAT_FIELDS, default=None,
                   help="statistic compared (default median; mean when a file is irtt "
                        "sleep's table, which has means only)")
    s.add_argument("--method", type=method_name, metavar="M",
                   help="method ranked (default nanosleep where every file has it)")
    s.add_argument("--duration", type=requested, metavar="D",
                   help="requested duration ranked (default 1ms where every file has it; "
                        f"{UNITS_HELP})")
    s.add_argument("--labels", metavar="A,B,...", help="names of the hosts, one per file "
                   "(default: the host names in the files)")
    s.add_argument("--format", choices=("text", "csv", "json"), default="text")
    s.add_argument("--json", action="store_true", help="same as --format json")
    s.add_argument("--points", action="store_true",
                   help="also every point side by side (the default with two files)")
    add_wide(s)
    s.set_defaults(func=run)
    return s


def compare_inputs(args, option="FILE"):
    """(sweeps, labels) of compare's (and plot --compare's) files."""
    files = args.files if option == "FILE" else args.compare
    if len(files) < 2:
        raise arg_error(option, "compare needs at least two files")
    labels = None
    if getattr(args, "labels", None):
        labels = [t.strip() for t in args.labels.split(",")]
        from sleepacc.fleet import labels_for   # its rules (one a file, named, distinct), now
        try:
            labels_for(files, files, labels)
        except ValueError as exc:
            raise arg_error("--labels", str(exc).split(": ", 1)[1]) from None
    sweeps = [load(p) for p in files]
    for p, sw in zip(files, sweeps):
        need_points(sw, p, "compare")
    return sweeps, labels


def _ns_text(ns):
    """ns resolution kept: 57 ns, 61.5 ns, 84.43 µs."""
    return "-" if ns is None else format_ns(ns, 4)


def _hostname(host):
    return str((host or {}).get("hostname") or "?")


def is_irtt(sweep):
    """Is this file irtt sleep's table (read from its text): means only,
    method "irtt"?"""
    return ((sweep.settings or {}).get("source") == "irtt sleep"
            or (len(sweep) > 0 and all(m.method == "irtt" and m.n is None for m in sweep)))


def comparable(sweeps, irtt, method=None):
    """The method of the other files that irtt's rows are compared with:
    `method` when given, else nanosleep (the kernel sleep, as Go's timer
    ends in one) where a file has it, else the first method of the first
    file that is not irtt's; None when every file is irtt's."""
    others = [m.method for sw, i in zip(sweeps, irtt) if not i for m in sw]
    if not others:
        return None
    if method is not None:
        return method
    return "nanosleep" if "nanosleep" in others else others[0]


def _point_rows(sweeps, stat, irtt=(), like=None):
    """The per-point view: every (method, mode, duration) of the files side
    by side, its error by `stat` in each file, n and the ratios against the
    first file.  The rows of an irtt file (irtt[i]) stand in method `like`'s
    rows, so both are compared at the durations both measured."""
    from sleepacc import fleet
    irtt = list(irtt) or [False] * len(sweeps)

    def key(p, i):
        method = like if irtt[i] and like is not None else p["method"]
        return (method, p["mode"], int(p["requested_ns"]))
    tables = [{key(p, i): p for p in (m.to_dict() for m in sw)} for i, sw in enumerate(sweeps)]
    rows = []
    for k in dict.fromkeys(k for t in tables for k in t):
        row = {"method": k[0], "mode": k[1], "requested_ns": k[2], "errors_ns": [], "n": [],
               "ratios": [], "irtt_in": [i for i, t in enumerate(tables) if irtt[i] and k in t]}
        errs = [fleet.point_error(t[k], stat) if k in t else None for t in tables]
        base = errs[0]
        for t, e in zip(tables, errs):
            row["errors_ns"].append(e)
            row["n"].append(t[k]["n"] if k in t else 0)
            row["ratios"].append(None if e is None or base is None or base <= 0 else e / base)
        rows.append(row)
    return rows


def run(args):
    from sleepacc import fleet
    sweeps, labels = compare_inputs(args)
    fmt = "json" if args.json else args.format
    irtt = [is_irtt(sw) for sw in sweeps]
    stat = args.stat or ("mean" if any(irtt) else "median")
    like = comparable(sweeps, irtt, args.method) if any(irtt) else None
    try:
        hosts = fleet.fleet(sweeps, args.files, stat=stat, method=args.method,
                            requested_ns=None if args.duration is None else args.duration.ns,
                            labels=labels)
    except ValueError as exc:
        raise CliError(str(exc)) from None
    rows = _point_rows(sweeps, stat, irtt, like)
    about_irtt = None
    if any(irtt):
        shared = sum(1 for r in rows if r["method"] == like and all(
            e is not None for e in r["errors_ns"]))
        about_irtt = {"files": [p for p, i in zip(args.files, irtt) if i], "method": "irtt",
                      "timer": "Go timer sleep (time.Sleep)", "compared_with": like,
                      "stat": stat, "durations_shared": shared}
    if fmt == "json":
        print_json({"schema": SCHEMA, "type": "compare", **hosts, "irtt": about_irtt,
                    "files": [{"path": p, "host": _hostname(sw.host)}
                              for p, sw in zip(args.files, sweeps)],
                    "rows": rows}, indent=1, allow_nan=False)
        return 0
    if fmt == "csv":
        import csv
        cols = ["rank", "label", "hostname", "path", "kernel", "slack_ns", "policy", "settings",
                "method", "mode",
                "requested_ns", "n", f"{stat}_ns", "median_ns", "p99_ns", "top_cause",
                "top_cause_id", "top_cause_ns"]
        cols = list(dict.fromkeys(cols))
        w = csv.writer(sys.stdout, lineterminator="\n")
        w.writerow(cols)
        for r in hosts["hosts"]:
            w.writerow(["" if r.get(c) is None else r.get(c) for c in cols])
        return 0
    width = columns(args)
    _print_hosts(hosts, len(sweeps), stat, width)
    if about_irtt is not None:
        print()
        echo(_irtt_note(about_irtt), width, "note: ", "  ")   # a path stays beside "note:"
    if args.points or len(sweeps) == 2:
        _print_points(args.files, sweeps, rows, stat, width)
    return 0


def _print_hosts(hosts, count, stat, width=None):
    """The ranking: one row per file.  Too wide for `width`, the file, then
    the top cause, then the host leave the row for lines under it (a path
    is never cut)."""
    from sleepacc import fleet
    what = f"{hosts['method']}({format_go(hosts['requested_ns'])})"
    echo(f"{count} hosts ranked by the {stat} error of {what}, best first; "
         "top cause: the oversleep model fitted to each file's own data", width, "", "  ")
    print()
    shown = list(dict.fromkeys([stat, "median", "p99"]))
    own = any(r["method"] != hosts["method"] for r in hosts["hosts"])   # one-method files
    headers = (["#", "host"] + (["method"] if own else []) + ["n"] + shown
               + ["top cause", "file"])
    rows = [[r["rank"] or "-", r["label"] + (f" [{r['settings']}]" if r["settings"] else "")]
            + ([r["method"]] if own else [])
            + ["?" if r["n"] is None else r["n"]]
            + [_ns_text(r[f"{c}_ns"]) for c in shown] + [fleet.cause_text(r), r["path"]]
            for r in hosts["hosts"]]
    last = len(headers) - 1
    print(fit_table(headers, rows, "<<" + ("<" if own else "") + ">" + ">" * len(shown) + "<<",
                    width, movable=(last, last - 1, 1)))


def _print_points(files, sweeps, rows, stat, width=None):
    """Every point side by side (_point_rows), the files lettered A, B, ...;
    too wide for `width`, the errors, ratios and counts spread over tables
    that each repeat the method and the duration."""
    letters = [chr(ord("A") + i) if i < 26 else f"F{i}" for i in range(len(sweeps))]
    print()
    for letter, path, sw in zip(letters, files, sweeps):
        about = [f"host {_hostname(sw.host)}"]
        if sw.started:
            about.append(str(sw.started))
        env = (sw.settings or {}).get("env") or {}
        about += [f"--{k} {v}" for k, v in env.items()]
        echo(f"{path} ({', '.join(about)})", width, f"{letter}: ", " " * (len(letter) + 4))
    periodic = any(r["mode"] == "periodic" for r in rows)
    echo(f"{stat} error{' (lateness for periodic points)' if periodic else ''} "
         f"of every point; ratios against A; n = samples", width, "", "  ")
    print()
    headers = (["method", "requested"] + letters + [f"{x}/A" for x in letters[1:]]
               + [f"n {x}" for x in letters])
    table_rows = []
    for r in rows:
        cells = [r["method"] + (" (periodic)" if r["mode"] == "periodic" else "")
                 + (f" (irtt in {','.join(letters[i] for i in r['irtt_in'])})"
                    if r.get("irtt_in") else ""),
                 format_go(r["requested_ns"])]
        cells += [_ns_text(e) for e in r["errors_ns"]]
        cells += ["-" if q is None else f"{q:.2f}x" for q in r["ratios"][1:]]
        cells += ["?" if n is None else str(n) for n in r["n"]]
        table_rows.append(cells)
    n = len(letters)
    print(split_table(headers, table_rows, None, width, keys=2, groups=[n, n - 1, n]))


def _irtt_note(about):
    """What an irtt file is compared with, and on what (the text of the
    note: line)."""
    files = ", ".join(about["files"])
    if about["compared_with"] is None:
        return (f"{files}: irtt sleep's tables (method irtt: a Go timer sleep, "
                f"time.Sleep); {about['stat']} error, means only")
    return (f"{files}: irtt sleep's table; its method irtt is a Go timer sleep "
            f"(time.Sleep through the Go runtime), means only; its rows are compared with "
            f"{about['compared_with']} on the {about['stat']} error, at the "
            f"{about['durations_shared']} duration(s) both measured")
