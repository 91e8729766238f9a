"""Binary tasks whose classes keep their subconcepts; classes sorted by size, ties by label, so
row order does not matter (docs/method.md, "Binary tasks from multiclass data")."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np

from medeval.datasets.base import DataError, LabelledData

__all__ = ["BinaryTask", "Subconcept", "make_binary_task", "order_classes"]


@dataclass(frozen=True)
class Subconcept:
    """One original class inside the binary task.

    Attributes:
        name: the original label string.
        side: 0 (majority) or 1 (minority).
        n_original: instances in the data set.
        n: instances kept after the minority down-sampling ladder (= ``n_original`` for side 0).
    """

    name: str
    side: int
    n_original: int
    n: int


@dataclass
class BinaryTask:
    """A binary task with subconcepts, built by :func:`make_binary_task`.

    Subconcepts are ordered majority by size (desc), then minority by size (desc): the first
    minority subconcept is ``sub_1`` (the largest), the last is the smallest.

    Attributes:
        data: (N rows) the kept rows of the source data, original row order.
        index: (N,) positions of the kept rows in the source ``LabelledData``.
        y: (N,) int 0/1, 1 = minority.
        subconcept: (N,) int code into ``subconcepts``.
        subconcepts: ordered subconcept info.
        dropped: labels not used: beyond the 8 largest classes, or dropped by the user.
        n_classes: C, number of classes in the source data.
        seed: seed of the down-sampling draw.
        kept: whether the task passes docs/method.md, "Binary tasks from multiclass data", step 4;
            ``reason`` says why (not). The user's own task (``definition``,
            :mod:`medeval.tasks.user`) is always kept.
        definition: the user's task (``TaskSpec.to_dict()``: positive, negative, drop,
            downsample), or ``None`` (the paper's ladder).
    """

    data: LabelledData
    index: np.ndarray
    y: np.ndarray
    subconcept: np.ndarray
    subconcepts: tuple[Subconcept, ...]
    dropped: tuple[str, ...]
    n_classes: int
    seed: int
    kept: bool
    reason: str
    definition: dict | None = None

    def __len__(self) -> int:
        return len(self.y)

    @property
    def name(self) -> str:
        return self.data.name

    @property
    def source(self) -> str:
        return self.data.source

    @property
    def groups(self) -> np.ndarray:
        """(N,) group id per row; a row is its own group when the source has none."""
        if self.data.groups is not None:
            return self.data.groups
        return np.char.add("row", self.index.astype(str))

    @property
    def has_groups(self) -> bool:
        return self.data.groups is not None

    @property
    def ids(self) -> np.ndarray:
        """(N,) stable row identifiers (file name, tweet id or source row number)."""
        return self.data.ids

    @property
    def subconcept_names(self) -> list[str]:
        """(K,) names in code order: majority by size desc, then minority by size desc."""
        return [s.name for s in self.subconcepts]

    @property
    def sides(self) -> np.ndarray:
        """(K,) int side (0 majority, 1 minority) of each subconcept code."""
        return np.asarray([s.side for s in self.subconcepts], dtype=np.int64)

    @property
    def majority(self) -> tuple[Subconcept, ...]:
        return tuple(s for s in self.subconcepts if s.side == 0)

    @property
    def minority(self) -> tuple[Subconcept, ...]:
        return tuple(s for s in self.subconcepts if s.side == 1)

    @property
    def imbalance_ratio(self) -> float:
        """Majority size / minority size after down-sampling (NaN without a minority)."""
        n_min = sum(s.n for s in self.minority)
        return sum(s.n for s in self.majority) / n_min if n_min else math.nan

    def train_counts(self, idx: np.ndarray | None = None) -> np.ndarray:
        """(K,) instances per subconcept code among rows ``idx`` (all rows by default)."""
        codes = self.subconcept if idx is None else self.subconcept[np.asarray(idx, np.intp)]
        return np.bincount(codes, minlength=len(self.subconcepts))

    def subset(self, idx: np.ndarray) -> BinaryTask:
        """Rows ``idx``; subconcept codes and info stay those of the whole task."""
        idx = np.asarray(idx, dtype=np.intp)
        return dataclasses.replace(
            self,
            data=self.data.subset(idx),
            index=self.index[idx],
            y=self.y[idx],
            subconcept=self.subconcept[idx],
        )

    def describe(self) -> dict:
        """The ``describe --json`` record: majority, minority, imbalance ratio, kept, reason."""
        ratio = self.imbalance_ratio
        return {
            "majority": [{"name": s.name, "n": s.n} for s in self.majority],
            "minority": [
                {"name": s.name, "n_original": s.n_original, "n": s.n} for s in self.minority
            ],
            "imbalance_ratio": None if math.isnan(ratio) else round(ratio, 4),
            "kept": self.kept,
            "reason": self.reason,
            **({"task": self.definition, "dropped": list(self.dropped)} if self.user else {}),
        }

    @property
    def user(self) -> bool:
        """Whether this is the user's own task rather than the paper's ladder."""
        return self.definition is not None

    def record(self) -> dict:
        """:meth:`describe` plus the skipped files."""
        out = self.describe()
        if self.data.skipped:
            out["skipped"] = [dataclasses.asdict(s) for s in self.data.skipped]
        return out

    def describe_text(self) -> str:
        """Readable form of :meth:`describe`."""
        if self.user:
            lines = [f"{self.source}/{self.name}: the user's own task"]
            names = ("class 0 (negative)", "class 1 (positive)", "dropped (--drop)")
        else:
            lines = [f"{self.source}/{self.name}: {'KEPT' if self.kept else 'REJECTED'}"]
            names = ("majority (class 0)", "minority (class 1)", "dropped (beyond the 8 largest)")
        lines.append(f"  reason: {self.reason}")
        lines.append(f"  classes in data: {self.n_classes}; seed: {self.seed}")
        lines.append(f"  {names[0]}: n={sum(s.n for s in self.majority)}")
        lines += [f"    {s.name:<24} n={s.n}" for s in self.majority]
        lines.append(
            f"  {names[1]}: n={sum(s.n for s in self.minority)}; largest first: n_original -> n"
        )
        lines += [
            f"    sub_{i} {s.name:<18} {s.n_original} -> {s.n}"
            for i, s in enumerate(self.minority, start=1)
        ]
        if self.dropped:
            lines.append(f"  {names[2]}: {', '.join(self.dropped)}")
        ratio = self.imbalance_ratio
        lines.append(f"  imbalance ratio: {'n/a' if math.isnan(ratio) else f'{ratio:.2f}'}")
        if self.data.skipped:
            lines.append(f"  skipped unreadable files: {len(self.data.skipped)}")
            lines += [f"    {s.path} (row {s.row}): {s.reason}" for s in self.data.skipped]
        return "\n".join(lines)

    def require_kept(self) -> BinaryTask:
        """Return self, or raise ``DataError`` with the rejection reason."""
        if not self.kept:
            raise DataError(f"{self.source}/{self.name}: task rejected: {self.reason}")
        return self


def order_classes(labels: np.ndarray) -> list[tuple[str, int]]:
    """(label, count) sorted by count desc; ties by label, numeric if all labels are numbers."""
    names, counts = np.unique(np.asarray(labels).astype(str), return_counts=True)
    try:
        keys = [float(n) for n in names]
    except ValueError:
        keys = list(names)
    order = sorted(range(len(names)), key=lambda i: (-counts[i], keys[i]))
    return [(str(names[i]), int(counts[i])) for i in order]


def _ladder(sizes: list[int], m: int) -> list[int]:
    """docs/method.md, "Binary tasks from multiclass data", step 3 (the down-sampling ladder)."""
    out: list[int] = []
    cap = m // 2
    for size in sizes:
        n = min(size, cap)
        out.append(n)
        cap = n // 2
    return out


def _verdict(n_classes: int, smallest: Subconcept, min_minority: int) -> tuple[bool, str]:
    if n_classes < 3:
        return False, f"only {n_classes} classes (needs C >= 3)"
    if smallest.n <= min_minority:
        return False, (
            f"smallest minority subconcept {smallest.name!r} keeps {smallest.n} instances "
            f"(needs > {min_minority})"
        )
    return True, (
        f"C = {n_classes} >= 3 and the smallest minority subconcept {smallest.name!r} keeps "
        f"{smallest.n} > {min_minority} instances"
    )


def make_binary_task(
    data: LabelledData, *, seed: int, max_classes: int = 8, min_minority: int = 8
) -> BinaryTask:
    """Turn a multiclass data set into a binary task with subconcepts (docs/method.md,
    "Binary tasks from multiclass data").

    The C' = min(C, ``max_classes``) largest classes are kept; the ⌊C'/2⌋ largest form the
    majority (class 0), the rest the minority (class 1). Minority subconcepts are down-sampled
    along the geometric ladder from m = size of the smallest kept majority class, drawing rows
    at random with ``seed``. The task is always returned; ``kept``/``reason`` state whether it
    passes the filter (C >= 3 and the smallest minority subconcept keeps > ``min_minority``).

    Returns:
        ``BinaryTask`` over the kept rows (N,), in their original order.
    """
    if len(data) == 0:
        raise DataError(f"{data.source}/{data.name}: no rows")
    classes = order_classes(data.labels)
    n_classes = len(classes)
    kept_classes = classes[:max_classes]
    n_major = len(kept_classes) // 2
    if n_major == 0:
        raise DataError(f"{data.source}/{data.name}: only one class {classes[0][0]!r}")
    major, minor = kept_classes[:n_major], kept_classes[n_major:]
    subconcepts = _subconcepts_of(major, minor, _ladder([n for _, n in minor], major[-1][1]))
    kept, reason = _verdict(n_classes, subconcepts[-1], min_minority)
    return _task(
        data,
        subconcepts,
        seed=seed,
        dropped=tuple(name for name, _ in classes[max_classes:]),
        n_classes=n_classes,
        kept=kept,
        reason=reason,
    )


def _subconcepts_of(
    major: list[tuple[str, int]], minor: list[tuple[str, int]], targets: list[int]
) -> tuple[Subconcept, ...]:
    """Classes 0 and 1, (label, count) in code order, as subconcepts; class 1 to ``targets``."""
    return tuple(
        [Subconcept(name, 0, n, n) for name, n in major]
        + [Subconcept(name, 1, n, t) for (name, n), t in zip(minor, targets, strict=True)]
    )


def _task(
    data: LabelledData, subconcepts: tuple[Subconcept, ...], *, seed: int, **fields
) -> BinaryTask:
    """The task of ``subconcepts``, class 1's rows drawn with ``seed`` where down-sampled."""
    rng = np.random.default_rng(seed)
    labels = np.asarray(data.labels).astype(str)
    code_of = np.full(len(labels), -1, dtype=np.int64)
    for code, sub in enumerate(subconcepts):
        members = np.flatnonzero(labels == sub.name)
        if sub.n < len(members):
            # One draw per subconcept, in ladder order, so the result depends only on the seed.
            members = rng.choice(members, size=sub.n, replace=False)
        code_of[members] = code
    rows = np.flatnonzero(code_of >= 0)
    return BinaryTask(
        data=data.subset(rows),
        index=rows,
        y=np.asarray([s.side for s in subconcepts], dtype=np.int64)[code_of[rows]],
        subconcept=code_of[rows],
        subconcepts=subconcepts,
        seed=seed,
        **fields,
    )
