"""``sleepacc model``: the oversleep model (sleepacc.model) fitted to a
result file or a tidy CSV, and explained: per method a verdict, the causes
with intervals, and advice."""

from __future__ import annotations

from sleepacc.cli._common import CliError, method_name
from sleepacc.cli._files import SCHEMA, load, need_points, print_json
from sleepacc.cli.commands import add_command
from sleepacc.cli._text import add_wide, columns, echo_lines


def add_parser(sub):
    s = add_command(sub, "model",
                    "Fit the oversleep model to a result file (or a tidy CSV like "
                    "tests/data/seed_results.csv): per method a verdict (explained, partly, "
                    "unexplained), the causes with intervals, and advice.")
    s.add_argument("file", metavar="FILE")
    s.add_argument("--method", type=method_name, metavar="NAME", help="only this method")
    s.add_argument("--json", action="store_true", help="verdicts, causes and parameters as JSON")
    add_wide(s)
    s.set_defaults(func=run)
    return s


def run(args):
    """Fit the oversleep model to a result file or a tidy CSV and explain it."""
    from sleepacc import model
    path = args.file
    if str(path).lower().endswith(".csv"):       # a tidy CSV like seed_results.csv
        try:
            data = model.load_records(path)
        except OSError as exc:
            raise CliError(f"cannot read {path}: {exc.strerror or exc}") from None
    else:
        data = load(path)
    need_points(data, path, "fit")
    try:
        fitted = model.fit(data)
    except (ValueError, KeyError, TypeError) as exc:
        raise CliError(f"cannot fit {path}: {exc}") from None
    if not any(m.params for m in fitted.values()):
        means = all(getattr(m, "n", 0) is None for m in data)   # irtt's table: n unknown
        raise CliError(f"{path} has no points the model can fit"
                       + (" (irtt's table holds means only; the model fits medians and tails)"
                          if means else ""))
    if args.method is not None:
        groups = fitted.values()
        if not any(args.method in m.params for m in groups):  # the data's lack, as compare's and plot's: exit 1
            have = sorted({name for m in groups for name in m.params})
            raise CliError(f"no fit for {args.method!r} in {path}; it has {', '.join(have) or 'none'}")
    if args.json:
        out = {"schema": SCHEMA, "type": "model", "file": str(path), **fitted.to_json()}
        if args.method is not None:     # only this method, as the text shows it
            for g in [out, *out.get("groups", [])]:
                if "methods" in g:
                    g["methods"] = {k: v for k, v in g["methods"].items() if k == args.method}
            if "groups" in out:
                out["groups"] = [g for g in out["groups"] if g["methods"]]
        print_json(out, indent=1, default=str)
        return 0
    echo_lines(fitted.explain(args.method), columns(args))
    return 0
