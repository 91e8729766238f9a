"""``python -m medeval.train``: see :mod:`medeval.cli.train`."""

from medeval.cli.common import run_command
from medeval.cli.train import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    run_command(main)
