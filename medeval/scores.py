"""The score vocabulary (docs/method.md, "Label-free scores"): a weighting prefix plus a family
(``"cBA"``); every module takes score names from here; a new weighting is one row of WEIGHTINGS."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from medeval.errors import UserError

__all__ = [
    "ALL_SCORES",
    "BY_FAMILY",
    "FAMILIES",
    "INSTANCE_SCORES",
    "LABEL_FREE_RECTIFIED",
    "LABEL_FREE_SCORES",
    "PAPER_SCORES",
    "RECOMMENDED",
    "RECOMMENDED_RECTIFIED",
    "REFERENCE_SCORES",
    "SCORED_WEIGHTINGS",
    "SCORE_DESCRIPTIONS",
    "TRUE_ONLY_SCORES",
    "WEAK_WITHIN_CLASS_BA",
    "WEIGHTINGS",
    "Weighting",
    "instance_score",
    "labels_from_scores",
    "parse_score",
    "prefix_key",
    "score_key",
    "split_score",
    "weighting",
]

#: Score families, in table order.
FAMILIES = ("BA", "F1", "AUC")


@dataclass(frozen=True)
class Weighting:
    """One weighting of the instances: what its prefix means and what it needs.

    Attributes:
        prefix: the score-name prefix (``""`` for unweighted).
        name: short name in the analyses' tables (``"true"``, ``"class-conditional"``, ...).
        description: what the weights are, in words.
        legend: legend text of figures and reports; ``{f}`` stands for the family.
        needs_subconcept: needs the true test subconcepts (an oracle, not label-free).
        needs_posteriors: needs a subconcept model's posteriors.
        needs_reference: needs reference rows (held-out rows with known subconcept).
        paper: one of the paper's three weightings.
        scored: computed by :func:`medeval.evaluate_predictions` (in :data:`ALL_SCORES`);
            ``False`` for a name the analyses know from measured estimators only.
    """

    prefix: str
    name: str
    description: str
    legend: str
    needs_subconcept: bool = False
    needs_posteriors: bool = False
    needs_reference: bool = False
    paper: bool = False
    scored: bool = True

    @property
    def label_free(self) -> bool:
        """Computable without the true test subconcepts."""
        return not self.needs_subconcept

    def scores(self) -> tuple[str, ...]:
        """This weighting's score names, one per family."""
        return tuple(f"{self.prefix}{f}" for f in FAMILIES)


#: Every weighting, in prefix order ("", w, p, c, r): the order of the subsets table's rows and
#: of the analyses' legends.
WEIGHTINGS: tuple[Weighting, ...] = (
    Weighting("", "unweighted", "unweighted", "{f}: unweighted", paper=True),
    Weighting(
        "w",
        "true",
        "true weights",
        "w{f}: true utility weights (oracle: needs test subconcept labels)",
        needs_subconcept=True,
        paper=True,
    ),
    Weighting(
        "p",
        "predicted",
        "predicted weights",
        "p{f}: label-free, predicted weights (the paper's)",
        needs_posteriors=True,
        paper=True,
    ),
    Weighting(
        "c",
        "class-conditional",
        "class-conditional predicted weights",
        "c{f}: label-free, class-conditional predicted weights",
        needs_posteriors=True,
    ),
    # Not a weighting of the instances: cM corrected by its error on reference rows (docs/method.md,
    # "Rectified scores", medeval.evaluation.rectified); computed by evaluate_predictions only
    # when reference rows are given.
    Weighting(
        "r",
        "rectified",
        "label-free, rectified with reference rows (prediction-powered)",
        "r{f}: label-free, c{f} rectified with reference rows (prediction-powered)",
        needs_posteriors=True,
        needs_reference=True,
    ),
)
_BY_PREFIX = {w.prefix: w for w in WEIGHTINGS}
#: The weightings computed from per-row instance weights, in prefix order: by
#: :func:`medeval.evaluate_predictions`' batched bootstrap, the streaming metric and the
#: scikit-learn scorers. A weighting that needs reference rows (``r``) is not among them: its
#: scores combine the class-conditional ones on the test rows and on the reference rows.
SCORED_WEIGHTINGS = tuple(w for w in WEIGHTINGS if w.scored and not w.needs_reference)

#: The paper's nine scores (unweighted, true weights, predicted weights), kept for reproduction.
PAPER_SCORES = tuple(f"{w.prefix}{f}" for f in FAMILIES for w in WEIGHTINGS if w.paper)
#: Every computed score in the canonical order: the paper's nine, then each added weighting's
#: (``cBA, cF1, cAUC, rBA, rF1, rAUC``); the rectified ones are null without reference rows.
ALL_SCORES = PAPER_SCORES + tuple(
    s for w in WEIGHTINGS if w.scored and not w.paper for s in w.scores()
)
#: The scores that need reference rows (``rBA, rF1, rAUC``).
REFERENCE_SCORES = tuple(s for w in WEIGHTINGS if w.needs_reference for s in w.scores())


def parse_score(name: str) -> tuple[str, str]:
    """``"cBA"`` → ``("c", "BA")``: the weighting prefix and the family, for any prefix.

    Raises:
        ValueError: the name does not end in a family (BA, F1, AUC).
    """
    for family in FAMILIES:
        if name.endswith(family):
            return name[: -len(family)], family
    raise UserError(f"score {name!r}: name must end in one of {', '.join(FAMILIES)}")


def weighting(prefix: str) -> Weighting:
    """The weighting of a prefix (``KeyError`` for an unknown one)."""
    return _BY_PREFIX[prefix]


def prefix_key(prefix: str) -> tuple[int, str]:
    """Sort key of weighting prefixes: "", w, p, c, r, then any other by name."""
    order = list(_BY_PREFIX)
    return (order.index(prefix) if prefix in order else len(order), prefix)


def score_key(name: str) -> tuple[int, int, str]:
    """Sort key: family (BA, F1, AUC), then prefix ("", w, p, c, r, others by name).

    Keeps the paper's nine in :data:`PAPER_SCORES` order.
    """
    prefix, family = parse_score(name)
    return (FAMILIES.index(family), prefix_key(prefix)[0], name)


#: Scores computable without the true test subconcepts, in :data:`ALL_SCORES` order.
LABEL_FREE_SCORES = tuple(s for s in ALL_SCORES if _BY_PREFIX[parse_score(s)[0]].label_free)
#: Scores that need the true test subconcepts (the oracle scores), in :data:`ALL_SCORES` order.
TRUE_ONLY_SCORES = tuple(s for s in ALL_SCORES if s not in LABEL_FREE_SCORES)
#: Every computed score, family by family (the analyses' order).
BY_FAMILY = tuple(sorted(ALL_SCORES, key=score_key))
#: The scores computed from instance weights alone, family by family: those of the streaming
#: metric and the scikit-learn scorers (every score but the rectified ones).
INSTANCE_SCORES = tuple(s for s in BY_FAMILY if s not in REFERENCE_SCORES)

#: The label-free score a reader should use for each family without reference rows (never a
#: true-weight oracle score).
RECOMMENDED = {f: f"c{f}" for f in FAMILIES}
#: The score to read per family when reference rows gave the rectified scores: cM corrected by
#: its error measured on reference rows (docs/method.md, "Rectified scores").
RECOMMENDED_RECTIFIED = {f: f"r{f}" for f in FAMILIES}
#: The rectified label-free scores, computed only from reference rows.
LABEL_FREE_RECTIFIED = tuple(RECOMMENDED_RECTIFIED.values())
#: Below this within-class balanced accuracy the subconcept model is reported as weak
#: (docs/method.md, "Label-free scores").
WEAK_WITHIN_CLASS_BA = 0.7
#: What each score is, for reports and ``metrics.json``.
SCORE_DESCRIPTIONS = {
    "BA": "balanced accuracy",
    "wBA": "balanced accuracy, true utility weights (oracle: needs test subconcept labels)",
    "pBA": "balanced accuracy, predicted utility weights (from subconcept posteriors)",
    "F1": "F1 of class 1",
    "wF1": "F1, true utility weights",
    "pF1": "F1, predicted utility weights",
    "AUC": "ROC AUC",
    "wAUC": "ROC AUC, true utility weights",
    "pAUC": "ROC AUC, predicted utility weights (not partial AUC)",
    "cBA": "balanced accuracy, label-free estimate of wBA: predicted utility weights given the "
    "known class (recommended without reference rows)",
    "cF1": "F1, label-free estimate of wF1: class-conditional predicted weights (recommended "
    "without reference rows)",
    "cAUC": "ROC AUC, label-free estimate of wAUC: class-conditional predicted weights "
    "(recommended without reference rows)",
    "rBA": "balanced accuracy, label-free estimate of wBA: cBA minus its error on reference rows "
    "(cBA − wBA there); recommended when reference rows are given",
    "rF1": "F1, label-free estimate of wF1: cF1 minus its error on reference rows; recommended "
    "when reference rows are given",
    "rAUC": "ROC AUC, label-free estimate of wAUC: cAUC minus its error on reference rows; "
    "recommended when reference rows are given",
}


def split_score(name: str) -> tuple[str, str]:
    """``"cBA"`` → ``("c", "BA")`` for a computed score; a clear error for any other name."""
    for family in FAMILIES:
        key = name[: -len(family)]
        if name.endswith(family) and key in _BY_PREFIX and _BY_PREFIX[key].scored:
            return key, family
    raise UserError(f"unknown score {name!r}; known scores: {', '.join(BY_FAMILY)}")


def instance_score(name: str) -> tuple[str, str]:
    """:func:`split_score` for the scores computed from instance weights alone (the streaming
    metric, the scikit-learn scorers); a rectified score is refused with what it needs.

    Raises:
        ValueError: an unknown name, or a score that needs reference rows.
    """
    prefix, family = split_score(name)
    if _BY_PREFIX[prefix].needs_reference:
        raise UserError(
            f"{name} is a rectified score: it needs reference rows (held-out rows with known "
            "subconcepts, scored by the same classifier and subconcept model) and cannot be "
            "accumulated batch by batch; compute it with medeval.evaluate_predictions(..., "
            f"reference=ReferenceRows(...)). Scores computed here: {', '.join(INSTANCE_SCORES)}"
        )
    return prefix, family


def labels_from_scores(y_score: Any, threshold: float) -> Any:
    """Predicted labels ``(N,)``: 1 where ``y_score >= threshold`` (the one rule used
    everywhere: evaluation, the streaming metric, the scikit-learn scorers, the forest
    protocol, validation during training).

    A numpy array (or sequence) gives int64 labels; a tensor gives labels of its own floating
    dtype on its device (the weighted confusion sums take float labels).
    """
    import numpy as np  # here: the vocabulary above is read by --help, without numpy
    import torch

    if isinstance(y_score, torch.Tensor):
        return (y_score >= threshold).to(y_score.dtype)
    return (np.asarray(y_score) >= threshold).astype(np.int64)
