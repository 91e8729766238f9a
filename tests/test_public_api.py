"""The public API: what ``medeval`` exports (lazily), keyword-only options, and the README's
Python example, run as written."""

from __future__ import annotations

import inspect
import re
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import numpy as np
import pytest
from sklearn.metrics import balanced_accuracy_score, roc_auc_score

import medeval
import medeval.metrics

REPO = Path(__file__).resolve().parents[1]

# what a user passes or receives -> the module that defines it
EXPORTS = {
    "evaluate_predictions": "medeval.evaluation",
    "Evaluation": "medeval.evaluation",
    "EvaluateSettings": "medeval.evaluation",
    "evaluate_file": "medeval.flows.evaluate",
    "read_predictions": "medeval.io.predictions",
    "ReferenceRows": "medeval.io.reference",
    "class_conditional_weights": "medeval.weights",
    "SubconceptScores": "medeval.metrics.streaming",
    "SubconceptRecall": "medeval.evaluation",  # defined elsewhere, re-exported by evaluation
}
# arguments that are data, positional as in scikit-learn; every other defaulted one is an option
DATA = {"train_sizes", "utilities", "names", "subconcept", "posteriors", "y_pred", "y_score"}
# results a user receives, built by medeval itself
RESULTS = {"Evaluation", "SubconceptRecall", "PredictionTable", "Utilities"}


def test_import_medeval_imports_no_heavy_library():
    code = (
        "import sys, medeval\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & "
        "{'torch', 'pandas', 'numpy', 'sklearn', 'torchmetrics'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize("name", sorted(EXPORTS))
def test_every_export_is_the_defining_modules_object(name):
    assert name in medeval.__all__ and name in dir(medeval)
    assert getattr(medeval, name) is getattr(import_module(EXPORTS[name]), name)


def test_an_unknown_name_is_an_attribute_error():
    # not a submodule's name either (medeval.evaluate is one, and exists once imported)
    with pytest.raises(AttributeError, match="no attribute 'evaluate_everything'"):
        medeval.evaluate_everything  # noqa: B018


def _callables():
    """(name, callable) for every public function and constructor of the exports."""
    for module, names in ((medeval, medeval.__all__), (medeval.metrics, medeval.metrics.__all__)):
        for name in names:
            obj = getattr(module, name)
            if name in RESULTS or not callable(obj):
                continue
            if not inspect.isclass(obj):
                yield name, obj
                continue
            if issubclass(obj, Warning):
                continue
            yield f"{name}()", obj
            for attr, value in vars(obj).items():
                if not attr.startswith("_") and isinstance(value, classmethod | type(_callables)):
                    yield f"{name}.{attr}", getattr(obj, attr)


def test_options_are_keyword_only():
    positional = {}
    for name, f in _callables():
        params = inspect.signature(f).parameters.values()
        bad = [
            p.name
            for p in params
            if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is not p.empty
            if p.name not in DATA
        ]
        if bad:
            positional[name] = bad
    assert positional == {}
    assert "SubconceptScores()" in dict(_callables())  # the check saw the constructors too


def test_settings_and_the_streaming_metrics_scores_refuse_positional_options():
    with pytest.raises(TypeError):
        medeval.EvaluateSettings(0.5)
    with pytest.raises(TypeError):
        medeval.SubconceptScores({"h": {"class": 0, "n": 5}}, ["BA"])


def _python_api_blocks() -> str:
    """The ```python blocks of the README's "## Python API" section."""
    text = (REPO / "README.md").read_text()
    section = re.search(r"^## Python API\n(.*?)(?=^## )", text, re.S | re.M)
    assert section, "README.md has no '## Python API' section"
    blocks = re.findall(r"^```python\n(.*?)^```", section.group(1), re.S | re.M)
    assert blocks, "the README's Python API section has no python block"
    return "\n".join(blocks)


def test_the_readme_python_example_runs_as_written_and_gives_sklearns_numbers(capsys):
    env: dict = {}
    exec(compile(_python_api_blocks(), "README.md (Python API)", "exec"), env)
    y, s = env["y_true"], env["y_score"]
    assert env["ba"] == pytest.approx(balanced_accuracy_score(y, s >= 0.5), abs=1e-12)
    assert env["auc"] == pytest.approx(roc_auc_score([0, 1, 0], [0.2, 0.9, 0.4]))
    ev = env["ev"]
    assert isinstance(ev, medeval.Evaluation)
    assert ev.scores["BA"] == pytest.approx(env["ba"], abs=1e-12)
    u = np.where(y == 1, 800 / 60, 1.0)  # the example's train sizes: u_A = 800 / 60
    assert ev.scores["wBA"] == pytest.approx(
        balanced_accuracy_score(y, s >= 0.5, sample_weight=u), abs=1e-12
    )
    assert "wBA" in capsys.readouterr().out  # it prints the table


def test_the_python_guide_names_every_export():
    """docs/python.md (where the README's Python API section points) names every export."""
    text = (REPO / "docs" / "python.md").read_text()
    assert "docs/python.md" in (REPO / "README.md").read_text()
    unnamed = [n for n in medeval.__all__ if n != "__version__" and f"`{n}`" not in text]
    assert unnamed == []
