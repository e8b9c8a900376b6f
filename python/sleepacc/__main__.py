"""``python -m sleepacc``: the same command as the ``sleepacc`` console script."""

import sys

from sleepacc.cli import main

if __name__ == "__main__":
    sys.exit(main())
