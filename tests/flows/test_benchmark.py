"""medeval.flows.benchmark: the data sets chosen, every input checked before anything is written,
the Dask scheduler found, and a run's records, settings and run log (on a folder of small
tables: no shared data)."""

import json
import socket

import numpy as np
import pandas as pd
import pytest

from medeval.datasets.base import DataError
from medeval.flows.benchmark import (
    BenchmarkRun,
    BenchmarkSettings,
    check_scheduler,
    check_tables,
    run_benchmark,
    select_datasets,
)
from medeval.protocol.grid import UnitResult, resolve_collection
from medeval.protocol.store import ResultsStore, SettingsMismatch
from medeval.tasks.user import TaskSpec


def _table(seed: int, n: int = 240) -> pd.DataFrame:
    """Three numeric features and a three-valued label (the paper's ladder makes its task)."""
    rng = np.random.default_rng(seed)
    label = rng.choice(["a", "b", "c"], n, p=[0.5, 0.3, 0.2])
    frame = pd.DataFrame({f"x{i}": rng.normal(size=n) + (label == "b") * i for i in range(3)})
    return frame.assign(label=label)


@pytest.fixture
def tables(tmp_path):
    folder = tmp_path / "tables"
    folder.mkdir()
    _table(0).to_csv(folder / "toy.csv", index=False)
    _table(1).to_csv(folder / "other.csv", index=False)
    return folder


def _settings(folder, out, **kw) -> BenchmarkSettings:
    kw = {"methods": ("none",), "n_estimators": 5, "max_splits": 2, "n_bootstrap": 20, **kw}
    return BenchmarkSettings(collection=str(folder), out=out, **kw)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_select_datasets_takes_all_or_the_names_given_each_once_in_order():
    available = ["a", "b", "c"]
    assert select_datasets(None, available, "here") == available
    assert select_datasets(("c", "a", "c"), available, "here") == ["c", "a"]


@pytest.mark.parametrize(
    ("names", "match"),
    [
        ((), "no data set named; choose from a, b"),
        (("a", "x", "y"), r"data set\(s\) \['x', 'y'\] not in here; available: a, b"),
    ],
)
def test_select_datasets_refuses_no_name_or_an_unknown_one(names, match):
    with pytest.raises(DataError, match=match):
        select_datasets(names, ["a", "b"], "here")


def test_a_run_writes_one_record_per_unit_and_a_resume_runs_nothing(tables, tmp_path):
    out = tmp_path / "out"
    lines = []
    run = run_benchmark(_settings(tables, out), progress=False, log=lines.append)
    units = [(d, k) for d in ("other", "toy") for k in (0, 1)]
    assert run.out == out and run.collection == "tables" and run.wall_s > 0
    assert sorted((r.dataset, r.split, r.status) for r in run.results) == [
        (d, k, "done") for d, k in units
    ]
    assert run.errors == [] and run.rejected == []
    records = ResultsStore(out).records()
    assert sorted((r["dataset"], r["method"], r["split"]) for r in records) == [
        (d, "none", k) for d, k in units
    ]
    assert {r["n_bootstrap"] for r in records} == {20}
    assert lines == [
        "tables: 2 data sets x 1 methods x 2 splits; "
        f"4 of 4 (data set, split) units to run -> {out}"
    ]
    # the protocol's settings, and the one evaluation option that is not the protocol's
    assert ResultsStore(out).settings() == {
        "collection": "tables",
        "collection_path": str(tables),
        "seed": 0,
        "n_estimators": 5,
        "subconcepts": "true",
        "n_bootstrap": 20,
    }
    again = run_benchmark(_settings(tables, out), progress=False, log=lines.append)
    assert again.results == [] and "; 0 of 4 (data set, split) units" in lines[-1]
    runs = json.loads((out / "runs.json").read_text())
    assert [r["units_run"] for r in runs] == [4, 0]
    assert runs[0]["units_error"] == 0 and runs[0]["max_splits"] == 2
    assert runs[0]["datasets"] == ["other", "toy"] and runs[0]["methods"] == ["none"]


def test_only_the_data_sets_named_are_run(tables, tmp_path):
    out = tmp_path / "out"
    run = run_benchmark(_settings(tables, out, datasets=("toy",)), progress=False)
    assert {r.dataset for r in run.results} == {"toy"}
    assert {r["dataset"] for r in ResultsStore(out).records()} == {"toy"}


def test_a_resume_with_other_evaluation_options_is_refused_unless_forced(tables, tmp_path):
    out = tmp_path / "out"
    run_benchmark(_settings(tables, out), progress=False)
    before = {p: p.read_bytes() for p in out.rglob("*") if p.is_file()}
    with pytest.raises(SettingsMismatch, match="n_bootstrap=20, this run asks for n_bootstrap=30"):
        run_benchmark(_settings(tables, out, n_bootstrap=30), progress=False)
    assert {p: p.read_bytes() for p in out.rglob("*") if p.is_file()} == before
    forced = run_benchmark(_settings(tables, out, n_bootstrap=30, force=True), progress=False)
    assert len(forced.results) == 4
    assert {r["n_bootstrap"] for r in ResultsStore(out).records()} == {30}
    assert ResultsStore(out).settings()["n_bootstrap"] == 30


@pytest.mark.parametrize(
    ("kw", "match"),
    [
        ({"methods": ("none", "nope")}, r"unknown method\(s\) \['nope'\]"),
        ({"save_predictions": True, "subconcepts": "discovered"}, "--subconcepts true only"),
        ({"datasets": ("toy", "gone")}, r"\['gone'\] not in"),
        ({"task": TaskSpec.build("zzz").to_dict()}, "label 'zzz' in --positive"),
        ({"backend": "dask", "scheduler": "http://host:1"}, "expected tcp://host:port"),
    ],
)
def test_a_bad_input_is_refused_before_the_results_folder_is_made(tables, tmp_path, kw, match):
    out = tmp_path / "out"
    with pytest.raises(DataError, match=match):
        run_benchmark(_settings(tables, out, **kw), progress=False)
    assert not out.exists()


def test_every_bad_table_is_named_in_one_error_before_any_work(tables, tmp_path):
    for i in range(7):
        (tables / f"empty{i}.csv").write_text("x0,x1,label\n")
    (tables / "broken.csv").write_text('x0,label\n1,a\n"unclosed\n')
    collection = resolve_collection(str(tables))
    check_tables(collection, ["other", "toy"])  # the good ones pass
    with pytest.raises(DataError, match=r"broken\.csv: cannot be read"):
        check_tables(collection, ["toy", "broken"])
    with pytest.raises(DataError) as err:
        check_tables(collection, collection.datasets())
    problems = str(err.value).split("; ")
    assert problems[0].startswith(f"{tables / 'broken.csv'}: cannot be read: ")
    assert problems[1:5] == [f"{tables / f'empty{i}.csv'}: no rows" for i in range(4)]
    assert problems[5:] == ["and 3 more bad tables"]
    out = tmp_path / "out"
    with pytest.raises(DataError, match="no rows"):
        run_benchmark(_settings(tables, out), progress=False)
    assert not out.exists()


@pytest.mark.parametrize(
    ("address", "match"),
    [
        ("http://host:8786", "expected tcp://host:port"),
        ("tcp://:8786", "expected tcp://host:port"),
        ("tcp://host:port", r"not an address \(Port could not be cast"),
        ("127.0.0.1:{port}", "no Dask scheduler reachable"),
        ("tcp://127.0.0.1:{port}", "no Dask scheduler reachable"),
    ],
)
def test_check_scheduler_names_an_address_where_no_scheduler_listens(address, match):
    address = address.format(port=_closed_port())
    with pytest.raises(DataError, match=f"^--scheduler {address}: {match}"):
        check_scheduler(address, timeout=1.0)


def test_check_scheduler_passes_a_listening_address_and_leaves_tls_to_dask():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert check_scheduler(f"127.0.0.1:{port}") is None
        assert check_scheduler(f"tcp://127.0.0.1:{port}") is None
    assert check_scheduler("tls://host.invalid:1", timeout=0.1) is None  # never connected


def test_a_runs_errors_are_its_failed_units_and_rejected_its_data_sets_once():
    results = [
        UnitResult("a", 0, "done"),
        UnitResult("b", 0, "rejected"),
        UnitResult("b", 1, "rejected"),
        UnitResult("c", 0, "error", message="boom"),
        UnitResult("a", 1, "rejected"),
    ]
    run = BenchmarkRun("out", "tables", results, 1.0)
    assert run.errors == [results[3]]
    assert run.rejected == ["a", "b"]
