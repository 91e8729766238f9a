"""Progress text of the library's loggers (which print nothing), shown by a command-line tool:
:func:`show_progress` prints every INFO record of the named loggers as its bare message."""

from __future__ import annotations

import contextlib
import logging
import sys
from collections.abc import Iterator, Sequence

__all__ = ["show_progress"]


@contextlib.contextmanager
def show_progress(loggers: Sequence[str], *, enabled: bool = True) -> Iterator[None]:
    """Print the INFO records of ``loggers`` while the block runs (nothing when not
    ``enabled``); the loggers' levels and handlers are restored afterwards."""
    if not enabled:
        yield
        return
    handler = logging.StreamHandler(sys.stdout)  # the bare message: logging's default format
    handler.setLevel(logging.INFO)
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
