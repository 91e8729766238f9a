"""``python -m medeval.evaluate``: see :mod:`medeval.cli.evaluate`."""

from medeval.cli.common import run_command
from medeval.cli.evaluate import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    run_command(main)
