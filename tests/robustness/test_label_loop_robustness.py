"""The labelling loop's inputs and folders (``python -m medeval.label``, ``evaluate --labels``):
a killed or interrupted run blocks no rerun; ``--force`` never deletes a sheet filled in place;
a labels file without rows, a later batch without the earlier ones, a threshold outside the
scores' range, ``--split`` without ``--run``, a label value with an invisible character or a
byte that is not UTF-8 are each one line naming the file, row and value (exit 2). Beside them:
a training config is checked whole before the files it names, and an image table reads a hidden
file by its path with or without its suffix, as it reads one in a hidden folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import label_data
import numpy as np
import pandas as pd
import pytest
from PIL import Image
from test_malformed_inputs import run_tool

from medeval.io.outdir import MARKER

QUIET = ["--quiet"]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    return label_data.write(tmp_path_factory.mktemp("inputs"), n=300, seed=2)


def _label_argv(files, out, *extra) -> list[str]:
    argv = ["--predictions", str(files["predictions"]), "--train-sizes"]
    return [*argv, str(files["train_sizes"]), "--out", str(out), *QUIET, *extra]


def _evaluate_argv(files, out, *extra) -> list[str]:
    return _label_argv(files, out, "--bootstrap", "0", *extra)


def _one_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


def _sheet(path: Path) -> pd.DataFrame:
    return pd.read_csv(path, dtype=str, keep_default_na=False)


def _filled(files, tmp_path: Path, name: str = "labels.csv", **changes) -> Path:
    """The first batch's sheet filled with the true subconcepts, then ``changes`` applied
    (``column=(row, value)``)."""
    out = tmp_path / f"sheet-{name}"
    if not (out / "to_label.csv").is_file():
        assert run_tool("label", _label_argv(files, out)) == 0
    path = label_data.fill(out / "to_label.csv", files["truth"], tmp_path / name)
    frame = _sheet(path)
    for column, (row, value) in changes.items():
        frame.loc[row, column] = value
    frame.to_csv(path, index=False)
    return path


# 1. a killed or interrupted run ---------------------------------------------------------------

KILLED = """
import os, signal, sys
import medeval.io.atomic as atomic
write_files = atomic.write_files

def killed(folder, files):  # the first file written, then the process killed
    write_files(folder, dict(list(files.items())[:1]))
    os.kill(os.getpid(), signal.SIGKILL)

atomic.write_files = killed
from medeval.cli.{tool} import main
main(sys.argv[1:])
"""


@pytest.mark.parametrize("tool", ["label", "evaluate"])
def test_a_killed_run_leaves_nothing_that_blocks_its_rerun(files, tmp_path, tool, capsys):
    out = tmp_path / "out"
    argv = (_label_argv if tool == "label" else _evaluate_argv)(files, out)
    child = subprocess.run(
        [sys.executable, "-c", KILLED.replace("{tool}", tool), *argv],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert child.returncode == -9, child.stderr  # killed while writing its files
    assert not out.exists() or not any(out.iterdir())  # no marker, no file in --out
    assert run_tool(tool, argv) == 0, capsys.readouterr().err  # the same command runs
    main = "to_label.csv" if tool == "label" else "metrics.json"
    assert (out / main).is_file() and json.loads((out / MARKER).read_text())["tool"] == tool
    left = [p.name for p in tmp_path.iterdir() if p.name.startswith(".out.medeval-")]
    assert len(left) <= 1  # at most the killed run's hidden folder beside --out (docs/cli.md)


@pytest.mark.parametrize("tool", ["label", "evaluate"])
def test_an_interrupted_run_leaves_nothing_that_blocks_its_rerun(
    files, tmp_path, tool, monkeypatch, capsys
):
    import medeval.io.atomic as atomic

    out = tmp_path / "out"
    argv = (_label_argv if tool == "label" else _evaluate_argv)(files, out)
    write_files = atomic.write_files

    def interrupted(folder, written):
        write_files(folder, dict(list(written.items())[:1]))
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic, "write_files", interrupted)
    assert run_tool(tool, argv) == 130
    assert "interrupted" in capsys.readouterr().err
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == []
    monkeypatch.setattr(atomic, "write_files", write_files)
    assert run_tool(tool, argv) == 0, capsys.readouterr().err


# 2. --force and a sheet filled in place -------------------------------------------------------


def test_force_refuses_a_sheet_filled_in_place_naming_it(files, tmp_path, capsys):
    out = tmp_path / "label-1"
    assert run_tool("label", _label_argv(files, out)) == 0
    assert run_tool("label", _label_argv(files, out, "--force")) == 0  # untouched: replaced
    sheet = out / "to_label.csv"
    label_data.fill(sheet, files["truth"], tmp_path / "filled.csv")
    sheet.write_bytes((tmp_path / "filled.csv").read_bytes())  # filled where it lies
    work = sheet.read_bytes()
    assert run_tool("label", _label_argv(files, out, "--force")) == 2
    err = _one_error(capsys)
    assert f"--out {out}: to_label.csv changed since medeval wrote it" in err, err
    assert "would delete that work" in err
    assert sheet.read_bytes() == work  # the user's labels are kept


def test_force_refuses_an_evaluate_output_edited_in_place(files, tmp_path, capsys):
    out = tmp_path / "eval"
    assert run_tool("evaluate", _evaluate_argv(files, out)) == 0
    with open(out / "metrics.csv", "a") as f:
        f.write("\nmy reading of these results\n")
    assert run_tool("evaluate", _evaluate_argv(files, out, "--force")) == 2
    assert "metrics.csv changed since medeval wrote it" in _one_error(capsys)


# 3.-4. labels without rows, a later batch without the earlier ones ----------------------------


@pytest.mark.parametrize("tool", ["label", "evaluate"])
def test_a_labels_file_with_a_header_and_no_rows_is_named(files, tmp_path, tool, capsys):
    empty = tmp_path / "labels.csv"
    empty.write_text("id,inclusion_probability,batch,class,candidates,subconcept\n")
    argv = (_label_argv if tool == "label" else _evaluate_argv)(files, tmp_path / "out")
    assert run_tool(tool, [*argv, "--labels", str(empty)]) == 2
    err = _one_error(capsys)
    assert f"{empty}: no labelled rows" in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("tool", ["label", "evaluate"])
def test_a_later_batch_without_the_earlier_ones_is_refused(files, tmp_path, tool, capsys):
    first = _filled(files, tmp_path)
    second = tmp_path / "second"
    assert run_tool("label", _label_argv(files, second, "--labels", str(first))) == 0
    alone = label_data.fill(second / "to_label.csv", files["truth"], tmp_path / "alone.csv")
    assert (_sheet(alone)["batch"] == "2").all()
    argv = (_label_argv if tool == "label" else _evaluate_argv)(files, tmp_path / "out")
    assert run_tool(tool, [*argv, "--labels", str(alone)]) == 2
    err = _one_error(capsys)
    assert f"{alone}, column 'batch': row 2: batch 2 is given without batch 1" in err, err
    both = label_data.fill(second / "to_label.csv", files["truth"], first)  # appended: taken
    assert run_tool(tool, [*argv, "--labels", str(both)]) == 0, capsys.readouterr().err


# 5. options ---------------------------------------------------------------------------------


@pytest.mark.parametrize("threshold", ["2", "-0.5"])
def test_label_refuses_a_threshold_outside_the_probability_scores(
    files, tmp_path, threshold, capsys
):
    assert run_tool("label", _label_argv(files, tmp_path / "out", "--threshold", threshold)) == 2
    err = _one_error(capsys)
    assert f"the threshold {threshold} is outside [0, 1] (option --threshold" in err, err
    assert str(files["predictions"]) in err and not (tmp_path / "out").exists()


def test_label_refuses_split_without_run(files, tmp_path, capsys):
    assert run_tool("label", _label_argv(files, tmp_path / "out", "--split", "3")) == 2
    err = _one_error(capsys)
    assert "--split 3: a split of a training run, used only with --run" in err, err


# 6. values the eye cannot read --------------------------------------------------------------


def test_a_zero_width_space_in_a_label_is_named_escaped(files, tmp_path, capsys):
    labels = _filled(files, tmp_path)
    given = _sheet(labels)["subconcept"][3]
    labels = _filled(files, tmp_path, subconcept=(3, given + "\u200b"))
    assert run_tool("label", _label_argv(files, tmp_path / "out", "--labels", str(labels))) == 2
    err = _one_error(capsys)
    assert f"{labels}, column 'subconcept': row 5: subconcept '{given}\\u200b'" in err, err
    assert f"prints like '{given}' but differs from it by invisible characters" in err


@pytest.mark.parametrize("tool", ["label", "evaluate"])
def test_a_latin1_byte_in_a_label_is_named_with_its_row_and_value(files, tmp_path, tool, capsys):
    frame = _sheet(_filled(files, tmp_path))
    frame.loc[3, "subconcept"] = "caf\xe9"
    labels = tmp_path / "latin1.csv"
    frame.to_csv(labels, index=False, encoding="latin-1")
    argv = (_label_argv if tool == "label" else _evaluate_argv)(files, tmp_path / "out")
    assert run_tool(tool, [*argv, "--labels", str(labels)]) == 2
    err = _one_error(capsys)
    assert f"{labels}, row 4: not UTF-8 text (line 5 in column 'subconcept': 'caf\\xe9'" in err
    assert "save it as UTF-8" in err


def test_a_latin1_byte_in_a_predictions_id_is_named(files, tmp_path, capsys):
    frame = pd.read_csv(files["predictions"], dtype=str)
    frame.loc[6, "id"] = "r\xe9sum\xe9"
    bad = tmp_path / "predictions.csv"
    frame.to_csv(bad, index=False, encoding="latin-1")
    argv = ["--predictions", str(bad), "--train-sizes", str(files["train_sizes"]), *QUIET]
    assert run_tool("label", [*argv, "--out", str(tmp_path / "out")]) == 2
    err = _one_error(capsys)
    assert f"{bad}, row 7: not UTF-8 text (line 8 in column 'id': 'r\\xe9sum\\xe9'" in err, err


# 7. a training config checked whole before the files it names --------------------------------


def test_a_bad_backbone_is_named_before_missing_weights(tmp_path, capsys):
    config = tmp_path / "config.yaml"
    config.write_text("model:\n  backbone: vgg99\n")
    argv = ["--config", str(config), "--weights", str(tmp_path / "nope.pth")]
    assert run_tool("train", [*argv, "--out", str(tmp_path / "run")]) == 2
    err = _one_error(capsys)
    assert "unknown backbone 'vgg99'" in err and "nope.pth" not in err, err
    assert not (tmp_path / "run").exists()


# 8. hidden files in an image table --------------------------------------------------------------


def _png(path: Path, value: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.full((8, 8, 3), value, dtype=np.uint8)).save(path)


def test_an_image_table_reads_hidden_files_as_it_reads_hidden_folders(tmp_path):
    from medeval.datasets import load

    images = tmp_path / "images"
    for i, name in enumerate(["a.png", ".x.png", ".hidden/b.png", ".hidden/c.png"]):
        _png(images / name, 30 * i)
    cells = ["a", ".x", ".hidden/b", ".hidden/c.png"]  # suffix left out, or given
    table = tmp_path / "table.csv"
    pd.DataFrame({"image": cells, "label": ["p", "q", "p", "q"]}).to_csv(table, index=False)
    data = load("images", table, images=images)
    assert [Path(f).relative_to(images).as_posix() for f in data.files] == [
        "a.png",
        ".x.png",
        ".hidden/b.png",
        ".hidden/c.png",
    ]
    _png(images / ".x.jpg", 200)  # two files fit the bare name: refused as any other name
    with pytest.raises(Exception, match=r"row 1 \(line 3\).*ambiguous: 2 image files fit it"):
        load("images", table, images=images)
