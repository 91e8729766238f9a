"""Subconcept discovery on simulated clusters whose truth is known."""

import sys

import numpy as np
import pytest
from sklearn.datasets import make_blobs
from sklearn.metrics import adjusted_rand_score

from medeval.discovery import discover_subconcepts, discovery_quality
from medeval.evaluation import evaluate_predictions


def _blobs(sizes0=(120, 80, 60), sizes1=(50, 25), seed=0, std=0.6):
    """Well-separated clusters per class: (N, 6) features, (N,) class, (N,) true subconcept."""
    X0, t0 = make_blobs(
        list(sizes0), n_features=6, cluster_std=std, center_box=(-25, 25), random_state=seed
    )
    X1, t1 = make_blobs(
        list(sizes1), n_features=6, cluster_std=std, center_box=(-25, 25), random_state=seed + 1
    )
    X = np.vstack([X0, X1])
    y = np.r_[np.zeros(len(X0), int), np.ones(len(X1), int)]
    return X, y, np.r_[t0, 100 + t1]


@pytest.mark.parametrize("method", ["gmm", "kmeans"])
@pytest.mark.parametrize("seed", [0, 3])
def test_recovers_well_separated_clusters_and_reports_k(method, seed):
    X, y, truth = _blobs(seed=seed)
    d = discover_subconcepts(X, y, method=method, n_estimators=10, seed=seed)
    assert d.k == {0: 3, 1: 2}
    for c in (0, 1):
        m = y == c
        assert adjusted_rand_score(truth[m], d.labels[m]) > 0.99
    q = discovery_quality(y, truth, d.labels)
    assert [(r["k_true"], r["k_found"]) for r in q] == [(3, 3), (2, 2)]
    assert all(r["ari"] > 0.99 and r["nmi"] > 0.99 for r in q)
    # Names: class, then rank by training size (largest first); sizes give the train sizes.
    assert d.names == ("c0_k1", "c0_k2", "c0_k3", "c1_k1", "c1_k2")
    assert [d.train_sizes[n]["n"] for n in d.names] == [120, 80, 60, 50, 25]
    assert [d.train_sizes[n]["class"] for n in d.names] == [0, 0, 0, 1, 1]


def test_posteriors_are_distributions_over_all_discovered_subconcepts():
    X, y, _ = _blobs()
    d = discover_subconcepts(X, y, n_estimators=10, seed=0)
    rng = np.random.default_rng(1)
    X_new = X[rng.choice(len(X), 40)] + rng.normal(0, 2.0, (40, X.shape[1]))
    q = d.predict_proba(X_new)
    assert list(q.columns) == list(d.names)
    np.testing.assert_allclose(q.sum(axis=1), 1.0, atol=1e-12)
    assert (q.to_numpy() >= 0).all()
    y_new = y[rng.choice(len(y), 40)]
    qc = d.cluster_proba(X_new, y_new)
    np.testing.assert_allclose(qc.sum(axis=1), 1.0, atol=1e-12)
    other_class = d.sides[None, :] != y_new[:, None]
    assert (qc.to_numpy()[other_class] == 0).all()


def test_kmeans_cluster_posteriors_are_distributions():
    X, y, _ = _blobs()
    d = discover_subconcepts(X, y, method="kmeans", n_estimators=10, seed=0)
    qc = d.cluster_proba(X, y).to_numpy()
    np.testing.assert_allclose(qc.sum(axis=1), 1.0, atol=1e-12)
    assert (d.assign(X, y) == d.labels).mean() > 0.99


def test_output_feeds_evaluate_predictions():
    X, y, _ = _blobs()
    d = discover_subconcepts(X, y, n_estimators=10, seed=0)
    score = np.clip(y * 0.7 + np.random.default_rng(0).uniform(0, 0.4, len(y)), 0, 1)
    ev = evaluate_predictions(
        y, y_score=score, posteriors=d.predict_proba(X), train_sizes=d.train_sizes, n_bootstrap=0
    )
    assert np.isfinite(ev.scores["pBA"])
    assert "p" not in "".join(ev.unavailable)


def test_seeded_runs_repeat_exactly():
    X, y, _ = _blobs(std=3.0)  # overlapping: the seed matters
    a = discover_subconcepts(X, y, n_estimators=10, seed=7)
    b = discover_subconcepts(X, y, n_estimators=10, seed=7)
    assert (a.labels == b.labels).all() and a.names == b.names
    assert a.describe() == b.describe()
    np.testing.assert_array_equal(a.predict_proba(X).to_numpy(), b.predict_proba(X).to_numpy())


def test_small_class_is_guarded_by_the_minimum_cluster_size():
    X, y, _ = _blobs(sizes1=(6, 5))  # 11 minority instances: two clusters of ≥ 6 impossible
    d = discover_subconcepts(X, y, min_cluster_size=6, n_estimators=10, seed=0)
    assert d.k[1] == 1
    assert d.train_sizes["c1_k1"]["n"] == 11
    assert all(v is None for k, v in d.describe()["classes"][1]["scores"].items() if k != "1")
    d2 = discover_subconcepts(X, y, method="kmeans", min_cluster_size=6, n_estimators=10, seed=0)
    assert d2.k[1] == 1


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"method": "dbscan"}, "method"),
        ({"reducer": "tsne"}, "reducer"),
        ({"k_max": 0}, ">= 1"),
    ],
)
def test_bad_options_are_named(kwargs, match):
    X, y, _ = _blobs()
    with pytest.raises(ValueError, match=match):
        discover_subconcepts(X, y, **kwargs)


def test_bad_data_is_named():
    X, y, _ = _blobs()
    with pytest.raises(ValueError, match="class 1 has 0"):
        discover_subconcepts(X, np.zeros_like(y))
    X_nan = X.copy()
    X_nan[5, 2] = np.nan
    with pytest.raises(ValueError, match="row 5"):
        discover_subconcepts(X_nan, y)
    with pytest.raises(ValueError, match="only the classes 0 and 1"):
        discover_subconcepts(X, y + 1)


def test_umap_without_the_extra_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "umap", None)  # as if umap-learn were not installed
    X, y, _ = _blobs()
    with pytest.raises(ImportError, match=r"medeval\[discovery\]"):
        discover_subconcepts(X, y, reducer="umap")


@pytest.mark.parametrize("method", ["gmm", "kmeans"])
def test_a_class_of_three_repeated_points_gives_three_clusters_without_warnings(method):
    # KMeans with k > 3 finds fewer distinct clusters (a ConvergenceWarning): not eligible.
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(size=(60, 4)), np.repeat(rng.normal(size=(3, 4)), 10, axis=0)])
    y = np.r_[np.zeros(60, int), np.ones(30, int)]
    d = discover_subconcepts(X, y, method=method, n_estimators=5, seed=0)
    assert d.k[1] == 3 and [d.train_sizes[f"c1_k{j}"]["n"] for j in (1, 2, 3)] == [10, 10, 10]
