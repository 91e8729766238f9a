"""5×2 CV, patient-level splits (real NIH metadata, ten seeds) and the CSV manifest."""

import numpy as np
import pytest
from real_data import shared_path

from medeval.datasets.base import DataError, LabelledData
from medeval.datasets.keel import load_keel
from medeval.datasets.nih import load_nih
from medeval.splits import (
    PARTS,
    Split,
    check_no_group_leak,
    cv_5x2,
    patient_splits,
    presplit_split,
    read_manifest,
    write_manifest,
)
from medeval.tasks import make_binary_task


@pytest.fixture(scope="module")
def vehicle(shared_data):
    return make_binary_task(load_keel(shared_data / "keel", name="vehicle"), seed=0)


@pytest.fixture(scope="module")
def nih_task():
    return make_binary_task(load_nih(shared_path("nih")), seed=0)


@pytest.fixture(scope="module")
def nih_splits(nih_task):
    return patient_splits(nih_task, seeds=range(10))


def test_cv_5x2_folds_partition_rows_and_hold_every_subconcept(vehicle):
    folds = cv_5x2(vehicle, seed=0)
    assert [(f.repeat, f.fold) for f in folds] == [(r, k) for r in range(5) for k in range(2)]
    counts = vehicle.train_counts()
    for f in folds:
        assert len(np.intersect1d(f["train"], f["test"])) == 0
        assert len(f["train"]) + len(f["test"]) == len(vehicle)
        # stratified on the subconcept: each half holds half of every subconcept (±1)
        assert np.all(np.abs(vehicle.train_counts(f["test"]) - counts / 2) <= 1)
    for r in range(5):
        np.testing.assert_array_equal(
            np.sort(np.r_[folds[2 * r]["test"], folds[2 * r + 1]["test"]]), np.arange(len(vehicle))
        )
    again = cv_5x2(vehicle, seed=0)
    other = cv_5x2(vehicle, seed=1)
    assert all(np.array_equal(a["test"], b["test"]) for a, b in zip(folds, again, strict=True))
    assert not np.array_equal(folds[0]["test"], other[0]["test"])


def test_cv_needs_two_rows_per_subconcept():
    data = LabelledData(labels=["a"] * 10 + ["b"] * 5 + ["c"], source="t", name="t")
    task = make_binary_task(data, seed=0, min_minority=0)
    with pytest.raises(DataError, match="subconcept 'c' has 1 rows"):
        cv_5x2(task, seed=0)


def test_no_patient_in_two_parts_on_real_nih_for_ten_seeds(nih_task, nih_splits):
    assert [s.seed for s in nih_splits] == list(range(10))
    groups = np.asarray(nih_task.groups)
    for split in nih_splits:
        check_no_group_leak(nih_task, split)
        seen = [set(groups[split[p]]) for p in PARTS]
        for i in range(4):
            for j in range(i + 1, 4):
                assert not seen[i] & seen[j]
        assert sum(len(split[p]) for p in PARTS) == len(nih_task)
        assert len(np.unique(np.concatenate([split[p] for p in PARTS]))) == len(nih_task)


def test_nih_parts_have_target_fractions_per_subconcept(nih_task, nih_splits):
    counts = nih_task.train_counts()
    for split in nih_splits:
        for part, fraction in zip(PARTS, (0.6, 0.15, 0.1, 0.15), strict=True):
            got = nih_task.train_counts(split[part])
            # as balanced as patients allow: within 2 % of each subconcept's size (+2 rows)
            assert np.all(np.abs(got - fraction * counts) <= 0.02 * counts + 2), (part, got)


def test_seeds_give_different_reproducible_splits(nih_task, nih_splits):
    tests = [set(s["test"]) for s in nih_splits]
    assert all(tests[0] != t for t in tests[1:])
    again = patient_splits(nih_task, seeds=[3])[0]
    for p in PARTS:
        np.testing.assert_array_equal(again[p], nih_splits[3][p])


def test_leak_check_names_the_group():
    data = LabelledData(
        labels=["a"] * 4 + ["b"] * 2 + ["c"],
        source="t",
        name="t",
        groups=["p1", "p1", "p2", "p2", "p3", "p4", "p5"],
    )
    task = make_binary_task(data, seed=0, min_minority=0)
    assert len(task) == 7
    bad = Split("patient", 0, {"train": np.array([0, 2, 4]), "test": np.array([1, 3, 5, 6])})
    with pytest.raises(DataError, match="group 'p1' is in both 'train' and 'test'"):
        check_no_group_leak(task, bad)
    good = Split("patient", 0, {"train": np.array([0, 1, 4]), "test": np.array([2, 3, 5, 6])})
    check_no_group_leak(task, good)


def test_manifest_round_trip_and_mismatch(tmp_path, vehicle, shared_data):
    splits = patient_splits(vehicle, seeds=[0, 1]) + cv_5x2(vehicle, seed=7)
    path = write_manifest(tmp_path / "m" / "manifest.csv", vehicle, splits)
    assert [p.name for p in path.parent.iterdir()] == ["manifest.csv"]  # no temp file left
    back = read_manifest(path, vehicle)
    assert len(back) == len(splits)
    for a, b in zip(splits, back, strict=True):
        assert (a.scheme, a.seed, a.repeat, a.fold) == (b.scheme, b.seed, b.repeat, b.fold)
        assert a.parts.keys() == b.parts.keys()
        for p in a.parts:
            np.testing.assert_array_equal(a[p], b[p])
    other = make_binary_task(load_keel(shared_data / "keel", name="vehicle"), seed=1)
    with pytest.raises(DataError, match=r"manifest\.csv: row \d+: id .* does not match"):
        read_manifest(path, other)


def test_presplit_split_maps_distributed_parts():
    data = LabelledData(
        labels=["a"] * 4 + ["b"] * 2 + ["c"],
        source="folder",
        name="t",
        presplit=["train", "val", "test", "train", "train", "test", "val"],
    )
    task = make_binary_task(data, seed=0, min_minority=0)
    split = presplit_split(task)
    assert split.scheme == "presplit"
    np.testing.assert_array_equal(split["train"], [0, 3, 4])
    np.testing.assert_array_equal(split["validation"], [1, 6])
    np.testing.assert_array_equal(split["test"], [2, 5])
    with pytest.raises(DataError, match="no distributed split"):
        presplit_split(
            make_binary_task(
                LabelledData(labels=data.labels, source="x", name="y"), seed=0, min_minority=0
            )
        )


def test_gzipped_manifest_round_trip_with_usual_permissions(tmp_path, vehicle):
    import os
    import stat

    splits = patient_splits(vehicle, seeds=[4])
    path = write_manifest(tmp_path / "m.csv.gz", vehicle, splits)
    assert path.read_bytes()[:2] == b"\x1f\x8b"  # gzip magic
    back = read_manifest(path, vehicle)[0]
    for p in PARTS:
        np.testing.assert_array_equal(back[p], splits[0][p])
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~umask
    with pytest.raises(FileNotFoundError, match="no such manifest"):
        read_manifest(tmp_path / "absent.csv")


def test_cv_5x2_keeps_groups_apart_when_the_task_has_groups():
    from medeval.datasets.synthetic import make_phantoms

    task = make_binary_task(make_phantoms(144, size=16, seed=0), seed=0)
    assert task.has_groups
    folds = cv_5x2(task, seed=3)
    assert len(folds) == 10 and {f.scheme for f in folds} == {"cv5x2-group"}
    for split in folds:
        train, test = split["train"], split["test"]
        assert len(train) + len(test) == len(task)
        assert not set(np.asarray(task.groups)[train]) & set(np.asarray(task.groups)[test])
    again = cv_5x2(task, seed=3)
    assert all(np.array_equal(a["test"], b["test"]) for a, b in zip(folds, again, strict=True))
