"""Progress text of the library's loggers, shown by a command-line tool as plain lines.

Library code logs progress (``logging.getLogger(__name__).info(...)``) and prints nothing; a
tool that wants it on stdout wraps its work in :func:`show_progress`, which prints every INFO
record of the named loggers as its bare message, exactly as ``print`` would.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator, Sequence

__all__ = ["show_progress"]


class _PrintHandler(logging.Handler):
    """``print(message)``: the stdout of the moment (so captured output sees it too)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            print(self.format(record))
        except Exception:  # a broken stdout must not stop a run; logging's own policy
            self.handleError(record)


@contextlib.contextmanager
def show_progress(loggers: Sequence[str], *, enabled: bool = True) -> Iterator[None]:
    """Print the INFO records of ``loggers`` while the block runs (nothing when not
    ``enabled``); the loggers' levels and handlers are restored afterwards."""
    if not enabled:
        yield
        return
    handler = _PrintHandler(logging.INFO)
    handler.setFormatter(logging.Formatter("%(message)s"))
    saved = []
    for name in loggers:
        log = logging.getLogger(name)
        saved.append((log, log.level))
        log.setLevel(logging.INFO)
        log.addHandler(handler)
    try:
        yield
    finally:
        for log, level in saved:
            log.removeHandler(handler)
            log.setLevel(level)
