"""``--out`` that must not be replaced or written into: every tool exits 2 before any work,
naming the path, and leaves every file as it was.

The table crosses the tools that take ``--out`` with the outputs a user can give by mistake: a
folder of their own files, a folder holding an input, the current folder (``.``, ``..``, ``""``),
a symbolic link, a name too long for the temporary folder beside it, another tool's output.
All calls are in-process (``medeval.cli.<tool>.main``): a refusal happens before the tool
imports its heavy modules or reads its inputs.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from medeval.io.locks import held_outputs
from medeval.io.tool_files import MARKER


def tree_digest(root: Path) -> dict[str, str]:
    """Every entry under ``root``: file bytes hashed, links by target, folders by name."""
    out = {}
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in dirs + files:
            path = Path(folder) / name
            rel = str(path.relative_to(root))
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            elif path.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def _marker(folder: Path, tool: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / MARKER).write_text(json.dumps({"tool": tool, "complete": True}))


def _user_files(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "thesis.docx").write_bytes(b"four years of work")
    (folder / "data").mkdir()
    (folder / "data" / "scans.csv").write_text("id,label\n1,0\n")


def _main(tool: str):
    import importlib

    return importlib.import_module(f"medeval.cli.{tool}").main


# Each tool: (module, argv without --out, inputs it reads: {name: relative path}).
def _evaluate_args(root: Path) -> list[str]:
    return [
        "--predictions",
        str(root / "in" / "predictions.csv"),
        "--train-sizes",
        str(root / "in" / "train_sizes.json"),
        "--bootstrap",
        "0",
        "--quiet",
    ]


def _discover_args(root: Path) -> list[str]:
    files = [root / "in" / n for n in ("train.parquet", "test.parquet", "predictions.csv")]
    return ["--train", str(files[0]), "--test", str(files[1]), "--predictions", str(files[2])]


def _analyze_args(root: Path) -> list[str]:
    return ["--results", str(root / "in"), "--quiet"]


def _benchmark_args(root: Path) -> list[str]:
    return ["--collection", "keel", "--data", str(root / "in"), "--quiet"]


def _embed_args(root: Path) -> list[str]:
    return ["--source", "synthetic", "--n-normal", "144", "--random-init", "--no-benchmark"]


def _train_args(root: Path) -> list[str]:
    return ["data.synthetic.n_normal=144", "model.backbone=vgg11", "train.epochs=1"]


TOOLS = {
    "evaluate": _evaluate_args,
    "discover": _discover_args,
    "analyze": _analyze_args,
    "benchmark": _benchmark_args,
    "embed": _embed_args,
    "train": _train_args,
}
#: Tools whose folder is replaced as a whole (the others write in place and resume).
REPLACED = ("evaluate", "discover", "analyze")


def _inputs(root: Path) -> None:
    (root / "in").mkdir()
    for name in ("predictions.csv", "train_sizes.json", "train.parquet", "test.parquet"):
        (root / "in" / name).write_text("x\n")


# Each case: build the situation under root, return (the --out given, text the message names).
def _case_user_folder(root: Path, tool: str) -> tuple[str, str]:
    _user_files(root / "mine")
    return str(root / "mine"), "not written by medeval"


def _case_other_tool(root: Path, tool: str) -> tuple[str, str]:
    other = "evaluate" if tool != "evaluate" else "discover"
    _marker(root / "prev", other)
    (root / "prev" / "report.html").write_text("<html>")
    return str(root / "prev"), f"output of medeval {other}"


def _case_added_file(root: Path, tool: str) -> tuple[str, str]:
    # An earlier output of the same tool into which the user put a file of their own.
    prev = root / "prev"
    prev.mkdir()
    (prev / "report.html").write_text("<html>")
    marker = {"tool": tool, "complete": True, "files": ["report.html"]}
    (prev / MARKER).write_text(json.dumps(marker))
    (prev / "notes.txt").write_text("the user's notes on this run")
    return str(prev), "did not write (notes.txt)"


def _case_holds_input(root: Path, tool: str) -> tuple[str, str]:
    # An earlier output of the same tool into which the inputs were put: replacing it would
    # delete them. analyze: --out is the --results folder itself.
    _marker(root / "in", "benchmark" if tool == "analyze" else tool)
    return str(root / "in"), "holds the input"


def _case_dot(root: Path, tool: str) -> tuple[str, str]:
    return ".", "--out ."


def _case_dotdot(root: Path, tool: str) -> tuple[str, str]:
    return "..", "--out .."


def _case_empty(root: Path, tool: str) -> tuple[str, str]:
    return "", "--out ."  # argparse's Path("") is the current folder


def _case_symlink(root: Path, tool: str) -> tuple[str, str]:
    (root / "real").mkdir()
    (root / "link").symlink_to(root / "real", target_is_directory=True)
    return str(root / "link"), "symbolic link"


def _case_too_long(root: Path, tool: str) -> tuple[str, str]:
    return str(root / ("r" * 250)), "name too long"


CASES = {
    "user-folder": (_case_user_folder, TOOLS),
    "other-tool": (_case_other_tool, TOOLS),
    "holds-input": (_case_holds_input, REPLACED),
    "added-file": (_case_added_file, REPLACED),
    "dot": (_case_dot, TOOLS),
    "dotdot": (_case_dotdot, TOOLS),
    "empty": (_case_empty, TOOLS),
    "symlink": (_case_symlink, REPLACED),  # resumable folders are written through a link
    "too-long": (_case_too_long, TOOLS),
}
TABLE = [(case, tool) for case, (_f, tools) in CASES.items() for tool in tools]


@pytest.fixture
def root(tmp_path, monkeypatch):
    """tmp/work/cwd is the current folder: ``.``/``..`` are folders of the user's files."""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("MEDEVAL_RUNS", str(tmp_path / "runs"))
    cwd = tmp_path / "work" / "cwd"
    cwd.mkdir(parents=True)
    (cwd / "notes.txt").write_text("the user's notes")
    (tmp_path / "work" / "other.txt").write_text("more")
    _inputs(tmp_path)
    monkeypatch.chdir(cwd)
    return tmp_path


@pytest.mark.parametrize(("case", "tool"), TABLE, ids=[f"{t}-{c}" for c, t in TABLE])
def test_a_refused_out_exits_2_naming_it_and_touches_nothing(root, case, tool, capsys):
    out, reason = CASES[case][0](root, tool)
    before, locks = tree_digest(root), held_outputs()
    argv = [*TOOLS[tool](root), "--out", out]
    assert _main(tool)(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert reason in err, err
    assert str(Path(out)) in err, err
    assert tree_digest(root) == before
    assert held_outputs() == locks  # the lock of a refused run is released


def test_tasks_split_refuses_to_overwrite_its_input_table(tmp_path, capsys):
    from medeval.cli.tasks import main

    table = tmp_path / "table.csv"
    table.write_text("a,b,label\n" + "".join(f"{i},{i % 3},{i % 2}\n" for i in range(40)))
    before = tree_digest(tmp_path)
    argv = ["split", "--source", "csv", "--path", str(table), "--out", str(table)]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"--out {table}: is the input" in err and "Traceback" not in err
    assert tree_digest(tmp_path) == before


@pytest.mark.parametrize("out", [".", "..", ""])
def test_tasks_split_refuses_a_folder_for_its_manifest(tmp_path, monkeypatch, out, capsys):
    from medeval.cli.tasks import main

    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.csv").write_text("a,label\n1,0\n2,1\n")
    before = tree_digest(tmp_path)
    assert main(["split", "--source", "csv", "--path", "t.csv", "--out", out]) == 2
    assert f"--out {Path(out)}: is a folder, not a file" in capsys.readouterr().err
    assert tree_digest(tmp_path) == before


def test_a_resumable_tool_writes_through_a_symlink_to_its_own_folder(root, capsys):
    # Not refused: benchmark resumes in place, the link stays a link. (It then fails on the
    # missing KEEL data, after the check: exit 2 naming the data, not the folder.)
    (root / "real").mkdir()
    (root / "link").symlink_to(root / "real", target_is_directory=True)
    assert _main("benchmark")([*_benchmark_args(root), "--out", str(root / "link")]) == 2
    err = capsys.readouterr().err
    assert "symbolic link" not in err and "--out" not in err
    assert (root / "link").is_symlink()
