"""The (data set, split) grid: planning, folder collections, joblib and Dask backends."""

import numpy as np
import pandas as pd
import pytest

from medeval.datasets import DataError, load
from medeval.protocol.grid import plan_units, resolve_collection, run_grid
from medeval.protocol.store import ResultsStore
from medeval.splits import cv_5x2
from medeval.tasks import make_binary_task

DATASETS = ["vehicle", "segment"]


def _strip(records):
    return [{k: v for k, v in r.items() if k != "timing"} for r in records]


def _run(tmp, collection, backend="loky", jobs=1, scheduler=None, methods=("none", "rus")):
    store = ResultsStore(tmp)
    units = plan_units(
        store, collection, DATASETS, list(methods), seed=0, n_estimators=5, splits=range(2)
    )
    results = run_grid(units, jobs=jobs, backend=backend, scheduler=scheduler, progress=False)
    assert [r.message for r in results if r.status != "done"] == []
    return store


@pytest.fixture(scope="module")
def keel(shared_data):
    return resolve_collection("keel", shared_data)


@pytest.fixture(scope="module")
def local_run(tmp_path_factory, keel):
    return _run(tmp_path_factory.mktemp("local"), keel)


def test_plan_skips_finished_records_and_recomputes_missing_methods(tmp_path, keel, local_run):
    store = local_run
    assert len(store.records()) == 2 * 2 * 2
    again = plan_units(
        store, keel, DATASETS, ["none", "rus"], seed=0, n_estimators=5, splits=range(2)
    )
    assert again == []
    more = plan_units(
        store, keel, DATASETS, ["none", "rus", "smote"], seed=0, n_estimators=5, splits=range(2)
    )
    assert {u.methods for u in more} == {("smote",)} and len(more) == 4
    forced = plan_units(
        store, keel, DATASETS, ["none"], seed=0, n_estimators=5, splits=range(2), force=True
    )
    assert len(forced) == 4
    # small data sets first (file size), so an interrupted run has the most complete sets
    assert more[0].dataset == "vehicle"


def test_results_do_not_depend_on_jobs(tmp_path, keel, local_run):
    parallel = _run(tmp_path, keel, jobs=2)
    assert _strip(parallel.records()) == _strip(local_run.records())


def test_dask_local_cluster_gives_the_same_records(tmp_path, keel, local_run):
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as cluster:
        store = _run(tmp_path, keel, backend="dask", scheduler=cluster.scheduler_address)
    assert _strip(store.records()) == _strip(local_run.records())


def _table_folder(shared_data, folder, *, groups=False):
    folder.mkdir()
    for name, suffix in (("vehicle", ".csv"), ("segment", ".parquet")):
        data = load("keel", shared_data / "keel", name=name)
        frame = pd.DataFrame(data.X, columns=[f"f{i}" for i in range(data.X.shape[1])])
        frame["label"] = data.labels
        if groups:
            frame["group"] = np.arange(len(frame)) // 3
        if suffix == ".csv":
            frame.to_csv(folder / f"{name}{suffix}", index=False)
        else:
            frame.to_parquet(folder / f"{name}{suffix}")
    return folder


def test_folder_collection_contract(tmp_path, shared_data):
    col = resolve_collection(str(_table_folder(shared_data, tmp_path / "emb", groups=True)))
    assert col.name == "emb" and col.source == "csv"
    assert col.datasets() == ["segment", "vehicle"]
    data = col.load("segment")
    assert data.X.shape == (2310, 19) and data.groups is not None
    task = make_binary_task(col.load("vehicle"), seed=0)
    for split in cv_5x2(task, 0):
        shared = set(task.groups[split["train"]]) & set(task.groups[split["test"]])
        assert not shared  # group-aware 5×2: no group on both sides


def test_folder_collection_errors(tmp_path):
    with pytest.raises(FileNotFoundError, match="not 'keel', 'pmlb'"):
        resolve_collection(str(tmp_path / "nope"))
    (tmp_path / "notes.txt").write_text("x")
    with pytest.raises(FileNotFoundError, match="no tables"):
        resolve_collection(str(tmp_path))
    pd.DataFrame({"label": ["a"], "x": [1]}).to_csv(tmp_path / "a.csv", index=False)
    pd.DataFrame({"label": ["a"], "x": [1]}).to_csv(tmp_path / "a.tsv", sep="\t", index=False)
    with pytest.raises(DataError, match="'a'"):
        resolve_collection(str(tmp_path))


def test_rejected_sets_are_recorded_and_skipped_and_errors_reported(tmp_path):
    pd.DataFrame({"label": ["a", "b"] * 20, "x": np.arange(40.0)}).to_csv(
        tmp_path / "two.csv", index=False
    )
    pd.DataFrame({"label": ["a", "b", "c"] * 20, "x": np.arange(60.0)}).to_csv(
        tmp_path / "gone.csv", index=False
    )
    col = resolve_collection(str(tmp_path))
    store = ResultsStore(tmp_path / "out")
    units = plan_units(
        store, col, ["two", "gone"], ["none"], seed=0, n_estimators=5, splits=range(1)
    )
    (tmp_path / "gone.csv").unlink()  # vanishes between planning and running
    results = {r.dataset: r for r in run_grid(units, progress=False)}
    assert results["two"].status == "rejected" and "only 2 classes" in results["two"].message
    assert store.tasks()["two"]["kept"] is False
    assert results["gone"].status == "error"
    assert "gone split 0" in results["gone"].message and "gone.csv" in results["gone"].message
    again = plan_units(
        store, col, ["two", "gone"], ["none"], seed=0, n_estimators=5, splits=range(1)
    )
    assert [u.dataset for u in again] == ["gone"]


def test_grouped_task_cross_fits_ros_and_weight_with_whole_groups(tmp_path, shared_data):
    """A table collection with a group column: ROS and class weights take cross-fitted
    reference rows on it (the grouped split itself: ``test_crossfit.py``) and give finite
    rectified scores."""
    from medeval.protocol.forest import run_fold

    col = resolve_collection(str(_table_folder(shared_data, tmp_path / "emb", groups=True)))
    task = make_binary_task(col.load("vehicle"), seed=0)
    split = cv_5x2(task, 0)[0]
    records = run_fold(task, split, ["ros", "weight"], seed=0, n_estimators=10)
    for r in records:
        assert r["reference"]["source"] == "cross-fitted", r["method"]
        assert r["reference"]["n_dropped"]["binary"] == 0
        assert np.isfinite([r["scores"][k] for k in ("rBA", "rF1", "rAUC")]).all()


def test_a_unit_runs_on_one_thread_whichever_process_runs_it():
    # --jobs 1 runs units in the main process: BLAS/OpenMP pools with several threads there
    # gave SMOTE's neighbours other last bits than in a (single-threaded) worker
    import torch
    from threadpoolctl import threadpool_info

    from medeval.protocol.grid import _single_thread

    before = torch.get_num_threads()
    with _single_thread():
        assert torch.get_num_threads() == 1
        assert all(pool["num_threads"] == 1 for pool in threadpool_info())
    assert torch.get_num_threads() == before
