"""Reading predictions with pyarrow: compact dtypes, the same numbers as plain arrays, and
errors that still name file, column and row."""

import numpy as np
import pandas as pd
import pytest

from medeval.evaluation import evaluate_predictions
from medeval.io import predictions
from medeval.io.predictions import InputError, read_predictions

NAMES = ["normal", "benign", "A", "B"]
SIDES = [0, 0, 1, 1]


def _frame(n=300, seed=0):
    rng = np.random.default_rng(seed)
    sc = rng.choice(4, n, p=[0.5, 0.3, 0.15, 0.05])
    y = np.array(SIDES)[sc]
    q = rng.dirichlet(np.ones(4), n)
    df = pd.DataFrame(
        {
            "y_true": y,
            "y_score": np.clip(0.4 * y + rng.normal(0.3, 0.2, n), 0, 1).round(3),
            "subconcept": np.array(NAMES)[sc],
        }
    )
    for i, nm in enumerate(NAMES):
        df[f"q_{nm}"] = q[:, i]
    return df


@pytest.mark.parametrize("fmt", ["csv", "csv.gz", "parquet"])
def test_compact_dtypes_and_same_values(tmp_path, fmt):
    df = _frame()
    path = tmp_path / f"p.{fmt}"
    df.to_parquet(path) if fmt == "parquet" else df.to_csv(path, index=False)
    t = read_predictions(path)
    assert t.y_true.dtype == np.int8 and t.y_pred is None
    np.testing.assert_array_equal(t.y_true, df.y_true)
    np.testing.assert_allclose(t.y_score, df.y_score, rtol=0, atol=0)
    assert isinstance(t.subconcept, pd.Categorical)
    assert list(np.asarray(t.subconcept)) == df.subconcept.tolist()
    np.testing.assert_allclose(t.posteriors.to_numpy(), df.filter(like="q_").to_numpy(), atol=1e-15)


def test_categorical_subconcepts_give_the_same_evaluation_as_names(tmp_path):
    df = _frame(seed=1)
    path = tmp_path / "p.csv"
    df.to_csv(path, index=False)
    t = read_predictions(path)
    sizes = {
        nm: {"class": c, "n": k} for nm, c, k in zip(NAMES, SIDES, [50, 30, 12, 4], strict=True)
    }
    kw = {"y_score": t.y_score, "train_sizes": sizes, "n_bootstrap": 30, "seed": 2}
    a = evaluate_predictions(t.y_true, subconcept=t.subconcept, posteriors=t.posteriors, **kw)
    b = evaluate_predictions(
        df.y_true, subconcept=df.subconcept.to_numpy(), posteriors=t.posteriors, **kw
    )
    assert a.to_dict() == b.to_dict()
    # without train sizes the names come from the data, sorted, unused categories dropped
    cat = pd.Categorical(df.subconcept, categories=["zz", *reversed(NAMES)])
    c = evaluate_predictions(t.y_true, y_score=t.y_score, subconcept=cat, n_bootstrap=0)
    d = evaluate_predictions(t.y_true, y_score=t.y_score, subconcept=df.subconcept, n_bootstrap=0)
    pd.testing.assert_frame_equal(c.per_subconcept, d.per_subconcept)
    assert "zz" not in set(c.per_subconcept.subconcept)


def test_missing_cell_is_named(tmp_path):
    df = _frame()
    df["y_score"] = df["y_score"].astype(object)
    df.loc[11, "y_score"] = None
    path = tmp_path / "p.csv"
    df.to_csv(path, index=False)
    with pytest.raises(InputError, match=r"column 'y_score', row 12: missing value"):
        read_predictions(path)


@pytest.mark.parametrize("column", ["y_score", "y_true"])
def test_bad_cell_under_a_padded_header_name_is_quoted(tmp_path, column):
    df = _frame().astype({column: object})
    df.loc[4, column] = "abc" if column == "y_score" else "2"
    path = tmp_path / "p.csv"
    df.rename(columns={column: f" {column} "}).to_csv(path, index=False)
    problem = "'abc' is not a number" if column == "y_score" else "'2' is not 0 or 1"
    with pytest.raises(InputError, match=rf"column '{column}', row 5: {problem}"):
        read_predictions(path)


@pytest.mark.parametrize(
    ("sep", "header", "problem"),
    [
        (";", None, r"the header is one column, 'y_true;y_score;.*': .* with commas, not ';'"),
        (",", ["y_true", "y_score", " y_true", "subconcept"], r"'y_true': appears 2 times"),
    ],
)
def test_header_separated_by_semicolons_or_naming_a_column_twice(tmp_path, sep, header, problem):
    df = _frame()[["y_true", "y_score", "y_true", "subconcept"]]
    df = df.set_axis(header or ["y_true", "y_score", "y_true2", "subconcept"], axis=1)
    df.to_csv(tmp_path / "p.csv", sep=sep, index=False)
    with pytest.raises(InputError, match=problem):
        read_predictions(tmp_path / "p.csv")


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_a_header_without_y_true_is_refused_before_the_rows_are_read(tmp_path, monkeypatch, suffix):
    path = tmp_path / f"p.{suffix}"
    df = _frame().rename(columns={"y_true": "label"})
    df.to_parquet(path) if suffix == "parquet" else df.to_csv(path, index=False)

    def whole(*args, **kwargs):
        raise AssertionError("the whole table was read for a header error")

    monkeypatch.setattr(predictions, "_read_whole", whole)
    with pytest.raises(InputError, match=r"missing column 'y_true' \(columns: label, y_score"):
        read_predictions(path)


def test_parquet_bad_label_and_empty_subconcept_are_named(tmp_path):
    df = _frame()
    df.loc[5, "y_true"] = 3
    df.to_parquet(tmp_path / "a.parquet")
    with pytest.raises(InputError, match=r"column 'y_true', row 6: 3 is not 0 or 1"):
        read_predictions(tmp_path / "a.parquet")
    df = _frame()
    df.loc[7, "subconcept"] = "  "
    df.to_parquet(tmp_path / "b.parquet")
    with pytest.raises(InputError, match=r"column 'subconcept', row 8: missing value"):
        read_predictions(tmp_path / "b.parquet")


def test_subconcept_on_the_wrong_side_is_named(tmp_path):
    from medeval.io.predictions import read_train_sizes

    df = _frame()
    i = int(np.flatnonzero(df.subconcept == "A")[0])
    df.loc[i, "y_true"] = 0
    df.to_csv(tmp_path / "p.csv", index=False)
    sizes = tmp_path / "s.json"
    sizes.write_text(
        '{"normal": {"class": 0, "n": 5}, "benign": {"class": 0, "n": 3},'
        ' "A": {"class": 1, "n": 2}, "B": {"class": 1, "n": 1}}'
    )
    with pytest.raises(InputError, match=rf"row {i + 1}: subconcept 'A' belongs to class 1"):
        read_predictions(tmp_path / "p.csv", read_train_sizes(sizes))
