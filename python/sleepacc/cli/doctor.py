"""``sleepacc doctor``: what makes this host sleep badly, and the fix
(sleepacc.doctor's findings, from a short sweep or a result file)."""

from __future__ import annotations

import socket
import sys

from sleepacc._units import format_go, format_ns
from sleepacc.cli._common import CliError, Progress, core_rules, positive_int, time_s
from sleepacc.cli._files import SCHEMA, load, need_points, print_json
from sleepacc.cli.commands import add_command
from sleepacc.cli._text import add_wide, columns, echo, echo_lines, wrap


def add_parser(sub):
    s = add_command(sub, "doctor",
                    "Find what makes this host sleep badly (timer slack, scheduling, idle "
                    "states, the hypervisor, ...), each finding with its evidence and fix.")
    s.add_argument("--from", dest="from_file", metavar="FILE",
                   help="use this sweep file instead of running a short sweep")
    s.add_argument("--top", type=positive_int, default=None, metavar="N",
                   help="show only the N most important findings")
    s.add_argument("--budget", type=time_s, default="0.1", metavar="SECONDS",
                   help="time per point of the short sweep and the experiments (default 0.1)")
    s.add_argument("--json", action="store_true", help="findings as JSON")
    add_wide(s)
    s.set_defaults(func=run)
    return s


def run(args):
    from sleepacc import doctor
    core_rules(args, budget=args.budget)    # a run's budget, by the core's rule
    sweep = None
    if args.from_file and str(args.from_file).lower().endswith(".csv"):
        from sleepacc import model          # tidy records (seed_results.csv's columns)
        try:
            sweep = model.load_records(args.from_file)
        except OSError as exc:
            raise CliError(f"cannot read {args.from_file}: {exc.strerror or exc}") from None
    elif args.from_file:
        sweep = load(args.from_file)
    if sweep is not None:
        need_points(sweep, args.from_file, "diagnose from")
    here = socket.gethostname()
    if isinstance(sweep, list):
        if not args.json:
            echo(f"{args.from_file} holds imported results; the host facts and "
                 f"experiments below are from {here}", columns(args), "note: ", "  ",
                 file=sys.stderr)
    elif sweep is not None and sweep.host.get("hostname", here) != here and not args.json:
        echo(f"{args.from_file} was measured on {sweep.host['hostname']}; the host facts "
             f"and experiments below are from {here}", columns(args), "note: ", "  ",
             file=sys.stderr)
    show = not args.json and sys.stdout.isatty() and sys.stderr.isatty()
    progress = Progress(len(doctor.SHORT_METHODS) * len(doctor.SHORT_DURATIONS_NS), show)
    try:
        result = doctor.diagnose(
            sweep, budget=float(args.budget),
            progress=lambda done, total, m, d: progress.update(done, m, d, None))
    finally:
        progress.close()
    findings = result["findings"]
    if args.top:
        findings = findings[: args.top]
    if args.json:
        print_json({"schema": SCHEMA, "type": "doctor", **result, "findings": findings},
                   indent=1, default=str)
        return 0
    _print_report(result, findings, columns(args))
    return 0


def _print_report(result, findings, width):
    """The findings as text, every line within `width` columns (None: whole
    lines): evidence and fixes wrap under their own first word."""
    from sleepacc import doctor
    h = result["host"]
    ref = result["reference"]
    virtual = (f", virtual ({h.get('hypervisor_type') or 'hypervisor'})"
               if h.get("virtualization") == "hypervisor" else "")
    echo(f"{h.get('hostname') or '?'}, Linux {h.get('kernel_release') or '?'}, "
         f"{h.get('cpus_online_count') or '?'} CPUs{virtual}", width, "sleepacc doctor: ", "  ")
    if ref["median_error_ns"] is not None:
        echo(f"{ref['method']}({format_go(ref['requested_ns'])}) with this thread's "
             f"settings oversleeps {format_ns(ref['median_error_ns'], 3)} (median), "
             f"{format_ns(ref['p99_error_ns'], 3)} (p99)", width, "reference: ", "  ")
    print()
    for i, f in enumerate(findings, 1):
        gain = "" if f["gain_us"] is None else (
            f"   gain {'~' if f['estimate'] else ''}{f['gain_us']:.1f} µs"
            f"{' at p99' if f['gain_on'] == 'p99' else ''}")
        head = f"{i}. [{f['status']}] "
        echo(f"{f['title']}{gain}", width, head, " " * len(head))
        echo(f"basis: {f['basis']}", width, "     ")
        for e in f["evidence"]:
            echo(str(e), width, "     evidence: ", " " * 7)
        if f["fix"] and f["status"] in ("problem", "option", "unknown"):
            echo(str(f["fix"]), width, "     fix: ", " " * 7)
    if result.get("trace"):
        print()
        echo(f"traced at {format_go(result['trace']['requested_ns'])}, this thread's settings:",
             width)
        print("     " + doctor.format_trace(result["trace"]).replace("\n", "\n     "))
    if result.get("cyclictest"):
        print()
        echo("nanosleep against a cyclictest-like setup, term by term (each row adds one "
             "setting; measured now):", width)
        _print_cyclictest(result["cyclictest"], width)
    model = result["model"]
    text = model.get("explanation") or model.get("note")
    if text:
        print()
        echo_lines(text, width, "model: ")
    causes = doctor.format_causes(model.get("causes"), model.get("disagreements"))
    if causes:
        echo_lines(causes, width, "       ")
    for why in model.get("dropped_advice") or ():
        echo(f"advice dropped: {why}", width, "       ", " " * 9)
    return 0


def _print_cyclictest(table, width):
    """The term-by-term table, indented five; the setting column as wide as
    the room left by the numbers (a longer label wraps, its numbers on its
    first line)."""
    from sleepacc.doctor import cyclictest_term, format_cyclictest
    if width is None:
        print("     " + format_cyclictest(table).replace("\n", "\n     "))
        return
    rows = [("setting", "median", "p99", "term", None)]
    for r in table:
        rows.append((r["label"],
                     "-" if r["median_ns"] is None else format_ns(r["median_ns"]),
                     "-" if r["p99_ns"] is None else format_ns(r["p99_ns"]),
                     cyclictest_term(r), r["note"]))
    nums = [max(len(r[k]) for r in rows) for k in (1, 2, 3)]
    room = width - 5 - sum(n + 2 for n in nums)
    label_w = max(12, min(room, max(len(r[0]) for r in rows)))
    for label, med, p99, term, note in rows:
        lines = wrap(label, label_w) or [""]
        print((f"     {lines[0]:{label_w}}  {med:>{nums[0]}}  {p99:>{nums[1]}}  "
               f"{term:>{nums[2]}}").rstrip())
        for more in lines[1:]:
            print(f"       {more}")
        if note:
            echo(f"({note})", width, "       ")
