"""``sleepacc doctor``: what makes this host sleep badly, and the fix
(sleepacc.doctor's findings, from a short sweep or a result file)."""

from __future__ import annotations

import socket
import sys

from sleepacc._units import format_go, format_ns
from sleepacc.cli._common import CliError, Progress, core_rules, positive_int, time_s
from sleepacc.cli._files import SCHEMA, load, need_points, print_json
from sleepacc.cli.commands import add_command


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
            print(f"note: {args.from_file} holds imported results; the host facts and "
                  f"experiments below are from {here}", file=sys.stderr)
    elif sweep is not None and sweep.host.get("hostname", here) != here and not args.json:
        print(f"note: {args.from_file} was measured on {sweep.host['hostname']}; the host facts "
              f"and experiments below are from {here}", file=sys.stderr)
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
    h = result["host"]
    ref = result["reference"]
    print(f"sleepacc doctor: {h.get('hostname', '?')}, Linux {h.get('kernel_release', '?')}, "
          f"{h.get('cpus_online_count', '?')} CPUs"
          f"{', virtual (' + str(h.get('hypervisor_type') or 'hypervisor') + ')' if h.get('virtualization') == 'hypervisor' else ''}")
    if ref["median_error_ns"] is not None:
        print(f"reference: {ref['method']}({format_go(ref['requested_ns'])}) with this thread's "
              f"settings oversleeps {format_ns(ref['median_error_ns'], 3)} (median), "
              f"{format_ns(ref['p99_error_ns'], 3)} (p99)")
    print()
    for i, f in enumerate(findings, 1):
        gain = "" if f["gain_us"] is None else (
            f"   gain {'~' if f['estimate'] else ''}{f['gain_us']:.1f} µs"
            f"{' at p99' if f['gain_on'] == 'p99' else ''}")
        print(f"{i}. [{f['status']}] {f['title']}{gain}")
        print(f"     basis: {f['basis']}")
        for e in f["evidence"]:
            print(f"     evidence: {e}")
        if f["fix"] and f["status"] in ("problem", "option", "unknown"):
            print(f"     fix: {f['fix']}")
    if result.get("trace"):
        print()
        print(f"traced at {format_go(result['trace']['requested_ns'])}, this thread's settings:")
        print("     " + doctor.format_trace(result["trace"]).replace("\n", "\n     "))
    if result.get("cyclictest"):
        print()
        print("nanosleep against a cyclictest-like setup, term by term (each row adds one "
              "setting; measured now):")
        print("     " + doctor.format_cyclictest(result["cyclictest"]).replace("\n", "\n     "))
    model = result["model"]
    if model.get("explanation"):
        print()
        print("model: " + model["explanation"].replace("\n", "\n       "))
    elif model.get("note"):
        print()
        print(f"model: {model['note']}")
    causes = doctor.format_causes(model.get("causes"), model.get("disagreements"))
    if causes:
        print("       " + causes.replace("\n", "\n       "))
    for why in model.get("dropped_advice") or ():
        print(f"       advice dropped: {why}")
    return 0
