"""``python -m medeval.analyze``: see :mod:`medeval.cli.analyze`."""

from medeval.cli.analyze import build_parser, main
from medeval.cli.common import run_command

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    run_command(main)
