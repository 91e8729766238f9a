"""Kernels of the batched bootstrap: the counts drawn (numpy or torch), each chunk's count
statistics and AUC numerators, and the scores made from them (:class:`_Kernels`)."""

from __future__ import annotations

import numpy as np
import torch

from ..classification import ConfusionSums, ba_from_sums, f1_from_sums, recalls_from_sums
from ..ranking import AucSums, auc_from_sums
from .budget import _ceil_div
from .replicates import Replicates


class _Kernels:
    """The arithmetic of a :class:`BatchedBootstrap` on a chunk of replicates."""

    def _draw_block(self) -> int:
        """Replicates that share one numpy generator: a power of two in [1, 64]."""
        per = max(1, 2**20 // max(1, self.n_units))
        return 1 << min(6, per.bit_length() - 1)

    def _fill_counts(self, buf: dict[str, torch.Tensor], start: int, b: int, state) -> torch.Tensor:
        """Draw replicates ``start .. start + b - 1`` into ``buf``: the ``(b, 1 + N)`` counts."""
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
        """Rows ``r0 .. r1 - 1`` of generator block ``j`` (seeded ``(seed, j)``) into ``units``."""
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(seed, spawn_key=(j,))))
        block, one = self._draw_block(), torch.ones((), dtype=self.dtype)
        for a, e in self.blocks:
            k = e - a
            dest = units[row : row + r1 - r0, 1 + a : 1 + e].zero_()
            # drawn row by row: the same stream as one (block, k) draw, in arrays small enough
            # to be reused from the heap rather than mapped afresh (docs/performance.md); each
            # row a scatter-add of ones, exact, which releases the GIL for the other workers
            for r in range(block):
                idx = rng.integers(0, k, k)
                if r0 <= r < r1:
                    dest[r - r0].scatter_add_(0, torch.from_numpy(idx), one.expand(k))

    def _state(self, seed: int):
        if self.generator == "numpy":
            return int(seed)
        return torch.Generator(device=self.device).manual_seed(seed)

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
        """``out (b, Σk)`` ← 2 × AUC numerators, in row groups that fit the scratch."""
        step = buf["g1"].shape[0]
        for r in range(0, c.shape[0], step):
            self._auc_block(c[r : r + step], buf, out[r : r + step])

    def _auc_block(self, c: torch.Tensor, buf: dict[str, torch.Tensor], out: torch.Tensor):
        """One row group: the positives' terms into ``g1``, then one product per group."""
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

        def recalls(start: int, k: int) -> torch.Tensor:  # columns: (total, hits) per group
            tot, hits = S[:, start::2][:, :k], S[:, start + 1 :: 2][:, :k]
            return recalls_from_sums(ConfusionSums(tot, hits, tot, hits))[0]

        recall = recalls(self._rec_start, self.n_subconcepts) if self.n_subconcepts else None
        estimated = recalls(self._soft_start, self.n_soft) if self.n_soft else None
        return Replicates(scores, recall, self.subset_names, n, seed, estimated_recall=estimated)
