"""What an evaluation can compute from its inputs (:class:`_Plan`): the weightings, the
evaluation subsets (docs/method.md, "Evaluation subsets and analyses") and the subconcepts of the
per-subconcept results."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from medeval.errors import UserError
from medeval.evaluation.checks import codes
from medeval.weights import (
    Utilities,
    align_posteriors,
    expected_class_utility,
    expected_utility,
    renormalise_within_class,
)


@dataclass
class _Plan:
    """What can be computed from the given inputs."""

    weights: dict[str, np.ndarray]  # weighting key → (N,) instance weights
    subsets: dict[str, np.ndarray]  # subset name → (N,) bool
    subset_subconcept: dict[str, str | None]
    sc_names: tuple[str, ...]  # subconcepts for per-subconcept results
    sc_codes: np.ndarray | None  # (N,) codes into sc_names
    sc_side: dict[str, int]
    unavailable: dict[str, str]
    q_class: np.ndarray | None = None  # (N, S) class-renormalised posteriors, sc_names order
    n_fallback: int = 0  # rows with no posterior mass on their own class
    groups: np.ndarray | None = None  # (N,) cluster codes, for the per-subconcept intervals


def _sides_of(utilities: Utilities) -> dict[str, int]:
    """``{subconcept: class}`` from the utilities."""
    return {nm: int(c) for nm, c in zip(utilities.names, utilities.sides, strict=True)}


def _true_subconcepts(
    y: np.ndarray, subconcept: Sequence[str], utilities: Utilities | None
) -> tuple[tuple[str, ...], np.ndarray, dict[str, int]]:
    """Names ``(S,)``, codes ``(N,)`` and classes, checked against the sizes and ``y``."""
    uniq, inverse = _name_codes(subconcept, len(y))  # vectorised name → code lookup
    if utilities is not None:
        unknown = [i for i, nm in enumerate(uniq) if nm not in set(utilities.names)]
        if unknown:
            i = int(np.flatnonzero(np.isin(inverse, unknown))[0])
            raise UserError(
                f"subconcept at index {i} is {str(uniq[inverse[i]])!r}, which has no training "
                f"size; known subconcepts: {', '.join(utilities.names)}"
            )
        sc_names = utilities.names
        sc_side = _sides_of(utilities)
    else:
        sc_names = tuple(str(nm) for nm in uniq)
        sc_side = {}
        for k, nm in enumerate(sc_names):
            sides = set(y[inverse == k].tolist())
            if len(sides) > 1:
                raise UserError(f"subconcept {nm!r} holds instances of both classes")
            sc_side[nm] = sides.pop()
    lookup = {nm: i for i, nm in enumerate(sc_names)}
    sc_codes = np.array([lookup[str(nm)] for nm in uniq], dtype=np.int64)[inverse]
    side_of = np.array([sc_side[nm] for nm in sc_names])[sc_codes]
    wrong = np.flatnonzero(side_of != y)
    if len(wrong):
        i = int(wrong[0])
        raise UserError(
            f"index {i}: subconcept {str(uniq[inverse[i]])!r} belongs to class {side_of[i]} "
            f"but y_true is {y[i]}"
        )
    return sc_names, sc_codes, sc_side


def _posterior_weights(
    y: np.ndarray, posteriors: Any, utilities: Utilities
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """Predicted weights, class posteriors ``(N, S)``, class-conditional weights, fallbacks."""
    n = len(y)
    q = align_posteriors(posteriors, utilities)  # validated once, in order
    a = expected_utility(q, utilities)  # q is checked once; the weightings below reuse it
    if a.shape != (n,):
        raise UserError(f"posteriors must have one row per instance ({n}); got {a.shape}")
    cp = renormalise_within_class(q, utilities, y)
    q_class = cp.q.cpu().numpy()
    c = expected_class_utility(cp, utilities, y).cpu().numpy()
    return a.cpu().numpy(), q_class, c, int(cp.fallback.sum())


def _subsets(
    y: np.ndarray,
    sc_names: tuple[str, ...],
    sc_codes: np.ndarray | None,
    sc_side: dict[str, int],
    utilities: Utilities | None,
) -> tuple[dict[str, np.ndarray], dict[str, str | None]]:
    """Subset masks ``{name: (N,) bool}`` and each subset's minority subconcept."""
    # Subsets (docs/method.md, "Evaluation subsets and analyses"): full, and sub_i = majority ∪
    # minority subconcept i, largest first.
    subsets = {"full": np.ones(len(y), dtype=bool)}
    subset_sc: dict[str, str | None] = {"full": None}
    if sc_codes is not None:
        minority = [nm for nm in sc_names if sc_side[nm] == 1]
        if utilities is not None:
            minority = list(utilities.minority)
        else:  # no training sizes: order by test size
            minority.sort(key=lambda nm: (-int((sc_codes == sc_names.index(nm)).sum()), nm))
        for i, nm in enumerate(minority, start=1):
            subsets[f"sub_{i}"] = (y == 0) | (sc_codes == sc_names.index(nm))
            subset_sc[f"sub_{i}"] = nm
    return subsets, subset_sc


def _plan(
    y: np.ndarray,
    subconcept: Sequence[str] | None,
    posteriors: Any,
    utilities: Utilities | None,
    groups: Any = None,
) -> _Plan:
    """What can be computed: instance weights, subsets, subconcepts and clusters, checked."""
    weights = {"": np.ones(len(y))}
    unavailable: dict[str, str] = {}
    sc_codes, sc_names, sc_side = None, (), {}
    if subconcept is not None:
        sc_names, sc_codes, sc_side = _true_subconcepts(y, subconcept, utilities)
    no_sizes = "no training subconcept sizes (train sizes), so no utilities"
    if utilities is None:
        unavailable["w"] = unavailable["p"] = no_sizes
    if subconcept is None:
        unavailable.setdefault("w", "no true test subconcept labels (column 'subconcept')")
    elif utilities is not None:
        weights["w"] = utilities.values[sc_codes]  # sc_names are the utilities' names
    q_class, n_fallback = None, 0
    if posteriors is None:
        unavailable.setdefault("p", "no subconcept posteriors (columns 'q_<subconcept>')")
    elif utilities is not None:
        weights["p"], q_class, weights["c"], n_fallback = _posterior_weights(
            y, posteriors, utilities
        )
        if sc_codes is None:  # label-free per-subconcept results still need the names
            sc_names = utilities.names
            sc_side = _sides_of(utilities)
    if "p" in unavailable:
        unavailable["c"] = unavailable["p"]
    subsets, subset_sc = _subsets(y, sc_names, sc_codes, sc_side, utilities)
    plan = _Plan(
        weights, subsets, subset_sc, sc_names, sc_codes, sc_side, unavailable, q_class, n_fallback
    )
    plan.groups = None if groups is None else codes(groups, len(y), "groups")
    return plan


def _name_codes(subconcept: Any, n: int) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct names ``(K,)`` and each instance's code ``(N,)``."""
    if isinstance(subconcept, pd.Series) and isinstance(subconcept.dtype, pd.CategoricalDtype):
        subconcept = subconcept.array
    categorical = isinstance(subconcept, pd.Categorical)
    sc = subconcept if categorical else np.asarray(subconcept).astype(str)
    if sc.shape != (n,):
        raise UserError(f"subconcept must have one entry per instance ({n}); got {sc.shape}")
    if categorical:
        codes = np.asarray(subconcept.codes)
        if (codes < 0).any():
            raise UserError(f"subconcept is missing at index {int(np.argmax(codes < 0))}")
        cats = np.asarray(subconcept.categories).astype(str)
        uniq, remap = np.unique(cats, return_inverse=True)  # duplicates after str() merge
        used = np.zeros(len(uniq), dtype=bool)
        used[remap[np.unique(codes)]] = True
        keep = np.cumsum(used) - 1  # drop categories no instance uses, like np.unique would
        return uniq[used], keep[remap][codes]
    return np.unique(sc, return_inverse=True)


def _aliases(subset_names: list[str]) -> list[tuple[str, int]]:
    """``(row label, subset index)``: every subset, then ``largest`` and ``smallest``."""
    aliases = [(k, i) for i, k in enumerate(subset_names)]
    if subset_names[1:]:
        aliases += [("largest", 1), ("smallest", len(subset_names) - 1)]
    return aliases
