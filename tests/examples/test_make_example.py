"""medeval/examples/make_example.py: one fold of the tabular protocol as a predictions table
and the training sizes (the bundled example is of KEEL letter; abalone is quicker)."""

import numpy as np
import pytest
from real_data import shared_path
from sklearn.ensemble import RandomForestClassifier

from medeval.examples import make_example as module


@pytest.fixture
def small_forests(monkeypatch):
    """Forests of 5 trees on one core: the table's form does not depend on their size."""

    def forest(n_estimators, random_state, n_jobs):
        return RandomForestClassifier(n_estimators=5, random_state=random_state, n_jobs=1)

    monkeypatch.setattr(module, "RandomForestClassifier", forest)


def test_a_fold_gives_predictions_posteriors_and_training_sizes(small_forests):
    frame, sizes = module.make_example(shared_path(), "abalone", seed=0)
    names = list(sizes)
    assert list(frame.columns) == ["y_true", "y_score", "subconcept"] + [f"q_{n}" for n in names]
    assert set(frame["subconcept"]) <= set(names)
    # each test row's class is its subconcept's class
    side = frame["subconcept"].map({n: s["class"] for n, s in sizes.items()})
    np.testing.assert_array_equal(frame["y_true"].to_numpy(), side.to_numpy())
    assert frame["y_score"].between(0, 1).all()
    q = frame[[f"q_{n}" for n in names]]
    assert (q >= 0).all().all()
    np.testing.assert_allclose(q.sum(axis=1), 1.0, atol=1e-5)
    # 5×2 CV: the training half is about the size of the test half
    assert abs(sum(s["n"] for s in sizes.values()) - len(frame)) <= len(names)


def test_the_same_seed_gives_the_same_example(small_forests):
    a, sizes_a = module.make_example(shared_path(), "abalone", seed=1)
    b, sizes_b = module.make_example(shared_path(), "abalone", seed=1)
    assert sizes_a == sizes_b
    assert a.equals(b)


def test_the_usage_line_rebuilds_the_bundled_example(tmp_path, monkeypatch):
    """``python -m medeval.examples.make_example --data …`` with its defaults (200-tree forests)
    writes the bundled files byte for byte."""
    argv = ["make_example", "--data", str(shared_path()), "--out", str(tmp_path)]
    monkeypatch.setattr("sys.argv", argv)
    module.main()
    for name in ("predictions.csv", "train_sizes.json"):
        assert (tmp_path / name).read_bytes() == (module.HERE / name).read_bytes(), name
