"""Batched bootstrap of balanced accuracy, F1 and ROC AUC under several weightings.

All B replicates are one tensor computation, processed in row chunks to bound memory:

* A replicate is a vector of integer counts ``c (N,)``: multinomial resampling of the units
  (instances, or clusters such as patients) within each stratum (class by default). The
  draws are exact multinomial, not a Poisson approximation.
* Every count statistic (weighted class totals and hits, per subset and weighting; per
  subconcept hits) is one matrix product ``C (b, N) @ V (N, k)``.
* AUC: instances are laid out once as [negatives sorted by score | positives sorted by score].
  Per replicate, the cumulative weighted negative count is one ``cumsum``; each positive reads
  it at two static positions (below its tie group, and through it), so ties count ½; a second
  product with the positive weights per subset gives all AUC numerators. The evaluation
  subsets of SPEC §6 share the negatives (all majority instances), so one cumsum serves all.

Counts are drawn with numpy on the CPU and with ``torch.randint`` on other devices. With numpy,
replicate r is drawn by the generator seeded with ``(seed, r // block)`` (a block of up to 64
replicates shares one), so the counts depend on neither the chunk size nor the number of
threads; sums may differ in the last bit between chunk sizes. With torch: same seed, device and
chunk size → same numbers.

Memory: the counts never exist for all B replicates at once. Chunks of replicates are sized by
a memory budget (``memory_budget=``, default :func:`default_memory_budget`); on the CPU several
threads each draw and compute whole chunks (each with its own count buffer), and the AUC
scratch is processed in row groups of bounded size. On the CPU, count statistics that are
constant on cells of instances come from per-cell counts, and so do weightings that vary within
cells where their dense columns would be large; the rest (and soft memberships) use a dense
``(N, k')`` matrix, stored column-major and filled in place a block of rows at a time (the
blocks' temporaries are bounded by the memory budget too).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from numbers import Integral, Real

import numpy as np
import torch

from .._validation import Interval, StrOptions, TypeOf, validate_params
from .classification import ConfusionSums, ba_from_sums, f1_from_sums, recalls_from_sums
from .ranking import AucSums, auc_from_sums

_CHUNK_BYTES = 2**25  # ~32 MiB per (chunk, N) float64 tensor: fewer page faults
_AUC_BYTES = 2**26  # AUC scratch: rows of a chunk are processed in groups of at most this
# Rows of one (rows, N)-sized scratch of a row-wise step (a cumsum and its gathers, the
# weighted counts of the per-cell sums) made at once: on millions of rows one at a time (each
# row is computed alone, so the grouping changes no number).
_ROW_STEP_BYTES = 2**24
_CELL_LANES = 8  # accumulators per cell (see _build_statistics)
# Per-cell counts cost one scatter-add of the counts, about as much as a product with ten dense
# columns on a 2-core CPU (measured at N = 100,000): they are used when they replace at least
# this many columns, or columns that would take more memory than this.
_CELL_MIN_COLUMNS, _CELL_MIN_BYTES = 12, 2**26
_MIN_BUDGET, _MAX_BUDGET = 2**26, 2**31  # default budget between 64 MiB and 2 GiB
#: The allowed values of ``memory_budget=`` (``None`` = :func:`default_memory_budget`).
MEMORY_BUDGET = Interval(Real, 0, None, closed="neither", desc="a positive number of bytes")


#: Bytes a replicate's results take at the least (float64): one weighting, one subset and one
#: score family hold four class totals and hits and two scores (see
#: :meth:`BatchedBootstrap.replicate_bytes`).
MIN_REPLICATE_BYTES = 8 * 6


class ReplicateBudgetError(ValueError):
    """The replicates' results (kept for all B at once) do not fit the memory budget.

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


@dataclass
class Replicates:
    """Bootstrap replicates of each score.

    Attributes:
        scores: ``{(weighting, metric): (B, n_subsets)}``, metric in ``"BA", "F1", "AUC"``;
            NaN where the replicate leaves the score undefined.
        subconcept_recall: ``(B, S)`` unweighted recall of each subconcept (or ``None``).
        subsets: names of the subset axis.
        estimated_recall: ``(B, S')`` label-free recall of each subconcept from soft
            memberships (SPEC §8), or ``None``.
    """

    scores: dict[tuple[str, str], torch.Tensor]
    subconcept_recall: torch.Tensor | None
    subsets: tuple[str, ...]
    n: int
    seed: int
    method: str = field(default="multinomial within strata")
    estimated_recall: torch.Tensor | None = None


_SMALL_WORK = 2**20  # elements per chunk below which one CPU thread is faster


@contextmanager
def _few_threads(device: torch.device, elements: int) -> Iterator[None]:
    """One torch thread on the CPU for small work, restored afterwards: there the start of a
    parallel region costs more than it saves, and far more when the cores are shared (a
    descheduled worker stalls every kernel)."""
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
    """Hand freed heap pages back to the OS (glibc ``malloc_trim``; a no-op elsewhere).

    glibc keeps freed arrays of a few MiB in its heap rather than unmapping them, so without
    this, columns released while the statistics matrix is filled would still count against
    the peak memory of a multi-million-row evaluation.
    """
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


def _stable_argsort(x: np.ndarray) -> np.ndarray:
    return np.argsort(x, kind="stable")


def _resolve_generator(generator: str, device: torch.device) -> str:
    """``auto`` → ``numpy`` on the CPU, ``torch`` elsewhere; checks that it fits the device."""
    if generator == "auto":
        generator = "numpy" if device.type == "cpu" else "torch"
    if generator == "numpy" and device.type != "cpu":
        raise ValueError("generator='numpy' draws into CPU memory; use device='cpu'")
    return generator


def _units(
    strata_p: np.ndarray, clusters: np.ndarray | None, perm: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each column's resampling unit ``(N,)`` and each unit's stratum ``(U,)``: units are the
    instances, or the clusters (which must not span strata). ``strata_p`` ``(N,)`` is in
    column order, ``clusters`` ``(N,)`` in input order, ``perm`` ``(N,)`` maps the two."""
    n = len(strata_p)
    if clusters is None:
        return np.arange(n), strata_p
    _, unit_of_col = np.unique(np.asarray(clusters)[perm], return_inverse=True)
    n_units = unit_of_col.max() + 1 if n else 0
    unit_stratum = np.full(n_units, -1, dtype=np.int64)
    _, strata_codes = np.unique(strata_p, return_inverse=True)
    unit_stratum[unit_of_col] = strata_codes
    mixed = np.zeros(n_units, dtype=bool)
    np.logical_or.at(mixed, unit_of_col, unit_stratum[unit_of_col] != strata_codes)
    if mixed.any():
        raise ValueError(
            "a cluster spans several strata; resample clusters without stratification "
            "(stratify='none') or stratify on a per-cluster attribute"
        )
    return unit_of_col, unit_stratum


_REUSE_BYTES = 2**24  # buffers up to this size are kept per thread for the next evaluation
_reuse = threading.local()


@contextmanager
def _reused(numel: int, dtype: torch.dtype, device: torch.device) -> Iterator[torch.Tensor]:
    """A flat CPU buffer of at least ``numel`` elements that this thread keeps for its next
    bootstrap (up to :data:`_REUSE_BYTES`): on small data, the page faults of fresh buffers
    cost more than the arithmetic done in them (the benchmark grid evaluates thousands of
    folds per process). A buffer in use is never handed out twice."""
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


def _counts_by_cell(device: torch.device) -> bool:
    """Statistics constant on cells may come from per-cell counts on the CPU (see
    :data:`_CELL_MIN_COLUMNS`); elsewhere (GPUs) every statistic is a column of one dense
    product, which is faster there than a scatter-add."""
    return device.type == "cpu"


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _cells(
    y: np.ndarray, hit: np.ndarray | None, masks: np.ndarray, sc: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Each instance's cell ``(N,)`` (equal class, hit, subset memberships and subconcept) and
    one instance of each cell ``(G,)``. The parts of the key are made one at a time (on
    millions of rows, a list of them as int64 columns took more memory than the cells)."""
    sizes = [2] + [2] * (hit is not None) + [2] * masks.shape[1]
    if sc is not None:
        sizes.append(int(sc.max() - sc.min()) + 1 if len(sc) else 1)

    def parts() -> Iterator[np.ndarray]:
        yield y
        if hit is not None:
            yield hit
        yield from masks.T
        if sc is not None:
            yield sc - sc.min() if len(sc) else sc

    if float(np.prod(np.asarray(sizes, dtype=np.float64))) < 2.0**62:  # one integer key
        key = np.zeros(len(y), dtype=np.int64)
        mult = 1
        for part, size in zip(parts(), sizes, strict=True):
            key += part.astype(np.int64) * mult
            mult *= size
        _, first, cell = np.unique(key, return_index=True, return_inverse=True)
    else:
        stacked = np.stack([part.astype(np.int64) for part in parts()], axis=1)
        _, first, cell = np.unique(stacked, axis=0, return_index=True, return_inverse=True)
    return cell.reshape(-1), first


class BatchedBootstrap:
    """Plan for bootstrap replicates of BA / F1 / AUC on fixed test data.

    Args:
        y_true: ``(N,)`` labels in {0, 1}.
        y_pred: ``(N,)`` predicted labels, or ``None`` (no BA / F1).
        y_score: ``(N,)`` scores, or ``None`` (no AUC).
        weights: ``{name: (N,)}`` non-negative instance weights (e.g. unweighted, true,
            predicted); fixed across replicates (utilities come from the training split).
        subsets: ``{name: (N,) bool}``; each must hold every class-0 instance (SPEC §6).
        subconcept: ``(N,)`` integer subconcept codes ``0..S-1`` for per-subconcept recall.
        n_subconcepts: S (default: the largest code + 1); absent subconcepts give NaN.
        soft_subconcept: ``(N, S')`` soft subconcept memberships (class-renormalised posteriors
            ``q̃``, zero outside each instance's class) for the label-free per-subconcept recall
            ``Σ q̃_s·hit / Σ q̃_s`` (SPEC §8).
        strata: ``(N,)`` integer stratum codes; resampling is within strata (default: class).
        clusters: ``(N,)`` integer cluster ids (patients); whole clusters are resampled.
            A cluster must lie in one stratum.
        device: where the replicates are computed (default: CPU).
        dtype: accumulation dtype (default float64).
        generator: ``"numpy"`` (CPU only; chunks drawn and computed by several threads;
            results independent of the chunk size and the thread count), ``"torch"``
            (``torch.randint`` on the device; results depend on seed, device and chunk size) or
            ``"auto"`` (numpy on the CPU, torch elsewhere).
        memory_budget: bytes the work buffers of :meth:`run` may take (counts and AUC
            scratch of every worker thread); default :func:`default_memory_budget`. The fixed
            inputs (the dense statistics columns) come on top. The replicates' results,
            kept for all of them at once, must fit it too (:func:`check_replicates`): more
            replicates than that are refused before any work.
    """

    @validate_params(
        {
            "n_subconcepts": [Interval(Integral, 0, None), None],
            "device": [str, torch.device],
            "dtype": [torch.dtype],
            "generator": [StrOptions(("auto", "numpy", "torch"))],
            "memory_budget": [MEMORY_BUDGET, None],
        }
    )
    def __init__(
        self,
        y_true: np.ndarray,
        *,
        y_pred: np.ndarray | None,
        y_score: np.ndarray | None,
        weights: Mapping[str, np.ndarray | torch.Tensor],
        subsets: Mapping[str, np.ndarray],
        subconcept: np.ndarray | None = None,
        n_subconcepts: int | None = None,
        soft_subconcept: np.ndarray | None = None,
        strata: np.ndarray | None = None,
        clusters: np.ndarray | None = None,
        device: str | torch.device = "cpu",
        dtype: torch.dtype = torch.float64,
        generator: str = "auto",
        memory_budget: int | None = None,
    ) -> None:
        y = np.asarray(y_true).astype(np.int64)
        n = len(y)
        if y_pred is None and y_score is None:
            raise ValueError("need y_pred or y_score")
        self.device, self.dtype = torch.device(device), dtype
        self.generator = _resolve_generator(generator, self.device)
        self.memory_budget = int(memory_budget or default_memory_budget(self.device))
        self.has_pred = y_pred is not None
        self.subset_names = tuple(subsets)
        masks = np.stack([np.asarray(m, dtype=bool) for m in subsets.values()], axis=1)
        if not masks[y == 0].all():
            raise ValueError("every subset must contain all class-0 instances (SPEC §6)")
        # Column layout: [negatives by score | positives by score]; ties keep input order.
        key = np.asarray(y_score, dtype=np.float64) if y_score is not None else np.zeros(n)
        perm = np.lexsort((key, y))
        self.perm = perm
        self.n_neg = int((y == 0).sum())
        y_p = y[perm]
        strata_p = (y if strata is None else np.asarray(strata))[perm]
        self._set_units(*_units(strata_p, clusters, perm), clusters is None)
        masks = masks[perm]
        del y, key, strata_p  # input-order copies: not held while the statistics are built
        with _few_threads(self.device, 16 * n):  # a few (N,) columns each
            self._build_statistics(
                y_p, y_pred, y_score, weights, masks, subconcept, n_subconcepts, soft_subconcept
            )
        if n >= 2**20:
            _return_freed_memory()  # the build's temporaries

    def _set_units(
        self, unit_of_col: np.ndarray, unit_stratum: np.ndarray, no_clusters: bool
    ) -> None:
        """Resampling layout from each column's unit ``(N,)`` and each unit's stratum
        ``(U,)``: units sorted by stratum, the column → count map and the stratum blocks."""
        order = _stable_argsort(unit_stratum)
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        col_unit = rank[unit_of_col]  # column j takes the count of unit col_unit[j]
        self.identity = no_clusters and np.array_equal(order, np.arange(len(order)))
        self._col_unit = (
            None if self.identity else torch.as_tensor(np.r_[0, col_unit + 1], device=self.device)
        )
        sorted_strata = unit_stratum[order]
        bounds = np.flatnonzero(np.diff(sorted_strata)) + 1
        self.blocks = [
            (int(a), int(b))
            for a, b in zip(np.r_[0, bounds], np.r_[bounds, len(sorted_strata)], strict=True)
        ]
        self.n_units = len(order)

    # -- static matrices ------------------------------------------------------------------
    # Every count statistic is a column of S (b, k): Σ_i c_i · w_i · f(i) for a weighting w and
    # a 0/1 indicator f of class, hit, subset and subconcept. Instances with equal class, hit,
    # subset memberships and subconcept form a *cell*, and every indicator is constant on cells.
    # Columns whose weight is constant on cells too (unweighted, true utilities, per-subconcept
    # recall) are T0 @ M0: T0 (b, G) holds each replicate's count per cell (one scatter-add of
    # the counts: sums of integers, exact in any order), M0 (G, k) each cell's weight for each
    # column. The other columns (weights that vary within cells, soft memberships) come from
    # one matrix product with a dense (1 + N, k') matrix. On the CPU no (N, k) matrix of all
    # columns is held (on millions of rows it was the largest item in memory); on GPUs every
    # column is dense (:func:`_counts_by_cell`).
    def _t(self, a: np.ndarray | torch.Tensor) -> torch.Tensor:
        return torch.as_tensor(np.asarray(a, dtype=np.float64), device=self.device).to(self.dtype)

    def _permuted(self, v: np.ndarray | torch.Tensor) -> np.ndarray:
        """``(1 + N,)`` float64: 0, then ``v`` ``(N,)`` in column order (one copy; its tail
        is the weighting in column order, and the whole the zero-padded weights of a replicate's
        counts)."""
        v = np.asarray(torch.as_tensor(v).cpu(), dtype=np.float64)
        out = np.empty(1 + len(self.perm))
        out[0] = 0.0
        np.take(v, self.perm, out=out[1:], mode="clip")  # in range; "clip" writes in place
        return out

    def _build_rows(self, k: int) -> int:
        """Rows of the dense matrix (``k`` columns) filled at once: the block's temporaries
        (about ``8·(k + 2)`` bytes a row) take at most 32 MiB and a quarter of the budget."""
        cap = min(_CHUNK_BYTES, self.memory_budget // 4)
        return max(2**12, cap // (8 * (k + 2)))

    def _dense_matrix(self, specs, cell, w_np, q, hit) -> torch.Tensor:
        """The dense ``(1 + N, k')`` matrix with a zero first row: a column ``w·f`` for each
        ``(weighting or None, indicator over cells)`` of ``specs``, then, for each soft
        membership s (column of ``q`` ``(N, S)``, input order), ``q_s`` and ``q_s·hit``.

        Stored column-major (the transpose of a contiguous ``(k', 1 + N)``; BLAS reads it as
        it is) and filled in place a block of rows at a time (:meth:`_build_rows`), so that
        building it takes the matrix and one block's temporaries, not a list of its columns.
        """
        n, n_soft = len(self.perm), 0 if q is None else q.shape[1]
        Vt = torch.empty(len(specs) + 2 * n_soft, 1 + n, dtype=self.dtype)  # pages on write
        Vn = Vt.numpy()
        Vn[:, 0] = 0.0
        step = self._build_rows(Vn.shape[0])
        for a in range(0, n, step):
            rows, cells = slice(1 + a, 1 + min(n, a + step)), cell[a : a + step]
            for j, (name, f) in enumerate(specs):
                w = 1.0 if name is None else w_np[name][a : a + step]
                np.multiply(w, f[cells], out=Vn[j, rows])
            if n_soft:
                qb = q[self.perm[a : a + step]].T  # (S, rows)
                soft = Vn[len(specs) :, rows]
                soft[0::2] = qb
                np.multiply(qb, hit[a : a + step], out=soft[1::2])
        return Vt.to(self.device).t()

    def _build_statistics(
        self, y, y_pred, y_score, weights, masks, subconcept, n_sc, soft=None
    ) -> None:
        """The fixed inputs of every replicate: the statistics columns (per-cell and dense)
        and the AUC layout. Arrays are in column order (``perm``) except the inputs'."""
        perm = self.perm
        w_ext = {k: self._permuted(v) for k, v in weights.items()}
        w_np = {k: v[1:] for k, v in w_ext.items()}
        hit = None
        if y_pred is not None:
            yp = np.asarray(y_pred)[perm]
            hit = np.where(y == 1, yp == 1, yp != 1)  # correctly classified
            del yp
        sc = None
        self.n_subconcepts = 0
        if subconcept is not None and hit is not None:
            sc = np.asarray(subconcept, dtype=np.int64)[perm]
            self.n_subconcepts = n_sc if n_sc is not None else int(sc.max()) + 1 if len(sc) else 0
        cell, first = _cells(y, hit, masks, sc)
        specs = self._column_specs(y, hit, masks, sc, first, w_np)
        del sc
        M0, M_w, dense_cols, dense, by_cell = self._split_columns(specs, cell, first, w_np)
        k = len(specs)
        self.n_soft, q = 0, None
        if soft is not None and hit is not None:
            q = np.asarray(soft, dtype=np.float64)  # rows gathered block by block
            self.n_soft = q.shape[1]
            self._soft_start = k
            dense_cols += list(range(k, k + 2 * self.n_soft))  # per s: Σ q_s, Σ q_s·hit
        self.n_columns = k + 2 * self.n_soft
        self._store_columns(cell, len(first), M0 if by_cell else None, M_w, w_ext, dense_cols)
        self._V = self._dense_matrix(dense, cell, w_np, q, hit) if dense_cols else None
        del cell, hit, q
        self._auc: list[tuple[torch.Tensor | None, list[str], torch.Tensor]] = []
        if y_score is not None:
            self._auc_layout(y_score, w_ext, masks)

    def _column_specs(self, y, hit, masks, sc, first, w_np) -> list[tuple[str | None, np.ndarray]]:
        """``(weighting or None, indicator over cells)`` for each column of S, in
        :meth:`_finish`'s layout; sets the column offsets of each weighting and subconcept."""
        G = len(first)
        cy, cm = y[first] == 1, masks[first]
        ch = hit[first] if hit is not None else np.ones(G, bool)
        specs: list[tuple[str | None, np.ndarray]] = []
        self._conf_index: dict[str, tuple[int, int, int, int]] = {}
        for name in w_np:
            start = len(specs)
            if hit is not None:
                specs += [(name, ~cy), (name, ~cy & ch)]
                specs += [(name, cy & m) for m in cm.T]
                specs += [(name, cy & ch & m) for m in cm.T]
            else:  # AUC only: class totals per subset and weighting
                specs += [(name, ~cy), (name, ~cy)]
                specs += [(name, cy & m) for m in cm.T] * 2
            self._conf_index[name] = (start, start + 1, start + 2, masks.shape[1])
        if sc is not None:
            self._rec_start = len(specs)
            for s in range(self.n_subconcepts):
                specs += [(None, sc[first] == s), (None, (sc[first] == s) & ch)]
        return specs

    def _split_columns(self, specs, cell, first, w_np) -> tuple:
        """Which columns come from per-cell counts (``M0`` ``(G, k)``), from per-cell sums of
        a weighting (``M_w``) or from dense ``(N,)`` columns (their specs, with their column
        indices); and whether ``M0`` is used."""
        G, k = len(first), len(specs)
        # weightings constant on cells fold into M0; the others get dense columns (all of
        # them on devices where a product with dense columns beats a scatter-add)
        w_cell = {name: w[first] for name, w in w_np.items()}
        constant = {None} | {n for n, w in w_np.items() if np.array_equal(w, w_cell[n][cell])}
        n_constant = sum(name in constant for name, _ in specs)
        cells_here = _counts_by_cell(self.device)
        by_cell = cells_here and (
            n_constant >= _CELL_MIN_COLUMNS
            or 8 * len(cell) * n_constant > _CELL_MIN_BYTES  # memory decides on large data
        )
        # a weighting that varies within cells: per-cell sums of c·w (one product and one
        # scatter-add per replicate) where its dense columns would be large
        per_cell = {
            name
            for name in w_np
            if name not in constant
            and cells_here
            and 8 * len(cell) * sum(s == name for s, _ in specs) > _CELL_MIN_BYTES
        }
        M0 = np.zeros((G, k))
        M_w = {name: np.zeros((G, k)) for name in per_cell}
        dense_cols, dense = [], []
        for j, (name, f) in enumerate(specs):
            w = np.ones(G) if name is None else w_cell[name]
            if by_cell and name in constant:
                M0[:, j] = f * w
            elif name in per_cell:
                M_w[name][:, j] = f
            else:
                dense_cols.append(j)
                dense.append((name, f))  # filled into the dense matrix by _dense_matrix
        return M0, M_w, dense_cols, dense, by_cell

    def _store_columns(self, cell, G, M0, M_w, w_ext, dense_cols) -> None:
        """The statistics on the device: cell indices, ``M0`` (or None) and the per-cell
        weightings (``w_ext``: each weighting as :meth:`_permuted` made it)."""
        # Long runs of one cell (the columns are in score order) would chain every add on one
        # accumulator: instance i adds to lane i mod L of its cell, and the lanes are summed.
        self._cells = (G, _CELL_LANES)
        index = np.empty(1 + len(cell), dtype=np.int64)
        index[0] = 0
        np.multiply(cell, _CELL_LANES, out=index[1:])
        for lane in range(1, _CELL_LANES):  # in place: no (N,) temporaries
            index[lane::_CELL_LANES] += lane
        self._cell = torch.as_tensor(index, device=self.device)
        pad = ((0, 0), (0, 2 * self.n_soft))  # soft memberships: dense columns only
        self._M0 = self._t(np.pad(M0, pad)) if M0 is not None else None
        self._per_cell = [(self._t(w_ext[name]), self._t(np.pad(M_w[name], pad))) for name in M_w]
        self._dense_cols = torch.as_tensor(dense_cols, dtype=torch.long, device=self.device)

    def _auc_layout(self, y_score, w_ext, masks) -> None:
        """AUC: each positive's two positions among the sorted negatives, and one cumsum per
        distinct negative weighting (bit for bit; the first weighting of each group stands for
        it)."""
        perm, nn = self.perm, self.n_neg
        s = np.asarray(y_score, dtype=np.float64)[perm]
        self._lo = torch.as_tensor(np.searchsorted(s[:nn], s[nn:], side="left"), device=self.device)
        self._hi = torch.as_tensor(
            np.searchsorted(s[:nn], s[nn:], side="right"), device=self.device
        )
        del s
        groups: list[list[str]] = []
        for name, w in w_ext.items():
            bits = w[1 : 1 + nn].view(np.int64)
            same = (
                g for g in groups if np.array_equal(w_ext[g[0]][1 : 1 + nn].view(np.int64), bits)
            )
            group = next(same, None)
            if group is None:
                groups.append([name])
            else:
                group.append(name)
        k = masks.shape[1]
        for names in groups:
            w_neg = w_ext[names[0]][: 1 + nn]  # a view: no copy of the negatives' weights
            w_neg_t = None if np.all(w_neg[1:] == 1) else self._t(w_neg)
            pw = np.empty((len(perm) - nn, k * len(names)))
            for i, name in enumerate(names):
                np.multiply(w_ext[name][1 + nn :, None], masks[nn:], out=pw[:, i * k : (i + 1) * k])
            pw *= 0.5
            self._auc.append((w_neg_t, names, self._t(pw)))

    # -- counts --------------------------------------------------------------------------
    # Counts live in a (b, 1 + N) buffer whose column 0 stays 0: a cumsum over columns
    # 0..n_neg then starts at 0 and AUC can index it without padding. Buffers are reused
    # across chunks: on the CPU, fresh large tensors cost more in page faults than the
    # arithmetic done on them. The counts are never held for all B replicates at once: a
    # chunk of b rows, with b set by the memory budget.
    def _buffer_shapes(self, b: int, work: bool) -> list[dict[str, tuple[int, int]]]:
        """One worker's buffers by region: the counts, then (``work``) the scratch of the AUC
        and that of the per-cell weighted counts, which share one region (a chunk's weighted
        counts are summed before its AUC is computed, in the same worker)."""
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
            regions.append({"cw": (self._cw_rows(b), 1 + n)})
        return regions

    def _scratch_rows(self, b: int, row_elements: int, cpu_cap: int = _AUC_BYTES) -> int:
        """Rows of a ``b``-row chunk whose scratch (``row_elements`` per row) is held at once:
        on the CPU at most ``cpu_cap`` bytes, and never over a quarter of the budget."""
        cap = min(cpu_cap if self.device.type == "cpu" else 2**62, self.memory_budget // 4)
        return max(1, min(b, cap // (self.dtype.itemsize * row_elements)))

    def _auc_rows(self, b: int) -> int:
        """Rows of AUC scratch (cumsums and gathers) held at once (0 without AUC). A row is
        counted as ``2·(1 + n_neg) + 2·n_pos`` elements, more than its buffers take (the
        weighted counts share the cumsum's): the row groups, which set the shapes of the AUC
        products and so their last bits, are those of the layout with a separate buffer."""
        n, nn = len(self.perm), self.n_neg
        return self._scratch_rows(b, 2 * (1 + nn) + 2 * (n - nn)) if self._auc else 0

    def _cw_rows(self, b: int) -> int:
        """Rows of c·w scratch held at once for the weightings summed per cell (0: none)."""
        n = len(self.perm)
        return self._scratch_rows(b, 1 + n, _ROW_STEP_BYTES) if self._per_cell else 0

    def _buffer_numel(self, b: int, work: bool = True) -> int:
        sizes = [sum(r * k for r, k in s.values()) for s in self._buffer_shapes(b, work)]
        return sizes[0] + max(sizes[1:], default=0)

    def _buffers(
        self, b: int, *, work: bool = True, storage: torch.Tensor | None = None
    ) -> dict[str, torch.Tensor]:
        """One worker's buffers, views of ``storage`` (default: fresh): counts ``C`` (and
        ``U`` for clusters), ``b`` rows, whose column 0 stays 0, and the AUC scratch."""
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

    def _draw_block(self) -> int:
        """Replicates that share one numpy generator: a power of two in [1, 64], fewer on
        larger data, so that seeding a generator stays a small share of drawing."""
        per = max(1, 2**20 // max(1, self.n_units))
        return 1 << min(6, per.bit_length() - 1)

    def _fill_counts(self, buf: dict[str, torch.Tensor], start: int, b: int, state) -> torch.Tensor:
        """Draw replicates ``start .. start + b - 1`` into ``buf``; returns the ``(b, 1 + N)``
        counts view. ``state``: the seed (numpy) or the ``torch.Generator``."""
        units = buf["U"][:b]
        if self.generator == "numpy":
            block = self._draw_block()
            for j in range(start // block, _ceil_div(start + b, block)):
                lo, hi = max(start, j * block), min(start + b, (j + 1) * block)
                self._draw_numpy_block(units, state, j, lo - j * block, hi - j * block, lo - start)
        else:
            units[:, 1:].zero_()
            one = torch.ones((), device=self.device, dtype=self.dtype)
            for a, e in self.blocks:
                idx = torch.randint(0, e - a, (b, e - a), device=self.device, generator=state)
                units[:, 1 + a : 1 + e].scatter_add_(1, idx, one.expand(b, e - a))
        counts = buf["C"][:b]
        if not self.identity:
            torch.index_select(units, 1, self._col_unit, out=counts)
        return counts

    def _draw_numpy_block(
        self, units: torch.Tensor, seed: int, j: int, r0: int, r1: int, row: int
    ) -> None:
        """Rows ``r0 .. r1 - 1`` of generator block ``j`` into ``units[row:]``. The block's
        generator is seeded with ``(seed, j)`` and draws, stratum by stratum, the unit indices
        of all its replicates at once (a chunk that needs part of a block draws all of it)."""
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(j,))))
        block, one = self._draw_block(), torch.ones((), dtype=self.dtype)
        for a, e in self.blocks:
            k = e - a
            idx = torch.from_numpy(rng.integers(0, k, (block, k))[r0:r1])
            # one scatter-add for all rows of the block: counts are sums of ones, so exact; it
            # costs half of numpy's shifted bincount and releases the GIL for the other workers
            dest = units[row : row + r1 - r0, 1 + a : 1 + e].zero_()
            dest.scatter_add_(1, idx, one.expand(r1 - r0, k))

    def _state(self, seed: int):
        if self.generator == "numpy":
            return int(seed)
        return torch.Generator(device=self.device).manual_seed(seed)

    def _workers(self) -> int:
        """Threads that each draw and compute whole chunks: torch's CPU threads with the
        numpy generator (each then computes on one thread), else 1."""
        if self.generator != "numpy":
            return 1
        return max(1, torch.get_num_threads())

    def iter_counts(
        self, n: int, *, seed: int, chunk_size: int | None = None
    ) -> Iterator[torch.Tensor]:
        """The replicates' counts ``(b, N)`` in the caller's instance order (for oracles)."""
        inv = torch.as_tensor(np.argsort(self.perm) + 1, device=self.device)
        chunks, state = self._chunks(n, chunk_size), self._state(seed)
        buf = self._buffers(max(chunks, default=1), work=False)
        start = 0
        for b in chunks:
            yield self._fill_counts(buf, start, b, state).index_select(1, inv)
            start += b

    def _chunks(self, n: int, chunk_size: int | None) -> list[int]:
        """Replicates per chunk: ``chunk_size``, or as many as the memory budget holds when
        each worker thread has its own buffers (on the CPU at most :data:`_CHUNK_BYTES` of
        counts: larger chunks there only add page faults)."""
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

    # -- replicates -----------------------------------------------------------------------
    @validate_params(
        {
            "n": [Interval(Integral, 0, None)],
            "seed": [Interval(Integral, 0, None)],
            "chunk_size": [Interval(Integral, 1, None), None],
            "progress": [TypeOf(bool, np.bool_, desc="a bool")],
        }
    )
    def run(
        self, n: int, *, seed: int, chunk_size: int | None = None, progress: bool = False
    ) -> Replicates:
        """Compute ``n`` replicates of every score on every subset.

        With the numpy generator, chunks are drawn and computed by several threads at once
        (torch's CPU thread count, each computing on one thread); replicate r comes from its
        own generator block, so the numbers depend on neither the chunks nor the threads.
        """
        check_replicates(n, self.memory_budget, self.replicate_bytes())  # before any work
        state = self._state(seed)
        chunks = self._chunks(n, chunk_size)
        starts = np.r_[0, np.cumsum(chunks)[:-1]].astype(int).tolist() if chunks else []
        z = {"device": self.device, "dtype": self.dtype}
        S = torch.empty(n, self.n_columns, **z)
        A = torch.empty(n, sum(pw.shape[1] for _, _, pw in self._auc), **z)
        size = max(chunks, default=1)

        def job(i: int, buf: dict[str, torch.Tensor]) -> None:
            rows = slice(starts[i], starts[i] + chunks[i])
            c = self._fill_counts(buf, starts[i], chunks[i], state)
            self._statistics(c, buf, S[rows])
            if self._auc:
                self._auc_numerators(c, buf, A[rows])

        bar = None
        if progress:
            from medeval.progress import progress as progress_bar

            bar = progress_bar(total=len(chunks), desc="bootstrap", unit="chunk", leave=False)
        workers = min(self._workers(), len(chunks))
        try:
            if workers <= 1:
                with (
                    _few_threads(self.device, size * (1 + len(self.perm))),
                    _reused(self._buffer_numel(size), self.dtype, self.device) as storage,
                ):
                    buf = self._buffers(size, storage=storage)
                    for i in range(len(chunks)):
                        job(i, buf)
                        if bar is not None:
                            bar.update(1)
            else:
                self._run_parallel(job, len(chunks), size, workers, bar)
        finally:
            if bar is not None:
                bar.close()
        return self._finish(S, A if self._auc else None, n, seed)

    def replicate_bytes(self) -> int:
        """Bytes one replicate's results take: its count statistics and AUC numerators (held
        for all replicates at once by :meth:`run`) and the scores made from them."""
        k = len(self.subset_names)
        n_auc = sum(pw.shape[1] for _, _, pw in self._auc)
        families = 2 * self.has_pred + bool(self._auc)  # BA and F1; AUC
        scores = len(self._conf_index) * k * families + self.n_subconcepts + self.n_soft
        return self.dtype.itemsize * (self.n_columns + n_auc + scores)

    def _run_parallel(self, job, n_chunks: int, size: int, workers: int, bar) -> None:
        """``job(i, buffers)`` for every chunk on ``workers`` threads, each with its own
        buffers; torch computes on one thread in each (numpy's generator and torch's kernels
        release the GIL, so the threads run at once)."""
        import queue
        from concurrent.futures import ThreadPoolExecutor, as_completed

        free: queue.SimpleQueue = queue.SimpleQueue()
        for _ in range(workers):
            free.put(self._buffers(size))

        def run_one(i: int) -> None:
            buf = free.get()
            try:
                job(i, buf)
            finally:
                free.put(buf)

        threads = torch.get_num_threads()
        torch.set_num_threads(1)
        pool = ThreadPoolExecutor(workers, thread_name_prefix="medeval-bootstrap")
        try:
            for future in as_completed([pool.submit(run_one, i) for i in range(n_chunks)]):
                future.result()
                if bar is not None:
                    bar.update(1)
        finally:  # on an error or Ctrl-C, chunks not yet started are dropped
            pool.shutdown(wait=True, cancel_futures=True)
            torch.set_num_threads(threads)

    def _statistics(self, c: torch.Tensor, buf: dict[str, torch.Tensor], out: torch.Tensor) -> None:
        """``out (b, k)`` ← every count statistic of the replicates ``c (b, 1 + N)``."""
        b, (G, lanes) = c.shape[0], self._cells
        T = torch.zeros(b, G * lanes, device=self.device, dtype=self.dtype)
        if self._M0 is None:
            out.zero_()
        else:
            T.scatter_add_(1, self._cell.expand(b, -1), c)
            torch.matmul(T.view(b, G, lanes).sum(2), self._M0, out=out)
        for w, M in self._per_cell:  # Σ c·w per cell, in row groups that fit the scratch
            step = buf["cw"].shape[0]
            T.zero_()
            for r in range(0, b, step):
                cw = torch.mul(c[r : r + step], w, out=buf["cw"][: min(step, b - r)])
                T[r : r + step].scatter_add_(1, self._cell.expand(cw.shape[0], -1), cw)
            out.addmm_(T.view(b, G, lanes).sum(2), M)
        if self._V is not None:
            out[:, self._dense_cols] += torch.matmul(c, self._V)

    def _auc_numerators(self, c: torch.Tensor, buf: dict[str, torch.Tensor], out: torch.Tensor):
        """``out (b, Σk)`` ← 2 × AUC numerators of each weighting group and subset, for
        groups of rows that fit the AUC scratch buffers."""
        step = buf["g1"].shape[0]
        for r in range(0, c.shape[0], step):
            self._auc_block(c[r : r + step], buf, out[r : r + step])

    def _auc_block(self, c: torch.Tensor, buf: dict[str, torch.Tensor], out: torch.Tensor):
        """One row group: each row's positives' terms into ``g1`` (the cumsums a few rows at
        a time, see :data:`_ROW_STEP_BYTES`), then one product per weighting group."""
        b, nn, col, step = c.shape[0], self.n_neg, 0, buf["ext"].shape[0]
        g1 = buf["g1"][:b]
        for w_neg, _, pw in self._auc:
            for r in range(0, b, step):
                rows, m = slice(r, min(b, r + step)), min(step, b - r)
                src = c[rows, : 1 + nn]
                if w_neg is not None:  # weighted in the cumsum's buffer, then summed in place
                    src = torch.mul(src, w_neg, out=buf["ext"][:m])
                ext = torch.cumsum(src, 1, out=buf["ext"][:m])
                torch.gather(ext, 1, self._lo.expand(m, -1), out=g1[rows])
                g2 = torch.gather(ext, 1, self._hi.expand(m, -1), out=buf["g2"][:m])
                g1[rows].add_(g2).mul_(c[rows, 1 + nn :])  # 2 × (below + ½ tied) × count
            k = pw.shape[1]
            torch.matmul(g1, pw, out=out[:, col : col + k])
            col += k

    def _finish(self, S: torch.Tensor, A: torch.Tensor | None, n: int, seed: int) -> Replicates:
        scores: dict[tuple[str, str], torch.Tensor] = {}
        for name, (i_neg, i_tn, i_pos, k) in self._conf_index.items():
            neg = S[:, i_neg : i_neg + 1].expand(-1, k)
            tn = S[:, i_tn : i_tn + 1].expand(-1, k)
            pos = S[:, i_pos : i_pos + k]
            tp = S[:, i_pos + k : i_pos + 2 * k]
            cs = ConfusionSums(pos, tp, neg, tn)
            if self.has_pred:
                scores[(name, "BA")] = ba_from_sums(cs)
                scores[(name, "F1")] = f1_from_sums(cs)
        if A is not None:
            col, k = 0, len(self.subset_names)
            for _, names, _ in self._auc:
                for name in names:
                    i_neg, _, i_pos, _ = self._conf_index[name]
                    sums = AucSums(
                        A[:, col : col + k],
                        S[:, i_pos : i_pos + k],
                        S[:, i_neg : i_neg + 1].expand(-1, k),
                    )
                    scores[(name, "AUC")] = auc_from_sums(sums)
                    col += k
        recall = None
        if self.n_subconcepts:
            tot = S[:, self._rec_start :: 2][:, : self.n_subconcepts]
            hits = S[:, self._rec_start + 1 :: 2][:, : self.n_subconcepts]
            recall, _ = recalls_from_sums(ConfusionSums(tot, hits, tot, hits))
        estimated = None
        if self.n_soft:
            tot = S[:, self._soft_start :: 2][:, : self.n_soft]
            hits = S[:, self._soft_start + 1 :: 2][:, : self.n_soft]
            estimated, _ = recalls_from_sums(ConfusionSums(tot, hits, tot, hits))
        return Replicates(scores, recall, self.subset_names, n, seed, estimated_recall=estimated)


@validate_params({"confidence": [Interval(Real, 0, 1, closed="neither")]})
def percentile_interval(
    replicates: torch.Tensor, confidence: float = 0.95
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Percentile interval over the replicate axis 0, excluding undefined (NaN) replicates.

    Returns ``(low, high, n_undefined)``, each of the trailing shape; NaN bounds where every
    replicate is undefined.
    """
    alpha = (1 - confidence) / 2
    q = torch.tensor([alpha, 1 - alpha], dtype=replicates.dtype, device=replicates.device)
    bounds = torch.nanquantile(replicates, q, dim=0)
    return bounds[0], bounds[1], torch.isnan(replicates).sum(0)
