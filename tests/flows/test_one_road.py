"""One evaluator: every tool evaluates its tables in memory (``evaluate``), and evaluating
the files it wrote gives the same numbers; the subconcept model's quality on reference rows is
the evaluation's own (so the library's array road has it too)."""

import json
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import make_blobs

from medeval.evaluation import EvaluateSettings, evaluate, evaluate_predictions
from medeval.flows.discovery import DiscoverySettings, discover_and_evaluate
from medeval.flows.evaluate import evaluate_file
from medeval.flows.own_model import SubconceptSettings, fit_and_evaluate
from medeval.io.predictions import read_predictions, read_train_sizes
from medeval.io.reference import ReferenceRows

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from compare_outputs import blobs

#: metrics.json fields that hold numbers (the notes name files, which differ by design).
NUMBERS = ("scores", "intervals", "subsets", "per_subconcept", "subconcept_model", "n")


def _numbers(metrics: bytes | str) -> dict:
    m = json.loads(metrics)
    return {k: m[k] for k in NUMBERS}


def _own_tables(folder: Path) -> tuple[Path, Path, Path]:
    """TRAIN, TEST (no subconcept) and REF of four blob subconcepts, a noisy score."""
    X, t = make_blobs([80, 60, 50, 30], n_features=4, cluster_std=2.0, random_state=0)
    names = np.array(["bus", "saab", "opel", "van"])[t]
    y = (t >= 2).astype(int)
    rng = np.random.default_rng(0)
    score = np.clip(0.35 * y + 0.3 + rng.normal(0, 0.2, len(y)), 0, 1)
    frame = pd.DataFrame(X, columns=[f"f{j:04d}" for j in range(4)])
    frame.insert(0, "id", [f"r{i:03d}" for i in range(len(y))])
    frame["y_true"], frame["y_score"], frame["subconcept"] = y, score, names
    part = rng.permutation(len(y)) % 3
    paths = folder / "train.csv", folder / "test.csv", folder / "ref.csv"
    frame[part == 0].drop(columns=["y_score"]).to_csv(paths[0], index=False)
    frame[part == 1].drop(columns=["subconcept"]).to_csv(paths[1], index=False)
    frame[part == 2].to_csv(paths[2], index=False)
    return paths


def test_subconcepts_in_memory_equals_its_written_files(tmp_path):
    train, test, ref = _own_tables(tmp_path)
    s = SubconceptSettings(n_estimators=20, n_bootstrap=40)
    own = fit_and_evaluate(train, test, ref, settings=s)
    out = tmp_path / "out"
    out.mkdir()
    for name in ("predictions.csv", "reference.csv", "train_sizes.json"):
        (out / name).write_bytes(own.files[name])
    _, again = evaluate_file(
        out / "predictions.csv",
        out / "train_sizes.json",
        reference=out / "reference.csv",
        settings=EvaluateSettings(**s.evaluation_options()),
    )
    assert _numbers(json.dumps(again.to_dict())) == _numbers(own.files["metrics.json"])
    # no test subconcepts: the quality is the reference rows', named after the user's file
    m = json.loads(own.files["metrics.json"])
    assert m["subconcept_model_source"] == "reference data (ref.csv)"
    assert m["subconcept_model"] and all(v is not None for v in m["subconcept_model"].values())
    assert str(ref) in " ".join(m["notes"]) and str(tmp_path / "out") not in " ".join(m["notes"])


def test_subconcepts_notes_name_the_users_file_not_a_copy(tmp_path):
    train, test, ref = _own_tables(tmp_path)
    r = pd.read_csv(ref)
    r[r.subconcept != "van"].to_csv(ref, index=False)  # a minority subconcept without rows
    with warnings.catch_warnings():  # van's rect. recall is undefined: warned, not the point
        warnings.simplefilter("ignore")
        own = fit_and_evaluate(train, test, ref, settings=SubconceptSettings(n_estimators=5))
    (note,) = [n for n in own.evaluation.notes if "hold no row of 'van'" in n]
    assert str(ref) in note and "tmp" not in note.replace(str(tmp_path), "")
    assert "'van' has no reference row" in own.evaluation.unavailable["rBA"]


def test_discover_in_memory_equals_its_written_files(tmp_path):
    blobs(tmp_path / "in")
    s = DiscoverySettings(positive="effusion", n_estimators=20, n_bootstrap=40)
    files, _ev = discover_and_evaluate(
        tmp_path / "in" / "train.parquet",
        tmp_path / "in" / "test.parquet",
        tmp_path / "in" / "preds.csv",
        s,
    )
    for name in ("predictions.csv", "train_sizes.json"):
        (tmp_path / name).write_bytes(files[name])
    _, again = evaluate_file(
        tmp_path / "predictions.csv",
        tmp_path / "train_sizes.json",
        settings=EvaluateSettings(threshold=s.threshold, n_bootstrap=s.n_bootstrap, seed=s.seed),
    )
    assert _numbers(json.dumps(again.to_dict())) == _numbers(files["metrics.json"])


def test_evaluate_is_what_evaluate_file_does(tmp_path):
    from medeval.io.predictions import example_paths

    pred, sizes = example_paths()
    s = EvaluateSettings(n_bootstrap=30)
    u = read_train_sizes(sizes)
    table, ev = evaluate_file(pred, sizes, settings=s)
    assert table.posteriors is None  # handed over
    again = evaluate(read_predictions(pred, u), u, settings=s)
    assert again.to_dict() == ev.to_dict()


def test_reference_quality_is_the_evaluations_own_on_the_array_road():
    """evaluate_predictions (the benchmark's road) falls back to the reference rows for the
    subconcept model's quality, as every tool does, so weak_classes() can speak."""
    rng = np.random.default_rng(0)
    names = ("a", "b", "c", "d")
    sizes = {"a": {"class": 0, "n": 50}, "b": {"class": 0, "n": 50}}
    sizes |= {"c": {"class": 1, "n": 40}, "d": {"class": 1, "n": 10}}
    n = 200
    y = rng.integers(0, 2, n)
    q = rng.dirichlet(np.ones(4), n)  # an uninformative subconcept model
    from medeval.weights import utilities_from_train_sizes

    u = utilities_from_train_sizes(sizes)
    yr = rng.integers(0, 2, 120)
    sc = np.where(yr == 1, rng.choice(["c", "d"], 120), rng.choice(["a", "b"], 120))
    rows = ReferenceRows.from_arrays(
        u,
        y_true=yr,
        subconcept=sc,
        posteriors=pd.DataFrame(rng.dirichlet(np.ones(4), 120), columns=names),
        y_score=rng.uniform(size=120),
        source="held-out rows",
    )
    ev = evaluate_predictions(
        y,
        y_score=rng.uniform(size=n),
        posteriors=pd.DataFrame(q, columns=names),
        train_sizes=u,
        reference=rows,
        n_bootstrap=0,
    )
    assert set(ev.subconcept_model) == {"class 0", "class 1"}
    assert ev.subconcept_model_source == "reference data (held-out rows)"
    assert ev.weak_classes() == ["class 1"]  # argmax of noise: about 0.5 within class 1
    assert any(
        n.startswith("subconcept model on the reference data held-out rows") for n in ev.notes
    )


def _frames(folder: Path) -> tuple[pd.DataFrame, ...]:
    return tuple(pd.read_csv(p) for p in _own_tables(folder))


def test_own_model_on_dataframes_equals_its_files(tmp_path):
    """evaluate_own_model on DataFrames evaluates them in memory: the numbers of the same
    tables given as files."""
    from medeval.flows.own_model import evaluate_own_model

    s = SubconceptSettings(n_estimators=20, n_bootstrap=40)
    paths = _own_tables(tmp_path)
    from_files = fit_and_evaluate(*paths, settings=s).evaluation
    in_memory = evaluate_own_model(*(pd.read_csv(p) for p in paths), settings=s)
    assert _numbers(json.dumps(in_memory.to_dict())) == _numbers(json.dumps(from_files.to_dict()))
    assert in_memory.subconcept_model_source == "reference data (reference (DataFrame))"


@pytest.mark.parametrize(
    ("role", "column", "value", "problem"),
    [
        ("test", "y_true", 2, "2 is not 0 or 1"),
        ("test", "f0001", float("inf"), "is not a finite number"),
        ("reference", "subconcept", "lorry", "'lorry'"),
        ("train", "y_true", 3, "3 is not 0 or 1"),
    ],
)
def test_own_model_dataframe_errors_are_the_files_errors_naming_the_frame(
    tmp_path, role, column, value, problem
):
    """A bad DataFrame gets the check and the message of the same table in a Parquet file,
    naming the DataFrame (not a temporary copy)."""
    from medeval.errors import InputError
    from medeval.flows.own_model import evaluate_own_model

    frames = dict(zip(("train", "test", "reference"), _frames(tmp_path), strict=True))
    bad = frames[role].copy()
    bad.loc[bad.index[4], column] = value
    frames[role] = bad
    s = SubconceptSettings(n_estimators=5, n_bootstrap=0)
    with pytest.raises(InputError) as in_memory:
        evaluate_own_model(frames["train"], frames["test"], frames["reference"], settings=s)
    files = {}
    for name, frame in frames.items():
        files[name] = tmp_path / f"{name}.parquet"
        frame.to_parquet(files[name], index=False)
    with pytest.raises(InputError) as on_disk:
        fit_and_evaluate(files["train"], files["test"], files["reference"], settings=s)
    message = str(in_memory.value)
    assert message.startswith(f"{role} (DataFrame), ") and problem in message
    assert "row 5" in message or column == "subconcept"
    assert message == str(on_disk.value).replace(str(files[role]), f"{role} (DataFrame)")


def test_benchmark_fold_in_memory_equals_its_saved_files(shared_data, tmp_path):
    """The benchmark's fold evaluation (in memory) gives the numbers and the notes that
    evaluating its saved files gives; here a minority subconcept has few reference rows, so
    the records carry the evaluation's warnings."""
    import dataclasses

    from medeval.datasets import load
    from medeval.options import EvaluationOptions
    from medeval.protocol.forest import METHODS, run_fold
    from medeval.protocol.saved import fold_folder
    from medeval.scores import ALL_SCORES
    from medeval.splits import cv_5x2
    from medeval.tasks import make_binary_task

    task = make_binary_task(load("keel", shared_data / "keel", name="vehicle"), seed=0)
    sc = task.subconcept.copy()
    first, second = [i for i, s in enumerate(task.subconcepts) if s.side == 1][:2]
    sc[np.flatnonzero(sc == first)[4:]] = second  # four rows left in the first
    task = dataclasses.replace(task, subconcept=sc)
    split = cv_5x2(task, 0)[0]
    records = run_fold(
        task,
        split,
        METHODS[:2],
        seed=0,
        n_estimators=10,
        options=EvaluationOptions(n_bootstrap=30),
        save_predictions=tmp_path,
    )
    for rec in records:
        folder = fold_folder(tmp_path, rec["dataset"], rec["method"], rec["split"])
        fold = json.loads((folder / "fold.json").read_text())
        s = EvaluateSettings(n_bootstrap=fold["n_bootstrap"], seed=fold["seed"])
        u = read_train_sizes(folder / "train_sizes.json")
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            _, ev = evaluate_file(
                folder / "predictions.csv",
                folder / "train_sizes.json",
                reference=folder / "reference.csv",
                settings=s,
            )
        for score in ALL_SCORES:
            got = ev.scores[score]
            assert rec["scores"][score] == (None if np.isnan(got) else got), score
            assert rec["intervals"][score] == list(ev.intervals[score]), score
        assert rec["notes"] == [str(w.message) for w in caught] and rec["notes"], rec["notes"]
        assert set(rec["notes"]) <= set(ev.notes)
        assert any("few reference rows" in n for n in rec["notes"])
        per_sc = ev.per_subconcept.set_index("subconcept")
        for row in rec["per_subconcept"]:
            assert row["recall"] == per_sc.loc[row["subconcept"], "recall"]
        assert u.names  # the saved train sizes are the fold's


def test_no_module_evaluates_through_temporary_files_or_past_its_checks():
    """Only the atomic writers use temporary files (a file is written beside its target, then
    renamed); no module reads back a temporary copy of its inputs or calls ``__wrapped__`` to
    get past a callable's declared checks."""
    package = Path(__file__).resolve().parents[2] / "medeval"
    writers = {package / "io" / "atomic.py", package / "io" / "outdir.py"}
    for path in sorted(package.rglob("*.py")):
        text = path.read_text()
        assert "__wrapped__" not in text, path
        if path not in writers:
            assert "tempfile" not in text, path


def test_evaluate_checks_its_options_once(monkeypatch):
    """The settings object checked the options when it was built: inside evaluate no
    validated callable checks them again (as inside evaluate_predictions, whose settings
    object is made of checked values), work a benchmark would repeat for every method of
    thousands of small folds."""
    import medeval._validation as validation
    from medeval.io.predictions import example_paths

    pred, sizes = example_paths()
    u = read_train_sizes(sizes)
    table, s = read_predictions(pred, u), EvaluateSettings(n_bootstrap=20)
    calls = []
    check = validation.check_params
    monkeypatch.setattr(validation, "check_params", lambda *a: calls.append(a[0]) or check(*a))
    evaluate(table, u, settings=s)
    assert calls == ["evaluate"]  # its four arguments' types, not the options again
    evaluate_predictions(table.y_true, y_score=table.y_score, train_sizes=u, n_bootstrap=0)
    assert calls == ["evaluate", "evaluate_predictions"]  # the array road checks its own, once
