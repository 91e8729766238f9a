"""``python -m medeval.subconcepts``: see :mod:`medeval.cli.subconcepts`."""

from medeval.cli.common import run_command
from medeval.cli.subconcepts import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    run_command(main)
