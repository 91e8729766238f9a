"""Errors a user can fix: a bad file, option, config key or output path.

The command-line tools turn every :class:`UserError` into one line on stderr and exit code 2
(``-v`` adds the traceback); any other exception is a bug and keeps its traceback. This module
imports nothing, so a tool's ``--help`` stays fast.
"""

from __future__ import annotations

__all__ = ["EXIT_BAD_INPUT", "OutputPathError", "UserError"]

#: Exit code of every command-line tool for bad input or a bad output path.
EXIT_BAD_INPUT = 2


class UserError(ValueError):
    """Bad input from the user; the message names the file, column, row, key or option."""


class OutputPathError(UserError):
    """``--out`` cannot hold the results: a file, a path under a file, an unwritable folder."""
