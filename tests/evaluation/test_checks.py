"""One set of input checks for the evaluation and the rectification (medeval.evaluation.checks): rBA
accepts what BA accepts, and both name their strata alike."""

import numpy as np
import pytest
import rectified_simulation as sim

from medeval.evaluation import evaluate_predictions
from medeval.evaluation.checks import codes
from medeval.io.reference import ReferenceRows
from medeval.weights import utilities_from_train_sizes

U = utilities_from_train_sizes(sim.TRAIN_SIZES)


@pytest.fixture(scope="module")
def drawn():
    rng = np.random.default_rng(0)
    t = sim.draw_test(rng, 300, 2.0)
    counts = {nm: max(1, round(1500 * p)) for nm, p in zip(sim.NAMES, sim.SHARES, strict=True)}
    r = sim.draw_reference(rng, counts, 2.0)
    return t, ReferenceRows.from_arrays(U, **r)


def _rba(t, ref, y_true, y_pred, **kw):
    ev = evaluate_predictions(
        y_true, y_pred=y_pred, y_score=t["y_score"], posteriors=t["posteriors"],
        posterior_columns=sim.NAMES, train_sizes=U, reference=ref, n_bootstrap=20, **kw,
    )  # fmt: skip
    return ev.scores["rBA"], ev.intervals["rBA"]


def test_rectified_takes_the_labels_the_metrics_take(drawn):
    t, ref = drawn
    y, yp = np.asarray(t["y_true"]), np.asarray(t["y_pred"])
    base = _rba(t, ref, y, yp)
    assert _rba(t, ref, 2 * y - 1, 2 * yp - 1) == base  # {-1, 1}
    text = np.array(["normal", "disease"])
    assert _rba(t, ref, text[y], text[yp], pos_label="disease") == base
    assert _rba(t, ref, y.astype(bool), yp.astype(bool)) == base


def test_rectified_stratifies_by_subconcept_as_the_evaluation_does(drawn):
    t, ref = drawn
    y, yp = np.asarray(t["y_true"]), np.asarray(t["y_pred"])
    value, _ = _rba(t, ref, y, yp, stratify="subconcept", subconcept=t["subconcept"])
    assert np.isfinite(value)
    with pytest.raises(ValueError, match="stratify='subconcept' needs the true test subconcepts"):
        _rba(t, ref, y, yp, stratify="subconcept")


def test_custom_strata_have_one_name(drawn):
    t, ref = drawn
    y = np.asarray(t["y_true"])
    strata = np.arange(len(y)) % 3
    ev = evaluate_predictions(
        y, y_pred=t["y_pred"], y_score=t["y_score"], posteriors=t["posteriors"], train_sizes=U,
        reference=ref, n_bootstrap=10, stratify=strata,
    )  # fmt: skip
    assert ev.bootstrap["stratify"] == ev.rectified.bootstrap["stratify"] == "custom strata"


def test_an_empty_group_is_a_group_of_its_own():
    g = np.array(["p1", "", "p1", None, float("nan"), "p2", "  "], dtype=object)
    c = codes(g, len(g), "groups")
    assert c[0] == c[2] and len(set(c[[1, 3, 4, 6]])) == 4  # four unknown patients, four groups
    assert len(set(c)) == 6 and set(c) == set(range(6))
