"""README's journey 2, run verbatim: the label loop as a team lives it, from
``python -m medeval.subconcepts --example`` through a batch labelled from ``test_truth.csv``
to ``evaluate --labels`` and the next batch; what it prints is what the README shows."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pandas as pd

from medeval.cli.evaluate import main as evaluate_main
from medeval.cli.label import main as label_main
from medeval.cli.subconcepts import main as subconcepts_main

REPO = Path(__file__).resolve().parents[2]
TOOLS = {
    "medeval.subconcepts": subconcepts_main,
    "medeval.label": label_main,
    "medeval.evaluate": evaluate_main,
}


def _commands() -> list[list[str]]:
    """The README's journey-2 block, one command a line."""
    text = (REPO / "README.md").read_text()
    block = re.search(r"<!-- journey-2-check -->\n```bash\n(.*?)```", text, re.S)
    assert block, "README.md lost its journey-2-check block"
    return [shlex.split(c) for c in block.group(1).splitlines() if c.strip()]


def _run(argv: list[str]) -> int:
    assert argv[0] == "python", argv
    if argv[1] == "-c":  # the expert's one line, run as python -c would
        exec(compile(argv[2], "<readme>", "exec"), {"__name__": "__main__"})
        return 0
    assert argv[1] == "-m" and argv[2] in TOOLS, argv
    return TOOLS[argv[2]](argv[3:])


def test_readme_journey_2_runs_verbatim(shared_data, tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MEDEVAL_DATA", str(shared_data))
    commands = _commands()
    assert [c[:3] for c in commands][:2] == [
        ["python", "-m", "medeval.subconcepts"],
        ["python", "-m", "medeval.label"],
    ]
    assert "--example" in commands[0]
    printed = []
    for argv in commands:
        assert _run(argv) == 0, argv
        printed.append(capsys.readouterr().out)
    model = Path("runs/my-model")
    for name in ("train.csv", "test.csv", "reference.csv", "test_truth.csv", "predictions.csv"):
        assert (model / name).is_file(), name
    assert (model / "train_sizes.json").is_file() and (model / "validation.csv").is_file()
    truth = pd.read_csv(model / "test_truth.csv")
    assert list(truth.columns) == ["id", "subconcept"] and len(truth) == 180
    sheet = pd.read_csv("runs/label-1/to_label.csv")
    assert sheet["subconcept"].notna().all() and len(sheet) == 20  # filled in place
    evaluated = printed[3]
    assert "note: labels: 20 of 180 test rows labelled (to_label.csv, 1 batch(es))" in evaluated
    assert "20 of 180 test rows are labelled (--labels)" in evaluated  # the wBA line
    header = next(line for line in evaluated.splitlines() if line.startswith("subconcept "))
    assert header.split()[-2:] == ["n_ref", "n_lab"]
    m = json.loads(Path("runs/eval-1/metrics.json").read_text())
    per = {r["subconcept"]: r for r in m["per_subconcept"]}
    csv = pd.read_csv("runs/eval-1/per_subconcept.csv").set_index("subconcept")
    counts = sheet["subconcept"].value_counts().to_dict()
    for name, r in per.items():
        assert r["n_labelled"] == csv.loc[name, "n_labelled"] == counts.get(name, 0)
    # the README's printed lines are the commands' own
    readme = (REPO / "README.md").read_text()
    shown = readme.split("<!-- journey-2-check -->")[1].split("## 3.")[0]
    for line in re.search(r"\(trimmed\):\n\n```\n(.*?)```", shown, re.S).group(1).splitlines():
        if "..." in line:  # a trimmed table row: its first and last cells
            first, last = line.split("...")
            assert any(
                row.startswith(first.rstrip()) and row.endswith(last.strip())
                for out in printed
                for row in out.splitlines()
            ), line
        else:
            assert any(line in out for out in printed), line
    # opel, decided `below` on the reference rows alone at 95 %, is reopened at the first
    # look's stricter level, and the line says so; the second label aims its batch at it
    reopened = [x for x in (printed[3] + printed[4]).splitlines() if "verdict reopened" in x]
    assert reopened and all("opel:" in x and "read at 99.93%, was 95.00%" in x for x in reopened)
    assert "batch 2: 20 rows to label, aimed at" in printed[4] and "opel (~" in printed[4]
    assert "loop can stop" not in printed[4]
