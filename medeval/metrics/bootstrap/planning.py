"""Planning of the batched bootstrap: resampling units and strata, cells of instances, and the
fixed statistics columns and AUC layout of every replicate (:class:`_StaticMatrices`)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import torch

from medeval.errors import UserError

from .budget import _CHUNK_BYTES

_CELL_LANES = 8  # accumulators per cell (see _build_statistics)


# Per-cell counts (one scatter-add) are used when they replace at least this many dense
# columns, or columns that would take more memory than this.
_CELL_MIN_COLUMNS, _CELL_MIN_BYTES = 12, 2**26


def _units(
    strata_p: np.ndarray, clusters: np.ndarray | None, perm: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Each column's resampling unit ``(N,)`` and each unit's stratum ``(U,)``."""
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
        raise UserError(
            "a cluster spans several strata; resample clusters without stratification "
            "(stratify='none') or stratify on a per-cluster attribute"
        )
    return unit_of_col, unit_stratum


def _counts_by_cell(device: torch.device) -> bool:
    """Whether statistics may come from per-cell counts (CPU; GPUs: dense products)."""
    return device.type == "cpu"


def _cells(
    y: np.ndarray, hit: np.ndarray | None, masks: np.ndarray, sc: np.ndarray | None
) -> tuple[np.ndarray, np.ndarray]:
    """Each instance's cell ``(N,)`` (class, hit, subsets, subconcept) and one row per cell."""
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


class _StaticMatrices:
    """The fixed inputs of every replicate of a :class:`BatchedBootstrap`."""

    def _set_units(
        self, unit_of_col: np.ndarray, unit_stratum: np.ndarray, no_clusters: bool
    ) -> None:
        """Resampling layout: units sorted by stratum, column → count map, stratum blocks."""
        order = np.argsort(unit_stratum, kind="stable")
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

    # Every count statistic is a column of S (b, k): Σ_i c_i · w_i · f(i) for a weighting w and
    # a 0/1 indicator f. Instances with equal class, hit, subsets and subconcept form a *cell*.
    # Columns whose weight is constant on cells are T0 @ M0 (T0 (b, G): each replicate's count
    # per cell, exact integer sums; M0 (G, k): each cell's weight per column); the others come
    # from a product with a dense (1 + N, k') matrix. On GPUs every column is dense
    # (:func:`_counts_by_cell`).
    def _t(self, a: np.ndarray | torch.Tensor) -> torch.Tensor:
        return torch.as_tensor(np.asarray(a, dtype=np.float64), device=self.device).to(self.dtype)

    def _permuted(self, v: np.ndarray | torch.Tensor) -> np.ndarray:
        """``(1 + N,)`` float64: 0, then ``v`` ``(N,)`` in column order."""
        v = np.asarray(torch.as_tensor(v).cpu(), dtype=np.float64)
        out = np.empty(1 + len(self.perm))
        out[0] = 0.0
        np.take(v, self.perm, out=out[1:], mode="clip")  # in range; "clip" writes in place
        return out

    def _build_rows(self, k: int) -> int:
        """Rows of the dense matrix (``k`` columns) filled at once."""
        cap = min(_CHUNK_BYTES, self.memory_budget // 4)
        return max(2**12, cap // (8 * (k + 2)))

    def _dense_matrix(self, specs, cell, w_np, q, hit) -> torch.Tensor:
        """The dense ``(1 + N, k')`` matrix (zero first row), filled a block of rows at a time."""
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
        """The fixed inputs of every replicate: statistics columns and AUC layout."""
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
        """``(weighting or None, indicator over cells)`` for each column of S."""
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
        """Which columns come from per-cell counts, per-cell weighted sums or dense columns."""
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
        """The statistics on the device: cell indices, ``M0`` and the per-cell weightings."""
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
        """AUC: each positive's positions among the negatives, one cumsum per weighting group."""
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
