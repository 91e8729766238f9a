"""Every notebook executes top to bottom on small data (nbclient), importing medeval only."""

import os
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"


def _execute(path: Path, env: dict[str, str]) -> nbformat.NotebookNode:
    """Run ``path`` in a fresh kernel with ``env`` added (an empty value removes a variable)."""
    nb = nbformat.read(path, as_version=4)
    old = {k: os.environ.get(k) for k in env}
    for k, v in env.items():  # the kernel inherits the environment
        if v:
            os.environ[k] = v
        else:
            os.environ.pop(k, None)
    try:
        NotebookClient(
            nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}
        ).execute()
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    return nb


def _outputs(nb) -> str:
    text = []
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            text.append(out.get("text", "") + str(out.get("data", {}).get("text/plain", "")))
    return "\n".join(text)


def _images(nb) -> int:
    return sum("image/png" in o.get("data", {}) for c in nb.cells for o in c.get("outputs", []))


@pytest.mark.slow
def test_metrics_walkthrough_notebook():
    # no MPLBACKEND: the kernel's inline backend puts the figures into the notebook
    nb = _execute(NOTEBOOKS / "01_metrics_walkthrough.ipynb", {"MPLBACKEND": ""})
    text = _outputs(nb)
    assert "wBA = 0.737" in text and "BA  = 0.907" in text
    assert "UndefinedMetricWarning" in text and "nan" in text
    assert _images(nb) >= 2


@pytest.mark.slow
def test_inspect_a_run_notebook_trains_a_tiny_run_when_none_is_given():
    nb = _execute(NOTEBOOKS / "02_inspect_a_run.ipynb", {"MPLBACKEND": "", "MEDEVAL_RUN": ""})
    text = _outputs(nb)
    assert "SYNTHETIC" in text and "temperature" in text and "ece_test_after" in text
    assert _images(nb) >= 4  # subconcept figure, curves, reliability, hardest images
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert not errors


@pytest.mark.slow
def test_benchmark_results_notebook_runs_a_small_benchmark_when_none_is_given(shared_data):
    nb = _execute(
        NOTEBOOKS / "03_benchmark_results.ipynb",
        {"MPLBACKEND": "", "MEDEVAL_RESULTS": "", "MEDEVAL_DATA": str(shared_data)},
    )
    text = _outputs(nb)
    assert "16 records, 4 data sets" in text and "subconcept model" in text
    assert _images(nb) >= 3  # RQ1 gap, RQ2 scatter, RQ3 sheet
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert not errors


@pytest.mark.slow
def test_tuning_notebook_compares_choices_by_ba_and_by_subconcept_scores(shared_data):
    nb = _execute(
        NOTEBOOKS / "04_tuning_by_subconcept_score.ipynb",
        {"MPLBACKEND": "", "MEDEVAL_DATA": str(shared_data)},
    )
    text = _outputs(nb)
    assert "keel/vehicle: KEPT" in text
    assert all(f"chosen by {s:>3}:" in text for s in ("BA", "pBA", "cBA", "wBA"))
    assert "per-subconcept recall on the test half" in text and "van" in text
    assert "held-out wBA, cBA's choice minus BA's choice" in text
    assert _images(nb) >= 1  # per-subconcept recall bars
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o["output_type"] == "error"]
    assert not errors
