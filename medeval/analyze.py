"""``python -m medeval.analyze``: see :mod:`medeval.cli.analyze`."""

import sys

from medeval.cli.analyze import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
