"""Output folders, fresh or refused: every tool writes a new folder by default; an ``--out`` that
holds files is refused (exit 2, one line naming it, every file left as it was) unless ``--force``
replaces an earlier output of medeval or ``--resume`` continues one of the same tool; a refused
run leaves nothing behind; two runs never share a default folder.

Calls are in-process (``medeval.cli.<tool>.main``): a refusal of ``--out`` comes before the tool
reads its inputs or imports its heavy modules.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from malformed_fixtures import build_results, collection_table, predictions, tree_digest

import medeval.io.outdir as outdir
from medeval.io.outdir import MARKER, mark


def _main(tool: str):
    import importlib

    return importlib.import_module(f"medeval.cli.{tool}").main


# Each tool: argv without --out (its inputs under root/in, never read before the refusal).
TOOLS = {
    "evaluate": lambda r: ["--predictions", f"{r}/in/p.csv", "--train-sizes", f"{r}/in/s.json"],
    "discover": lambda r: [
        *("--train", f"{r}/in/train.parquet", "--test", f"{r}/in/test.parquet"),
        *("--predictions", f"{r}/in/p.csv"),
    ],
    "subconcepts": lambda r: [
        *("--train", f"{r}/in/train.parquet", "--test", f"{r}/in/test.parquet"),
        *("--reference", f"{r}/in/p.csv"),
    ],
    "analyze": lambda r: ["--results", f"{r}/in"],
    "benchmark": lambda r: ["--collection", "keel", "--data", f"{r}/in"],
    "embed": lambda r: ["--source", "synthetic", "--random-init", "--no-benchmark"],
    "train": lambda r: ["data.synthetic.n_normal=144", "train.epochs=1"],
}
#: Tools whose folder is written whole (``--force`` replaces it; the others write in place).
WHOLE = ("evaluate", "discover", "subconcepts", "analyze")
#: How each tool is told to take an existing folder (embed adds to its own; train: --resume DIR).
TAKE = {"benchmark": ["--resume"], **{tool: ["--force"] for tool in WHOLE}}


def _earlier(folder: Path, tool: str) -> None:
    """An earlier output of ``tool``, as medeval writes it."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "report.html").write_text(f"<html>earlier {tool} run</html>")
    if tool in WHOLE:
        (folder / MARKER).write_text(json.dumps({"tool": tool, "files": ["report.html"]}))
    else:
        mark(folder, tool)


def _user_files(folder: Path) -> None:
    (folder / "data").mkdir(parents=True)
    (folder / "thesis.docx").write_bytes(b"four years of work")
    (folder / "data" / "scans.csv").write_text("id,label\n1,0\n")


# Each case: build the situation under root; return (--out, extra options, text of the refusal).
def _case_not_empty(root: Path, tool: str):
    _earlier(root / "prev", tool)
    return str(root / "prev"), [], "is not empty"


def _case_users_folder(root: Path, tool: str):
    _user_files(root / "mine")
    said = "not written whole by medeval" if tool in WHOLE else "has no .medeval-output.json"
    return str(root / "mine"), TAKE.get(tool, []), said


def _case_added_file(root: Path, tool: str):
    _earlier(root / "prev", tool)
    (root / "prev" / "notes.txt").write_text("the user's notes on this run")
    (root / "prev" / ".DS_Store").write_bytes(b"\0")  # a file browser's: named as well
    return str(root / "prev"), ["--force"], "did not write (.DS_Store, notes.txt)"


def _case_holds_input(root: Path, tool: str):
    _earlier(root / "in", tool)  # an earlier output into which the inputs were put
    return str(root / "in"), ["--force"], "holds the input"


def _case_other_tool(root: Path, tool: str):
    _earlier(root / "prev", "evaluate")
    return str(root / "prev"), TAKE.get(tool, []), "of medeval evaluate"


def _current(name: str, tool: str):
    if tool in WHOLE:
        return name, TAKE[tool], "holds the current folder"
    return name, [], "has no .medeval-output.json" if tool == "embed" else "is not empty"


def _case_current_folder(root: Path, tool: str):
    return _current(".", tool)


def _case_parent_folder(root: Path, tool: str):
    return _current("..", tool)


def _case_too_long(root: Path, tool: str):
    return str(root / ("r" * 300)), [], "name too long"


CASES = {
    "not-empty": (_case_not_empty, ("evaluate", "discover", "subconcepts", "analyze", "benchmark")),
    "users-folder": (_case_users_folder, (*WHOLE, "benchmark", "embed")),
    "added-file": (_case_added_file, WHOLE),
    "holds-input": (_case_holds_input, WHOLE),
    "other-tool": (_case_other_tool, ("benchmark", "embed")),
    "current-folder": (_case_current_folder, tuple(TOOLS)),
    "parent-folder": (_case_parent_folder, tuple(TOOLS)),
    "too-long": (_case_too_long, tuple(TOOLS)),
}
TABLE = [(case, tool) for case, (_f, tools) in CASES.items() for tool in tools]


@pytest.fixture
def root(tmp_path, monkeypatch):
    """tmp/work/cwd is the current folder: ``.`` and ``..`` hold the user's files."""
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setenv("MEDEVAL_RUNS", str(tmp_path / "runs"))
    cwd = tmp_path / "work" / "cwd"
    cwd.mkdir(parents=True)
    (cwd / "notes.txt").write_text("the user's notes")
    (tmp_path / "work" / "other.txt").write_text("more")
    (tmp_path / "in").mkdir()
    for name in ("p.csv", "s.json", "train.parquet", "test.parquet"):
        (tmp_path / "in" / name).write_text("x\n")
    monkeypatch.chdir(cwd)
    return tmp_path


@pytest.mark.parametrize(("case", "tool"), TABLE, ids=[f"{t}-{c}" for c, t in TABLE])
def test_a_refused_out_exits_2_naming_it_and_touches_nothing(root, case, tool, capsys):
    out, extra, reason = CASES[case][0](root, tool)
    before = tree_digest(root)
    assert _main(tool)([*TOOLS[tool](root), *extra, "--out", out]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err, err
    assert reason in err and f"--out {Path(out)}" in err, err
    assert tree_digest(root) == before


def test_train_resume_takes_only_a_run_of_train(root, capsys):
    _earlier(root / "prev", "benchmark")
    assert _main("train")(["--resume", str(root / "prev")]) == 2
    assert "holds the output of medeval benchmark" in capsys.readouterr().err
    mark(root / "run", "train")
    assert _main("train")(["--resume", str(root / "run")]) == 2
    assert "no run here (no config.yaml)" in capsys.readouterr().err


EVALUATE = ["--bootstrap", "0", "--quiet"]


def test_predictions_files_of_one_name_never_share_a_default_folder(tmp_path, monkeypatch, capsys):
    # Two predictions.csv in different folders, evaluated within the same second (the clock is
    # held there): each run gets its own new folder, neither replaces the other.
    monkeypatch.setenv("MEDEVAL_RUNS", str(tmp_path / "runs"))
    monkeypatch.setattr(outdir, "time", SimpleNamespace(strftime=lambda fmt: "20260101-120000"))
    from medeval.cli.evaluate import main

    outs = []
    for i, folder in enumerate(("a", "b")):
        (tmp_path / folder).mkdir()
        predictions(seed=i).to_csv(tmp_path / folder / "predictions.csv", index=False)
        assert main(["--predictions", str(tmp_path / folder / "predictions.csv"), *EVALUATE]) == 0
        outs.append(Path(capsys.readouterr().out.strip().splitlines()[-1].split(": ", 1)[1]))
    assert [p.name for p in outs] == [
        "evaluate-predictions-20260101-120000",
        "evaluate-predictions-20260101-120000-2",
    ]
    for folder, out in zip(("a", "b"), outs, strict=True):
        assert str(tmp_path / folder / "predictions.csv") in (out / "report.html").read_text()


def test_a_refused_evaluate_or_benchmark_leaves_nothing_and_blocks_nothing(tmp_path, capsys):
    from medeval.cli.benchmark import main as benchmark
    from medeval.cli.evaluate import main as evaluate

    bad = tmp_path / "bad.csv"
    bad.write_text("y_true,y_score\n0,0.1\n1,x\n")
    out = tmp_path / "out"
    assert evaluate(["--predictions", str(bad), "--out", str(out), *EVALUATE]) == 2
    coll = tmp_path / "coll"
    coll.mkdir()
    collection_table().to_csv(coll / "t.csv", index=False)
    bench = ["--collection", str(coll), "--out", str(tmp_path / "res"), "--no-analyze"]
    assert benchmark([*bench, "--methods", "nonsense", "--quiet"]) == 2  # refused after the check
    capsys.readouterr()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.csv", "coll"]  # nothing left
    assert evaluate(["--example", "--out", str(out), *EVALUATE]) == 0  # the next run: accepted
    small = ["--max-splits", "1", "--n-estimators", "5", "--methods", "none", "--quiet"]
    assert benchmark([*bench, *small]) == 0


def test_a_train_run_refused_after_its_start_leaves_nothing_and_blocks_nothing(
    tmp_path, capsys, tiny_overrides
):
    # Unreadable weights fail when the model is built, after the run folder got its first
    # files: the refused run removes them, so the corrected command (or a resume that finds
    # nothing to resume) is never blocked by its leftovers.
    from medeval.cli.train import main
    from medeval.flows.train import check_run_folder

    junk = tmp_path / "bad.pth"
    junk.write_bytes(b"not a state dict")
    for out in (tmp_path / "new", tmp_path / "empty"):
        if out.name == "empty":
            out.mkdir()
        assert main(["--out", str(out), *tiny_overrides, "--weights", str(junk)]) == 2
        assert "cannot load" in capsys.readouterr().err
        assert (list(out.iterdir()) == []) if out.name == "empty" else not out.exists()
        assert check_run_folder(out, resume=False) == out  # a fresh run is accepted
        assert main(["--resume", str(out)]) == 2  # a resume: nothing to resume, said so
        assert "no run here" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bad.pth", "empty"]


def test_a_benchmark_refused_for_other_settings_writes_nothing(tmp_path, capsys):
    coll = tmp_path / "coll"
    coll.mkdir()
    collection_table().to_csv(coll / "t.csv", index=False)
    out = mark(tmp_path / "results", "benchmark")
    (out / "run.json").write_text(json.dumps({"collection": "keel", "seed": 0, "n_estimators": 5}))
    before = tree_digest(tmp_path)
    argv = ["--collection", str(coll), "--out", str(out), "--resume", "--no-analyze", "--quiet"]
    assert _main("benchmark")(argv) == 2
    assert "collection='keel'" in capsys.readouterr().err
    assert tree_digest(tmp_path) == before


@pytest.fixture(scope="module")
def finished(tmp_path_factory) -> tuple[Path, Path]:
    """A finished benchmark results folder (no analysis yet) and its collection."""
    base = tmp_path_factory.mktemp("finished")
    (base / "coll").mkdir()
    collection_table().to_csv(base / "coll" / "t.csv", index=False)
    build_results(base / "res", base / "coll")
    return base / "res", base / "coll"


def test_analyze_refuses_an_unfinished_benchmark_unless_partial(tmp_path, finished, capsys):
    # A benchmark still running, or one that stopped before its end: its records are partial.
    from medeval.cli.analyze import main

    res = tmp_path / "res"
    shutil.copytree(finished[0], res)
    mark(res, "benchmark", finished=False)
    before = tree_digest(tmp_path)
    assert main(["--results", str(res), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "has not finished" in err and "--partial" in err, err
    assert tree_digest(tmp_path) == before
    assert main(["--results", str(res), "--quiet", "--partial"]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert f"PARTIAL (the benchmark writing {res} has not finished)" in line, line
    partial = [p for p in res.iterdir() if p.name.startswith("analysis-")]
    assert len(partial) == 1 and (partial[0] / "report.html").is_file()  # a new folder
    # The benchmark resumed to its end writes its own analysis/ and is finished.
    argv = ["--collection", str(finished[1]), "--out", str(res), "--resume", "--quiet"]
    argv += ["--max-splits", "1", "--n-estimators", "5", "--methods", "none"]
    assert _main("benchmark")(argv) == 0, capsys.readouterr().err
    assert (res / "analysis" / "report.html").is_file() and (partial[0] / "report.html").is_file()
    assert main(["--results", str(res), "--quiet"]) == 0
    assert "PARTIAL" not in capsys.readouterr().out
