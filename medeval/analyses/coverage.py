"""How well each data set's intervals cover the true-weight score: the per-data-set table of the
class-conditional score cM and the rectified score rM (``coverage_by_dataset.csv``)."""

from __future__ import annotations

import math
from operator import itemgetter
from typing import Any

import pandas as pd

from medeval.analyses.agreement import _stats, _wide, evaluation_frame
from medeval.analyses.common import markdown_table
from medeval.analyses.quality import DATASET_KEYS, subconcept_model_quality
from medeval.scores import FAMILIES

__all__ = [
    "COVERAGE_COLUMNS",
    "COVERAGE_INTRO",
    "LOW_COVERAGE_PCT",
    "coverage_by_dataset",
    "coverage_markdown",
    "coverage_view",
    "low_coverage_lines",
]

#: A data set whose recommended score's intervals cover the true-weight score less often than
#: this (in %) is flagged in the coverage table.
LOW_COVERAGE_PCT = 80.0
COVERAGE_COLUMNS = [
    *DATASET_KEYS,
    "method",
    "family",
    "n",
    "within_class_ba",
    "weak_subconcept_model",
    "c_mae",
    "c_bias",
    "c_coverage_pct",
    "c_mean_width",
    "r_mae",
    "r_bias",
    "r_coverage_pct",
    "r_mean_width",
    "recommended",
    "low_coverage",
]


#: mae, bias, coverage and width out of :func:`~medeval.analyses.agreement._stats`.
_ERROR_AND_COVERAGE = itemgetter(1, 2, 5, 6)


def coverage_by_dataset(
    records: list[dict[str, Any]], quality: pd.DataFrame | None = None
) -> pd.DataFrame:
    """Per data set, correction method (and ``"all"`` methods) and family: error and interval
    coverage of the class-conditional score cM and of the rectified score rM against the
    true-weight score, columns :data:`COVERAGE_COLUMNS`.

    ``recommended`` is rM where the records carry it, else cM; ``low_coverage`` flags a
    recommended coverage below :data:`LOW_COVERAGE_PCT` %; ``weak_subconcept_model`` and
    ``within_class_ba`` (the lowest weighted class's mean) come from
    :func:`subconcept_model_quality`.
    """
    quality = subconcept_model_quality(records) if quality is None else quality
    evals = evaluation_frame(records)
    evals = evals[evals.family.isin(FAMILIES)]
    rows = []
    # "all" pools the methods; the evaluations keep their own method (one row each in _wide).
    both = [evals.assign(group=evals.method)]
    if evals.method.nunique() > 1:
        both.append(evals.assign(group="all"))
    for (kind, collection, dataset, method), part in pd.concat(both).groupby(
        [*DATASET_KEYS, "group"], sort=True
    ):
        key = (kind, collection, dataset)
        q = quality[(quality[DATASET_KEYS] == list(key)).all(axis=1)]
        wcba = float(q.within_class_ba.min()) if len(q) else math.nan
        weak = bool(q.weak.any()) if len(q) else False
        wide = _wide(part, ["value", "low", "high"])
        for family in FAMILIES:
            if not (part.family == family).any():
                continue
            # n, mae, bias, closer, sign, coverage, width of cM and of rM
            c = _stats(wide, "c" + family, "c", family)
            r = _stats(wide, "r" + family, "r", family)
            rec = r if r[0] > 0 else c
            low = bool(math.isfinite(rec[5]) and rec[5] < LOW_COVERAGE_PCT)
            head = [*key, method, family, max(c[0], r[0]), wcba, weak]
            tail = [("r" if rec is r else "c") + family, low]
            rows.append([*head, *_ERROR_AND_COVERAGE(c), *_ERROR_AND_COVERAGE(r), *tail])
    out = pd.DataFrame(rows, columns=COVERAGE_COLUMNS)
    return out.astype({"n": int, "weak_subconcept_model": bool, "low_coverage": bool})


COVERAGE_INTRO = (
    "Per data set (all correction methods pooled) and family: mean |error| and bias against the "
    "true-weight score and % of 95 % intervals containing it, for the class-conditional score cM "
    "and the rectified score rM (– where the records carry no rM). Full table per method: "
    f"`coverage_by_dataset.csv`. A recommended coverage below {LOW_COVERAGE_PCT:.0f} % is "
    "flagged; a weak subconcept model too."
)


def coverage_view(table: pd.DataFrame) -> pd.DataFrame:
    """The pooled rows of :func:`coverage_by_dataset` (``method == "all"``, or the one method)
    with the columns a reader needs and a ``flag`` column."""
    pooled = table[table.method == "all"] if (table.method == "all").any() else table
    cols = ["subconcepts", "dataset", "family", "n", "within_class_ba", "c_mae", "c_bias"]
    cols += ["c_coverage_pct", "r_mae", "r_bias", "r_coverage_pct"]
    view = pooled[cols].copy()
    flags = []
    for row in pooled.itertuples(index=False):
        f = [f"{row.recommended} coverage < {LOW_COVERAGE_PCT:.0f} %"] if row.low_coverage else []
        flags += ["; ".join(f + (["weak subconcept model"] if row.weak_subconcept_model else []))]
    view["flag"] = flags
    if (view.subconcepts == "true").all():
        view = view.drop(columns="subconcepts")
    return view


def low_coverage_lines(table: pd.DataFrame) -> list[str]:
    """One line per (data set, method, family) whose recommended score covers below
    :data:`LOW_COVERAGE_PCT` %, or one line saying there is none."""
    low = table[table.low_coverage & (table.method != "all")]
    if low.empty:
        return [f"No (data set, method, family) below {LOW_COVERAGE_PCT:.0f} % coverage."]
    lines = [f"Below {LOW_COVERAGE_PCT:.0f} % coverage of the recommended score:"]
    for row in low.itertuples(index=False):
        cov = row.r_coverage_pct if row.recommended.startswith("r") else row.c_coverage_pct
        weak = " (weak subconcept model)" if row.weak_subconcept_model else ""
        where = f"{row.dataset} {row.method} {row.recommended}"
        lines.append(f"- {where}: {cov:.0f} % of {row.n}{weak}")
    return lines


def coverage_markdown(table: pd.DataFrame) -> str:
    """:func:`coverage_view` as a table, then :func:`low_coverage_lines`."""
    out = ["### Coverage per data set\n", COVERAGE_INTRO + "\n"]
    if table.empty:
        return "\n".join([*out, "No evaluations.", ""])
    out.append(markdown_table(coverage_view(table)) + "\n")
    return "\n".join([*out, *low_coverage_lines(table), ""])
