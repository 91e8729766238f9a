"""``python -m medeval.tasks``: see :mod:`medeval.cli.tasks`."""

import sys

from medeval.cli.tasks import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    sys.exit(main())
