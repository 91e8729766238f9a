"""Memory of the batched bootstrap: the budget (:func:`default_memory_budget`), what the
replicates' results take (:func:`check_replicates`), the work buffers and chunks sized by it
(:class:`_BufferPlan`), CPU threads and heap pages."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import torch

from ...errors import UserError

_CHUNK_BYTES = 2**25  # ~32 MiB per (chunk, N) float64 tensor: fewer page faults


_AUC_BYTES = 2**26  # AUC scratch: rows of a chunk are processed in groups of at most this


# Scratch of one row-wise step (a cumsum, per-cell weighted counts) made at once.
_ROW_STEP_BYTES = 2**24


_MIN_BUDGET, _MAX_BUDGET = 2**26, 2**31  # default budget between 64 MiB and 2 GiB


#: Bytes a replicate's results take at the least (float64): one weighting, one subset and one
#: score family hold four class totals and hits and two scores (see
#: :meth:`BatchedBootstrap.replicate_bytes`).
MIN_REPLICATE_BYTES = 8 * 6


class ReplicateBudgetError(UserError):
    """The replicates' results (kept for all B at once) do not fit the memory budget (a
    :class:`~medeval.errors.UserError`: the user's replicates or budget, exit code 2).

    ``need`` is exact, or a lower bound (``at_least``) when checked before the data are read.
    """

    def __init__(self, n: int, need: int, budget: int, *, at_least: bool = False) -> None:
        self.n, self.need, self.budget, self.at_least = n, need, budget, at_least
        super().__init__(
            f"{n} bootstrap replicates need {self.needs()} for their scores, more than the "
            f"memory budget ({format_bytes(budget)}); use "
            f"{self.advice('fewer replicates', 'at most {} replicates')} or a larger budget"
        )

    def needs(self) -> str:
        return ("at least " if self.at_least else "") + format_bytes(self.need)

    def advice(self, fewer: str, most: str) -> str:
        """``most`` (with ``{}`` for the largest count that fits) where the exact need is
        known, else ``fewer``."""
        if self.at_least:
            return fewer
        return most.format(self.budget // max(self.need // max(self.n, 1), 1))


def format_bytes(n: float) -> str:
    """``n`` bytes in binary units, as ``--memory-budget`` reads them: ``200 MiB``, ``1.5 GiB``."""
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if abs(n) < 1024 or unit == "PiB":
            return f"{n:.1f}".removesuffix(".0") + f" {unit}"
        n /= 1024
    raise AssertionError("unreachable")


def check_replicates(n: int, budget: int, row_bytes: int | None = None) -> None:
    """Refuse ``n`` replicates whose results (``row_bytes`` each; without it, the least a
    replicate takes, :data:`MIN_REPLICATE_BYTES`) would not fit ``budget`` bytes: they are
    kept for all replicates at once (the intervals are their quantiles), so no chunking can
    bound them.

    Raises:
        ReplicateBudgetError: naming the replicates, the bytes they need and the budget.
    """
    row = MIN_REPLICATE_BYTES if row_bytes is None else row_bytes
    if n * row > budget:
        raise ReplicateBudgetError(n, n * row, budget, at_least=row_bytes is None)


def default_memory_budget(device: str | torch.device = "cpu") -> int:
    """Bytes the bootstrap's work buffers may take by default on ``device``.

    A quarter of the free memory of a CUDA device (at least 64 MiB); otherwise an eighth of
    the available RAM (Linux ``MemAvailable``), clamped to [64 MiB, 2 GiB].
    """
    device = torch.device(device)
    if device.type == "cuda":  # big chunks keep a GPU busy; no upper clamp there
        return int(max(torch.cuda.mem_get_info(device)[0] // 4, _MIN_BUDGET))
    return int(min(max(_available_ram() // 8, _MIN_BUDGET), _MAX_BUDGET))


def _available_ram() -> int:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 * _MAX_BUDGET


_SMALL_WORK = 2**20  # elements per chunk below which one CPU thread is faster


@contextmanager
def _few_threads(device: torch.device, elements: int) -> Iterator[None]:
    """One torch thread on the CPU for small work, restored afterwards."""
    n = torch.get_num_threads()
    want = 1 if elements < _SMALL_WORK else n
    if device.type != "cpu" or want == n:
        yield
        return
    torch.set_num_threads(want)
    try:
        yield
    finally:
        torch.set_num_threads(n)


def _return_freed_memory() -> None:
    """Hand freed heap pages back to the OS (glibc ``malloc_trim``; else a no-op)."""
    global _malloc_trim
    if _malloc_trim is None:
        try:
            import ctypes

            _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim = None


_REUSE_BYTES = 2**24  # buffers up to this size are kept per thread for the next evaluation


_reuse = threading.local()


@contextmanager
def _reused(numel: int, dtype: torch.dtype, device: torch.device) -> Iterator[torch.Tensor]:
    """A flat CPU buffer of ``numel`` or more elements, kept per thread for the next bootstrap."""
    if device.type != "cpu" or numel * dtype.itemsize > _REUSE_BYTES:
        yield torch.empty(numel, dtype=dtype, device=device)
        return
    held = getattr(_reuse, "buffer", None)
    _reuse.buffer = None
    if held is None or held.dtype != dtype or held.numel() < numel:
        held = torch.empty(numel, dtype=dtype)
    try:
        yield held
    finally:
        kept = getattr(_reuse, "buffer", None)
        if kept is None or kept.numel() < held.numel():
            _reuse.buffer = held


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


class _BufferPlan:
    """The work buffers of a :class:`BatchedBootstrap` and the chunks that fit its budget."""

    # Counts live in a (b, 1 + N) buffer whose column 0 stays 0, so that a cumsum over
    # columns 0..n_neg starts at 0 and AUC can index it without padding.
    def _buffer_shapes(self, b: int, work: bool) -> list[dict[str, tuple[int, int]]]:
        """One worker's buffers by region: the counts, then the scratch (``work``)."""
        n, nn = len(self.perm), self.n_neg
        counts = {"C": (b, 1 + n)}
        if not self.identity:
            counts["U"] = (b, 1 + self.n_units)
        regions = [counts]
        if self._auc and work:  # the negatives' weighted counts are made in "ext"
            r = self._auc_rows(b)
            e = self._scratch_rows(r, 1 + nn, _ROW_STEP_BYTES)  # cumsum rows at once
            regions.append({"ext": (e, 1 + nn), "g1": (r, n - nn), "g2": (e, n - nn)})
        if self._per_cell and work:
            regions.append({"cw": (self._scratch_rows(b, 1 + n, _ROW_STEP_BYTES), 1 + n)})
        return regions

    def _scratch_rows(self, b: int, row_elements: int, cpu_cap: int = _AUC_BYTES) -> int:
        """Rows of a ``b``-row chunk whose scratch is held at once (within the caps)."""
        cap = min(cpu_cap if self.device.type == "cpu" else 2**62, self.memory_budget // 4)
        return max(1, min(b, cap // (self.dtype.itemsize * row_elements)))

    def _auc_rows(self, b: int) -> int:
        """Rows of AUC scratch held at once (the row groups set the AUC products' last bits)."""
        n, nn = len(self.perm), self.n_neg
        return self._scratch_rows(b, 2 * (1 + nn) + 2 * (n - nn)) if self._auc else 0

    def _buffer_numel(self, b: int, work: bool = True) -> int:
        sizes = [sum(r * k for r, k in s.values()) for s in self._buffer_shapes(b, work)]
        return sizes[0] + max(sizes[1:], default=0)

    def _buffers(
        self, b: int, *, work: bool = True, storage: torch.Tensor | None = None
    ) -> dict[str, torch.Tensor]:
        """One worker's buffers, views of ``storage`` (default: fresh); column 0 of counts is 0."""
        if storage is None:
            storage = torch.empty(self._buffer_numel(b, work), device=self.device, dtype=self.dtype)
        buf: dict[str, torch.Tensor] = {}
        regions = self._buffer_shapes(b, work)
        scratch = sum(r * k for r, k in regions[0].values())  # where every scratch begins
        for i, region in enumerate(regions):
            at = 0 if i == 0 else scratch
            for name, (r, k) in region.items():
                buf[name] = storage[at : at + r * k].view(r, k)
                at += r * k
        buf["C"][:, 0] = 0
        if self.identity:
            buf["U"] = buf["C"]
        else:
            buf["U"][:, 0] = 0
        return buf

    def _count_row_bytes(self) -> int:
        """Bytes of count buffers per replicate row (see :meth:`_buffers` and the draws)."""
        n, item = len(self.perm), self.dtype.itemsize
        counts = (1 + n) + (0 if self.identity else 1 + self.n_units)
        if self.generator != "numpy":  # torch.randint: int64 indices and a source of ones
            counts += (16 // item) * self.n_units
        return item * counts

    def _work_bytes(self, b: int) -> int:
        """Bytes of one worker's buffers for chunks of ``b`` replicates: counts and scratch."""
        scratch = self._buffer_numel(b) - self._buffer_numel(b, work=False)
        return b * self._count_row_bytes() + self.dtype.itemsize * scratch

    def _chunks(self, n: int, chunk_size: int | None) -> list[int]:
        """Replicates per chunk: ``chunk_size``, or as many as the budget holds per worker."""
        if chunk_size is None:
            workers = min(self._workers(), max(1, n))
            scratch = self._work_bytes(n) - n * self._count_row_bytes()  # at most
            cap = (self.memory_budget // workers - scratch) // self._count_row_bytes()
            if self.device.type == "cpu":
                counts_row = self.dtype.itemsize * (1 + len(self.perm))
                cap = min(cap, _CHUNK_BYTES // counts_row)
            block = self._draw_block() if self.generator == "numpy" else 1
            cap = max(1, cap - cap % block if cap > block else cap)  # whole generator blocks
            chunk_size = cap
            if workers > 1 and n > cap:  # as many chunks for every worker, where it fits
                least = _ceil_div(_ceil_div(n, cap), workers) * workers
                for n_chunks in range(least, least + 4 * workers, workers):
                    size = _ceil_div(n, n_chunks)
                    size += -size % block if size > block else 0  # still <= cap
                    if _ceil_div(n, size) % workers == 0:
                        break
                chunk_size = size
        return [min(chunk_size, n - i) for i in range(0, n, chunk_size)]
