"""``python -m medeval.benchmark``: see :mod:`medeval.cli.benchmark`."""

from medeval.cli.benchmark import build_parser, main
from medeval.cli.common import run_command

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    run_command(main)
