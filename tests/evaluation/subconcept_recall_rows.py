"""Test and reference rows from the rectified simulation, and their evaluation, shared by the
tests of the per-subconcept recall and of the worst subconcept."""

import numpy as np
import pandas as pd
import rectified_simulation as sim

from medeval.evaluation import evaluate_predictions
from medeval.io.reference import ReferenceRows
from medeval.weights import utilities_from_train_sizes

U = utilities_from_train_sizes(sim.TRAIN_SIZES)
MANY = {"a": 80, "b": 60, "c": 40, "d": 30, "e": 25}  # every subconcept above the warning


def _data(seed=0, temperature=2.0, n_test=600, counts=MANY, n_reference=None):
    """Test rows from the population; reference rows with fixed ``counts`` per subconcept, or
    ``n_reference`` rows from the population (the mix the rectification assumes)."""
    rng = np.random.default_rng(seed)
    t = sim.draw_test(rng, n_test, temperature)
    if n_reference is not None:
        return t, sim.draw_test(rng, n_reference, temperature)
    return t, sim.draw_reference(rng, counts, temperature)


def _evaluate(t, ref=None, labels=False, **kw):
    kw.setdefault("n_bootstrap", 200)
    return evaluate_predictions(
        t["y_true"],
        y_score=t["y_score"],
        y_pred=t["y_pred"],
        subconcept=t["subconcept"] if labels else None,
        posteriors=pd.DataFrame(t["posteriors"], columns=list(sim.NAMES)),
        train_sizes=sim.TRAIN_SIZES,
        reference=None if ref is None else ReferenceRows.from_arrays(U, **ref),
        **kw,
    )
