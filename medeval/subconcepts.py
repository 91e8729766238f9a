"""``python -m medeval.subconcepts``: see :mod:`medeval.cli.subconcepts`."""

import sys

from medeval.cli.subconcepts import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
