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

Counts are drawn with numpy on the CPU (one seeded Generator consumed replicate by replicate,
so results do not depend on the chunk size) and with ``torch.randint`` on other devices (same
seed, device and chunk size → same numbers).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field

import numpy as np
import torch

from .classification import ConfusionSums, ba_from_sums, f1_from_sums, recalls_from_sums
from .ranking import AucSums, auc_from_sums

_CHUNK_BYTES = 2**27  # ~128 MiB per (chunk, N) float64 tensor


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


def _stable_argsort(x: np.ndarray) -> np.ndarray:
    return np.argsort(x, kind="stable")


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
        generator: ``"numpy"`` (CPU only; results independent of the chunk size), ``"torch"``
            (``torch.randint`` on the device; results depend on seed, device and chunk size) or
            ``"auto"`` (numpy on the CPU, torch elsewhere).
    """

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
    ) -> None:
        y = np.asarray(y_true).astype(np.int64)
        n = len(y)
        if y_pred is None and y_score is None:
            raise ValueError("need y_pred or y_score")
        self.device, self.dtype = torch.device(device), dtype
        if generator not in ("auto", "numpy", "torch"):
            raise ValueError(f"generator must be 'auto', 'numpy' or 'torch'; got {generator!r}")
        if generator == "auto":
            generator = "numpy" if self.device.type == "cpu" else "torch"
        if generator == "numpy" and self.device.type != "cpu":
            raise ValueError("generator='numpy' draws into CPU memory; use device='cpu'")
        self.generator = generator
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
        # Units (instances or clusters) in stratum order; `unit_col` maps columns → units.
        strata_a = y if strata is None else np.asarray(strata)
        strata_p = strata_a[perm]
        if clusters is None:
            unit_of_col = np.arange(n)
            unit_stratum = strata_p
        else:
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
        order = _stable_argsort(unit_stratum)
        rank = np.empty_like(order)
        rank[order] = np.arange(len(order))
        col_unit = rank[unit_of_col]  # column j takes the count of unit col_unit[j]
        self.identity = clusters is None and np.array_equal(order, np.arange(len(order)))
        self._col_unit = torch.as_tensor(np.r_[0, col_unit + 1], device=self.device)
        sorted_strata = unit_stratum[order]
        bounds = np.flatnonzero(np.diff(sorted_strata)) + 1
        self.blocks = [
            (int(a), int(b))
            for a, b in zip(np.r_[0, bounds], np.r_[bounds, len(sorted_strata)], strict=True)
        ]
        self.n_units = len(order)
        self._build_statistics(
            y_p, y_pred, y_score, weights, masks[perm], subconcept, n_subconcepts, soft_subconcept
        )

    # -- static matrices ------------------------------------------------------------------
    def _t(self, a: np.ndarray | torch.Tensor) -> torch.Tensor:
        return torch.as_tensor(np.asarray(a, dtype=np.float64), device=self.device).to(self.dtype)

    def _build_statistics(
        self, y, y_pred, y_score, weights, masks, subconcept, n_sc, soft=None
    ) -> None:
        perm, nn = self.perm, self.n_neg
        pos = (y == 1).astype(np.float64)
        neg = 1.0 - pos
        cols: list[np.ndarray] = []
        self._conf_index: dict[str, tuple[int, int, int, int]] = {}
        w_np = {
            k: np.asarray(torch.as_tensor(v).cpu(), dtype=np.float64)[perm]
            for k, v in weights.items()
        }
        hit = None
        if y_pred is not None:
            yp = np.asarray(y_pred, dtype=np.float64)[perm]
            hit = np.where(y == 1, yp, 1 - yp)  # correctly classified
            for name, w in w_np.items():
                start = len(cols)
                cols += [w * neg, w * neg * hit]
                cols += [w * pos * m for m in masks.T]
                cols += [w * pos * hit * m for m in masks.T]
                self._conf_index[name] = (start, start + 1, start + 2, masks.shape[1])
        self.n_subconcepts = 0
        if subconcept is not None and hit is not None:
            sc = np.asarray(subconcept, dtype=np.int64)[perm]
            self.n_subconcepts = n_sc if n_sc is not None else int(sc.max()) + 1 if len(sc) else 0
            self._rec_start = len(cols)
            for s in range(self.n_subconcepts):
                cols += [(sc == s).astype(np.float64), (sc == s) * hit]
        self.n_soft = 0
        if soft is not None and hit is not None:
            q = np.asarray(soft, dtype=np.float64)[perm]
            self.n_soft = q.shape[1]
            self._soft_start = len(cols)
            for s in range(self.n_soft):
                cols += [q[:, s], q[:, s] * hit]
        if not cols:  # AUC only: class totals per subset and weighting
            for name, w in w_np.items():
                start = len(cols)
                cols += [w * neg, w * neg]
                cols += [w * pos * m for m in masks.T] * 2
                self._conf_index[name] = (start, start + 1, start + 2, masks.shape[1])
        self._V = self._t(np.vstack([np.zeros((1, len(cols))), np.stack(cols, axis=1)]))
        # AUC: one cumsum per distinct negative weighting.
        self._auc: list[tuple[torch.Tensor | None, list[str], torch.Tensor]] = []
        if y_score is not None:
            s = np.asarray(y_score, dtype=np.float64)[perm]
            s_neg, s_pos = s[:nn], s[nn:]
            lo = np.searchsorted(s_neg, s_pos, side="left")
            hi = np.searchsorted(s_neg, s_pos, side="right")
            self._lo = torch.as_tensor(lo, device=self.device)
            self._hi = torch.as_tensor(hi, device=self.device)
            groups: dict[bytes, list[str]] = {}
            for name, w in w_np.items():
                groups.setdefault(w[:nn].tobytes(), []).append(name)
            for names in groups.values():
                w_neg = w_np[names[0]][:nn]
                w_neg_t = None if np.all(w_neg == 1) else self._t(np.r_[0.0, w_neg])
                pw = 0.5 * np.concatenate([w_np[k][nn:, None] * masks[nn:] for k in names], axis=1)
                self._auc.append((w_neg_t, names, self._t(pw)))

    # -- counts --------------------------------------------------------------------------
    # Counts live in a (b, 1 + N) buffer whose column 0 stays 0: a cumsum over columns
    # 0..n_neg then starts at 0 and AUC can index it without padding. Buffers are reused
    # across chunks: on the CPU, fresh large tensors cost more in page faults than the
    # arithmetic done on them.
    def _alloc(self, b: int) -> dict[str, torch.Tensor]:
        z = {"device": self.device, "dtype": self.dtype}
        n, nn = len(self.perm), self.n_neg
        buf = {"C": torch.zeros(b, 1 + n, **z)}
        buf["U"] = buf["C"] if self.identity else torch.zeros(b, 1 + self.n_units, **z)
        if self._auc:
            buf["cn"] = torch.empty(b, 1 + nn, **z)
            buf["ext"] = torch.empty(b, 1 + nn, **z)
            buf["g1"] = torch.empty(b, n - nn, **z)
            buf["g2"] = torch.empty(b, n - nn, **z)
        return buf

    def _fill_counts(self, buf: dict[str, torch.Tensor], b: int, rng) -> torch.Tensor:
        """Draw ``b`` replicates into ``buf``; returns the ``(b, 1 + N)`` counts view."""
        units = buf["U"][:b]
        if self.generator == "numpy":
            arr = units.numpy()
            for r in range(b):
                for a, e in self.blocks:
                    arr[r, 1 + a : 1 + e] = np.bincount(
                        rng.integers(0, e - a, e - a), minlength=e - a
                    )
        else:
            units[:, 1:].zero_()
            for a, e in self.blocks:
                idx = torch.randint(0, e - a, (b, e - a), device=self.device, generator=rng)
                units[:, 1 + a : 1 + e].scatter_add_(1, idx, torch.ones_like(idx, dtype=self.dtype))
        counts = buf["C"][:b]
        if not self.identity:
            torch.index_select(units, 1, self._col_unit, out=counts)
        return counts

    def _rng(self, seed: int):
        if self.generator == "numpy":
            return np.random.default_rng(seed)
        return torch.Generator(device=self.device).manual_seed(seed)

    def iter_counts(
        self, n: int, *, seed: int, chunk_size: int | None = None
    ) -> Iterator[torch.Tensor]:
        """The replicates' counts ``(b, N)`` in the caller's instance order (for oracles)."""
        inv = torch.as_tensor(np.argsort(self.perm) + 1, device=self.device)
        rng = self._rng(seed)
        chunks = self._chunks(n, chunk_size)
        buf = self._alloc(max(chunks, default=1))
        for b in chunks:
            yield self._fill_counts(buf, b, rng).index_select(1, inv)

    def _chunks(self, n: int, chunk_size: int | None) -> list[int]:
        size = chunk_size or max(1, _CHUNK_BYTES // max(1, 8 * len(self.perm)))
        return [min(size, n - i) for i in range(0, n, size)]

    # -- replicates -----------------------------------------------------------------------
    def run(
        self, n: int, *, seed: int, chunk_size: int | None = None, progress: bool = False
    ) -> Replicates:
        """Compute ``n`` replicates of every score on every subset."""
        rng = self._rng(seed)
        chunks = self._chunks(n, chunk_size)
        buf = self._alloc(max(chunks, default=1))
        z = {"device": self.device, "dtype": self.dtype}
        S = torch.empty(n, self._V.shape[1], **z)
        A = torch.empty(n, sum(pw.shape[1] for _, _, pw in self._auc), **z)
        if progress:
            from medeval.progress import progress as progress_bar

            chunks = progress_bar(chunks, desc="bootstrap", unit="chunk", leave=False)
        nn, row = self.n_neg, 0
        for b in chunks:
            c = self._fill_counts(buf, b, rng)
            torch.matmul(c, self._V, out=S[row : row + b])
            col = 0
            for w_neg, _, pw in self._auc:
                src = c[:, : 1 + nn]
                if w_neg is not None:
                    src = torch.mul(src, w_neg, out=buf["cn"][:b])
                ext = torch.cumsum(src, 1, out=buf["ext"][:b])
                g1 = torch.index_select(ext, 1, self._lo, out=buf["g1"][:b])
                g2 = torch.index_select(ext, 1, self._hi, out=buf["g2"][:b])
                g1.add_(g2).mul_(c[:, 1 + nn :])  # 2 × (negatives below + ½ tied) × count
                k = pw.shape[1]
                torch.matmul(g1, pw, out=A[row : row + b, col : col + k])
                col += k
            row += b
        return self._finish(S, A if self._auc else None, n, seed)

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


def percentile_interval(
    replicates: torch.Tensor, confidence: float = 0.95
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Percentile interval over the replicate axis 0, excluding undefined (NaN) replicates.

    Returns ``(low, high, n_undefined)``, each of the trailing shape; NaN bounds where every
    replicate is undefined.
    """
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie in (0, 1); got {confidence}")
    alpha = (1 - confidence) / 2
    q = torch.tensor([alpha, 1 - alpha], dtype=replicates.dtype, device=replicates.device)
    bounds = torch.nanquantile(replicates, q, dim=0)
    return bounds[0], bounds[1], torch.isnan(replicates).sum(0)
