"""The synthetic phantom generator feeds the ordinary task and split machinery."""

import numpy as np
import pytest

from medeval.datasets.synthetic import FAINT_CONTRAST, NOISE_SD, SUBCONCEPTS, make_phantoms
from medeval.splits import check_no_group_leak, patient_splits
from medeval.tasks import make_binary_task


def test_same_seed_same_images_other_seed_other_images():
    a = make_phantoms(144, size=24, seed=3)
    b = make_phantoms(144, size=24, seed=3)
    c = make_phantoms(144, size=24, seed=4)
    assert np.array_equal(a.images, b.images)
    assert np.array_equal(a.groups, b.groups)
    assert not np.array_equal(a.images[: len(c)], c.images[: len(a)])
    assert a.images.dtype == np.uint8 and a.images.shape[1:] == (24, 24)


def test_class_sizes_and_task_sides():
    data = make_phantoms(160, size=16, seed=0)
    names, counts = np.unique(data.labels, return_counts=True)
    assert dict(zip(names, counts, strict=True)) == {
        n: round(160 * s) for n, s in SUBCONCEPTS.items()
    }
    task = make_binary_task(data, seed=0)
    assert task.kept
    assert [s.name for s in task.majority] == ["normal", "calcified granuloma"]
    assert [s.name for s in task.minority] == ["large opacity", "small nodule", "faint diffuse"]
    assert [s.n for s in task.minority] == [40, 20, 10]  # nothing lost to the ladder
    assert data.meta["synthetic"] is True


def test_patients_hold_one_finding_and_splits_keep_them_together():
    data = make_phantoms(144, size=16, seed=1)
    frame = {}
    for g, lab in zip(data.groups, data.labels, strict=True):
        frame.setdefault(g, set()).add(lab)
    assert all(len(v) == 1 for v in frame.values())
    assert len(frame) < len(data)  # several images per patient
    task = make_binary_task(data, seed=0)
    for split in patient_splits(task, seeds=[0, 1]):
        check_no_group_leak(task, split)


def test_lesions_change_the_image():
    rng_images = make_phantoms(144, size=32, seed=0)
    mean = {lab: rng_images.images[rng_images.labels == lab].mean() for lab in SUBCONCEPTS}
    assert mean["large opacity"] > mean["normal"] + 1  # the easy lesion is bright and large


def test_faint_diffuse_lies_below_the_noise():
    """The hidden failure of the default run is structural: the faint finding adds no mean
    brightness and its texture is a fifth of the pixel noise."""
    assert FAINT_CONTRAST <= NOISE_SD / 5
    data = make_phantoms(400, size=32, seed=0)
    mean = {lab: data.images[data.labels == lab].astype(float).mean() for lab in SUBCONCEPTS}
    assert abs(mean["faint diffuse"] - mean["normal"]) < 0.2  # grey levels of 255
    assert mean["small nodule"] > mean["normal"] + 0.25  # the other minority findings show


def test_too_small_a_set_is_refused():
    with pytest.raises(ValueError, match="n_normal"):
        make_phantoms(100)
