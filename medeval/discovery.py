"""Subconcepts discovered per class from embeddings when the training labels have none
(docs/discovery.md, docs/method.md); seeded and free of I/O."""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import softmax
from sklearn.decomposition import PCA
from sklearn.metrics import adjusted_rand_score, normalized_mutual_info_score, silhouette_score
from sklearn.mixture import GaussianMixture
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from medeval._validation import ArrayLike, validate_params
from medeval.errors import MissingExtraError, UserError
from medeval.io.atomic import json_ready
from medeval.options import SEED, DiscoveryOptions
from medeval.subconcept_model import checked_features, subconcept_forest

__all__ = [
    "ClassClustering",
    "Discovery",
    "discover_subconcepts",
    "discovery_quality",
    "subconcept_name",
]

#: silhouette on at most this many instances (it is quadratic in the class size).
SILHOUETTE_SAMPLE = 2000


def subconcept_name(side: int, j: int) -> str:
    """Name of the j-th largest (1-based) discovered subconcept of class ``side``."""
    return f"c{int(side)}_k{int(j)}"


@dataclass
class ClassClustering:
    """The fitted reduction and clustering of one class.

    Attributes:
        side: the class (0 majority, 1 minority).
        k: number of clusters found.
        criterion: ``"bic"`` (lower is better) or ``"silhouette"`` (higher is better).
        scores: ``{k: criterion value}`` for every k tried (NaN: not eligible: a cluster
            smaller than the minimum size, or a fit that did not converge).
        names: ``(k,)`` subconcept names, largest training cluster first.
        counts: ``(k,)`` training instances per cluster, in ``names`` order.
    """

    side: int
    k: int
    criterion: str
    scores: dict[int, float]
    names: tuple[str, ...]
    counts: np.ndarray
    scaler: Any = field(repr=False)
    reducer: Any = field(repr=False)
    model: Any = field(repr=False)  # GaussianMixture or KMeans; None when k == 1
    order: np.ndarray = field(repr=False)  # model component → position in names
    sigma2: float = field(default=1.0, repr=False)  # KMeans: pooled within-cluster variance

    def transform(self, X: np.ndarray) -> np.ndarray:
        """``(N, F)`` → ``(N, d)`` reduced features of this class's space."""
        return self.reducer.transform(self.scaler.transform(X))

    def proba(self, X: np.ndarray) -> np.ndarray:
        """``(N, F)`` → ``(N, k)`` posteriors over this class's clusters (``names`` order)."""
        if self.k == 1:
            return np.ones((len(X), 1))
        Z = self.transform(X)
        if isinstance(self.model, GaussianMixture):
            raw = self.model.predict_proba(Z)
        else:
            # KMeans read as a mixture of spherical Gaussians with one pooled variance.
            d2 = ((Z[:, None, :] - self.model.cluster_centers_[None]) ** 2).sum(-1)
            raw = softmax(-d2 / (2 * self.sigma2), axis=1)
        out = np.zeros_like(raw)
        out[:, self.order] = raw
        return out


@dataclass
class Discovery:
    """Discovered subconcepts of a binary training set (see the module docstring).

    Attributes:
        names: ``(S,)`` all discovered subconcepts: class 0 first, then class 1, each largest
            first.
        sides: ``(S,)`` class of each subconcept.
        counts: ``(S,)`` training instances of each subconcept.
        labels: ``(N_train,)`` hard assignment (a name) of every training instance.
        classes: the per-class clusterings.
        settings: the options used (method, reducer, dimensions, k_max, minimum size, seed).
    """

    names: tuple[str, ...]
    sides: np.ndarray
    counts: np.ndarray
    labels: np.ndarray
    classes: dict[int, ClassClustering]
    settings: dict[str, Any]
    model: Any = field(default=None, repr=False)  # the subconcept forest

    @property
    def train_sizes(self) -> dict[str, dict[str, int]]:
        """``{name: {"class": 0|1, "n": count}}`` — what ``evaluate_predictions`` and the
        ``train_sizes.json`` file take."""
        return {
            n: {"class": int(c), "n": int(k)}
            for n, c, k in zip(self.names, self.sides, self.counts, strict=True)
        }

    @property
    def k(self) -> dict[int, int]:
        """Clusters found per class."""
        return {c: cc.k for c, cc in self.classes.items()}

    def predict_proba(self, X: Any) -> pd.DataFrame:
        """Posteriors ``q_s(x)`` of the subconcept model: ``(N, F)`` → DataFrame ``(N, S)``.

        Columns are :attr:`names`; every row sums to 1.
        """
        X = checked_features(X)
        proba = np.zeros((len(X), len(self.names)))
        proba[:, self.model.classes_] = self.model.predict_proba(X)
        return pd.DataFrame(proba, columns=list(self.names))

    def cluster_proba(self, X: Any, y: Any) -> pd.DataFrame:
        """The clustering model's posteriors within each instance's known class ``y``.

        ``(N, F)``, ``(N,)`` → DataFrame ``(N, S)``: zero outside the row's class, so the
        class-conditional weights (docs/method.md, "Label-free scores") can use them directly; every
        row sums to 1.
        """
        X = checked_features(X)
        y = _labels(y, len(X))
        out = np.zeros((len(X), len(self.names)))
        for side, cc in self.classes.items():
            rows = np.flatnonzero(y == side)
            if len(rows):
                cols = [self.names.index(n) for n in cc.names]
                out[np.ix_(rows, cols)] = cc.proba(X[rows])
        return pd.DataFrame(out, columns=list(self.names))

    def assign(self, X: Any, y: Any) -> np.ndarray:
        """Hard cluster names of instances with known class: ``(N,)`` of names."""
        q = self.cluster_proba(X, y).to_numpy()
        return np.asarray(self.names, dtype=object)[q.argmax(axis=1)]

    def describe(self) -> dict[str, Any]:
        """JSON-ready summary: settings, and per class k, the criterion per k and the sizes."""
        return {
            "settings": dict(self.settings),
            "classes": [
                {
                    "class": int(c),
                    "k": int(cc.k),
                    "criterion": cc.criterion,
                    "scores": json_ready(cc.scores),
                    "subconcepts": dict(zip(cc.names, map(int, cc.counts), strict=True)),
                }
                for c, cc in sorted(self.classes.items())
            ],
        }


def _labels(y: Any, n: int) -> np.ndarray:
    y = np.asarray(y)
    if y.shape != (n,):
        raise UserError(f"y must have one class per instance ({n}); got shape {y.shape}")
    if not np.isin(y, (0, 1)).all():
        raise UserError("y must contain only the classes 0 and 1")
    return y.astype(np.int64)


def _reducer(name: str, n_components: int, seed: int) -> Any:
    if name == "pca":
        return PCA(n_components=n_components, random_state=seed)
    try:
        import umap
    except ImportError as exc:
        raise MissingExtraError(
            "reducer='umap' needs the optional extra: pip install 'medeval[discovery]' "
            "(umap-learn); the default reducer is 'pca'"
        ) from exc
    return umap.UMAP(n_components=n_components, random_state=seed)


def _fit_k(Z: np.ndarray, k: int, method: str, seed: int) -> tuple[Any, np.ndarray, bool]:
    """Fit k clusters; the flag is False when the fit did not converge (k not eligible)."""
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", ConvergenceWarning)
        if method == "gmm":
            m = GaussianMixture(
                k, covariance_type="full", reg_covar=1e-4, n_init=2, random_state=seed
            ).fit(Z)
            labels = m.predict(Z)
        else:
            from sklearn.cluster import KMeans

            m = KMeans(k, n_init=4, random_state=seed).fit(Z)
            labels = m.labels_
    converged = not any(issubclass(w.category, ConvergenceWarning) for w in caught)
    return m, labels, converged


def _choose_k(
    Z: np.ndarray, method: str, k_hi: int, min_cluster_size: int, seed: int
) -> tuple[dict[int, float], int, Any, np.ndarray]:
    """The criterion of every k tried (NaN: not eligible), the chosen k, its model and labels."""
    n = len(Z)
    k_lo = 1 if method == "gmm" else 2
    scores: dict[int, float] = {}
    best: tuple[float, int, Any, np.ndarray] | None = None
    for k in range(k_lo, k_hi + 1):
        if k == 1:
            model, labels = None, np.zeros(n, dtype=np.int64)
            one = GaussianMixture(1, covariance_type="full", reg_covar=1e-4, random_state=0)
            value = -float(one.fit(Z).bic(Z))
        else:
            model, labels, converged = _fit_k(Z, k, method, seed)
            sizes = np.bincount(labels, minlength=k)
            if not converged or sizes.min() < min_cluster_size:
                scores[k] = math.nan
                continue
            if method == "gmm":
                value = -float(model.bic(Z))  # stored so that larger is better, reported as BIC
            else:
                size = SILHOUETTE_SAMPLE if n > SILHOUETTE_SAMPLE else None
                value = float(silhouette_score(Z, labels, sample_size=size, random_state=seed))
        scores[k] = -value if method == "gmm" else value
        if best is None or value > best[0]:
            best = (value, k, model, labels)
    if best is None:  # no eligible k ≥ 2 (KMeans on a small class): one cluster
        best = (math.nan, 1, None, np.zeros(n, dtype=np.int64))
    return scores, *best[1:]


def _cluster_class(
    X: np.ndarray,
    side: int,
    *,
    method: str,
    reducer: str,
    n_components: int,
    k_max: int,
    min_cluster_size: int,
    seed: int,
) -> tuple[ClassClustering, np.ndarray]:
    """Cluster one class ``(n_c, F)``: the model and ``(n_c,)`` codes into its ``names``."""
    n = len(X)
    scaler = StandardScaler().fit(X)
    Xs = scaler.transform(X)
    # A full-covariance mixture needs several instances per parameter: few dims for small classes.
    d = max(1, min(n_components, X.shape[1], n - 1, n // (2 * min_cluster_size) or 1))
    red = _reducer(reducer, d, seed).fit(Xs)
    Z = red.transform(Xs)
    k_hi = max(1, min(k_max, n // min_cluster_size))
    scores, k, model, labels = _choose_k(Z, method, k_hi, min_cluster_size, seed)
    sizes = np.bincount(labels, minlength=k)
    # Name clusters by size, largest first; ties by component index (deterministic).
    rank = np.lexsort((np.arange(k), -sizes))
    order = np.empty(k, dtype=np.int64)
    order[rank] = np.arange(k)
    names = tuple(subconcept_name(side, j + 1) for j in range(k))
    sigma2 = 1.0
    if model is not None and not isinstance(model, GaussianMixture):
        resid = Z - model.cluster_centers_[labels]
        sigma2 = max(float((resid**2).sum() / (n * Z.shape[1])), 1e-12)
    cc = ClassClustering(
        side=side,
        k=k,
        criterion="bic" if method == "gmm" else "silhouette",
        scores=scores,
        names=names,
        counts=sizes[rank],
        scaler=scaler,
        reducer=red,
        model=model,
        order=order,
        sigma2=sigma2,
    )
    return cc, order[labels]


@validate_params(
    {"X": [ArrayLike()], "y": [ArrayLike()], **DiscoveryOptions.constraints, "seed": [SEED]}
)
def discover_subconcepts(
    X: Any,
    y: Any,
    *,
    method: str = "gmm",
    reducer: str = "pca",
    n_components: int = 8,
    k_max: int = 8,
    min_cluster_size: int = 5,
    n_estimators: int = 100,
    seed: int = 0,
) -> Discovery:
    """Cluster each class of a training set and fit the subconcept model on the clusters.

    Args:
        X: ``(N, F)`` training features (embeddings or table columns).
        y: ``(N,)`` training classes in {0, 1}; both must be present.
        method: ``"gmm"`` (Gaussian mixture, k by BIC, k = 1 allowed) or ``"kmeans"`` (k by
            silhouette, k ≥ 2 unless the class is too small for two clusters).
        reducer: ``"pca"`` or ``"umap"`` (optional extra ``umap-learn``).
        n_components: reduced dimensions (bounded by the class size and the features).
        k_max: largest k tried per class (bounded by ``n_c // min_cluster_size``).
        min_cluster_size: a k whose smallest hard cluster holds fewer training instances is not
            eligible.
        n_estimators: trees of the subconcept forest behind :meth:`Discovery.predict_proba`.
        seed: seeds the reductions, the clusterings and the forest.

    Raises:
        UserError: bad shapes, non-finite features, a class with fewer than 2 instances;
            InvalidParameterError (one) for an option outside its declaration
            (:class:`~medeval.options.DiscoveryOptions`).
    """
    X = checked_features(X)
    y = _labels(y, len(X))
    options = {"method": method, "reducer": reducer, "n_components": n_components}
    options |= {"k_max": k_max, "min_cluster_size": min_cluster_size}
    classes: dict[int, ClassClustering] = {}
    labels = np.empty(len(X), dtype=object)
    for side in (0, 1):
        rows = np.flatnonzero(y == side)
        if len(rows) < 2:
            raise UserError(
                f"class {side} has {len(rows)} training instance(s); discovery needs at least 2"
            )
        # Single-threaded BLAS: the mixtures solve thousands of tiny (d, d) systems, where thread
        # start-up dominates.
        with threadpool_limits(1):
            cc, codes = _cluster_class(X[rows], side, **options, seed=seed)
        classes[side] = cc
        labels[rows] = np.asarray(cc.names, dtype=object)[codes]
    names = classes[0].names + classes[1].names
    sides = np.array([0] * classes[0].k + [1] * classes[1].k, dtype=np.int64)
    counts = np.concatenate([classes[0].counts, classes[1].counts]).astype(np.int64)
    codes = np.array([names.index(s) for s in labels], dtype=np.int64)
    forest = subconcept_forest(n_estimators, seed).fit(X, codes)
    settings = {**options, "n_estimators": n_estimators, "seed": seed}
    return Discovery(names, sides, counts, labels, classes, settings, forest)


def discovery_quality(
    y: Sequence[int] | np.ndarray,
    true_subconcept: Sequence[Any] | np.ndarray,
    found: Sequence[Any] | np.ndarray,
) -> list[dict[str, Any]]:
    """Discovered vs true subconcepts within each class: k, adjusted Rand index and NMI.

    Args:
        y: ``(N,)`` classes.
        true_subconcept: ``(N,)`` true subconcepts.
        found: ``(N,)`` discovered subconcepts.

    Returns:
        one dict per class present: ``class, n, k_true, k_found, ari, nmi``. With one true and
        one found cluster both indices are 1 (identical partitions).
    """
    y = np.asarray(y)
    t, f = np.asarray(true_subconcept).astype(str), np.asarray(found).astype(str)
    if not (len(y) == len(t) == len(f)):
        raise UserError("y, true_subconcept and found must have one entry per instance")
    out = []
    for side in sorted(set(y.tolist())):
        m = y == side
        out.append(
            {
                "class": int(side),
                "n": int(m.sum()),
                "k_true": len(set(t[m])),
                "k_found": len(set(f[m])),
                "ari": float(adjusted_rand_score(t[m], f[m])),
                "nmi": float(normalized_mutual_info_score(t[m], f[m])),
            }
        )
    return out
