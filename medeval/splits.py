"""Reproducible splits of a binary task (docs/method.md, "Protocols"): 5×2 CV, patient splits
and their CSV manifest."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from sklearn.model_selection import RepeatedStratifiedKFold, StratifiedGroupKFold

from medeval.datasets.base import DataError
from medeval.evaluation.checks import missing_ids, own_groups
from medeval.io import atomic
from medeval.tasks.binary import BinaryTask

__all__ = [
    "PARTS",
    "Split",
    "check_no_group_leak",
    "cv_5x2",
    "derive_seed",
    "make_splits",
    "patient_splits",
    "presplit_split",
    "read_manifest",
    "write_manifest",
]

PARTS = ("train", "validation", "calibration", "test")
MANIFEST_COLUMNS = [
    "dataset",
    "task_seed",
    "scheme",
    "split_seed",
    "repeat",
    "fold",
    "index",
    "id",
    "group",
    "subconcept",
    "part",
]


@dataclass(frozen=True)
class Split:
    """One split of a task into parts.

    Attributes:
        scheme: ``"cv5x2"`` or ``"patient"``.
        seed: the split seed.
        parts: part name → sorted row positions into the task (disjoint, covering all rows).
        repeat, fold: position in the 5×2 scheme (``-1`` for patient splits).
    """

    scheme: str
    seed: int
    parts: dict[str, np.ndarray]
    repeat: int = -1
    fold: int = -1

    def __getitem__(self, part: str) -> np.ndarray:
        return self.parts[part]


def derive_seed(base: int, *parts: Any) -> int:
    """A 31-bit seed from ``base`` and labels (data set, fold, role): independent of order."""
    text = "\x1f".join([str(int(base)), *map(str, parts)])
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:4], "little") & 0x7FFFFFFF


def cv_5x2(task: BinaryTask, seed: int) -> list[Split]:
    """5×2 cross-validation stratified on the subconcept code; with groups (scheme
    ``"cv5x2-group"``) no group is on both sides of a fold.

    Returns:
        10 splits with parts ``train`` and ``test`` (row positions).
    """
    n_repeats, n_splits = 5, 2
    counts = task.train_counts()
    if np.any(counts < n_splits):
        small = task.subconcept_names[int(np.argmin(counts))]
        raise DataError(
            f"{task.source}/{task.name}: subconcept {small!r} has {counts.min()} rows, "
            f"fewer than the {n_splits} folds"
        )
    scheme = "cv5x2-group" if task.has_groups else "cv5x2"
    if task.has_groups:
        codes = group_codes_of(task.groups)
        if codes.max() + 1 < n_splits:
            raise DataError(_too_few_groups(task, codes, n_splits, "a fold would get no row"))
        folds = [
            fold
            for r in range(n_repeats)
            for fold in StratifiedGroupKFold(
                n_splits=n_splits, shuffle=True, random_state=derive_seed(seed, r)
            ).split(task.y, task.subconcept, codes)
        ]
    else:
        cv = RepeatedStratifiedKFold(n_splits=n_splits, n_repeats=n_repeats, random_state=seed)
        folds = cv.split(np.zeros(len(task)), task.subconcept)
    return [
        Split(
            scheme, seed, {"train": np.sort(tr), "test": np.sort(te)}, k // n_splits, k % n_splits
        )
        for k, (tr, te) in enumerate(folds)
    ]


def patient_splits(
    task: BinaryTask,
    seeds: Iterable[int] = range(10),
    fractions: tuple[float, ...] = (0.6, 0.15, 0.1, 0.15),
) -> list[Split]:
    """Group-level splits, one per seed, balanced over subconcepts as far as groups allow.

    Groups (``task.groups``; each row its own group when the source has none) are visited
    largest first, ties in random order (the seed), and each goes to the part whose
    per-subconcept counts it moves closest to the targets ``fraction × subconcept size``
    (smallest increase of Σ_k (count − target)² / target). No group is ever split.

    Returns:
        One ``Split`` per seed with the parts :data:`PARTS`.
    """
    fractions_arr = np.asarray(fractions, dtype=np.float64)
    if len(fractions_arr) != len(PARTS) or np.any(fractions_arr <= 0):
        raise ValueError("fractions must be positive, one per part")
    fractions_arr = fractions_arr / fractions_arr.sum()
    group_codes = group_codes_of(task.groups)
    table = np.zeros((group_codes.max() + 1, len(task.subconcepts)), dtype=np.int64)
    np.add.at(table, (group_codes, task.subconcept), 1)  # (G, K) rows of each subconcept
    targets = np.outer(fractions_arr, task.train_counts()).astype(np.float64)
    out = []
    for seed in seeds:
        part_of_group = _assign_groups(table, targets, np.random.default_rng(seed))
        part_of_row = part_of_group[group_codes]
        empty = [p for j, p in enumerate(PARTS) if not np.any(part_of_group == j)]
        if empty:
            what = f"part {empty[0]!r} gets no row (split seed {seed})"
            raise DataError(_too_few_groups(task, group_codes, len(PARTS), what))
        rows = {p: np.flatnonzero(part_of_row == j) for j, p in enumerate(PARTS)}
        out.append(Split("patient", int(seed), rows))
    return out


def _too_few_groups(task: BinaryTask, group_codes: np.ndarray, n_parts: int, what: str) -> str:
    """Why a task's groups cannot fill the ``n_parts`` parts of a split."""
    column = task.data.meta.get("group_column")
    by = f"column {column!r}" if column else "their group ids"
    return (
        f"{task.source}/{task.name}: the {len(task)} rows form {group_codes.max() + 1} "
        f"group(s) by {by}, too few to fill the {n_parts} parts of the split: {what} (a group's "
        "rows never go to two parts); give more groups, e.g. a column that tells the patients "
        "apart"
    )


def group_codes_of(groups: Any) -> np.ndarray:
    """``(N,)`` group codes in sorted order of the ids; an empty or missing id is a group of its
    own (:func:`medeval.evaluation.checks.own_groups`)."""
    codes, _names = pd.factorize(pd.Series(groups), sort=True)
    return own_groups(codes, missing_ids(groups))


def _assign_groups(table: np.ndarray, targets: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """(G,) part index per group, greedy: largest groups first, ties shuffled by ``rng``."""
    sizes = table.sum(axis=1)
    order = rng.permutation(len(sizes))
    order = order[np.argsort(-sizes[order], kind="stable")]
    safe_targets = np.maximum(targets, 1e-9)
    counts = np.zeros_like(targets)
    out = np.empty(len(sizes), dtype=np.int64)
    # Most groups hold one subconcept; handle each group's non-zero columns only.
    nz_rows, nz_cols = np.nonzero(table[order])
    starts = np.searchsorted(nz_rows, np.arange(len(order) + 1))
    for pos, g in enumerate(order):
        cols = nz_cols[starts[pos] : starts[pos + 1]]
        add = table[g, cols]
        cost = ((2 * (counts[:, cols] - targets[:, cols]) + add) * add / safe_targets[:, cols]).sum(
            axis=1
        )
        best = int(np.argmin(cost))
        counts[best, cols] += add
        out[g] = best
    return out


def presplit_split(task: BinaryTask) -> Split:
    """The distributor's own train / val / test split (``data.presplit``) as a ``Split``.

    Part names follow :data:`PARTS` (``val`` → ``validation``). Groups are not checked here;
    call :func:`check_no_group_leak` when the source has groups.
    """
    presplit = task.data.presplit
    if presplit is None:
        raise DataError(
            f"--scheme presplit: {task.source}/{task.name} has no distributed split (the "
            "folder and medmnist sources keep their own train/val/test parts with --parts "
            "respect)"
        )
    names = {"train": "train", "val": "validation", "validation": "validation", "test": "test"}
    unknown = sorted(set(presplit) - set(names))
    if unknown:
        raise DataError(
            f"--scheme presplit: {task.source}/{task.name}: unknown distributed part {unknown[0]!r}"
        )
    mapped = np.asarray([names[p] for p in presplit])
    parts = {p: np.flatnonzero(mapped == p) for p in PARTS if np.any(mapped == p)}
    return Split("presplit", -1, parts)


def check_no_group_leak(task: BinaryTask, split: Split) -> None:
    """Raise ``DataError`` naming the first group found in two parts of ``split``."""
    codes = group_codes_of(task.groups)  # an unknown patient is nobody else: no leak
    names = np.asarray(task.groups, dtype=object)[np.unique(codes, return_index=True)[1]]
    owner = np.full(len(names), -1, dtype=np.int64)
    part_names = list(split.parts)
    for j, idx in enumerate(split.parts.values()):
        present = np.unique(codes[idx])
        clash = present[owner[present] >= 0]
        if len(clash):
            g = clash[0]
            raise DataError(
                f"{task.source}/{task.name}: group {str(names[g])!r} is in both "
                f"{part_names[owner[g]]!r} and {part_names[j]!r} "
                f"({split.scheme} seed {split.seed})"
            )
        owner[present] = j


def make_splits(
    task: BinaryTask, scheme: str = "auto", *, split_seed: int = 0, n_seeds: int = 10
) -> tuple[str, list[Split], list[int]]:
    """Splits of ``task`` by scheme, checked for group leaks.

    Args:
        scheme: ``"cv5x2"`` (seed ``split_seed``), ``"patient"`` (seeds ``split_seed`` …
            ``split_seed + n_seeds - 1``), ``"presplit"`` (the source's own parts) or
            ``"auto"``: cv5x2 for tabular data, patient-level otherwise.

    Returns:
        The scheme used, the splits and their seeds.
    """
    if scheme == "auto":
        scheme = "cv5x2" if task.data.kind == "tabular" else "patient"
    if scheme == "cv5x2":
        splits, seeds = cv_5x2(task, split_seed), [split_seed]
    elif scheme == "presplit":
        splits, seeds = [presplit_split(task)], []
    elif scheme == "patient":
        seeds = list(range(split_seed, split_seed + n_seeds))
        splits = patient_splits(task, seeds=seeds)
    else:
        raise ValueError(f"unknown split scheme {scheme!r}")
    for split in splits:
        check_no_group_leak(task, split)
    return scheme, splits, seeds


def write_manifest(path: str | Path, task: BinaryTask, splits: list[Split]) -> Path:
    """Write ``splits`` as a long CSV (one line per split and row), atomically.

    Columns: dataset, task_seed, scheme, split_seed, repeat, fold, index (row position in the
    task), id, group, subconcept, part.
    """
    path = Path(path)
    ids = np.asarray(task.ids).astype(str)
    groups = np.asarray(task.groups).astype(str)
    names = np.asarray(task.subconcept_names, dtype=object)
    frames = [
        pd.DataFrame(
            {
                "dataset": task.name,
                "task_seed": task.seed,
                "scheme": split.scheme,
                "split_seed": split.seed,
                "repeat": split.repeat,
                "fold": split.fold,
                "index": idx,
                "id": ids[idx],
                "group": groups[idx],
                "subconcept": names[task.subconcept[idx]],
                "part": part,
            }
        )
        for split in splits
        for part, idx in split.parts.items()
    ]
    frame = pd.concat(frames, ignore_index=True)[MANIFEST_COLUMNS]
    compression = "gzip" if path.suffix == ".gz" else None
    buf = io.BytesIO()
    frame.to_csv(buf, index=False, compression=compression)
    return atomic.write_bytes(path, buf.getvalue())


def read_manifest(path: str | Path, task: BinaryTask | None = None) -> list[Split]:
    """Read a manifest written by :func:`write_manifest`.

    With ``task``, checks that the manifest was made for it (same ids at the same positions)
    and raises ``DataError`` naming the first mismatching row otherwise.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no such manifest")
    frame = pd.read_csv(path, dtype={"id": str, "group": str, "subconcept": str})
    missing = [c for c in MANIFEST_COLUMNS if c not in frame.columns]
    if missing:
        raise DataError(f"{path}: missing column {missing[0]!r}")
    if task is not None:
        _check_manifest_matches(frame, task, path)
    out = []
    keys = ["scheme", "split_seed", "repeat", "fold"]
    for (scheme, seed, repeat, fold), block in frame.groupby(keys, sort=False):
        parts = {
            str(part): np.sort(rows["index"].to_numpy(dtype=np.intp))
            for part, rows in block.groupby("part", sort=False)
        }
        out.append(Split(str(scheme), int(seed), parts, repeat=int(repeat), fold=int(fold)))
    return out


def _check_manifest_matches(frame: pd.DataFrame, task: BinaryTask, path: Path) -> None:
    index = frame["index"].to_numpy()
    if index.min() < 0 or index.max() >= len(task):
        row = int(np.flatnonzero((index < 0) | (index >= len(task)))[0])
        raise DataError(
            f"{path}: row {row}: index {index[row]} outside the task's {len(task)} rows"
        )
    expected = np.asarray(task.ids).astype(str)[index]
    bad = np.flatnonzero(expected != frame["id"].astype(str).to_numpy())
    if len(bad):
        row = int(bad[0])
        raise DataError(
            f"{path}: row {row}: id {frame['id'].iloc[row]!r} does not match the task's "
            f"{str(expected[row])!r} at index {index[row]} "
            "(manifest made for another task or seed?)"
        )
