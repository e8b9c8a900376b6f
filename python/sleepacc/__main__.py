"""``python -m sleepacc``: the same command as the ``sleepacc`` console script."""

import sys

try:
    from sleepacc.cli import main
except KeyboardInterrupt:   # Ctrl-C while the command's modules load
    print("sleepacc: interrupted", file=sys.stderr)
    sys.exit(130)

if __name__ == "__main__":
    sys.exit(main())
