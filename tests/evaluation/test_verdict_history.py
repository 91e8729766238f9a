"""medeval/evaluation/verdict_history.py: a verdict decided after an earlier batch (or with the
reference rows alone) that is now 'not known' is found and said in words, with what the code
knows: the verdict then, the intervals then and now, the class's recall, the rows that entered."""

import numpy as np

from medeval.evaluation.rectified_recall import LabelledRows, ReferenceEvidence
from medeval.evaluation.verdict_history import REOPENED, reopened, reopened_lines


def _rows(seed: int = 1):
    """Two class-0 subconcepts with sharp posteriors that name the wrong one on a fifth of the
    test rows (so that no map makes them exact); subconcept 1 is always found on the reference
    rows but misses on the test rows that get labelled."""
    rng = np.random.default_rng(seed)
    n = 200
    y = np.zeros(n, dtype=int)
    sub = (rng.random(n) < 0.3).astype(int)
    seen = np.where(rng.random(n) < 0.2, 1 - sub, sub)  # what the subconcept model says
    q = np.where(seen[:, None] == np.arange(2)[None, :], 0.97, 0.03)
    hit = np.where(sub == 1, rng.random(n) < 0.9, rng.random(n) < 0.7).astype(float)
    m = 22
    rs = np.r_[np.zeros(10, int), np.ones(m - 10, int)]
    ref = ReferenceEvidence(
        q=np.where(rs[:, None] == np.arange(2)[None, :], 0.97, 0.03),
        hit=np.r_[(rng.random(10) < 0.7).astype(float), np.ones(m - 10)],
        y=np.zeros(m, dtype=int),
        subconcept=rs,
    )
    return q, hit, y, np.array([0, 0]), ref, sub


def test_a_verdict_decided_on_the_reference_rows_that_reopens_says_why():
    q, hit, y, sides, ref, sub = _rows()
    names = ("a", "b")
    # batch 1: rows of b that the classifier misses, each chosen with probability 0.5
    missed = np.flatnonzero((sub == 1) & (hit == 0))[:6]
    lab = LabelledRows(
        index=missed, subconcept=np.ones(len(missed), int), pi=np.full(len(missed), 0.5),
        batch=np.ones(len(missed), int),
    )  # fmt: skip
    found = reopened(q, hit, y, sides, names, ref, lab, confidence=0.95)
    assert [r.name for r in found] == ["b"]
    r = found[0]
    assert (r.then, r.now, r.verdict) == (0, 1, "not below")
    assert r.recall[1] < r.recall[0] and r.entered == r.entered_own == len(missed)
    assert r.low[0] >= r.class_recall > r.low[1]  # it held the class's recall out, now in
    (line,) = reopened_lines(found)
    assert line.startswith(f"{REOPENED}b: was not below with the reference rows alone; now not")
    assert f"[{r.low[0]:.2f}, {r.high[0]:.2f}] to [{r.low[1]:.2f}, {r.high[1]:.2f}]" in line
    assert f"its class's recall {r.class_recall:.2f}" in line
    assert f"the {len(missed)} labelled rows of batch 1 entered ({len(missed)} of them b)" in line


def test_no_labels_or_no_reopened_verdict_says_nothing():
    q, hit, y, sides, ref, sub = _rows()
    assert reopened(q, hit, y, sides, ("a", "b"), ref, None, confidence=0.95) == []
    found_b = np.flatnonzero((sub == 1) & (hit == 1))[:6]  # rows that agree with the reference
    lab = LabelledRows(
        index=found_b, subconcept=np.ones(6, int), pi=np.full(6, 0.5), batch=np.ones(6, int)
    )
    assert reopened(q, hit, y, sides, ("a", "b"), ref, lab, confidence=0.95) == []


def test_a_reopened_line_names_the_level_when_a_planned_look_changed_it():
    from medeval.evaluation.verdict_history import Reopened

    r = Reopened(
        name="bus", class_recall=0.9, then=0, now=1, verdict="not below",
        recall=(1.0, 1.0), low=(0.93, 0.87), high=(1.0, 1.0), n_eff=(33, 45),
        entered=20, entered_own=7, level=(0.95, 0.9993),
    )  # fmt: skip
    line = reopened_lines([r])[0]
    assert "(effective rows 33 → 45; read at 99.93%, was 95.00%)" in line
    same = reopened_lines([Reopened(**{**r.__dict__, "level": (0.95, 0.95)})])[0]
    assert "read at" not in same and "(effective rows 33 → 45)" in same
