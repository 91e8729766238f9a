"""Process-level memory settings for the command-line tools (docs/performance.md)."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import sys
from collections.abc import Iterator

__all__ = ["LARGE_BLOCK", "frozen_imports", "return_large_blocks"]

#: Allocations at least this large get their own mapping (column-sized arrays from about
#: 500,000 rows). Smaller ones stay in the heap, where reusing them costs no page faults.
LARGE_BLOCK = 4 * 2**20

_M_MMAP_THRESHOLD = -3  # glibc <malloc.h>


def return_large_blocks(threshold: int = LARGE_BLOCK) -> bool:
    """Fix the allocator's mmap threshold at ``threshold`` bytes (glibc raises it after each
    large free, keeping freed arrays in the heap), so that freed large arrays go back to the
    system. Process-wide: call once, in an entry point. Returns whether it applied (glibc
    only)."""
    if not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):  # not glibc (e.g. musl has no mallopt)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_THRESHOLD, int(threshold)))


@contextlib.contextmanager
def frozen_imports() -> Iterator[None]:
    """Import inside this block with the garbage collector paused, then move every object
    alive (the imported libraries, which live as long as the process) to the collector's
    permanent generation; its previous state is restored, also when an import fails."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if enabled:
            gc.enable()
