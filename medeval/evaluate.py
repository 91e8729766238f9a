"""``python -m medeval.evaluate``: see :mod:`medeval.cli.evaluate`."""

import sys

from medeval.cli.evaluate import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
