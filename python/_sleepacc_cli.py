"""Entry point of the ``sleepacc`` console script.

It lives outside the package so that it runs before anything heavy is
imported: importing ``sleepacc.cli`` (the package, the C core, numpy for some
commands) takes ~100 ms, and a Ctrl-C in that window used to print a
traceback and end with status -2.  Here it ends with "sleepacc: interrupted"
and status 130, as everywhere else in the command (cli.main).
"""
import sys


def main() -> int:
    try:
        from sleepacc.cli import main as cli_main
    except KeyboardInterrupt:
        print("sleepacc: interrupted", file=sys.stderr)
        return 130
    return cli_main()


if __name__ == "__main__":
    sys.exit(main())
