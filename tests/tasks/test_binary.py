"""docs/method.md, "Binary tasks from multiclass data" on small synthetic label sets, where every
number can be checked by hand."""

import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from medeval.datasets.base import DataError, LabelledData
from medeval.tasks import BinaryTask, make_binary_task, order_classes
from medeval.tasks.binary import _ladder


def labelled(sizes: dict[str, int], *, shuffle_seed: int = 0) -> LabelledData:
    labels = np.concatenate([[name] * n for name, n in sizes.items()])
    labels = np.random.default_rng(shuffle_seed).permutation(labels)
    X = np.arange(len(labels), dtype=float)[:, None]
    return LabelledData(labels=labels, source="synthetic", name="toy", X=X)


SIZES = {"a": 400, "b": 300, "c": 250, "d": 200, "e": 180, "f": 170, "g": 160, "h": 150, "i": 5}


def test_majority_is_largest_half_of_eight_and_ladder_follows_spec():
    task = make_binary_task(labelled(SIZES), seed=0)
    assert [s.name for s in task.majority] == ["a", "b", "c", "d"]
    assert [s.name for s in task.minority] == ["e", "f", "g", "h"]
    assert task.dropped == ("i",)
    # m = 200 (smallest kept majority): 100, 50, 25, 12.
    assert [s.n for s in task.minority] == [100, 50, 25, 12]
    assert [s.n_original for s in task.minority] == [180, 170, 160, 150]
    assert [s.n for s in task.majority] == [400, 300, 250, 200]
    assert task.kept and task.n_classes == 9


def test_ladder_caps_at_original_size_and_halves_the_previous_kept_size():
    assert _ladder([30, 300, 300], 1000) == [30, 15, 7]
    assert _ladder([600, 10], 1000) == [500, 10]


def test_rows_y_and_codes_are_consistent():
    data = labelled(SIZES)
    task = make_binary_task(data, seed=3)
    assert len(task) == 400 + 300 + 250 + 200 + 100 + 50 + 25 + 12
    np.testing.assert_array_equal(task.data.labels, data.labels[task.index])
    np.testing.assert_array_equal(
        np.asarray(task.subconcept_names)[task.subconcept], task.data.labels
    )
    np.testing.assert_array_equal(task.y, task.sides[task.subconcept])
    np.testing.assert_array_equal(task.train_counts(), [s.n for s in task.subconcepts])
    assert np.all(np.diff(task.index) > 0)  # original row order kept


def test_same_seed_same_rows_other_seed_other_rows():
    data = labelled(SIZES)
    a, b = make_binary_task(data, seed=1), make_binary_task(data, seed=1)
    c = make_binary_task(data, seed=2)
    np.testing.assert_array_equal(a.index, b.index)
    assert not np.array_equal(a.index, c.index)
    assert [s.n for s in a.subconcepts] == [s.n for s in c.subconcepts]


def test_ties_in_size_are_broken_by_label_not_by_row_order():
    sizes = {"10": 50, "9": 50, "2": 50, "b": 20}
    numeric = {"10": 50, "9": 50, "2": 50, "7": 20}
    # All labels numeric: ties in numeric order.
    assert [n for n, _ in order_classes(labelled(numeric).labels)] == ["2", "9", "10", "7"]
    for shuffle in range(3):
        task = make_binary_task(labelled(sizes, shuffle_seed=shuffle), seed=0)
        # Not all labels numeric: string order "10" < "2" < "9".
        assert task.subconcept_names == ["10", "2", "9", "b"]


def test_rejects_two_classes_and_tiny_smallest_minority_with_reasons():
    two = make_binary_task(labelled({"a": 100, "b": 50}), seed=0)
    assert not two.kept and "only 2 classes" in two.reason
    small = make_binary_task(labelled({"a": 100, "b": 40, "c": 30}), seed=0)
    # m = 100: b keeps 40, c keeps min(30, 20) = 20 > 8 -> kept; with m = 30 -> 15, 7 -> rejected.
    assert small.kept
    tiny = make_binary_task(labelled({"a": 30, "b": 20, "c": 20}), seed=0)
    assert [s.n for s in tiny.minority] == [15, 7]
    assert not tiny.kept and "'c' keeps 7" in tiny.reason
    with pytest.raises(DataError, match="rejected"):
        tiny.require_kept()


def test_exactly_nine_is_kept_and_eight_is_rejected():
    ok = make_binary_task(labelled({"a": 36, "b": 18, "c": 9}), seed=0)
    assert [s.n for s in ok.minority] == [18, 9] and ok.kept
    no = make_binary_task(labelled({"a": 36, "b": 18, "c": 8}), seed=0)
    assert not no.kept


def test_single_class_is_an_error_naming_the_class():
    with pytest.raises(DataError, match="only one class 'a'"):
        make_binary_task(labelled({"a": 10}), seed=0)


def test_describe_has_exactly_the_json_shape():
    task = make_binary_task(labelled(SIZES), seed=0)
    d = task.describe()
    assert set(d) == {"majority", "minority", "imbalance_ratio", "kept", "reason"}
    assert d["majority"][0] == {"name": "a", "n": 400}
    assert d["minority"][-1] == {"name": "h", "n_original": 150, "n": 12}
    assert d["imbalance_ratio"] == pytest.approx(1150 / 187, abs=1e-4)
    json.dumps(d)  # must serialise as is
    text = task.describe_text()
    assert "sub_4 h" in text and "150 -> 12" in text and "KEPT" in text


def test_subset_keeps_codes_and_counts_rows():
    task = make_binary_task(labelled(SIZES), seed=0)
    idx = np.flatnonzero(task.y == 1)
    sub = task.subset(idx)
    assert isinstance(sub, BinaryTask)
    assert sub.subconcept_names == task.subconcept_names
    assert np.all(sub.y == 1)
    np.testing.assert_array_equal(task.train_counts(idx), [0, 0, 0, 0, 100, 50, 25, 12])
    assert len(sub.data) == len(idx)


def test_rows_without_groups_are_their_own_group():
    task = make_binary_task(labelled({"a": 30, "b": 20, "c": 20}), seed=0)
    assert not task.has_groups
    assert len(set(task.groups)) == len(task)


@settings(max_examples=60, deadline=None)
@given(
    sizes=st.lists(st.integers(min_value=1, max_value=60), min_size=2, max_size=11),
    seed=st.integers(min_value=0, max_value=2**31),
)
def test_properties_of_any_task(sizes, seed):
    data = labelled({f"k{i}": n for i, n in enumerate(sizes)})
    task = make_binary_task(data, seed=seed)
    c_prime = min(len(sizes), 8)
    assert len(task.majority) == c_prime // 2
    assert len(task.minority) == c_prime - c_prime // 2
    maj_sizes = [s.n for s in task.majority]
    assert maj_sizes == sorted(maj_sizes, reverse=True)
    assert min(maj_sizes) >= max(s.n_original for s in task.minority)
    cap = min(maj_sizes) // 2
    for s in task.minority:
        assert s.n == min(s.n_original, cap)
        cap = s.n // 2
    assert task.kept == (len(sizes) >= 3 and task.minority[-1].n > 8)
    np.testing.assert_array_equal(task.train_counts(), [s.n for s in task.subconcepts])
    ratio = task.imbalance_ratio
    n_min = sum(s.n for s in task.minority)
    assert (math.isnan(ratio) and n_min == 0) or ratio == pytest.approx(sum(maj_sizes) / n_min)
