"""medeval/embeddings/text.py: text embeddings by a named model or TF-IDF + SVD."""

import sys
import types

import numpy as np
import pytest

from medeval.embeddings.text import TFIDF, embed_text, resolve_text_model, tfidf_svd

TEXTS = [
    "red spot on the arm",
    "red spot on the leg",
    "dark mole on the back",
    "dark mole on the arm",
    "pale patch on the leg",
]


def test_a_local_folder_resolves_to_itself_and_an_unknown_name_stays(tmp_path):
    assert resolve_text_model(str(tmp_path)) == str(tmp_path)
    assert resolve_text_model("org/some-other-model") == "org/some-other-model"


def test_tfidf_svd_has_fewer_components_than_rows_and_is_seeded():
    a = tfidf_svd(TEXTS, n_components=256, seed=0)
    assert a.dtype == np.float32 and a.shape == (5, 4)  # k < N rows
    np.testing.assert_array_equal(a, tfidf_svd(TEXTS, n_components=256, seed=0))
    assert tfidf_svd(TEXTS, n_components=2).shape == (5, 2)


def test_embed_text_with_tfidf_names_it():
    x, name = embed_text(TEXTS, model=TFIDF, n_components=3)
    assert name == TFIDF and x.shape == (5, 3)
    np.testing.assert_array_equal(x, tfidf_svd(TEXTS, n_components=3))


def _unloadable(monkeypatch):
    def refuse(*args, **kwargs):
        raise OSError("no network")

    fake = types.SimpleNamespace(SentenceTransformer=refuse)
    monkeypatch.setitem(sys.modules, "sentence_transformers", fake)


def test_an_unloadable_model_falls_back_to_tfidf_and_says_so(monkeypatch):
    _unloadable(monkeypatch)
    x, name = embed_text(TEXTS, model="some-model", n_components=2)
    assert name == "tfidf (sentence-transformers model 'some-model' unavailable: OSError)"
    assert x.shape == (5, 2)


def test_without_fallback_an_unloadable_model_raises(monkeypatch):
    _unloadable(monkeypatch)
    with pytest.raises(RuntimeError, match="cannot load sentence-transformers model 'some-model'"):
        embed_text(TEXTS, model="some-model", fallback=False)


def test_a_loaded_model_encodes_the_texts_as_float32(monkeypatch):
    class Model:
        def __init__(self, name, device):
            self.name = name

        def encode(self, texts, batch_size, show_progress_bar):
            return [[float(len(t)), 1.0] for t in texts]

    monkeypatch.setitem(
        sys.modules, "sentence_transformers", types.SimpleNamespace(SentenceTransformer=Model)
    )
    x, name = embed_text(["ab", "abcd"], model="org/model")
    assert name == "org/model" and x.dtype == np.float32
    np.testing.assert_array_equal(x, [[2.0, 1.0], [4.0, 1.0]])
