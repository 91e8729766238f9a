"""Simulated test and reference rows with a known truth, for the rectified scores' tests and the
few-reference-rows measurement (``benchmarks/bench_rectified.py``).

Five subconcepts: majority ``a``, ``b``; minority ``c``, ``d``, ``e`` (utilities 4, 10, 26.7 from
the training sizes). The classifier's score is ``N(μ_s, 1)``, ``ŷ = [score > 0]``, so the recall
of ``e`` is Φ(−0.2) ≈ 0.42 while ``c`` is found 93 % of the time. The subconcept model sees
evidence ``z ~ N(κ e_s, I)``; its calibrated posterior is ``softmax(log π + κ z)`` and a
miscalibrated one ``softmax((log π + κ z) / T)`` (T < 1 overconfident, T > 1 underconfident).
"""

from __future__ import annotations

import numpy as np
from scipy import special, stats

NAMES = ("a", "b", "c", "d", "e")
SIDES = np.array([0, 0, 1, 1, 1])
TRAIN = np.array([400, 300, 100, 40, 15])
TRAIN_SIZES = {
    nm: {"class": int(c), "n": int(k)} for nm, c, k in zip(NAMES, SIDES, TRAIN, strict=True)
}
SHARES = TRAIN / TRAIN.sum()  # test and reference rows come from the training population
MU = np.array([-1.5, -1.0, 1.5, 0.8, -0.2])
KAPPA = 1.0


def population_wba() -> float:
    """wBA of the population (true weights ∝ utilities, recalls Φ(±μ_s))."""
    u = np.where(SIDES == 1, TRAIN[SIDES == 0].max() / TRAIN, 1.0)
    recall = np.where(SIDES == 1, stats.norm.cdf(MU), stats.norm.cdf(-MU))
    r = [(SHARES * u * recall)[SIDES == c].sum() / (SHARES * u)[SIDES == c].sum() for c in (0, 1)]
    return 0.5 * (r[0] + r[1])


def draw(rng: np.random.Generator, codes: np.ndarray, temperature: float) -> dict:
    """Rows of the given subconcept codes ``(N,)``: classes, scores, predictions, names and
    posteriors ``(N, 5)`` at ``temperature``."""
    n = len(codes)
    score = rng.normal(MU[codes], 1.0)
    z = rng.normal(0.0, 1.0, (n, len(NAMES)))
    z[np.arange(n), codes] += KAPPA
    logits = np.log(SHARES) + KAPPA * z
    q = special.softmax(logits / temperature, axis=1)
    return {
        "y_true": SIDES[codes],
        "y_score": score,
        "y_pred": (score > 0).astype(np.int64),
        "subconcept": np.asarray(NAMES)[codes],
        "posteriors": q,
    }


def draw_test(rng: np.random.Generator, n: int, temperature: float) -> dict:
    """``n`` rows drawn from the population."""
    return draw(rng, rng.choice(len(NAMES), n, p=SHARES), temperature)


def draw_reference(rng: np.random.Generator, counts: dict[str, int], temperature: float) -> dict:
    """Reference rows with fixed counts per subconcept."""
    codes = np.repeat(np.arange(len(NAMES)), [counts[nm] for nm in NAMES])
    return draw(rng, codes, temperature)


def rectify(test: dict, reference, u, *, n_bootstrap: int = 200, seed: int = 0, **kw):
    """The rectified scores of simulated ``test`` rows (their ``y_true``, ``y_pred``,
    ``y_score``, ``posteriors``) with checked ``reference`` rows: the estimator the evaluation
    runs (:func:`medeval.evaluation.rectified.rectify_test_side`) on its own, with the test
    strata ``stratify`` (``"class"``, ``"none"``), ``groups`` and ``reference_stratify``
    (``"class"``, ``"subconcept"``); other keywords go to the estimator."""
    from medeval.evaluation.checks import codes, strata
    from medeval.evaluation.rectified import TargetRows, rectify_test_side
    from medeval.weights import align_posteriors, expected_class_utility, renormalise_within_class

    y = np.asarray(test["y_true"])
    stratify, groups = kw.pop("stratify", "class"), kw.pop("groups", None)
    cp = renormalise_within_class(align_posteriors(test["posteriors"], u), u, y)
    c = expected_class_utility(cp, u, y).numpy()
    clusters = None if groups is None else codes(groups, len(y), "groups")
    rows = TargetRows(
        y, np.asarray(test["y_pred"]), test.get("y_score"), c, int(cp.fallback.sum()),
        strata(stratify, y), clusters,
    )  # fmt: skip
    kw.setdefault("reference_stratify", "class")
    return rectify_test_side(
        rows, reference, u, n_bootstrap=n_bootstrap, confidence=kw.pop("confidence", 0.95),
        stratify=stratify, seed=seed, **kw,
    )  # fmt: skip
