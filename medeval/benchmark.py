"""``python -m medeval.benchmark``: see :mod:`medeval.cli.benchmark`."""

import sys

from medeval.cli.benchmark import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
