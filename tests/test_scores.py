"""The score vocabulary is defined once, in medeval.scores, and every module takes it from there."""

import ast
from pathlib import Path

import numpy as np
import pytest
import torch

from medeval import scores
from medeval.scores import (
    ALL_SCORES,
    BY_FAMILY,
    FAMILIES,
    INSTANCE_SCORES,
    LABEL_FREE_SCORES,
    PAPER_SCORES,
    RECOMMENDED,
    RECOMMENDED_RECTIFIED,
    REFERENCE_SCORES,
    SCORE_DESCRIPTIONS,
    TRUE_ONLY_SCORES,
    WEIGHTINGS,
    instance_score,
    labels_from_scores,
    parse_score,
    score_key,
    split_score,
)

PACKAGE = Path(scores.__file__).parent


def test_the_orders_of_the_vocabulary():
    assert PAPER_SCORES == ("BA", "wBA", "pBA", "F1", "wF1", "pF1", "AUC", "wAUC", "pAUC")
    assert ALL_SCORES == (*PAPER_SCORES, "cBA", "cF1", "cAUC", "rBA", "rF1", "rAUC")
    assert BY_FAMILY == tuple(f"{p}{f}" for f in FAMILIES for p in ("", "w", "p", "c", "r"))
    assert INSTANCE_SCORES == tuple(f"{p}{f}" for f in FAMILIES for p in ("", "w", "p", "c"))
    assert REFERENCE_SCORES == ("rBA", "rF1", "rAUC")
    assert RECOMMENDED_RECTIFIED == {"BA": "rBA", "F1": "rF1", "AUC": "rAUC"}
    assert sorted(BY_FAMILY) == sorted(ALL_SCORES) and list(BY_FAMILY) == sorted(
        ALL_SCORES, key=score_key
    )
    assert TRUE_ONLY_SCORES == ("wBA", "wF1", "wAUC")
    assert LABEL_FREE_SCORES == tuple(s for s in ALL_SCORES if not s.startswith("w"))
    assert list(SCORE_DESCRIPTIONS) == list(ALL_SCORES)
    assert RECOMMENDED == {"BA": "cBA", "F1": "cF1", "AUC": "cAUC"}
    assert set(RECOMMENDED.values()) <= set(LABEL_FREE_SCORES)


def test_every_module_takes_the_vocabulary_from_scores():
    import medeval.analyses.common as common
    import medeval.evaluation as evaluation
    import medeval.protocol.discovered as discovered

    assert evaluation.ALL_SCORES is ALL_SCORES and evaluation.PAPER_SCORES is PAPER_SCORES
    assert evaluation.RECOMMENDED is RECOMMENDED
    assert evaluation.SCORE_DESCRIPTIONS is SCORE_DESCRIPTIONS
    assert discovered.LABEL_FREE_SCORES is LABEL_FREE_SCORES
    assert common.WEIGHTING_OF == {w.prefix: w.name for w in WEIGHTINGS}


def test_a_vocabulary_has_one_name_in_every_module():
    """No module binds a vocabulary of medeval.scores under another name (an alias such as
    ``SCORES = PAPER_SCORES`` in one module and ``SCORES = INSTANCE_SCORES`` in another made one
    name mean two things)."""
    import importlib
    import pkgutil

    import medeval
    import medeval.scores as scores

    vocab = {
        id(v): k
        for k, v in vars(scores).items()
        if (not k.startswith("_") and isinstance(v, tuple | dict)) or (callable(v) and k[:1] != "_")
    }
    vocab = {i: k for i, k in vocab.items() if getattr(scores, k).__class__.__module__ != "typing"}
    aliases = []
    for info in pkgutil.walk_packages(medeval.__path__, "medeval."):
        if info.name.endswith("__main__") or info.name == "medeval.scores":
            continue
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            canonical = vocab.get(id(value))
            if canonical is not None and name != canonical and not name.startswith("_"):
                aliases.append(f"{info.name}.{name} is medeval.scores.{canonical}")
    assert not aliases, aliases


def _score_literals(path: Path) -> list[str]:
    """Module- and class-level assignments whose literal holds two or more score names."""
    found = []
    tree = ast.parse(path.read_text())
    bodies = [tree.body] + [n.body for n in ast.walk(tree) if isinstance(n, ast.ClassDef)]
    for stmt in (s for body in bodies for s in body):
        if not isinstance(stmt, ast.Assign | ast.AnnAssign) or stmt.value is None:
            continue
        for node in ast.walk(stmt.value):
            elts = []
            if isinstance(node, ast.Tuple | ast.List | ast.Set):
                elts = node.elts
            elif isinstance(node, ast.Dict):
                elts = [k for k in node.keys if k is not None]
            names = [e.value for e in elts if isinstance(e, ast.Constant)]
            if sum(n in ALL_SCORES for n in names) >= 2:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{stmt.lineno}")
    return found


def test_no_other_module_defines_score_names():
    offenders = [
        hit
        for path in sorted(PACKAGE.rglob("*.py"))
        if path != PACKAGE / "scores.py"
        for hit in _score_literals(path)
    ]
    assert offenders == []
    assert _score_literals(PACKAGE / "scores.py")  # the check does see a definition


def _threshold_comparisons(path: Path) -> list[str]:
    """``x >= threshold`` (any name holding "threshold") outside the one rule."""
    hits = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Compare) and any(isinstance(o, ast.GtE) for o in node.ops):
            text = ast.unparse(node)
            if "threshold" in text.lower():
                hits.append(f"{path.name}:{node.lineno}: {text}")
    return hits


def test_the_threshold_rule_is_written_once():
    hits = {p: _threshold_comparisons(p) for p in sorted(PACKAGE.rglob("*.py"))}
    assert [h for p, hs in hits.items() if p != PACKAGE / "scores.py" for h in hs] == []
    assert hits[PACKAGE / "scores.py"]


def test_one_threshold_rule_for_arrays_and_tensors():
    s = [0.2, 0.5, 0.5000001, 0.4999999, 1.0]
    a = labels_from_scores(np.array(s), 0.5)
    assert a.dtype == np.int64 and a.tolist() == [0, 1, 1, 0, 1]
    for dtype in (torch.float64, torch.float32):
        t = labels_from_scores(torch.tensor(s, dtype=dtype), 0.5)
        assert t.dtype == dtype and t.tolist() == [0, 1, 1, 0, 1]
    assert labels_from_scores(s, 0.5).tolist() == [0, 1, 1, 0, 1]  # a plain list too


def test_streaming_sklearn_and_evaluation_threshold_alike():
    """Ties at the threshold are class 1 in all three consumers of the rule."""
    from medeval.evaluation import evaluate_predictions
    from medeval.metrics.streaming import SubconceptScores

    y = np.array([0, 0, 1, 1, 1, 0, 1, 0])
    s = np.array([0.5, 0.1, 0.5, 0.9, 0.2, 0.5, 0.3, 0.7])
    sizes = {"neg": {"class": 0, "n": 10}, "pos": {"class": 1, "n": 5}}
    ev = evaluate_predictions(y, y_score=s, threshold=0.3, n_bootstrap=0)
    metric = SubconceptScores(sizes, scores=["BA", "F1"], threshold=0.3)
    metric.update(torch.as_tensor(s), torch.as_tensor(y))
    got = metric.compute()
    assert float(got["BA"]) == ev.scores["BA"] and float(got["F1"]) == ev.scores["F1"]


def test_parse_and_split_score():
    assert parse_score("cBA") == ("c", "BA") and parse_score("xAUC") == ("x", "AUC")
    assert split_score("wF1") == ("w", "F1") and split_score("AUC") == ("", "AUC")
    with pytest.raises(ValueError, match="must end in one of BA, F1, AUC"):
        parse_score("MCC")
    assert split_score("rBA") == ("r", "BA")  # computed by evaluate_predictions with reference rows
    for bad in ("xBA", "BAx"):
        with pytest.raises(ValueError, match=f"unknown score '{bad}'"):
            split_score(bad)
    assert instance_score("cAUC") == ("c", "AUC")
    for rectified in REFERENCE_SCORES:  # not computable from instance weights
        with pytest.raises(ValueError, match=f"{rectified} is a rectified score: it needs"):
            instance_score(rectified)


def test_streaming_metric_and_scorers_refuse_rectified_scores():
    from medeval.metrics.streaming import SubconceptScores
    from medeval.scorers import make_subconcept_scorer

    sizes = {"neg": {"class": 0, "n": 10}, "a": {"class": 1, "n": 5}, "b": {"class": 1, "n": 2}}
    with pytest.raises(ValueError, match="rBA is a rectified score.*evaluate_predictions"):
        SubconceptScores(sizes, scores=["BA", "rBA"])
    with pytest.raises(ValueError, match="rF1 is a rectified score"):
        make_subconcept_scorer("rF1")
    assert "rBA" not in SubconceptScores(sizes).scores


def test_what_each_score_needs_follows_from_its_weighting():
    for w in WEIGHTINGS:
        assert w.label_free is not w.needs_subconcept
        assert w.scores() == tuple(w.prefix + f for f in FAMILIES)
        assert set(w.scores()) <= set(ALL_SCORES) or not w.scored
