"""``python -m medeval.tasks``: see :mod:`medeval.cli.tasks`."""

from medeval.cli.common import run_command
from medeval.cli.tasks import build_parser, main

__all__ = ["build_parser", "main"]

if __name__ == "__main__":
    run_command(main)
