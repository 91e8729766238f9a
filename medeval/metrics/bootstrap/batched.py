"""The batched bootstrap's public plan, :class:`BatchedBootstrap`: planned once on fixed test
data, then :meth:`~BatchedBootstrap.run` for any number of replicates."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from numbers import Integral

import numpy as np
import torch

from medeval.errors import UserError

from ..._validation import ArrayLike, Interval, StrOptions, TypeOf, validate_params
from ...options import MEMORY_BUDGET
from .budget import (
    _BufferPlan,
    _few_threads,
    _return_freed_memory,
    _reused,
    check_replicates,
    default_memory_budget,
)
from .kernels import _Kernels
from .planning import _StaticMatrices, _units
from .replicates import Replicates


class BatchedBootstrap(_StaticMatrices, _BufferPlan, _Kernels):
    """Plan for bootstrap replicates of BA / F1 / AUC on fixed test data.

    Args:
        y_true: ``(N,)`` labels in {0, 1}.
        y_pred: ``(N,)`` predicted labels, or ``None`` (no BA / F1).
        y_score: ``(N,)`` scores, or ``None`` (no AUC).
        weights: ``{name: (N,)}`` non-negative instance weights (e.g. unweighted, true,
            predicted); fixed across replicates (utilities come from the training split).
        subsets: ``{name: (N,) bool}``; each must hold every class-0 instance (docs/method.md,
            "Evaluation subsets and analyses").
        subconcept: ``(N,)`` integer subconcept codes ``0..S-1`` for per-subconcept recall.
        n_subconcepts: S (default: the largest code + 1); absent subconcepts give NaN.
        soft_subconcept: ``(N, S')`` soft subconcept memberships (class-renormalised posteriors
            ``q̃``, zero outside each instance's class) for the label-free per-subconcept recall
            ``Σ q̃_s·hit / Σ q̃_s`` (docs/method.md, "Label-free scores").
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
            "y_true": [ArrayLike()],
            "y_pred": [ArrayLike(), None],
            "y_score": [ArrayLike(), None],
            "weights": [TypeOf(Mapping, desc="a mapping of weightings")],
            "subsets": [TypeOf(Mapping, desc="a mapping of subset masks")],
            "subconcept": [ArrayLike(), None],
            "soft_subconcept": [ArrayLike(), None],
            "strata": [ArrayLike(), None],
            "clusters": [ArrayLike(), None],
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
            raise UserError("need y_pred or y_score")
        for name, w in weights.items():  # a longer weight vector must not be cut silently
            if tuple(np.shape(w)) != (n,):
                raise UserError(
                    f"weights {name!r} must have one entry per instance ({n}); got shape "
                    f"{tuple(np.shape(w))}"
                )
        self.device, self.dtype = torch.device(device), dtype
        if generator == "auto":
            generator = "numpy" if self.device.type == "cpu" else "torch"
        if generator == "numpy" and self.device.type != "cpu":
            raise UserError("generator='numpy' draws into CPU memory; use device='cpu'")
        self.generator = generator
        self.memory_budget = int(memory_budget or default_memory_budget(self.device))
        self.has_pred = y_pred is not None
        self.subset_names = tuple(subsets)
        masks = np.stack([np.asarray(m, dtype=bool) for m in subsets.values()], axis=1)
        if not masks[y == 0].all():
            raise UserError(
                "every subset must contain all class-0 instances "
                '(docs/method.md, "Evaluation subsets and analyses")'
            )
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

    def _workers(self) -> int:
        """Threads that each draw and compute whole chunks (numpy generator), else 1."""
        return max(1, torch.get_num_threads()) if self.generator == "numpy" else 1

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
        """``job(i, buffers)`` for every chunk on ``workers`` threads with their own buffers."""
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
