"""``python -m medeval.label``: see :mod:`medeval.cli.label`."""

from medeval.cli.common import run_command
from medeval.cli.label import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    run_command(main)
