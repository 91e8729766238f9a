"""``python -m medeval.embed``: see :mod:`medeval.cli.embed`."""

from medeval.cli.common import run_command
from medeval.cli.embed import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    run_command(main)
