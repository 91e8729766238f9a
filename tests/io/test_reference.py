"""Reference files."""

import numpy as np
import pandas as pd
import pytest
from reference_rows import NAMES, SIZES
from reference_rows import rows as _data

from medeval.evaluation.quality import within_class_balanced_accuracy
from medeval.io.predictions import InputError
from medeval.io.reference import load_reference
from medeval.weights import utilities_from_train_sizes


def test_reference_file_needs_subconcept_and_posteriors(tmp_path):
    y, sc, q = _data(0)
    u = utilities_from_train_sizes(SIZES)
    frame = pd.DataFrame({"y_true": y, "y_score": np.linspace(0, 1, len(y)), "subconcept": sc})
    frame = pd.concat([frame, q.add_prefix("q_")], axis=1)
    good = tmp_path / "ref.csv"
    frame.to_csv(good, index=False)
    rows, table = load_reference(good, u)
    assert len(rows) == len(table) == len(y) and table.subconcept is not None
    assert rows.group is None  # no group column: every row its own cluster
    ids = [f"p{i // 2}" if i % 3 else "" for i in range(len(y))]  # pairs; some without an id
    frame.assign(group=ids).to_csv(tmp_path / "grouped.csv", index=False)
    grouped, _ = load_reference(tmp_path / "grouped.csv", u)
    g = grouped.group
    for i in range(len(y)):
        same = {j for j in range(len(y)) if g[j] == g[i]}
        want = {j for j in range(len(y)) if ids[i] and ids[j] == ids[i]} or {i}
        assert same == want, i  # one cluster per id, an empty id a cluster of its own
    frame.drop(columns="subconcept").to_csv(tmp_path / "no_sc.csv", index=False)
    with pytest.raises(InputError, match="no_sc.csv, column 'subconcept'"):
        load_reference(tmp_path / "no_sc.csv", u)
    frame.drop(columns=[f"q_{n}" for n in NAMES]).to_csv(tmp_path / "no_q.csv", index=False)
    with pytest.raises(InputError, match="no_q.csv, column 'q_normal'"):
        load_reference(tmp_path / "no_q.csv", u)


def test_evaluate_file_reports_the_reference_quality_of_the_file(tmp_path):
    """The note and the subconcept-model scores ``evaluate --reference`` reports come from the
    checked reference rows; they equal the file's within-class BA computed from its names."""
    import json
    import re

    from medeval.flows.evaluate import evaluate_file

    y, _, q = _data(1)
    frame = pd.DataFrame({"y_true": y, "y_score": np.linspace(0, 1, len(y))})
    frame = pd.concat([frame, q.add_prefix("q_")], axis=1)  # test rows: no subconcepts
    frame.to_csv(tmp_path / "test.csv", index=False)
    y2, sc2, q2 = _data(2)
    ref = pd.DataFrame({"y_true": y2, "y_score": np.linspace(1, 0, len(y2)), "subconcept": sc2})
    pd.concat([ref, q2.add_prefix("q_")], axis=1).to_csv(tmp_path / "ref.csv", index=False)
    (tmp_path / "sizes.json").write_text(json.dumps(SIZES))
    u = utilities_from_train_sizes(SIZES)
    want = within_class_balanced_accuracy(y2, sc2, q2, u)
    _, ev = evaluate_file(
        tmp_path / "test.csv", tmp_path / "sizes.json", reference=tmp_path / "ref.csv"
    )
    assert ev.subconcept_model == pytest.approx(want)
    note = next(n for n in ev.notes if "subconcept model on the reference data" in n)
    shown = dict(re.findall(r"(class \d): ([0-9.]+)", note))
    assert {k: float(v) for k, v in shown.items()} == pytest.approx(want, abs=5e-4)
