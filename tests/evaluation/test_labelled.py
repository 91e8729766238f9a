"""Labelled test rows as weighted reference rows (medeval.evaluation.labelled), and rBA with
labels against a simulation with known truth."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import rectified_simulation as sim

from medeval.evaluation import EvaluateSettings, evaluate
from medeval.evaluation.labelled import labelled_reference, pooled
from medeval.evaluation.rectified_recall import LabelledRows
from medeval.io.predictions import PredictionTable
from medeval.io.reference import ReferenceRows
from medeval.weights import utilities_from_train_sizes

U = utilities_from_train_sizes(sim.TRAIN_SIZES)


def test_weights_are_inverse_inclusion_probabilities_scaled_to_the_rows():
    rng = np.random.default_rng(0)
    t = sim.draw_test(rng, 200, 1.0)
    post = pd.DataFrame(t["posteriors"], columns=list(sim.NAMES))
    codes = np.array([sim.NAMES.index(s) for s in t["subconcept"]])
    lab = LabelledRows(
        np.array([3, 7, 11]), codes[[3, 7, 11]], np.array([0.5, 0.25, 1.0]), np.ones(3, int)
    )
    ref = labelled_reference(lab, t["y_true"], t["y_pred"], t["y_score"], post, U)
    assert ref.row_weight.tolist() == pytest.approx([2 * 3 / 7, 4 * 3 / 7, 1 * 3 / 7])
    assert (ref.y_true == t["y_true"][[3, 7, 11]]).all()
    held = ReferenceRows.from_arrays(U, **sim.draw_reference(rng, {nm: 5 for nm in sim.NAMES}, 1.0))
    both = pooled(held, ref)
    assert len(both) == len(held) + 3 and both.row_weight[: len(held)].tolist() == [1.0] * len(held)
    assert pooled(None, ref) is ref and pooled(held, None) is held


@pytest.mark.filterwarnings("ignore::medeval.evaluation.rectified.FewReferenceRowsWarning")
@pytest.mark.filterwarnings("ignore::medeval.metrics.UndefinedMetricWarning")
def test_rba_from_labelled_test_rows_holds_wba():
    """Known truth, 40 seeds: 150 of 600 test rows labelled at random give rBA whose interval
    holds the test rows' wBA."""
    covers = []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        t = sim.draw_test(rng, 600, 2.0)
        codes = np.array([sim.NAMES.index(s) for s in t["subconcept"]])
        rows = rng.choice(600, 150, replace=False)
        lab = LabelledRows(rows, codes[rows], np.full(150, 0.25), np.ones(150, int))
        table = PredictionTable(
            None,
            t["y_true"],
            t["y_score"],
            t["y_pred"],
            None,
            pd.DataFrame(t["posteriors"], columns=list(sim.NAMES)),
        )
        ev = evaluate(table, U, labels=lab, settings=EvaluateSettings(n_bootstrap=200, seed=seed))
        oracle = evaluate(
            PredictionTable(None, t["y_true"], t["y_score"], t["y_pred"], t["subconcept"], None),
            U,
            settings=EvaluateSettings(n_bootstrap=0),
        )
        lo, hi = ev.intervals["rBA"]
        covers.append(lo <= oracle.scores["wBA"] <= hi)
    assert np.mean(covers) >= 0.9
