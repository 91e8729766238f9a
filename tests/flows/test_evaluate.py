"""evaluate: bad options exit 2, inputs a reader must know about come first, outputs replace
the previous run as a whole."""

import dataclasses
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from medeval.cli.evaluate import main
from medeval.evaluation import EvaluateSettings
from medeval.evaluation.checks import ScoreRangeWarning
from medeval.flows.evaluate import evaluate_file

NAMES = ["normal", "A", "B"]


@pytest.fixture
def files(tmp_path):
    rng = np.random.default_rng(1)
    n = 120
    sc = rng.choice(3, n, p=[0.6, 0.3, 0.1])
    y = (sc > 0).astype(int)
    df = pd.DataFrame(
        {
            "y_true": y,
            "y_score": np.clip(0.5 * y + rng.normal(0.25, 0.2, n), 0, 1).round(3),
            "subconcept": np.array(NAMES)[sc],
        }
    )
    q = rng.dirichlet(np.ones(3), n)
    for i, name in enumerate(NAMES):
        df[f"q_{name}"] = q[:, i]
    sizes = {"normal": {"class": 0, "n": 60}, "A": {"class": 1, "n": 30}, "B": {"class": 1, "n": 9}}
    pred, size_file = tmp_path / "preds.csv", tmp_path / "sizes.json"
    df.to_csv(pred, index=False)
    size_file.write_text(json.dumps(sizes))
    return df, pred, size_file, tmp_path / "out"


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--bootstrap", "-5", "argument --bootstrap: must be an int >= 0; got -5"),
        ("--bootstrap", "2.5", "argument --bootstrap: must be an int >= 0; got 2.5"),
        ("--confidence", "1.5", "argument --confidence: must be a number in (0, 1); got 1.5"),
        ("--confidence", "0", "must be a number in (0, 1); got 0"),
        ("--threshold", "nan", "argument --threshold: must be a finite number; got nan"),
        ("--threshold", "abc", "must be a finite number; got 'abc'"),
        ("--stratify", "rows", "argument --stratify: must be one of 'class', 'subconcept', "),
    ],
)
def test_bad_numeric_options_exit_2(files, capsys, option, value, message):
    _df, pred, _sizes, out = files
    with pytest.raises(SystemExit) as exc:
        main(["--predictions", str(pred), "--out", str(out), option, value])
    assert exc.value.code == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_probability_scores_with_a_threshold_outside_0_1_exit_2(files, capsys):
    _df, pred, _sizes, out = files
    assert main(["--predictions", str(pred), "--out", str(out), "--threshold", "2"]) == 2
    err = capsys.readouterr().err
    assert "threshold 2 is outside [0, 1]" in err and "every prediction would be class 0" in err
    assert "Traceback" not in err and not out.exists()


def test_scores_outside_0_1_with_a_probability_threshold_warn(files, capsys):
    df, pred, _sizes, out = files
    df["y_score"] = df["y_score"] * 10 - 5  # logits, not probabilities
    df.to_csv(pred, index=False)
    with pytest.warns(ScoreRangeWarning, match=r"not \[0, 1\]"):
        _table, ev = evaluate_file(pred, settings=EvaluateSettings(n_bootstrap=0))
    assert "threshold 0.5 is a probability" in ev.notes[0]
    assert main(["--predictions", str(pred), "--out", str(out), "--bootstrap", "0"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("note: y_score lies in [-5, 5]")


def test_one_class_in_y_true_is_said_first(files, capsys):
    df, pred, _sizes, out = files
    df = df[df.y_true == 1].drop(columns=[c for c in df if c.startswith("q_")])
    df.to_csv(pred, index=False)
    assert main(["--predictions", str(pred), "--out", str(out), "--bootstrap", "0"]) == 0
    text = capsys.readouterr().out
    first = text.splitlines()[0]
    assert first.startswith("note: y_true holds only class 1") and "undefined" in first
    notes = json.loads((out / "metrics.json").read_text())["notes"]
    assert notes[0].startswith("y_true holds only class 1")


def test_a_missing_posterior_column_is_named(files, capsys):
    df, pred, sizes, out = files
    df.drop(columns=["q_B"]).to_csv(pred, index=False)
    args = ["--predictions", str(pred), "--train-sizes", str(sizes), "--out", str(out)]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "missing ['q_B']" in err and "sum to" not in err


def test_a_rerun_replaces_the_whole_folder(files, capsys):
    df, pred, sizes, out = files
    args = ["--predictions", str(pred), "--out", str(out), "--bootstrap", "0", "--quiet"]
    assert main([*args, "--train-sizes", str(sizes)]) == 0
    assert (out / "per_subconcept.csv").is_file() and (out / "subconcepts.png").is_file()
    df.drop(columns=["subconcept"]).drop(columns=[f"q_{n}" for n in NAMES]).to_csv(pred)
    assert main([*args, "--force"]) == 0
    assert not (out / "per_subconcept.csv").exists() and not (out / "subconcepts.png").exists()
    assert sorted(p.name for p in out.parent.iterdir() if p.name.startswith(".out")) == []


def test_a_blocked_report_leaves_the_previous_run_whole(files, capsys, monkeypatch):
    _df, pred, sizes, out = files
    args = ["--predictions", str(pred), "--train-sizes", str(sizes), "--out", str(out)]
    assert main([*args, "--bootstrap", "0", "--quiet"]) == 0
    before = {p.name: p.read_bytes() for p in out.iterdir()}
    import medeval.io.atomic

    real = medeval.io.atomic.write_bytes

    def blocked(path, data):
        if str(path).endswith("report.html"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, data)

    monkeypatch.setattr(medeval.io.atomic, "write_bytes", blocked)
    assert main([*args, "--bootstrap", "20", "--quiet", "--force"]) == 2
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert "Permission denied" in capsys.readouterr().err


def test_evaluate_file_hands_the_posteriors_over_and_every_setting_on(files, monkeypatch):
    """The evaluation alone holds the posteriors (freed once its weights are made, before the
    bootstrap), the returned table has none, and every setting reaches the evaluation."""
    import weakref

    import medeval.flows.evaluate as flow
    from medeval.evaluation import evaluate_predictions
    from medeval.metrics import bootstrap

    _df, pred, sizes, _out = files
    read, held = flow.read_predictions, []

    def reading(*args, **kwargs):
        table = read(*args, **kwargs)
        held.append(weakref.ref(table.posteriors))
        return table

    alive_at_bootstrap = []
    init = bootstrap.BatchedBootstrap.__init__

    def plan(self, *args, **kwargs):
        alive_at_bootstrap.append(held[0]() is not None)
        init(self, *args, **kwargs)

    monkeypatch.setattr(flow, "read_predictions", reading)
    monkeypatch.setattr(bootstrap.BatchedBootstrap, "__init__", plan)
    s = EvaluateSettings(threshold=0.4, n_bootstrap=30, confidence=0.9, seed=3)
    table, ev = evaluate_file(pred, sizes, settings=s)
    assert alive_at_bootstrap == [False] and table.posteriors is None
    monkeypatch.undo()
    t = flow.read_predictions(pred, flow.read_train_sizes(sizes))
    kw = dict(y_score=t.y_score, subconcept=t.subconcept, posteriors=t.posteriors)
    u = flow.read_train_sizes(sizes)
    expected = evaluate_predictions(t.y_true, train_sizes=u, **kw, **dataclasses.asdict(s))
    assert ev.scores == expected.scores and ev.intervals == expected.intervals
    assert not np.isnan(ev.scores["cBA"])  # the posteriors were used


def test_evaluate_file_hands_its_settings_to_the_one_evaluation(files, monkeypatch):
    """evaluate_file hands the very settings object to :func:`medeval.evaluation.evaluate`
    (no option is spelled out, so none can be left behind), and never past a declared check
    (no __wrapped__)."""
    import medeval.flows.evaluate as flow

    _df, pred, sizes, _out = files
    real, seen = flow.evaluate, []

    def record(*args, **kwargs):
        seen.append(kwargs["settings"])
        return real(*args, **kwargs)

    monkeypatch.setattr(flow, "evaluate", record)
    s = EvaluateSettings(threshold=0.3, n_bootstrap=5, stratify="subconcept", seed=2)
    evaluate_file(pred, sizes, settings=s)
    assert seen == [s] and seen[0] is s
    assert "__wrapped__" not in Path(flow.__file__).read_text()
