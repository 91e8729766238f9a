"""python -m medeval.benchmark: interrupt and resume, skip, --force, errors, folder collections."""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from medeval.benchmark import main
from medeval.datasets import load
from medeval.protocol.store import ResultsStore

REPO = Path(__file__).resolve().parents[2]
SMALL = [
    "--datasets",
    "vehicle,segment",
    "--methods",
    "none,rus",
    "--n-estimators",
    "5",
    "--max-splits",
    "4",
    "--quiet",
]
N_RECORDS = 2 * 2 * 4


def _args(shared_data, out, *extra):
    return ["--collection", "keel", "--data", str(shared_data), "--out", str(out), *SMALL, *extra]


def _strip(records):
    return [{k: v for k, v in r.items() if k != "timing"} for r in records]


def _mtimes(out):
    return {p: p.stat().st_mtime_ns for p in (Path(out) / "records").rglob("*.json")}


@pytest.fixture(scope="module")
def reference(shared_data, tmp_path_factory):
    """An uninterrupted run, analyses included."""
    out = tmp_path_factory.mktemp("reference")
    assert main(_args(shared_data, out)) == 0
    return out


def test_uninterrupted_run_writes_records_and_analyses(reference):
    records = ResultsStore(reference).records()
    assert len(records) == N_RECORDS
    assert {(r["dataset"], r["method"]) for r in records} == {
        (d, m) for d in ("vehicle", "segment") for m in ("none", "rus")
    }
    assert {r["split"] for r in records} == {0, 1, 2, 3}
    analysis = reference / "analysis"
    assert pd.read_csv(analysis / "rq1.csv").n_datasets.eq(2).all()
    assert (analysis / "rq1_gap_keel.png").is_file() and (analysis / "rq2.md").is_file()
    runs = json.loads((reference / "runs.json").read_text())
    assert runs[-1]["units_run"] == 8 and runs[-1]["wall_s"] > 0


def test_killed_run_resumes_to_identical_results(shared_data, reference, tmp_path, capfd):
    out = tmp_path / "killed"
    env = {**os.environ, "MEDEVAL_DATA": str(shared_data), "MPLBACKEND": "Agg"}
    cmd = [sys.executable, "-m", "medeval.benchmark", *_args(shared_data, out, "--no-analyze")]
    proc = subprocess.Popen(
        cmd,
        cwd=REPO,
        env=env,
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 120
    try:
        while len(list((out / "records").rglob("*.json"))) < 3:
            assert proc.poll() is None, "the run ended before it could be interrupted"
            assert time.monotonic() < deadline, "no records appeared within 120 s"
            time.sleep(0.01)
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    done = len(ResultsStore(out).records())
    assert 3 <= done < N_RECORDS
    assert not ResultsStore(out).finished()  # said by analyze, which needs --partial then
    capfd.readouterr()
    assert main(_args(shared_data, out)) == 2  # an existing folder: continued only when asked
    assert "is not empty; continue it with --resume" in capfd.readouterr().err
    assert main(_args(shared_data, out, "--resume")) == 0
    assert ResultsStore(out).finished()
    assert "units to run" in capfd.readouterr().err
    assert _strip(ResultsStore(out).records()) == _strip(ResultsStore(reference).records())


def test_rerun_skips_finished_work_and_force_recomputes(shared_data, reference, tmp_path, capfd):
    out = tmp_path / "copy"
    shutil.copytree(reference, out)
    before = _mtimes(out)
    capfd.readouterr()
    assert main(_args(shared_data, out, "--no-analyze", "--resume")) == 0
    assert "0 of 8 (data set, split) units to run" in capfd.readouterr().err
    assert _mtimes(out) == before
    assert main(_args(shared_data, out, "--no-analyze", "--force")) == 0
    after = _mtimes(out)
    assert after.keys() == before.keys() and all(after[p] != before[p] for p in before)
    assert _strip(ResultsStore(out).records()) == _strip(ResultsStore(reference).records())


def test_other_settings_in_the_same_folder_are_refused(shared_data, reference, capsys):
    assert main(_args(shared_data, reference, "--n-estimators", "7", "--resume")) == 2
    assert re.search("n_estimators=5.*n_estimators=7.*--force", capsys.readouterr().err)


def test_the_evaluation_options_set_the_intervals_and_a_resume_with_others_is_refused(
    shared_data, reference, tmp_path, capsys
):
    out = tmp_path / "b50"
    one = ["--datasets", "vehicle", "--methods", "none", "--max-splits", "1", "--no-analyze"]
    asked = ["--bootstrap", "50", "--confidence", "0.9"]
    args = [*_args(shared_data, out), *one, *asked]  # the later --datasets... win
    assert main(args) == 0
    (rec,) = ResultsStore(out).records()
    (ref,) = [
        r
        for r in ResultsStore(reference).records()
        if (r["dataset"], r["method"], r["split"]) == ("vehicle", "none", 0)
    ]
    assert (ref["n_bootstrap"], ref["confidence"]) == (200, 0.95)
    assert (rec["n_bootstrap"], rec["confidence"]) == (50, 0.9)
    assert rec["scores"] == ref["scores"]  # the same forests: only the intervals differ

    def width(r):
        return sum(hi - lo for lo, hi in r["intervals"].values() if lo is not None)

    assert width(rec) < width(ref)  # 90 % intervals are narrower than 95 % ones
    settings = json.loads((out / "run.json").read_text())
    assert (settings["n_bootstrap"], settings["confidence"]) == (50, 0.9)
    # a default run's settings record is as it always was: no evaluation options in it
    assert not {"n_bootstrap", "confidence"} & set(json.loads((reference / "run.json").read_text()))
    capsys.readouterr()
    assert main([*_args(shared_data, out), *one, "--bootstrap", "100", "--resume"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and re.search("n_bootstrap=50.*n_bootstrap=100.*--force", err[0]), err
    resume = ["--no-analyze", "--resume"]
    assert main([*_args(shared_data, reference), *resume, "--stratify", "none"]) == 2
    assert re.search("stratify='class'.*stratify='none'", capsys.readouterr().err)
    # the protocol's own values, given explicitly, resume the default folder
    assert main([*_args(shared_data, reference), *resume, "--bootstrap", "200"]) == 0
    assert "0 of" in capsys.readouterr().err


def test_discovered_subconcepts_run_and_folder_guard(shared_data, reference, tmp_path, capsys):
    out = tmp_path / "discovered"
    args = [
        "--collection", "keel", "--data", str(shared_data), "--out", str(out),
        "--datasets", "vehicle", "--methods", "none", "--n-estimators", "5", "--max-splits", "2",
        "--subconcepts", "discovered", "--quiet",
    ]  # fmt: skip
    assert main(args) == 0
    records = ResultsStore(out).records()
    assert [r["subconcepts"] for r in records] == ["discovered", "discovered"]
    disc = pd.read_csv(out / "analysis" / "discovery.csv")
    assert set(disc["class"]) == {0, 1} and (disc.n_splits == 2).all()
    assert {r["subconcepts"] for r in ResultsStore(reference).records()} == {"true"}
    capsys.readouterr()
    assert main(_args(shared_data, reference, "--subconcepts", "discovered", "--resume")) == 2
    assert re.search("subconcepts='true'.*subconcepts='discovered'", capsys.readouterr().err)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--datasets", "vehicle,nope"], r"\['nope'\] not in"),
        (["--methods", "none,adasyn"], "adasyn"),
        (["--max-splits", "11"], "max-splits"),
    ],
)
def test_bad_arguments_exit_2_and_name_the_problem(shared_data, tmp_path, capsys, extra, message):
    args = ["--collection", "keel", "--data", str(shared_data), "--out", str(tmp_path), *extra]
    try:
        code = main(args)
    except SystemExit as exc:  # argparse's own checks
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert re.search(message, err) and "Traceback" not in err


def test_folder_of_tables_collection(shared_data, tmp_path):
    folder = tmp_path / "embeddings"
    folder.mkdir()
    data = load("keel", shared_data / "keel", name="vehicle")
    frame = pd.DataFrame(data.X, columns=[f"e{i}" for i in range(data.X.shape[1])])
    frame.assign(label=data.labels).to_csv(folder / "vehicle.csv.gz", index=False)
    out = tmp_path / "out"
    args = [
        "--collection",
        str(folder),
        "--out",
        str(out),
        "--methods",
        "weight",
        "--n-estimators",
        "5",
        "--max-splits",
        "2",
        "--quiet",
    ]
    assert main(args) == 0
    records = ResultsStore(out).records()
    assert [(r["collection"], r["dataset"], r["method"]) for r in records] == [
        ("embeddings", "vehicle", "weight")
    ] * 2
    assert (out / "analysis" / "rq3" / "vehicle.png").is_file()


def _children(pid):
    """Child processes of ``pid``, whichever of its threads started them (loky starts its
    workers from a manager thread, whose children the main thread's list does not show)."""
    out = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(c) for c in (task / "children").read_text().split()]
        except OSError:  # the thread ended meanwhile
            continue
    return sorted(set(out))


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().split(")")[-1].split()[0] == "Z")


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_sigterm_stops_the_worker_processes_too(shared_data, tmp_path):
    out = tmp_path / "term"
    env = {**os.environ, "MEDEVAL_DATA": str(shared_data), "MPLBACKEND": "Agg"}
    cmd = [
        sys.executable,
        "-m",
        "medeval.benchmark",
        *_args(shared_data, out, "--no-analyze"),
        "--jobs",
        "2",
        "--n-estimators",
        "200",
    ]  # later value wins: slow enough to catch
    proc = subprocess.Popen(
        cmd, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 120
    workers = []
    try:
        while len(workers) < 2:
            assert proc.poll() is None and time.monotonic() < deadline
            workers = _children(proc.pid)
            time.sleep(0.05)
    finally:
        proc.terminate()
        assert proc.wait(timeout=60) == 128 + signal.SIGTERM
    deadline = time.monotonic() + 30
    while any(map(_alive, workers)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(map(_alive, workers))


def test_help_documents_the_folder_contract(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--help"])
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for needle in ('Column "label"', 'column "group"', "medeval.embed", "--scheduler", "--force"):
        assert needle in text


def test_a_parallel_grid_from_the_shell_exits_when_done(shared_data, tmp_path):
    """With --jobs 2 the worker pool is still alive when the grid ends; the command must stop
    it and exit with 0 (ending the process early there once left it waiting forever)."""
    out = tmp_path / "jobs2"
    env = {**os.environ, "MEDEVAL_DATA": str(shared_data), "MPLBACKEND": "Agg"}
    cmd = [sys.executable, "-m", "medeval.benchmark", *_args(shared_data, out, "--no-analyze")]
    proc = subprocess.run(
        [*cmd, "--jobs", "2", "--quiet"], cwd=REPO, env=env, capture_output=True, timeout=300
    )
    assert proc.returncode == 0, proc.stderr.decode()[-2000:]
    assert len(ResultsStore(out).records()) > 0


def test_a_bad_analysis_folder_or_an_empty_selection_stops_before_any_work(
    shared_data, tmp_path, capsys, monkeypatch
):
    import medeval.flows.benchmark as bench

    def no_work(*args, **kwargs):
        raise AssertionError("the work started before the input was refused")

    monkeypatch.setattr(bench, "plan_units", no_work)
    from medeval.io.outdir import mark

    out = mark(tmp_path / "res", "benchmark")  # an earlier benchmark's folder, into whose
    (out / "analysis").mkdir()  # analysis/ a file was put
    (out / "analysis" / "mine.txt").write_text("the user's")
    assert main(_args(shared_data, out, "--resume")) == 2
    err = capsys.readouterr().err
    assert "--out's analysis folder" in err and "not written whole by medeval" in err, err
    assert (out / "analysis" / "mine.txt").read_text() == "the user's"
    for option in ("--datasets", "--methods"):
        assert main(_args(shared_data, tmp_path / "e", "--no-analyze", option, "")) == 2
        err = capsys.readouterr().err
        assert "named; choose from" in err, err
        assert not (tmp_path / "e" / "run.json").exists()
