"""``sleepacc info``: the host's facts, its clocks and every method the core
registers, as a table or JSON."""

from __future__ import annotations

import sleepacc
from sleepacc.cli._files import SCHEMA, host_facts, print_json
from sleepacc.cli.commands import add_command
from sleepacc.cli._text import add_wide, columns


def add_parser(sub):
    s = add_command(sub, "info",
                    "Show this host's facts, its clocks' resolution and read cost, and every "
                    "sleep method with its family and availability.")
    s.add_argument("--json", action="store_true")
    add_wide(s)
    s.set_defaults(func=run)
    return s


def _info_record():
    # each registry row with the core's fields (sleepacc_method_info_fields)
    methods = [m._asdict() for m in sleepacc.methods()]
    return {"schema": SCHEMA, "type": "info", "version": sleepacc.__version__,
            "host": host_facts(), "clocks": sleepacc.clock_info(), "methods": methods}


def run(args):
    from sleepacc.report import text_table as _table
    rec = _info_record()
    if args.json:
        print_json(rec, indent=2, default=str)
        return 0
    width = columns(args)
    print(f"sleepacc {rec['version']} on {rec['host'].get('hostname', '?')}")
    print()
    print("host facts:")
    print(_table(["fact", "value"], [[k, "unknown" if v is None else v]
                                      for k, v in rec["host"].items()], "<<", width))
    print()
    print("clocks:")
    rows = []
    for name, c in rec["clocks"].items():
        res, cost = c.get("resolution_ns"), c.get("read_cost_ns")
        rows.append([name, "unknown" if res is None or res < 0 else f"{res} ns",
                     "unknown" if cost is None or cost < 0 else f"{cost} ns"])
    print(_table(["clock", "resolution", "read cost"], rows, width=width))
    print()
    print("methods:")
    rows = [[m["name"], m["family"], "yes" if m["available"] else "no",
             _yesno(m["honours_slack"]), m["granularity_ns"], m["description"]]
            for m in rec["methods"]]
    print(_table(["method", "family", "available", "slack", "unit ns", "description"], rows,
                 "<<<<><", width))
    return 0


def _yesno(v):
    if v is True:
        return "yes"
    if v is False:
        return "no"
    return "unknown" if v is None else str(v)
