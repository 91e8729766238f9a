"""``python -m medeval.discover``: see :mod:`medeval.cli.discover`."""

from medeval.cli.common import run_command
from medeval.cli.discover import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    run_command(main)
