"""The worst subconcept of each class and its gap below the class's recall, with intervals, in
words and shaped like fairlearn's ``MetricFrame`` (docs/method.md, "Per-subconcept recall")."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from medeval.evaluation.rectified_recall import DECISIVE_WIDTH, RectifiedRecall, worst_bounds
from medeval.evaluation.subconcept_recall import (
    BOUNDS,
    WORST_FIELDS,
    percentile_bounds,
    recommended_column,
    source_of,
)


def worst_subconcepts(
    table: pd.DataFrame,
    class_recall: dict[int, float],
    reps: dict[str, np.ndarray | None],
    class_reps: np.ndarray | None,
    *,
    confidence: float,
    rectified: tuple[RectifiedRecall, np.ndarray] | None = None,
) -> list[dict[str, Any]]:
    """One entry per class with subconcepts: the subconcept of lowest recommended recall, its
    recall and interval, and its ``gap`` below the class's recall (``class recall − recall``;
    positive = worse than the class) with an interval.

    For the true and the label-free recall the interval is the table's and the gap's a
    percentile interval from the same replicates (``reps``: ``{column: (B, S)}`` in table
    order; ``class_reps``: ``(B, 2)`` class recalls). For the rectified recall (``rectified``:
    the estimate and the table's order of its subconcepts) the class's recall on the test rows
    is known, so the gap's interval is the recall's; the recall's interval holds after the
    choice of the worst (:func:`~medeval.evaluation.rectified_recall.worst_bounds`), and the
    entry lists the subconcepts that could be worst and the verdict.

    The worst named is the subconcept of lowest recommended recall; of subconcepts tied at
    that recall (within 1e-12) the one whose verdict (``r_verdict``, where reference rows or
    labels gave one) is ``below`` its class, then ``not known``, then ``not below``, then the
    first by name — so the worst named never has a weaker verdict than another as low. For
    the rectified recall, of the subconcepts that could be worst the lowest label-free recall
    is named (:func:`_named_worst`), its ties broken the same way."""
    col = recommended_column(table)
    if col is None:
        return []
    lo_col, hi_col = BOUNDS[col]
    values = pd.to_numeric(table[col], errors="coerce").to_numpy(dtype=float)
    out = []
    for c in (0, 1):
        idx = [i for i in np.flatnonzero(table["class"].to_numpy() == c) if np.isfinite(values[i])]
        if not idx:
            continue
        i = _lowest(table, idx, values)
        if col == "r_recall" and rectified is not None:
            i = _named_worst(table, idx, i)
        entry = {
            "class": c,
            "subconcept": str(table.subconcept.iloc[i]),
            "recall": float(values[i]),
            "low": _num(table[lo_col].iloc[i]),
            "high": _num(table[hi_col].iloc[i]),
            "gap": float(class_recall[c] - values[i]),
            "gap_low": math.nan,
            "gap_high": math.nan,
            "source": source_of(col),
            "class_recall": float(class_recall[c]),
        }
        if col == "r_recall" and rectified is not None:
            entry |= _rectified_worst(table, rectified, c, i, confidence)
        else:
            r = reps.get(col)
            if r is not None and class_reps is not None and len(r):
                g = percentile_bounds((class_reps[:, c] - r[:, i])[:, None], confidence)
                entry["gap_low"], entry["gap_high"] = float(g[0][0]), float(g[1][0])
        out.append(entry)
    return out


#: Order of the verdicts among subconcepts tied at the lowest recall: ``below`` is named first
#: (a verdict missing or unknown counts as ``not known``).
VERDICT_ORDER = {"below": 0, "not known": 1, "not below": 2}
_TIE = 1e-12  # recalls closer than this are tied


def _lowest(table: pd.DataFrame, idx: list[int], values: np.ndarray) -> int:
    """Of the rows ``idx``, the one of lowest ``values``; ties by verdict
    (:data:`VERDICT_ORDER`), then by name."""
    low = min(values[j] for j in idx)
    tied = [j for j in idx if values[j] - low <= _TIE]
    verdict = table["r_verdict"] if "r_verdict" in table.columns else None

    def rank(j: int) -> int:
        v = None if verdict is None else verdict.iloc[j]
        return VERDICT_ORDER.get(v, 1) if isinstance(v, str) else 1

    return min(tied, key=lambda j: (rank(j), str(table.subconcept.iloc[j])))


def _could_flags(table: pd.DataFrame) -> np.ndarray:
    """``r_could_be_worst`` as booleans ``(S,)`` (NaN, where undefined, is False)."""
    return np.array([isinstance(f, bool | np.bool_) and bool(f) for f in table["r_could_be_worst"]])


def _named_worst(table: pd.DataFrame, idx: list[int], lowest: int) -> int:
    """The worst to name: of those that could be worst, the lowest label-free recall (ties as
    :func:`_lowest`)."""
    flags = _could_flags(table)
    est = pd.to_numeric(table["est_recall"], errors="coerce").to_numpy(dtype=float)
    could = [j for j in idx if flags[j] and np.isfinite(est[j])]
    if len(could) < 2:
        return could[0] if could else lowest
    return _lowest(table, could, est)


def _rectified_worst(
    table: pd.DataFrame,
    rectified: tuple[RectifiedRecall, np.ndarray],
    c: int,
    i: int,
    confidence: float,
) -> dict[str, Any]:
    """The rectified worst of class ``c``: its bounds, gap, verdict and rivals."""
    res, order = rectified
    mine = np.flatnonzero(_could_flags(table) & (table["class"].to_numpy() == c))
    could = [str(table.subconcept.iloc[j]) for j in mine]
    members = np.asarray(order)[mine].astype(int)
    lo, hi = worst_bounds(res, members, int(order[i]), confidence)
    cr = float(res.recall[order[i]] + table["r_gap"].iloc[i])
    rows = table[table["class"] == c].sort_values("r_recall", kind="stable")
    below, open_ = [], []
    for j, r in rows.iterrows():
        chosen = j == table.index[i]
        if r.r_verdict == "below":
            bounds = (lo, hi) if chosen else (float(r.r_low), float(r.r_high))
            below.append({"subconcept": str(r.subconcept), "recall": float(r.r_recall),
                          "low": bounds[0], "high": bounds[1], "gap": float(r.r_gap)})  # fmt: skip
        elif r.r_verdict == "not known":
            more = _num(r.r_more_rows)
            open_.append({"subconcept": str(r.subconcept),
                          "more_rows": more if math.isfinite(more) else None,
                          "n_reference": int(r.n_reference + r.get("n_labelled", 0)),
                          "labelled": bool(r.get("n_labelled", 0))})  # fmt: skip
    return {
        "low": lo,
        "high": hi,
        "gap_low": cr - hi,
        "gap_high": cr - lo,
        "verdict": str(table["r_verdict"].iloc[i]),
        "could_be_worst": could,
        "below": below,
        "not_known": open_,
    }


def _num(x: Any) -> float:
    v = pd.to_numeric(x, errors="coerce")
    return float(v) if pd.notna(v) else math.nan


def describe_worst(entry: dict[str, Any], class_names: dict[int, str] | None = None) -> str:
    """One sentence: ``"dermatofibroma: true recall 0.46 [0.33, 0.60], 0.26 below class 0 as
    a whole (gap [0.12, 0.40])"`` (``label-free recall`` where the recall is that one; a gap
    that rounds to 0.00 is ``less than 0.01 below``, no bound is ``-0.00``); for the rectified
    recall the verdicts (:func:`verdict_sentence`)."""
    if entry.get("source") == "rectified" and "verdict" in entry:
        return verdict_sentence(entry)
    name = (class_names or {}).get(entry["class"], f"class {entry['class']}")
    where = f"{_gap_words(entry['gap'])} {name} as a whole"
    if _finite(entry.get("gap_low")):
        where += f" (gap [{number(entry['gap_low'])}, {number(entry['gap_high'])}])"
    what = "true recall" if entry["source"] == "true" else f"{entry['source']} recall"
    return f"{entry['subconcept']}: {what} {entry['recall']:.2f}{_ci(entry)}, {where}"


def number(x: float, digits: int = 2) -> str:
    """``x`` to ``digits`` places, without the sign of a value that rounds to zero (``0.00``,
    never ``-0.00``)."""
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def _gap_words(gap: float) -> str:
    """``"0.26 below"``, ``"0.04 above"``; a gap that rounds to 0.00 is ``"less than 0.01
    below"`` (or above), and ``"level with"`` where it is 0."""
    side = "below" if gap >= 0 else "above"
    if gap == 0:
        return "level with"
    if float(number(gap)) == 0:
        return f"less than 0.01 {side}"
    return f"{abs(gap):.2f} {side}"


def _gap_short(gap: float) -> str:
    """:func:`_gap_words`, ``"level with it"`` where the gap is 0."""
    words = _gap_words(gap)
    return "level with it" if words == "level with" else words


def _finite(x: Any) -> bool:
    return x is not None and math.isfinite(x)


def _ci(e: dict[str, Any]) -> str:
    ok = _finite(e.get("low")) and _finite(e.get("high"))
    return f" [{number(e['low'])}, {number(e['high'])}]" if ok else ""


def verdict_sentence(entry: dict[str, Any]) -> str:
    """The rectified verdicts of a class in words: ``"AK is below its class (recall 0.41 [0.22,
    0.60], 0.33 below); could be worst: AK, SCC; not known: VASC — about 25 more reference rows
    of VASC would decide"``."""
    below = entry.get("below") or []
    if below:
        parts = [
            "; ".join(
                f"{b['subconcept']} is below its class (recall {b['recall']:.2f}{_ci(b)}, "
                f"{_gap_short(b['gap'])})"
                for b in below
            )
        ]
    else:
        parts = [
            f"no subconcept is known to be below its class (lowest: {entry['subconcept']}, "
            f"recall {entry['recall']:.2f}{_ci(entry)}, {_gap_short(entry['gap'])})"
        ]
    if entry.get("could_be_worst"):
        parts.append("could be worst: " + ", ".join(entry["could_be_worst"]))
    open_ = entry.get("not_known") or []
    if open_:
        parts.append("not known: " + "; ".join(_open_groups(open_)))
    return "; ".join(parts)


def _open_groups(open_: list[dict[str, Any]]) -> list[str]:
    """The open verdicts grouped by what would decide them."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for o in open_:
        more = o.get("more_rows")
        kind = (
            "few" if o.get("n_reference", 2) < 2
            else "close" if more == 0
            else "rows" if _finite(more)
            else "label"
        )  # fmt: skip
        groups.setdefault(kind, []).append(o)
    said = {
        "rows": lambda g: (
            f"about {', '.join(str(int(o['more_rows'])) for o in g)} more "
            f"{'labelled' if any(o.get('labelled') for o in g) else 'reference'} rows "
            f"{'would' if len(g) == 1 else 'respectively would'} decide"
        ),
        "few": lambda g: "needs at least 2 rows of known subconcept for an interval",
        "label": lambda g: (
            "too few test rows for reference rows to decide: label test rows "
            "(python -m medeval.label)"
        ),
        "close": lambda g: (
            f"close to the class (an interval under {DECISIVE_WIDTH:.1f} wide holding its recall)"
        ),
    }
    return [
        f"{', '.join(o['subconcept'] for o in g)} — {said[k](g)}"
        for k in ("rows", "few", "label", "close")
        if (g := groups.get(k))
    ]


def worst_sentences(
    worst: list[dict[str, Any]], class_names: dict[int, str] | None = None
) -> list[str]:
    """The decision in words, class 1 first: ``"worst subconcept of class 1 — e: true recall
    0.31 [0.14, 0.52], 0.51 below class 1 as a whole (gap [0.34, 0.68])"``, with the
    rectified recall ``"class 1: e is below its class (…); could be worst: e; not known: …"``,
    and a caveat line where the recall is the label-free one."""
    out = []
    for w in sorted(worst, key=lambda w: -w["class"]):
        name = (class_names or {}).get(w["class"], f"class {w['class']}")
        verdict = w.get("source") == "rectified" and "verdict" in w  # describe_worst says it
        prefix = f"{name}: " if verdict else f"worst subconcept of {name} — "
        out.append(prefix + describe_worst(w, class_names))
    if any(w["source"] == "label-free" for w in worst):
        out.append(
            "label-free per-subconcept recall: it shrinks toward the class's recall where the "
            "subconcept model is unsure, and its interval does not see that; reference rows "
            "(--reference) give the rectified recall"
        )
    return out


@dataclass(frozen=True)
class SubconceptRecall:
    """Per-subconcept recall shaped like fairlearn's ``MetricFrame``.

    Attributes:
        overall: ``{class: recall}`` of each class on the test set (a Series indexed 0, 1).
        by_group: one row per subconcept (index), columns ``class, recall, low, high, source``
            — the recommended recall (:func:`recommended_column`) and its interval.
        worst: one row per class: :data:`WORST_FIELDS`.
    """

    overall: pd.Series
    by_group: pd.DataFrame
    worst: pd.DataFrame

    def group_min(self) -> pd.Series:
        """The lowest recommended recall of each class (indexed by class)."""
        return self.worst.set_index("class")["recall"]

    def difference(self) -> pd.Series:
        """Each class's recall minus its worst subconcept's (indexed by class)."""
        return self.worst.set_index("class")["gap"]


def subconcept_recall_frame(
    table: pd.DataFrame, class_recall: dict[int, float], worst: list[dict[str, Any]]
) -> SubconceptRecall:
    """:class:`SubconceptRecall` from an evaluation's per-subconcept table."""
    col = recommended_column(table)
    if col is None:
        by = pd.DataFrame(columns=["class", "recall", "low", "high", "source"])
    else:
        lo, hi = BOUNDS[col]
        by = pd.DataFrame(
            {
                "class": table["class"].to_numpy(),
                "recall": pd.to_numeric(table[col], errors="coerce").to_numpy(dtype=float),
                "low": pd.to_numeric(table[lo], errors="coerce").to_numpy(dtype=float),
                "high": pd.to_numeric(table[hi], errors="coerce").to_numpy(dtype=float),
                "source": source_of(col),
            },
            index=pd.Index(table.subconcept.astype(str), name="subconcept"),
        )
    overall = pd.Series(class_recall, name="recall", dtype=float)
    overall.index.name = "class"
    return SubconceptRecall(
        overall=overall, by_group=by, worst=pd.DataFrame(worst, columns=list(WORST_FIELDS))
    )
