"""Exit code 2 is for the user's errors (medeval.errors.UserError and its kinds), not for every
ValueError: a bug keeps its traceback."""

import pandas as pd
import pytest

from medeval.errors import UserError
from medeval.io.predictions import example_paths


@pytest.fixture
def no_subconcepts(tmp_path):
    """The example predictions without their true subconcepts."""
    predictions, sizes = example_paths()
    frame = pd.read_csv(predictions).drop(columns=["subconcept"]).head(300)
    path = tmp_path / "preds.csv"
    frame.to_csv(path, index=False)
    return path, sizes


def _evaluate(path, sizes, out, *extra):
    from medeval.evaluate import main

    return main(["--predictions", str(path), "--train-sizes", str(sizes), "--out", str(out),
                 "--bootstrap", "5", "--quiet", *extra])  # fmt: skip


def test_a_value_error_from_inside_is_a_bug_with_its_traceback(
    no_subconcepts, tmp_path, monkeypatch
):
    import medeval.flows.evaluate

    def broken(*args, **kwargs):
        raise ValueError("an internal inconsistency")

    monkeypatch.setattr(medeval.flows.evaluate, "evaluate_file", broken)
    with pytest.raises(ValueError, match="an internal inconsistency"):
        _evaluate(*no_subconcepts, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_user_error_from_inside_is_one_line_and_exit_2(
    no_subconcepts, tmp_path, monkeypatch, capsys
):
    import medeval.flows.evaluate

    def refused(*args, **kwargs):
        raise UserError("preds.csv: something the user can fix")

    monkeypatch.setattr(medeval.flows.evaluate, "evaluate_file", refused)
    assert _evaluate(*no_subconcepts, tmp_path / "out") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["python -m medeval.evaluate: error: preds.csv: something the user can fix"]


def test_strata_the_data_cannot_give_are_a_user_error(no_subconcepts, tmp_path, capsys):
    """--stratify subconcept needs the true test subconcepts: refused in one line, exit 2."""
    assert _evaluate(*no_subconcepts, tmp_path / "out", "--stratify", "subconcept") == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "stratify='subconcept' needs the true test subconcepts" in err[0]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    ("module", "flow", "name"),
    [
        ("medeval.subconcepts", "medeval.flows.own_model", "fit_and_evaluate"),
        ("medeval.discover", "medeval.flows.discovery", "discover_and_evaluate"),
    ],
)
def test_other_tools_keep_a_bugs_traceback_too(module, flow, name, tmp_path, monkeypatch):
    import importlib

    def broken(*args, **kwargs):
        raise ValueError("an internal inconsistency")

    monkeypatch.setattr(importlib.import_module(flow), name, broken)
    main = importlib.import_module(module).main
    files = {n: tmp_path / f"{n}.csv" for n in ("train", "test", "predictions")}
    for path in files.values():
        path.write_text("y_true\n0\n")
    argv = ["--train", str(files["train"]), "--test", str(files["test"])]
    if module == "medeval.discover":
        argv += ["--predictions", str(files["predictions"])]
    with pytest.raises(ValueError, match="an internal inconsistency"):
        main([*argv, "--out", str(tmp_path / "out"), "--quiet"])
