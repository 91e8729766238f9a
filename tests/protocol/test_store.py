"""Results store: atomic records, skip/missing logic, settings guard."""

import json

import pytest

from medeval.protocol.store import ResultsStore, SettingsMismatch


def _rec(dataset="iris", method="none", split=0, value=0.5):
    return {"dataset": dataset, "method": method, "split": split, "scores": {"BA": value}}


def test_write_read_and_missing(tmp_path):
    store = ResultsStore(tmp_path)
    assert store.records() == []
    store.write(_rec(method="ros", split=1))
    store.write(_rec(method="none", split=1))
    assert store.has("iris", "ros", 1) and not store.has("iris", "ros", 0)
    assert store.missing("iris", ["none", "ros", "smote"], 1) == ["smote"]
    assert [r["method"] for r in store.records()] == ["none", "ros"]
    assert not list(tmp_path.rglob("*.tmp"))  # nothing half-written left behind


def test_write_overwrites_a_record(tmp_path):
    store = ResultsStore(tmp_path)
    store.write(_rec(value=0.1))
    store.write(_rec(value=0.9))
    assert store.records()[0]["scores"]["BA"] == 0.9


def test_unreadable_record_names_its_file(tmp_path):
    store = ResultsStore(tmp_path)
    path = store.record_path("iris", "none", 0)
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    with pytest.raises(ValueError, match=r"none-0\.json"):
        store.records()


def test_settings_guard(tmp_path):
    store = ResultsStore(tmp_path)
    settings = {"collection": "keel", "seed": 0, "n_estimators": 100}
    store.check_settings(settings)
    store.check_settings(dict(settings))  # same settings: fine
    with pytest.raises(SettingsMismatch, match="n_estimators=100.*n_estimators=10"):
        store.check_settings({**settings, "n_estimators": 10})
    store.check_settings({**settings, "n_estimators": 10}, force=True)
    assert json.loads((tmp_path / "run.json").read_text())["n_estimators"] == 10


def test_force_with_other_settings_may_not_leave_records_of_the_old_ones(tmp_path):
    store = ResultsStore(tmp_path)
    settings = {"collection": "keel", "seed": 3, "n_estimators": 100}
    store.check_settings(settings)
    for method in ("none", "ros"):
        path = store.record_path("vehicle", method, 0)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}")
    only_none = {("vehicle", "none", 0)}
    with pytest.raises(SettingsMismatch, match=r"seed=7.*ros-0\.json.*seed=3"):
        store.check_settings({**settings, "seed": 7}, force=True, selection=only_none)
    assert json.loads((tmp_path / "run.json").read_text())["seed"] == 3  # nothing changed
    store.check_settings(settings, force=True, selection=only_none)  # same settings: fine
    both = {*only_none, ("vehicle", "ros", 0)}
    store.check_settings({**settings, "seed": 7}, force=True, selection=both)
    assert json.loads((tmp_path / "run.json").read_text())["seed"] == 7
