"""Progress that suits the output: a live tqdm bar on a terminal, one line every N % otherwise
(a redirected log gets ten short lines, not thousands of carriage returns).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Iterable
from typing import IO, Any

from tqdm import tqdm

__all__ = ["LineProgress", "progress"]


class LineProgress(tqdm):
    """A tqdm that writes its status as a full line each time another ``every`` % is done."""

    def __init__(self, *args: Any, every: float = 10.0, **kwargs: Any) -> None:
        if not 0 < every <= 100:
            raise ValueError(f"every must be in (0, 100]; got {every!r}")
        self._every = float(every)
        self._next_pct = 0.0
        kwargs.update(mininterval=0, miniters=1)  # every update is checked against the step
        super().__init__(*args, **kwargs)
        self.sp = None  # close() then adds no carriage return or newline of its own

    def display(self, msg: str | None = None, pos: int | None = None) -> bool:
        if not self.total or self.disable:
            return True
        pct = 100.0 * self.n / self.total
        if pct >= self._next_pct:
            self.fp.write(self.__str__() + "\n")
            self.fp.flush()
            self._next_pct = (math.floor(pct / self._every) + 1) * self._every
        return True


def progress(
    iterable: Iterable | None = None,
    *,
    total: float | None = None,
    desc: str | None = None,
    disable: bool = False,
    every: float = 10.0,
    file: IO[str] | None = None,
    **kwargs: Any,
) -> tqdm:
    """A tqdm bar on a terminal; :class:`LineProgress` (a line every ``every`` %) otherwise.

    Args:
        iterable, total, desc, disable, **kwargs: as for ``tqdm``.
        every: percentage step between lines when ``file`` is not a terminal.
        file: where to write (default ``sys.stderr``).
    """
    file = sys.stderr if file is None else file
    isatty = getattr(file, "isatty", None)
    if isatty is not None and isatty():
        return tqdm(iterable, total=total, desc=desc, disable=disable, file=file, **kwargs)
    return LineProgress(
        iterable, total=total, desc=desc, disable=disable, file=file, every=every, **kwargs
    )
