"""``python -m medeval.train``: see :mod:`medeval.cli.train`."""

import sys

from medeval.cli.train import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
