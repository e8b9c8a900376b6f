#!/usr/bin/env python3
"""The model's verdicts, causes and advice on every dataset in tests/data
(figures, not a test): per group and method, the verdict, each cause at the
reference request with its size and whether the fit identified it, the
points within the reporting tolerance, and every advice line the model's
explanation prints for that method.

Usage: python3 bench/model_advice.py [--compact]
"""
import argparse
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))

from sleepacc import model  # noqa: E402
from sleepacc.model import explain  # noqa: E402

DATASETS = (
    (ROOT / "tests" / "data" / "seed_results.csv", model.GROUP_KEYS),
    (ROOT / "tests" / "data" / "public_results.csv", ("seed", "host", "os", "timer_config")),
)


def cause_text(c):
    mark = "" if c.get("identified", True) else "?"
    return f"{c['name']}{mark} {explain._us(c['ns'])}"


def rows(path, by):
    ms = model.fit_groups(model.load_records(path), by=by)
    for key, m in ms.items():
        for name, p in m.params.items():
            ok = p.within_tolerance()
            req = explain.pick_request(p, None)
            adv = explain.advice(p, m.facts, req) if p.sleeps else []
            yield m.label, name, p, f"{int(ok.sum())}/{ok.size}", adv


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--compact", action="store_true", help="one line per method, no advice")
    a = ap.parse_args()
    for path, by in DATASETS:
        print(f"== {path.name}")
        for label, name, p, within, adv in rows(path, by):
            causes = "; ".join(cause_text(c) for c in p.causes) or "-"
            print(f"{label[:60]} | {name} | {p.verdict} | {within} | {causes}")
            if not a.compact:
                for line in adv:
                    print(f"    advice: {line}")
        print()
    print("(a cause marked ? is not identified: its interval reaches 0)")


if __name__ == "__main__":
    main()
