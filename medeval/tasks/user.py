"""The user's own binary task (docs/method.md, "The user's own task"): class 1 the user's labels,
class 0 the rest or a second list; :func:`make_task` is the one entry every tool calls."""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from medeval.datasets.base import DataError, LabelledData, first_named
from medeval.errors import UserError
from medeval.names import shown, visible_key
from medeval.tasks.binary import (
    BinaryTask,
    Subconcept,
    _ladder,
    _subconcepts_of,
    _task,
    make_binary_task,
    order_classes,
)

__all__ = [
    "SmallSubconceptWarning",
    "TaskSpec",
    "TaskSpecError",
    "make_task",
    "make_user_task",
    "split_labels",
]

#: Where each list of a task is given: the command-line flag and the config key.
WHERE = {
    "positive": "--positive / task.positive",
    "negative": "--negative / task.negative",
    "drop": "--drop / task.drop",
}


class TaskSpecError(UserError, ValueError):
    """A task definition that makes no task (a label in two lists, an empty list...)."""


class SmallSubconceptWarning(UserWarning):
    """A subconcept of the user's task with fewer rows than the paper's ladder asks
    (docs/method.md, "Binary tasks from multiclass data", step 4)."""


def split_labels(text: str | Iterable[Any] | None) -> tuple[str, ...] | None:
    """``"MEL, BCC"`` or ``["MEL", "BCC"]`` → ``("MEL", "BCC")``; ``None`` stays ``None``."""
    if text is None:
        return None
    items = text.split(",") if isinstance(text, str) else [str(v) for v in text]
    return tuple(item.strip() for item in items if item.strip())


@dataclass(frozen=True)
class TaskSpec:
    """The user's task: labels of class 1, optionally of class 0, labels dropped.

    Attributes:
        positive: labels of class 1 (the positive class, e.g. the malignant diagnoses).
        negative: labels of class 0; ``None`` = every label not positive and not dropped.
        drop: labels whose rows are left out.
        downsample: down-sample class 1's subconcepts along the paper's ladder (docs/method.md,
            "Binary tasks from multiclass data", step 3); default off, every row kept.
    """

    positive: tuple[str, ...]
    negative: tuple[str, ...] | None = None
    drop: tuple[str, ...] = ()
    downsample: bool = False

    def __post_init__(self) -> None:
        lists = {"positive": self.positive, "negative": self.negative or (), "drop": self.drop}
        if not self.positive:
            raise TaskSpecError(f"{WHERE['positive']}: no label given for class 1")
        if self.negative is not None and not self.negative:
            raise TaskSpecError(f"{WHERE['negative']}: no label given for class 0")
        seen: dict[str, str] = {}
        for which, labels in lists.items():
            for label in labels:
                if label in seen:
                    first = seen[label]
                    where = WHERE[which] if first == which else f"{WHERE[first]} and {WHERE[which]}"
                    raise TaskSpecError(f"label {label!r} is given twice: in {where}")
                seen[label] = which

    @classmethod
    def build(
        cls,
        positive: str | Iterable[Any] | None,
        negative: str | Iterable[Any] | None = None,
        drop: str | Iterable[Any] | None = None,
        *,
        downsample: bool = False,
    ) -> TaskSpec | None:
        """A spec from comma-separated texts or lists; ``None`` without ``positive`` (the
        paper's ladder), after refusing the options that need it."""
        pos, neg, dropped = split_labels(positive), split_labels(negative), split_labels(drop)
        if pos is None:
            given = [WHERE[w] for w, v in (("negative", neg), ("drop", dropped)) if v]
            given += ["--downsample / task.downsample"] * bool(downsample)
            if given:
                raise TaskSpecError(
                    f"{given[0]} is given without --positive / task.positive: the user's task "
                    "starts with the labels of class 1 (without it, the paper's ladder is built)"
                )
            return None
        return cls(pos, neg, dropped or (), bool(downsample))

    def to_dict(self) -> dict[str, Any]:
        return {
            "positive": list(self.positive),
            "negative": None if self.negative is None else list(self.negative),
            "drop": list(self.drop),
            "downsample": self.downsample,
        }

    @classmethod
    def from_dict(cls, record: Mapping[str, Any] | None) -> TaskSpec | None:
        if not record:
            return None
        return cls.build(
            record.get("positive"),
            record.get("negative"),
            record.get("drop"),
            downsample=bool(record.get("downsample", False)),
        )


def make_task(
    data: LabelledData, spec: TaskSpec | None, *, seed: int, min_rows: int = 8
) -> BinaryTask:
    """The user's task of ``data`` (:func:`make_user_task`), or the paper's ladder without
    ``spec``."""
    if spec is None:
        return make_binary_task(data, seed=seed, min_minority=min_rows)
    return make_user_task(data, spec, seed=seed, min_rows=min_rows)


def make_user_task(
    data: LabelledData, spec: TaskSpec, *, seed: int = 0, min_rows: int = 8
) -> BinaryTask:
    """Build the user's binary task (docs/method.md, "The user's own task").

    Subconcepts are the labels of each class, in the usual code order (class 0 by size, then
    class 1 by size, largest first; ties by label). ``seed`` draws the rows only with
    ``spec.downsample``.

    Raises:
        DataError: a label of ``spec`` the data do not hold, a label of the data in no list
            when class 0 is listed, a class without rows, or a subconcept the down-sampling
            leaves without rows; the message names the label.

    Warns:
        SmallSubconceptWarning: naming each subconcept with fewer than ``min_rows`` rows.
    """
    where = f"{data.source}/{data.name}"
    if len(data) == 0:
        raise DataError(f"{where}: no rows")
    counts = dict(order_classes(data.labels))
    _check_known(spec, counts, where)
    dropped = set(spec.drop)
    negative = spec.negative
    if negative is None:
        negative = tuple(lab for lab in counts if lab not in dropped and lab not in spec.positive)
    else:
        _check_listed(spec, counts, where)
    if not negative:
        raise DataError(
            f"{where}: class 0 has no rows: every label is in {WHERE['positive']}"
            + (f" or {WHERE['drop']}" if dropped else "")
            + f" (labels: {_labels_text(counts)})"
        )
    subconcepts = _subconcepts(counts, negative, spec, where)
    small = [s for s in subconcepts if s.n < min_rows]
    if small:
        warnings.warn(
            f"{where}: {_small_text(small, min_rows)}", SmallSubconceptWarning, stacklevel=2
        )
    return _task(
        data,
        subconcepts,
        seed=seed,
        dropped=tuple(lab for lab in counts if lab in dropped),
        n_classes=len(counts),
        kept=True,
        reason=_reason(spec, small, min_rows),
        definition=spec.to_dict(),
    )


def _labels_text(counts: Mapping[str, int]) -> str:
    return first_named(list(counts.items()), lambda item: f"{item[0]} ({item[1]})", most=30)


def _check_known(spec: TaskSpec, counts: Mapping[str, int], where: str) -> None:
    """Listed labels are the data's; none is spelled like an unlisted one (``mel``, ``MEL``)."""
    listed = {lab: w for w in ("positive", "negative", "drop") for lab in getattr(spec, w) or ()}
    for label, which in listed.items():
        alike = [lab for lab in counts if _folded(lab) == _folded(label) and lab not in listed]
        if label not in counts:
            raise DataError(
                f"{where}: label {shown(label)} in {WHERE[which]} is not a label of the data "
                f"(labels and rows: {_labels_text(counts)})"
            )
        if alike:
            raise DataError(
                f"{where}: label {shown(label)} in {WHERE[which]} and label {shown(alike[0])} "
                f"({counts[alike[0]]} rows) of the data differ only in spelling (case, invisible "
                "characters or Unicode form); list both, or give the data one spelling"
            )


def _folded(label: str) -> str:
    return visible_key(label).casefold()


def _check_listed(spec: TaskSpec, counts: Mapping[str, int], where: str) -> None:
    listed = {*spec.positive, *(spec.negative or ()), *spec.drop}
    others = [lab for lab in counts if lab not in listed]
    if others:
        named = first_named(others, lambda lab: f"{lab!r} ({counts[lab]} rows)", most=10)
        subject = f"labels {named} are" if len(others) > 1 else f"label {named} is"
        raise DataError(
            f"{where}: {subject} in neither {WHERE['positive']} nor {WHERE['negative']}; "
            f"list each in one of them or leave its rows out with {WHERE['drop']}"
        )


def _subconcepts(
    counts: Mapping[str, int], negative: tuple[str, ...], spec: TaskSpec, where: str
) -> tuple[Subconcept, ...]:
    """Class 0 then class 1 by size; class 1 down-sampled along the ladder when asked."""
    major = [(lab, n) for lab, n in counts.items() if lab in negative]
    minor = [(lab, n) for lab, n in counts.items() if lab in spec.positive]
    targets = [n for _, n in minor]
    if spec.downsample:
        targets = _ladder(targets, major[-1][1])
        for (lab, n), t in zip(minor, targets, strict=True):
            if t == 0:
                raise DataError(
                    f"{where}: the down-sampling (task.downsample) leaves subconcept {lab!r} "
                    f"({n} rows) no row; drop the down-sampling or the label"
                )
    return _subconcepts_of(major, minor, targets)


def _reason(spec: TaskSpec, small: list[Subconcept], min_rows: int) -> str:
    how = (
        "class 1 down-sampled along the paper's ladder"
        if spec.downsample
        else "every row of the listed labels kept"
    )
    text = f"the user's task: {how}, not the paper's filter"
    return text + (f"; {_small_text(small, min_rows)}" if small else "")


def _small_text(small: list[Subconcept], min_rows: int) -> str:
    named = ", ".join(f"{s.name!r} has {s.n}" for s in small)
    return (
        f"subconcept(s) with fewer than {min_rows} rows: {named} (their recall and utility "
        "rest on very few rows: read them with their intervals)"
    )
