"""Public options are validated once, by declaration; bad values name the parameter."""

import numpy as np
import pytest
import torch

from medeval._validation import (
    Interval,
    InvalidParameterError,
    StrOptions,
    check_params,
    validate_params,
)
from medeval.errors import UserError
from medeval.evaluation import evaluate_predictions
from medeval.flows.benchmark import BenchmarkSettings, run_benchmark
from medeval.metrics import balanced_accuracy, roc_auc
from medeval.metrics.bootstrap import BatchedBootstrap, percentile_interval
from medeval.metrics.streaming import SubconceptScores

SIZES = {"neg": {"class": 0, "n": 10}, "pos": {"class": 1, "n": 5}}
Y = np.array([0, 1, 0, 1, 1, 0])
S = np.array([0.1, 0.8, 0.4, 0.6, 0.3, 0.2])


def _raises(name, call):
    with pytest.raises(InvalidParameterError, match=rf"\b{name} must be") as info:
        call()
    assert isinstance(info.value, ValueError) and isinstance(info.value, UserError)
    return str(info.value)


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("n_bootstrap", -5),
        ("n_bootstrap", 2.5),
        ("n_bootstrap", True),
        ("confidence", 7.0),
        ("confidence", 0),
        ("confidence", 1),
        ("confidence", float("nan")),
        ("stratify", "bogus"),
        ("stratify", 3),
        ("threshold", "0.5"),
        ("threshold", float("nan")),
        ("seed", -1),
        ("seed", 0.5),
        ("device", 0),
        ("progress", "yes"),
    ],
)
def test_evaluate_predictions_rejects_each_bad_option(name, bad):
    kw = {"y_score": S, "n_bootstrap": 5} | {name: bad}
    msg = _raises(name, lambda: evaluate_predictions(Y, **kw))
    assert msg.startswith("evaluate_predictions: ") and repr(bad) in msg


def test_the_error_lists_the_allowed_values():
    msg = _raises("stratify", lambda: evaluate_predictions(Y, y_score=S, stratify="bogus"))
    assert "'class', 'subconcept', 'none'" in msg
    msg = _raises("n_bootstrap", lambda: evaluate_predictions(Y, y_score=S, n_bootstrap=-5))
    assert "an int >= 0" in msg
    msg = _raises("confidence", lambda: evaluate_predictions(Y, y_score=S, confidence=7.0))
    assert "a number in (0, 1)" in msg


def test_valid_edge_values_pass():
    ev = evaluate_predictions(Y, y_score=S, n_bootstrap=0, confidence=0.5, seed=np.int64(3))
    assert ev.bootstrap["n"] == 0 and ev.confidence == 0.5
    codes = np.array([0, 0, 1, 1, 0, 1])
    ev = evaluate_predictions(Y, y_score=S, n_bootstrap=3, stratify=codes)
    assert ev.bootstrap["stratify"] == "custom strata"  # the rectification says so too


def _boot(**kw):
    subsets = {"full": np.ones(len(Y), bool)}
    return BatchedBootstrap(
        Y, y_pred=(S >= 0.5).astype(int), y_score=S, weights={"": np.ones(6)}, subsets=subsets, **kw
    )


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("generator", "mt19937"),
        ("memory_budget", 0),
        ("n_subconcepts", -1),
        ("device", 1.5),
        ("dtype", "float64"),
    ],
)
def test_batched_bootstrap_rejects_each_bad_option(name, bad):
    assert _raises(name, lambda: _boot(**{name: bad})).startswith("BatchedBootstrap: ")


@pytest.mark.parametrize(
    ("name", "bad"), [("n", -1), ("seed", -2), ("chunk_size", 0), ("progress", None)]
)
def test_bootstrap_run_rejects_each_bad_option(name, bad):
    kw = {"n": 4, "seed": 0} | {name: bad}
    _raises(name, lambda: _boot().run(**kw))


def test_percentile_interval_rejects_a_bad_confidence():
    _raises("confidence", lambda: percentile_interval(torch.zeros(5, 2), 1.5))


@pytest.mark.parametrize(
    ("name", "bad"),
    [
        ("max_splits", 0),
        ("max_splits", 11),
        ("subconcepts", "guessed"),
        ("jobs", 0),
        ("n_estimators", 0),
        ("seed", -1),
        ("backend", "threads"),
        ("force", "no"),
    ],
)
def test_benchmark_settings_reject_each_bad_setting(name, bad, tmp_path):
    """Refused when the settings are made, before run_benchmark could write anything."""
    msg = _raises(
        name, lambda: BenchmarkSettings(collection="keel", out=tmp_path / "out", **{name: bad})
    )
    assert msg.startswith("BenchmarkSettings: ")
    assert not (tmp_path / "out").exists()


def test_run_benchmark_refuses_what_is_not_its_settings(tmp_path):
    msg = _raises("s", lambda: run_benchmark({"collection": "keel"}, progress=False))
    assert msg.startswith("run_benchmark: ")


@pytest.mark.parametrize(("name", "bad"), [("jobs", 0), ("backend", "threads"), ("scheduler", 1)])
def test_run_grid_rejects_each_bad_option(name, bad):
    from medeval.protocol.grid import run_grid

    assert _raises(name, lambda: run_grid([], **{name: bad})).startswith("run_grid: ")


@pytest.mark.parametrize(("name", "bad"), [("threshold", "high"), ("train_sizes", [1, 2])])
def test_streaming_metric_rejects_each_bad_option(name, bad):
    kw = {"train_sizes": SIZES} | {name: bad}
    _raises(name, lambda: SubconceptScores(**kw))


def test_nested_calls_validate_once(monkeypatch):
    """The outer call checks its options; validated functions it calls do not check again."""
    import medeval._validation as validation

    calls = []
    real = validation.check_params
    monkeypatch.setattr(validation, "check_params", lambda *a: calls.append(a[0]) or real(*a))
    evaluate_predictions(Y, y_score=S, n_bootstrap=4)
    assert calls == ["evaluate_predictions"]  # not BatchedBootstrap, run, percentile_interval
    boot = _boot()
    calls.clear()
    boot.run(4, seed=0)
    assert calls == ["BatchedBootstrap.run"]


def test_declarations_name_real_parameters():
    with pytest.raises(TypeError, match="unknown"):

        @validate_params({"nope": [int]})
        def f(x):
            return x

    check_params("f", {"x": "a"}, {"x": [StrOptions(("a", "b"))], "y": [int]})  # y absent: ok
    with pytest.raises(InvalidParameterError, match=r"f: x must be an int in \[1, 3\] or None"):
        check_params("f", {"x": 4}, {"x": [Interval(int, 1, 3), None]})


# -- the streaming metric formats its inputs as the functional metrics do -----------------

ENCODINGS = [
    ("0/1 ints", [0, 1, 0, 1, 1, 0], None),
    ("booleans", [False, True, False, True, True, False], None),
    ("-1/1", [-1, 1, -1, 1, 1, -1], None),
    ("0/1 floats", [0.0, 1.0, 0.0, 1.0, 1.0, 0.0], None),
    ("strings", ["ben", "mal", "ben", "mal", "mal", "ben"], "mal"),
    ("2/7 with pos_label", [2, 7, 2, 7, 7, 2], 7),
]


def _streaming_ba(y, pos_label):
    metric = SubconceptScores(SIZES, scores=["BA", "AUC"], threshold=0.5, pos_label=pos_label)
    metric.update(S, y)
    return {k: float(v) for k, v in metric.compute().items()}


@pytest.mark.parametrize(("what", "y", "pos_label"), ENCODINGS, ids=[e[0] for e in ENCODINGS])
def test_streaming_functional_and_evaluation_accept_the_same_labels(what, y, pos_label):
    y_pred = (S >= 0.5).astype(int)
    pred = np.where(y_pred == 1, np.array(y)[np.array(Y) == 1][0], np.array(y)[Y == 0][0])
    ref_ba = balanced_accuracy(y, pred, pos_label=pos_label)
    ref_auc = roc_auc(y, S, pos_label=pos_label)
    got = _streaming_ba(y, pos_label)
    assert got["BA"] == ref_ba and got["AUC"] == ref_auc
    ev = evaluate_predictions(np.array(y), y_score=S, n_bootstrap=0, pos_label=pos_label)
    assert ev.scores["BA"] == ref_ba and ev.scores["AUC"] == ref_auc


BAD_LABELS = [
    ("a third value", [0, 1, 2, 1, 1, 0], None),
    ("strings without pos_label", ["a", "b", "a", "b", "b", "a"], None),
    ("missing label", [0, 1, np.nan, 1, 1, 0], None),
    ("pos_label not present", ["a", "b", "a", "b", "b", "a"], "z"),
]


@pytest.mark.parametrize(("what", "y", "pos_label"), BAD_LABELS, ids=[e[0] for e in BAD_LABELS])
def test_streaming_functional_and_evaluation_reject_the_same_labels(what, y, pos_label):
    y = np.array(y, dtype=object if isinstance(y[0], str) else None)
    with pytest.raises(ValueError) as functional:
        roc_auc(y, S, pos_label=pos_label)
    with pytest.raises(ValueError) as streaming:
        _streaming_ba(y, pos_label)
    with pytest.raises(ValueError) as evaluation:
        evaluate_predictions(y, y_score=S, n_bootstrap=0, pos_label=pos_label)
    assert str(streaming.value) == str(functional.value) == str(evaluation.value)


def test_streaming_and_functional_reject_nan_scores_alike():
    s = S.copy()
    s[2] = np.nan
    with pytest.raises(ValueError, match="y_score contains NaN at index 2"):
        roc_auc(Y, s)
    with pytest.raises(ValueError, match="y_score contains NaN at index 2"):
        SubconceptScores(SIZES, scores=["AUC"]).update(s, Y)
