"""Utility weights ``u_s`` from training subconcept counts and the true, predicted and
class-conditional instance weights (docs/method.md, "Utility weights", "Label-free scores")."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from numbers import Real
from typing import Any, Protocol

import numpy as np
import torch

from medeval._validation import ArrayLike, Interval, TypeOf, validate_params
from medeval.errors import UserError

from .metrics._checks import default_dtype
from .names import lookalike, shown


@dataclass(frozen=True)
class Utilities:
    """Per-subconcept utilities, in a fixed subconcept order.

    Attributes:
        names: ``(S,)`` subconcept names.
        sides: ``(S,)`` class of each subconcept (0 majority, 1 minority).
        counts: ``(S,)`` training instances of each subconcept.
        values: ``(S,)`` utilities ``u_s``.
    """

    names: tuple[str, ...]
    sides: np.ndarray
    counts: np.ndarray
    values: np.ndarray

    def __post_init__(self) -> None:
        for arr in (self.sides, self.counts, self.values):
            arr.setflags(write=False)

    @property
    def minority(self) -> tuple[str, ...]:
        """Minority subconcepts ordered largest → smallest training count (ties by name)."""
        return self._of_class(1)

    @property
    def majority(self) -> tuple[str, ...]:
        return self._of_class(0)

    def _of_class(self, side: int) -> tuple[str, ...]:
        idx = [i for i in range(len(self.names)) if self.sides[i] == side]
        return tuple(
            self.names[i] for i in sorted(idx, key=lambda i: (-self.counts[i], self.names[i]))
        )

    def index(self, name: str) -> int:
        try:
            return self.names.index(name)
        except ValueError:
            known = ", ".join(repr(n) for n in self.names)
            raise KeyError(
                f"unknown subconcept {shown(name)}; known subconcepts: {known}"
                + lookalike(name, self.names)
            ) from None

    def codes(self, subconcept: Any, unknown: str = "unknown subconcept {}") -> np.ndarray:
        """``(N,)`` codes into ``names`` of ``(N,)`` subconcept names; an unknown name is a
        ``UserError`` naming its row (``unknown``: the clause, ``{}`` the name)."""
        lookup = {n: i for i, n in enumerate(self.names)}
        codes = np.empty(len(subconcept), dtype=np.int64)
        for i, s in enumerate(subconcept):
            code = lookup.get(str(s))
            if code is None:
                raise UserError(
                    f"row {i}: {unknown.format(shown(str(s)))}; known: {', '.join(self.names)}"
                    + lookalike(str(s), self.names)
                )
            codes[i] = code
        return codes

    def as_dict(self) -> dict[str, dict[str, Any]]:
        """``{name: {"class", "n", "utility"}}`` — the train-sizes format plus utilities."""
        return {
            n: {"class": int(c), "n": int(k), "utility": float(u)}
            for n, c, k, u in zip(self.names, self.sides, self.counts, self.values, strict=True)
        }


def utilities(
    counts: Sequence[int] | np.ndarray,
    sides: Sequence[int] | np.ndarray,
    names: Sequence[str] | None = None,
) -> Utilities:
    """Utilities from training counts ``|s|`` and each subconcept's side.

    Args:
        counts: ``(S,)`` training instances per subconcept.
        sides: ``(S,)`` 0 for a majority subconcept, 1 for a minority subconcept.
        names: ``(S,)`` subconcept names (default ``"0"``, ``"1"``, …).

    Raises:
        ValueError: a subconcept without training instances, no majority subconcept, sides
            outside {0, 1} or mismatched lengths.
    """
    counts_a = np.asarray(counts, dtype=np.float64)
    sides_a = np.asarray(sides)
    names_t = tuple(str(n) for n in (names if names is not None else range(len(counts_a))))
    if not (counts_a.ndim == sides_a.ndim == 1 and len(counts_a) == len(sides_a) == len(names_t)):
        raise UserError(
            f"counts ({counts_a.shape}), sides ({sides_a.shape}) and names ({len(names_t)}) "
            "must be 1-D of one length"
        )
    if len(set(names_t)) != len(names_t):
        raise UserError(f"subconcept names must be unique; got {names_t}")
    if not np.isin(sides_a, (0, 1)).all():
        raise UserError(f"sides must be 0 (majority) or 1 (minority); got {sides_a.tolist()}")
    bad = ~np.isfinite(counts_a) | (counts_a < 0) | (counts_a != np.round(counts_a))
    if bad.any():
        raise UserError(f"training count of subconcept {names_t[np.argmax(bad)]!r} is not a count")
    empty = [n for n, k in zip(names_t, counts_a, strict=True) if k == 0]
    if empty:
        raise UserError(
            f"subconcept(s) {', '.join(map(repr, empty))} have no training instances; a utility "
            "needs the subconcept's training size (merge or drop it, or re-split the data)"
        )
    if not (sides_a == 0).any():
        raise UserError("no majority subconcept (side 0): utilities are relative to the largest")
    largest_majority = counts_a[sides_a == 0].max()
    values = np.where(sides_a == 1, largest_majority / counts_a, 1.0)
    return Utilities(names_t, sides_a.astype(np.int64), counts_a.astype(np.int64), values)


class _HasTrainCounts(Protocol):
    """A task with subconcepts (:class:`medeval.tasks.BinaryTask`)."""

    subconcept_names: Sequence[str]
    sides: np.ndarray

    def train_counts(self, idx: np.ndarray | None = None) -> np.ndarray: ...


def train_utilities(task: _HasTrainCounts, train: np.ndarray | None = None) -> Utilities:
    """Utilities from a task's training part: each subconcept's count among the rows
    ``train`` (positions into the task; ``None`` = every row), in the task's subconcept order."""
    return utilities(task.train_counts(train), task.sides, task.subconcept_names)


def utilities_from_train_sizes(sizes: Mapping[str, Mapping[str, int]]) -> Utilities:
    """Utilities from ``{"<name>": {"class": 0 or 1, "n": <training count>}, ...}``."""
    for name, entry in sizes.items():
        if not isinstance(entry, Mapping) or "class" not in entry or "n" not in entry:
            raise UserError(f'train size of {name!r} must be {{"class": 0 or 1, "n": <count>}}')
    entries = sizes.values()
    return utilities([e["n"] for e in entries], [e["class"] for e in entries], [*map(str, sizes)])


_U = [TypeOf(Utilities, desc="Utilities")]
_POSTERIORS = {"posteriors": [ArrayLike()], "utilities": _U}
_OPTIONS = {"columns": [ArrayLike(), None], "atol": [Interval(Real, 0, None)]}


@validate_params(
    {
        "subconcept": [ArrayLike()],
        "utilities": _U,
        "device": [TypeOf(str, torch.device, desc="a device")],
    }
)
def true_weights(
    subconcept: Sequence[str] | np.ndarray,
    utilities: Utilities,
    *,
    device: str | torch.device = "cpu",
) -> torch.Tensor:
    """``w_i = u_{s_i}`` from test subconcept names: ``(N,)`` → ``(N,)`` float64 tensor."""
    dev = torch.device(device)
    return torch.tensor(utilities.values, dtype=default_dtype(dev), device=dev)[
        torch.from_numpy(utilities.codes(subconcept))
    ]


def align_posteriors(
    posteriors: Any,
    utilities: Utilities,
    *,
    columns: Sequence[str] | None = None,
    atol: float = 1e-4,
) -> torch.Tensor:
    """Validate posteriors ``(..., N, S)`` and order their columns as ``utilities.names``.

    Column names come from a DataFrame's columns, from ``columns``, or else the columns must
    already be in ``utilities.names`` order. Rows must be non-negative, finite and sum to 1 within
    ``atol``.
    """
    if columns is None and hasattr(posteriors, "columns"):
        columns = [str(c) for c in posteriors.columns]
        posteriors = posteriors.to_numpy(dtype=np.float64)
    if isinstance(posteriors, torch.Tensor):
        q = posteriors.to(default_dtype(posteriors.device))
    else:  # an array: reordered and copied at once (one (N, S) copy, not two)
        q = np.asarray(posteriors, dtype=np.float64)
    if q.ndim < 2:
        raise UserError(f"posteriors must be (N, S); got shape {tuple(q.shape)}")
    if columns is not None:
        columns = [str(c) for c in columns]
        missing = [n for n in utilities.names if n not in columns]
        extra = [c for c in columns if c not in utilities.names]
        if missing or extra or len(columns) != len(set(columns)):
            raise UserError(
                "posterior columns do not match the subconcepts: "
                f"missing {missing}, unknown {extra}, expected exactly {list(utilities.names)}"
            )
        q = q[..., [columns.index(n) for n in utilities.names]]
    if not isinstance(q, torch.Tensor):  # a reordering made a private copy already
        q = torch.from_numpy(q) if columns is not None else torch.tensor(q)
    q = q.to(default_dtype(q.device))
    if q.shape[-1] != len(utilities.names):
        raise UserError(
            f"posteriors have {q.shape[-1]} columns but there are {len(utilities.names)} "
            "subconcepts"
        )
    bad = ~torch.isfinite(q) | (q < 0)
    if bool(bad.any()):
        row, col = torch.nonzero(bad.reshape(-1, q.shape[-1]))[0].tolist()
        raise UserError(
            f"posteriors must be finite and non-negative; row {row}, subconcept "
            f"{utilities.names[col]!r} has {q.reshape(-1, q.shape[-1])[row, col].item()!r}"
        )
    dev = (q.sum(-1) - 1).abs()
    if bool((dev > atol).any()):
        row = int(torch.nonzero(dev.reshape(-1) > atol)[0])
        raise UserError(
            f"posterior rows must sum to 1 (within {atol}); row {row} sums to "
            f"{q.sum(-1).reshape(-1)[row].item():.6g}"
        )
    return q


@validate_params({**_POSTERIORS, **_OPTIONS})
def predicted_weights(
    posteriors: Any,
    utilities: Utilities,
    *,
    columns: Sequence[str] | None = None,
    atol: float = 1e-4,
) -> torch.Tensor:
    """Expected utility ``a_x = Σ_s q_s(x) u_s``: posteriors ``(..., N, S)`` → ``(..., N)``.

    Soft on purpose: an instance split between a large and a small subconcept gets an
    intermediate weight (docs/method.md, "Utility weights").
    """
    return expected_utility(
        align_posteriors(posteriors, utilities, columns=columns, atol=atol), utilities
    )


def expected_utility(q: torch.Tensor, utilities: Utilities) -> torch.Tensor:
    """``Σ_s q_s u_s`` of posteriors already checked by :func:`align_posteriors` ``(..., N, S)``
    (callers that need several weightings of one posterior matrix check it once)."""
    return q @ torch.tensor(utilities.values, dtype=q.dtype, device=q.device)


@dataclass(frozen=True)
class ClassPosteriors:
    """Posteriors renormalised over the subconcepts of each instance's own class (docs/method.md,
    "Label-free scores").

    Attributes:
        q: ``(..., N, S)`` ``q̃_s(x) = q_s(x) [s ∈ S_y] / Σ_{s' ∈ S_y} q_{s'}(x)``; zero outside
            the instance's class. Rows whose in-class mass is 0 get the uniform distribution over
            ``S_y``, so their expected utility is the mean utility of ``S_y``.
        fallback: ``(..., N)`` bool, the rows that had zero in-class mass.
    """

    q: torch.Tensor
    fallback: torch.Tensor


def class_posteriors(
    posteriors: Any,
    utilities: Utilities,
    y_true: Any,
    *,
    columns: Sequence[str] | None = None,
    atol: float = 1e-4,
) -> ClassPosteriors:
    """Renormalise posteriors ``(..., N, S)`` over the subconcepts of each row's class ``y``.

    Args:
        posteriors: subconcept model posteriors, validated as in :func:`align_posteriors`.
        utilities: their ``sides`` say which class each subconcept belongs to.
        y_true: ``(N,)`` or ``(..., N)`` true classes in {0, 1}.
    """
    q = align_posteriors(posteriors, utilities, columns=columns, atol=atol)
    return renormalise_within_class(q, utilities, y_true)


def renormalise_within_class(q: torch.Tensor, utilities: Utilities, y_true: Any) -> ClassPosteriors:
    """:func:`class_posteriors` of posteriors already checked by :func:`align_posteriors`
    ``(..., N, S)`` (not checked again; ``y_true`` is)."""
    y = y_true if isinstance(y_true, torch.Tensor) else torch.tensor(np.array(y_true))
    y = y.to(device=q.device)
    if y.shape != q.shape[:-1]:
        raise UserError(
            f"y_true has shape {tuple(y.shape)} but the posteriors have {tuple(q.shape[:-1])} rows"
        )
    if not bool(((y == 0) | (y == 1)).all()):
        raise UserError("y_true must contain only 0 and 1")
    sides = torch.tensor(np.array(utilities.sides), device=q.device)
    member = sides == y.to(sides.dtype).unsqueeze(-1)  # (..., N, S) bool: s ∈ S_y
    q_class = q * member  # the only (N, S) float copy: every later step works in place
    mass = q_class.sum(-1, keepdim=True)
    fallback = mass.squeeze(-1) <= 0
    q_class /= mass.clamp_min_(1e-300)
    if bool(fallback.any()):  # uniform over S_y where the class has no posterior mass
        rows = member[fallback].to(q_class.dtype)
        q_class[fallback] = rows / rows.sum(-1, keepdim=True)
    return ClassPosteriors(q_class, fallback)


@validate_params({**_POSTERIORS, "y_true": [ArrayLike()], **_OPTIONS})
def class_conditional_weights(
    posteriors: Any,
    utilities: Utilities,
    y_true: Any,
    *,
    columns: Sequence[str] | None = None,
    atol: float = 1e-4,
) -> torch.Tensor:
    """Expected utility given x and the known class: ``a_x = E[u_s | x, y]``, ``(..., N)``.

    ``a_x = Σ_{s ∈ S_y} q_s(x) u_s / Σ_{s ∈ S_y} q_s(x)`` (docs/method.md, "Label-free scores").
    Majority instances get exactly 1, so only the minority recall is estimated; a row with no
    posterior mass on its own class gets the mean utility of that class's subconcepts (see
    :func:`class_posteriors`, whose ``fallback`` counts such rows).
    """
    cp = class_posteriors(posteriors, utilities, y_true, columns=columns, atol=atol)
    return expected_class_utility(cp, utilities, y_true)


def expected_class_utility(cp: ClassPosteriors, utilities: Utilities, y_true: Any) -> torch.Tensor:
    """``Σ_s q̃_s(x) u_s`` from class-renormalised posteriors, ``(..., N)``.

    A class whose subconcepts share one utility (the majority: all 1) gets exactly that utility,
    not a sum of renormalised posteriors that equals it only up to rounding.
    """
    a = expected_utility(cp.q, utilities)
    y = y_true if isinstance(y_true, torch.Tensor) else torch.tensor(np.array(y_true))
    y = y.to(a.device)
    for c in (0, 1):
        vals = utilities.values[utilities.sides == c]
        if len(vals) and np.all(vals == vals[0]):
            a = torch.where(y == c, a.new_tensor(float(vals[0])), a)
    return a
