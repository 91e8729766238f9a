"""SubconceptScores: any batching equals one evaluation; states, reset, collections, DDP."""

import itertools
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import given, settings
from hypothesis import strategies as st
from torchmetrics import MetricCollection
from torchmetrics.classification import BinaryAccuracy

from medeval.evaluation import evaluate_predictions
from medeval.metrics import UndefinedMetricWarning, balanced_accuracy, f1, roc_auc
from medeval.metrics.streaming import SubconceptScores
from medeval.scores import INSTANCE_SCORES
from medeval.weights import class_conditional_weights, utilities_from_train_sizes

SIZES = {
    "healthy": {"class": 0, "n": 80},
    "benign": {"class": 0, "n": 30},
    "A": {"class": 1, "n": 20},
    "B": {"class": 1, "n": 5},
}
U = utilities_from_train_sizes(SIZES)
SIDES = np.array([0, 0, 1, 1])


def make_data(seed: int, n: int, *, classes=(0, 1), ties: bool = True):
    """Subconcept codes, labels, scores (with ties) and posteriors (some zero entries)."""
    rng = np.random.default_rng(seed)
    allowed = np.flatnonzero(np.isin(SIDES, classes))
    sc = rng.choice(allowed, n)
    y = SIDES[sc]
    s = rng.integers(0, 5, n) / 4 if ties else rng.random(n)
    q = rng.dirichlet(np.full(4, 0.5), n)
    q[rng.random((n, 4)) < 0.2] = 0.0  # zero posteriors, including whole classes
    q[q.sum(1) == 0, 0] = 1.0
    q /= q.sum(1, keepdims=True)
    return sc, y, s, q


def streamed(sc, y, s, q, cuts, **kwargs) -> dict[str, float]:
    metric = SubconceptScores(SIZES, **kwargs)
    bounds = [0, *sorted(cuts), len(y)]
    for a, b in itertools.pairwise(bounds):
        metric.update(
            torch.tensor(s[a:b]), torch.tensor(y[a:b]), torch.tensor(sc[a:b]), torch.tensor(q[a:b])
        )
    return {k: float(v) for k, v in metric.compute().items()}


def reference(sc, y, s, q) -> dict[str, float]:
    """One evaluate_predictions call on all the data (its cBA/cF1/cAUC included)."""
    ev = evaluate_predictions(
        y,
        y_score=s,
        subconcept=np.array(U.names)[sc],
        posteriors=q,
        posterior_columns=U.names,
        train_sizes=SIZES,
        n_bootstrap=0,
    )
    return {k: ev.scores[k] for k in INSTANCE_SCORES}


def test_label_free_scores_are_the_metric_functions_with_class_conditional_weights():
    sc, y, s, q = make_data(7, 50)
    c = class_conditional_weights(q, U, y)
    yp = (s >= 0.5).astype(np.int64)
    got = streamed(sc, y, s, q, [13, 31])
    assert got["cBA"] == pytest.approx(float(balanced_accuracy(y, yp, sample_weight=c)), abs=1e-12)
    assert got["cF1"] == pytest.approx(float(f1(y, yp, sample_weight=c)), abs=1e-12)
    assert got["cAUC"] == pytest.approx(float(roc_auc(y, s, sample_weight=c)), abs=1e-12)


@settings(max_examples=80, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    n=st.integers(1, 60),
    classes=st.sampled_from([(0, 1), (0, 1), (0, 1), (0,), (1,)]),
    ties=st.booleans(),
    data=st.data(),
)
def test_any_batching_equals_one_evaluation(seed, n, classes, ties, data):
    sc, y, s, q = make_data(seed, n, classes=classes, ties=ties)
    cuts = data.draw(st.lists(st.integers(0, n), max_size=6))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UndefinedMetricWarning)  # one class absent: NaN both
        got = streamed(sc, y, s, q, cuts)
        want = reference(sc, y, s, q)
    assert list(got) == list(INSTANCE_SCORES)
    for k in INSTANCE_SCORES:
        if np.isnan(want[k]):
            assert np.isnan(got[k]), k
        else:
            assert got[k] == pytest.approx(want[k], abs=1e-9), k


def test_absent_class_is_nan_with_a_warning_naming_the_score():
    _, y, s, q = make_data(1, 30, classes=(0,))
    metric = SubconceptScores(SIZES, scores=["BA", "cF1", "AUC"])
    metric.update(torch.tensor(s), torch.tensor(y), posteriors=torch.tensor(q))
    with pytest.warns(UndefinedMetricWarning) as rec:
        out = metric.compute()
    assert all(torch.isnan(v) for v in out.values())
    messages = sorted(str(w.message) for w in rec)
    assert [m.split()[0] for m in messages] == ["AUC", "BA", "cF1"]
    assert all("is undefined: class 1 has zero total weight" in m for m in messages)


def test_the_threshold_is_inclusive():
    y = torch.tensor([0, 0, 1, 1])
    s = torch.tensor([0.2, 0.7, 0.7, 0.9])
    default = SubconceptScores(SIZES, scores=["BA"])
    default.update(s, y)
    strict = SubconceptScores(SIZES, scores=["BA"], threshold=0.7000001)
    strict.update(s, y)
    assert float(default.compute()["BA"]) == 0.75  # 0.7 >= 0.5 and 0.9 >= 0.5
    assert float(strict.compute()["BA"]) == 0.75  # 0.2 and 0.7 below: recall_1 = ½, recall_0 = 1


def test_missing_inputs_and_bad_codes_raise_clear_errors():
    y, s = torch.tensor([0, 1]), torch.tensor([0.1, 0.9])
    with pytest.raises(ValueError, match="pBA/pF1/pAUC need posteriors"):
        SubconceptScores(SIZES, scores=["pBA"]).update(s, y)
    with pytest.raises(ValueError, match="wBA/wF1/wAUC need subconcept"):
        SubconceptScores(SIZES, scores=["wAUC"]).update(s, y)
    with pytest.raises(ValueError, match="index 1: subconcept 'benign' belongs to class 0"):
        SubconceptScores(SIZES, scores=["wBA"]).update(s, y, torch.tensor([0, 1]))
    with pytest.raises(ValueError, match="code 4 at index 0 is out of range"):
        SubconceptScores(SIZES, scores=["wBA"]).update(s, y, torch.tensor([4, 2]))
    with pytest.raises(ValueError, match="unknown score 'xBA'"):
        SubconceptScores(SIZES, scores=["BA", "xBA"])
    with pytest.raises(ValueError, match="row 0 sums to"):
        SubconceptScores(SIZES, scores=["cBA"]).update(s, y, posteriors=torch.full((2, 4), 0.3))


def test_reset_and_state_dict():
    sc, y, s, q = make_data(3, 40)
    batch = [torch.tensor(a) for a in (s, y, sc, q)]
    metric = SubconceptScores(SIZES)
    metric.update(*batch)
    first = metric.compute()
    # states are not persistent by default (a model checkpoint does not carry them) …
    assert not any(k.startswith(("sums", "auc_rows")) for k in metric.state_dict())
    # … and round-trip when made persistent, e.g. to resume mid-epoch
    metric.persistent(True)
    fresh = SubconceptScores(SIZES)
    fresh.persistent(True)
    fresh.load_state_dict(metric.state_dict())
    fresh._update_count = 1  # what update() would have counted
    restored = fresh.compute()
    assert all(torch.equal(first[k], restored[k]) for k in INSTANCE_SCORES)
    metric.reset()
    assert torch.count_nonzero(metric.sums) == 0 and metric.auc_rows == []
    sc2, y2, s2, q2 = make_data(4, 25)
    metric.update(*(torch.tensor(a) for a in (s2, y2, sc2, q2)))
    assert metric.compute() == pytest.approx(streamed(sc2, y2, s2, q2, []), abs=0)


def test_metric_collection_flattens_the_scores_next_to_other_metrics():
    # no score exactly at 0.5: torchmetrics' binary metrics predict 1 for s > 0.5, medeval s >= 0.5
    sc, y, s, q = make_data(5, 50, ties=False)
    args = (torch.tensor(s), torch.tensor(y))
    kw = {"subconcept": torch.tensor(sc), "posteriors": torch.tensor(q)}
    coll = MetricCollection(
        {"acc": BinaryAccuracy(), "sub": SubconceptScores(SIZES, scores=["BA", "cBA", "wAUC"])},
        prefix="val/",
    )
    coll.update(*args, **kw)  # update kwargs are filtered per metric
    out = coll.compute()
    assert set(out) == {"val/acc", "val/BA", "val/cBA", "val/wAUC"}
    alone = streamed(sc, y, s, q, [], scores=["BA", "cBA", "wAUC"])
    assert {k[4:]: float(v) for k, v in out.items() if k != "val/acc"} == alone
    assert float(out["val/acc"]) == pytest.approx(((s >= 0.5) == y).mean())


WORKER = Path(__file__).with_name("ddp_streaming_worker.py")


@pytest.mark.slow
def test_two_gloo_processes_sync_to_the_single_process_result(tmp_path):
    out = tmp_path / "ddp.json"
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    cmd = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--nproc_per_node",
        "2",
        "--standalone",
        str(WORKER),
        str(out),
        "61",
        "11",
    ]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=180)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    ranks = json.loads(out.read_text())
    sc, y, s, q = make_data(11, 61)  # rank 0 held rows 0-36, rank 1 rows 37-60
    single = streamed(sc, y, s, q, [])
    assert ranks["0"] == ranks["1"]  # every rank gets the synced result
    for k in INSTANCE_SCORES:
        assert ranks["0"][k] == pytest.approx(single[k], abs=1e-12), k
