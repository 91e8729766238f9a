"""Errors a user can fix (a bad file, option, config key or output path): one line on stderr
and exit code 2 in the command-line tools (docs/cli.md); standard library only."""

from __future__ import annotations

from pathlib import Path

__all__ = ["EXIT_BAD_INPUT", "InputError", "MissingExtraError", "OutputPathError", "UserError"]

#: Exit code of every command-line tool for bad input or a bad output path.
EXIT_BAD_INPUT = 2


def one_line(err: BaseException) -> str:
    """The message of ``err`` on one line (a ``KeyError``'s without quotes), or its type."""
    text = str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err)
    return " ".join(text.split()) or type(err).__name__


class UserError(ValueError):
    """Bad input from the user; the message names the file, column, row, key or option."""


class OutputPathError(UserError):
    """``--out`` cannot hold the results: a file, a path under a file, an unwritable folder."""


class MissingExtraError(UserError, ImportError):
    """An option that needs an optional extra that is not installed; the message says which
    ``pip install`` gives it."""


class InputError(UserError):
    """A bad input file; the message names the file, and the column and row where known."""

    def __init__(
        self, path: str | Path, problem: str, *, column: str | None = None, row: int | None = None
    ) -> None:
        where = [str(path)]
        if column is not None:
            where.append(f"column {column!r}")
        if row is not None:
            where.append(f"row {row}")
        super().__init__(f"{': '.join([', '.join(where), problem])}")
        self.path, self.column, self.row = str(path), column, row
