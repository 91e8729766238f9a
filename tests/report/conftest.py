"""A per-subconcept frame and an evaluation shared by the tests of the report's figures and
tables."""

import numpy as np
import pandas as pd
import pytest

from medeval.evaluation import evaluate_predictions

PER_SC = pd.DataFrame(
    {
        "subconcept": ["M", "A", "B"],
        "class": [0, 1, 1],
        "prevalence": [1.0, 0.8, 0.2],
        "recall": [0.98, 0.9, 0.4],
        "low": [0.96, 0.85, 0.2],
        "high": [0.99, 0.95, 0.6],
        "est_recall": [0.97, 0.88, 0.5],
        "est_low": [0.95, 0.8, 0.3],
        "est_high": [0.99, 0.93, 0.7],
    }
)

TRAIN = {"M": {"class": 0, "n": 300}, "A": {"class": 1, "n": 60}, "B": {"class": 1, "n": 12}}


@pytest.fixture(scope="module")
def ev():
    rng = np.random.default_rng(0)
    sc = rng.choice(["M", "A", "B"], size=400, p=[0.7, 0.22, 0.08])
    y = (sc != "M").astype(int)
    score = np.clip(0.8 * y + rng.normal(0.1, 0.25, 400), 0, 1)
    score[sc == "B"] *= 0.6  # the small subconcept is the hard one
    q = np.full((400, 3), 0.1)
    q[np.arange(400), pd.Series(sc).map({"M": 0, "A": 1, "B": 2})] = 0.8
    return evaluate_predictions(
        y,
        y_score=score,
        subconcept=sc,
        posteriors=pd.DataFrame(q, columns=["M", "A", "B"]),
        train_sizes=TRAIN,
        n_bootstrap=50,
    )
