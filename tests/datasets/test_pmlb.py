"""PMLB through pmlb.fetch_data with the shared folder as its local cache (no download)."""

import gzip

import numpy as np
import pandas as pd
import pytest
from real_data import shared_path

from medeval.datasets.pmlb import load_pmlb, pmlb_cached_names
from medeval.tasks import make_binary_task


def test_every_cached_pmlb_set_loads_and_yields_a_task_or_a_stated_rejection():
    cache = shared_path("pmlb")
    names = pmlb_cached_names(cache)
    assert len(names) == 46 and "iris" in names
    for name in names:
        data = load_pmlb(name, cache_dir=cache)
        assert data.source == "pmlb" and data.name == name
        assert data.X.ndim == 2 and len(data.X) == len(data.labels)
        task = make_binary_task(data, seed=0)
        assert isinstance(task.kept, bool) and task.reason
        assert task.n_classes >= 2


def test_iris_matches_the_file():
    path = shared_path("pmlb", "iris", "iris.tsv.gz")
    with gzip.open(path, "rt") as fh:
        raw = pd.read_csv(fh, sep="\t")
    data = load_pmlb("iris", cache_dir=shared_path("pmlb"))
    np.testing.assert_allclose(data.X, raw.drop(columns="target").to_numpy())
    np.testing.assert_array_equal(data.labels, raw["target"].astype(str).to_numpy())
    assert data.feature_names == [c for c in raw.columns if c != "target"]


def test_cache_folder_must_exist(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such PMLB cache folder"):
        pmlb_cached_names(tmp_path / "absent")
