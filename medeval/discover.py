"""``python -m medeval.discover``: see :mod:`medeval.cli.discover`."""

import sys

from medeval.cli.discover import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
