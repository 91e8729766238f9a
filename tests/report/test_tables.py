"""The terminal's per-subconcept table."""

import numpy as np
import pandas as pd

from medeval.evaluation import evaluate_predictions

from .conftest import TRAIN


def test_terminal_subconcept_table_names_the_interval_method(ev):
    from medeval.report.tables import subconcept_table

    assert "intervals: 95% Clopper–Pearson (exact binomial)." in subconcept_table(ev)


def test_terminal_subconcept_table_without_test_labels_says_not_computed_not_nan():
    from medeval.report.tables import subconcept_table

    rng = np.random.default_rng(1)
    sc = rng.choice(["M", "A", "B"], size=300, p=[0.7, 0.22, 0.08])
    y = (sc != "M").astype(int)
    q = rng.dirichlet(np.ones(3), 300)
    ev = evaluate_predictions(
        y, y_score=rng.random(300), posteriors=pd.DataFrame(q, columns=["M", "A", "B"]),
        train_sizes=TRAIN, n_bootstrap=20,
    )  # fmt: skip
    rows = subconcept_table(ev).splitlines()[1:4]
    assert [r.split()[0] for r in rows] == ["M", "A", "B"]
    for r in rows:  # n_test, share and the true recall: "—"; the label-free estimate: a number
        cells = r.split()
        assert cells[2] == cells[3] == cells[5] == "—" and "NaN" not in r
        assert 0 <= float(cells[6]) <= 1
