"""Reading predictions in typed chunks gives the very same table, the same evaluation and the same
errors as reading the whole file with inferred types."""

import json

import numpy as np
import pandas as pd
import pytest

import medeval.io.predictions as predictions
from medeval.evaluation import evaluate_predictions
from medeval.io.predictions import InputError, read_predictions, read_train_sizes

NAMES = ["normal", "benign", "A", "B", "C"]
SIDES = [0, 0, 1, 1, 1]
SIZES = {
    nm: {"class": c, "n": n} for nm, c, n in zip(NAMES, SIDES, [900, 400, 80, 30, 10], strict=True)
}
FORMATS = ["csv", "csv.gz", "parquet"]
TINY = 4096  # bytes: chunks of a few dozen rows, so every file spans many chunks


def _frame(n=3000, seed=0):
    rng = np.random.default_rng(seed)
    sc = rng.choice(4, n, p=[0.5, 0.3, 0.15, 0.05])
    sc[-7:] = 4  # a subconcept first seen in the last chunk: codes must still line up
    y = np.array(SIDES)[sc]
    q = rng.dirichlet(np.ones(5), n)
    df = pd.DataFrame(
        {
            "y_true": y,
            "y_score": np.clip(0.4 * y + rng.normal(0.3, 0.2, n), 0, 1),  # full float64 digits
            "subconcept": np.array(NAMES)[sc],
        }
    )
    for i, nm in enumerate(NAMES):
        df[f"q_{nm}"] = q[:, i]
    return df


def _write(df, path):
    df.to_parquet(path) if path.name.endswith("parquet") else df.to_csv(path, index=False)
    return path


def _chunked(monkeypatch, path, u=None):
    """The typed reading in chunks of :data:`TINY` bytes."""
    with monkeypatch.context() as m:
        m.setattr(predictions, "READ_BUDGET", TINY)
        return read_predictions(path, u)


def _whole(monkeypatch, path, u=None):
    """The previous reading: the whole table, types inferred."""
    with monkeypatch.context() as m:
        m.setattr(predictions, "_read_typed", lambda *a: None)
        return read_predictions(path, u)


def _same_table(a, b):
    np.testing.assert_array_equal(a.y_true, b.y_true)
    assert a.y_true.dtype == b.y_true.dtype == np.int8
    for x, y in ((a.y_score, b.y_score), (a.y_pred, b.y_pred)):
        assert (x is None) == (y is None)
        if x is not None:
            assert x.dtype == y.dtype and x.tobytes() == y.tobytes()  # bit for bit
    pd.testing.assert_extension_array_equal(a.subconcept, b.subconcept)
    pd.testing.assert_frame_equal(a.posteriors, b.posteriors, check_exact=True)


@pytest.mark.parametrize("fmt", FORMATS)
def test_chunks_give_the_same_table_and_evaluation(tmp_path, monkeypatch, fmt):
    path = _write(_frame(), tmp_path / f"p.{fmt}")
    u = read_train_sizes(_write_sizes(tmp_path))
    calls = []
    real = predictions._chunk
    monkeypatch.setattr(predictions, "_chunk", lambda *a: calls.append(1) or real(*a))
    chunked = _chunked(monkeypatch, path, u)
    monkeypatch.undo()
    assert len(calls) > 8 * 8  # many chunks of the 8 columns: the chunked path did the reading
    whole = _whole(monkeypatch, path, u)
    _same_table(chunked, whole)
    assert list(chunked.subconcept.categories)[-1] == "C"

    def evaluate(t):
        ev = evaluate_predictions(
            t.y_true,
            y_score=t.y_score,
            subconcept=t.subconcept,
            posteriors=t.posteriors,
            train_sizes=u,
            n_bootstrap=30,
        )
        return json.dumps(ev.to_dict(), sort_keys=True, default=str)

    assert evaluate(chunked) == evaluate(whole)


def _write_sizes(folder):
    p = folder / "sizes.json"
    p.write_text(json.dumps(SIZES))
    return p


@pytest.mark.parametrize("fmt", FORMATS)
def test_labels_and_predictions_read_alike(tmp_path, monkeypatch, fmt):
    df = _frame(500).drop(columns=[f"q_{nm}" for nm in NAMES])
    df["y_pred"] = (df.y_score >= 0.5).astype(float)  # 0.0 / 1.0 are labels too
    df["extra"] = "ignored"
    path = _write(df, tmp_path / f"p.{fmt}")
    chunked = _chunked(monkeypatch, path)
    assert chunked.posteriors is None and chunked.y_pred.dtype == np.int8
    whole = _whole(monkeypatch, path)
    np.testing.assert_array_equal(chunked.y_pred, whole.y_pred)
    np.testing.assert_array_equal(chunked.y_true, whole.y_true)
    pd.testing.assert_extension_array_equal(chunked.subconcept, whole.subconcept)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize(
    "column, value",
    [("y_score", np.nan), ("y_true", 2), ("y_true", np.nan), ("subconcept", " "), ("q_A", np.nan)],
)
def test_a_bad_cell_late_gives_the_same_error(tmp_path, monkeypatch, fmt, column, value):
    df = _frame(2000)
    df[column] = df[column].astype(object)
    df.loc[1733, column] = value  # in a late chunk
    path = _write(df, tmp_path / f"p.{fmt}")
    with pytest.raises(InputError) as chunked:
        _chunked(monkeypatch, path)
    with pytest.raises(InputError) as whole:
        _whole(monkeypatch, path)
    assert str(chunked.value) == str(whole.value)
    assert "row 1734" in str(chunked.value) and column in str(chunked.value)


def test_padded_names_and_text_cells_fall_back_to_the_whole_reading(tmp_path, monkeypatch):
    df = _frame(400)
    df = df.rename(columns={"y_true": " y_true "})
    df["y_score"] = df["y_score"].map(lambda v: f" {v:.6f}")  # padded numbers: text for pyarrow
    path = _write(df, tmp_path / "p.csv")
    chunked = _chunked(monkeypatch, path)
    _same_table(chunked, _whole(monkeypatch, path))


def test_a_categorical_parquet_column_reads_alike(tmp_path, monkeypatch):
    df = _frame(1500)
    df["subconcept"] = pd.Categorical(df["subconcept"], categories=NAMES[::-1])  # dictionary type
    path = _write(df, tmp_path / "p.parquet")
    u = read_train_sizes(_write_sizes(tmp_path))
    chunked = _chunked(monkeypatch, path, u)
    _same_table(chunked, _whole(monkeypatch, path, u))
    assert set(chunked.subconcept.categories) == set(NAMES)
