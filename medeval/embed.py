"""``python -m medeval.embed``: see :mod:`medeval.cli.embed`."""

import sys

from medeval.cli.embed import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
