"""RQ4: do the label-free scores agree with the true-weight (``w``) scores of their family
(docs/method.md, "Label-free scores")? Columns of :func:`agreement_table` (:data:`COLUMNS`):
docs/benchmark.md (``agreement.csv``); differences within :data:`TOL` count as ties and zeros."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from medeval.analyses.common import (
    dataset_means,
    fmt,
    is_measure,
    markdown_table,
    names_note,
    number,
    subset_frame,
)
from medeval.analyses.correlation_gap import pooled_gap
from medeval.analyses.quality import (
    dataset_key,
    subconcept_model_quality,
    weak_datasets,
    weak_markdown,
)
from medeval.scores import (
    RECOMMENDED,
    RECOMMENDED_RECTIFIED,
    WEIGHTINGS,
    parse_score,
    score_key,
)

COLUMNS = [
    "estimator",
    "family",
    "n",
    "mae",
    "bias",
    "closer_pct",
    "sign_pct",
    "coverage_pct",
    "mean_width",
    "rq1_gap",
    "recommended",
    "n_weak",
]
#: Differences within TOL count as exact zeros / ties (floating-point rounding of equal scores).
TOL = 1e-12
_KEYS = ["subconcepts", "collection", "dataset", "method", "split"]
_NEEDS_REFERENCE = {w.prefix for w in WEIGHTINGS if w.needs_reference}


def evaluation_frame(records: list[dict[str, Any]]) -> pd.DataFrame:
    """Long table of every record's full-test scores with their intervals.

    Returns:
        one row per record × score: ``subconcepts, collection, dataset, method, split,
        estimator, prefix, family, value, low, high, weak`` (NaN where a score is null or its
        interval is missing; ``weak``: the record's data set has a weak subconcept model).
    """
    weak = weak_datasets(subconcept_model_quality(records))
    rows = []
    for r in records:
        key = (*dataset_key(r), r["method"], r["split"])
        is_weak = key[:3] in weak
        intervals = r.get("intervals") or {}
        for name, value in r["scores"].items():
            if not is_measure(name):  # RQ4 is defined per family (BA, F1, AUC)
                continue
            prefix, family = parse_score(name)
            low, high = _interval(intervals.get(name), f"{key[2]} {key[3]} split {key[4]}: {name}")
            rows.append((*key, name, prefix, family, number(value), low, high, is_weak))
    cols = [*_KEYS, "estimator", "prefix", "family", "value", "low", "high", "weak"]
    return pd.DataFrame(rows, columns=cols)


def _interval(item: Any, where: str) -> tuple[float, float]:
    """``[low, high]`` or ``{"low": .., "high": ..}`` (the ``metrics.json`` form) → floats."""
    if item is None:
        return math.nan, math.nan
    if isinstance(item, dict):
        return number(item.get("low")), number(item.get("high"))
    if not isinstance(item, list | tuple) or len(item) != 2:
        raise ValueError(f"{where}: interval must be [low, high], got {item!r}")
    return number(item[0]), number(item[1])


def agreement_table(records: list[dict[str, Any]]) -> pd.DataFrame:
    """RQ4 over every evaluation of a results folder (methods pooled).

    Returns:
        one row per estimator × family (plus the true-weight reference row), columns
        :data:`COLUMNS`, with a leading ``subconcepts`` column (true / discovered).
    """
    return _agreement(records, by=[])


def agreement_by_method(records: list[dict[str, Any]]) -> pd.DataFrame:
    """:func:`agreement_table` per correction method: the same columns plus a leading ``method``."""
    return _agreement(records, by=["method"])


def _agreement(records: list[dict[str, Any]], by: list[str]) -> pd.DataFrame:
    evals, subsets = evaluation_frame(records), subset_frame(records)
    group = ["subconcepts", *by]
    rows = []
    for key, part in evals.groupby(group, sort=True):  # keys are tuples (a list of columns)
        means = dataset_means(subsets[(subsets[group] == list(key)).all(axis=1)])
        rows += [[*key, *row] for row in _rows(part, means)]
    out = pd.DataFrame(rows, columns=[*group, *COLUMNS])
    return out.astype({"n": int, "recommended": bool, "n_weak": int})


def _rows(evals: pd.DataFrame, means: pd.DataFrame) -> list[list[Any]]:
    """Statistics of every estimator of every family in one group of evaluations."""
    wide = _wide(evals, ["value", "low", "high", "weak"])
    present = evals.groupby("estimator")["value"].apply(lambda v: bool(np.isfinite(v).any()))
    rows = []
    for name in sorted(evals["estimator"].unique(), key=score_key):
        prefix, family = parse_score(name)
        if prefix in _NEEDS_REFERENCE and not present[name]:
            continue  # records without reference rows: their rectified scores are all null
        stats = _stats(wide, name, prefix, family)
        gap = pooled_gap(means, name)
        # n_weak: evaluations counted in n whose data set has a weak subconcept model
        est, true = _column(wide, "value", name), _column(wide, "value", "w" + family)
        weak = _column(wide, "weak", name) > 0
        n_weak = int(np.sum(np.isfinite(est) & np.isfinite(true) & weak))
        rows.append([name, family, *stats, gap, name == _recommended(family, present), n_weak])
    return rows


def _recommended(family: str, present: pd.Series) -> str | None:
    """The family's rectified score where the evaluations carry it, else RECOMMENDED's."""
    r = RECOMMENDED_RECTIFIED.get(family)
    return r if r is not None and bool(present.get(r, False)) else RECOMMENDED.get(family)


def _wide(evals: pd.DataFrame, values: list[str]) -> pd.DataFrame:
    """One row per evaluation, columns ``(value|low|high, estimator)``."""
    return evals.set_index([*_KEYS, "estimator"])[values].unstack("estimator")


def _column(wide: pd.DataFrame, what: str, name: str) -> np.ndarray:
    return (
        wide[(what, name)].to_numpy(float)
        if (what, name) in wide.columns
        else np.full(len(wide), np.nan)
    )


def _stats(wide: pd.DataFrame, name: str, prefix: str, family: str) -> list[float]:
    """``n, mae, bias, closer_pct, sign_pct, coverage_pct, mean_width`` of one estimator."""
    est = _column(wide, "value", name)
    true = _column(wide, "value", "w" + family)
    unw = _column(wide, "value", family)
    low, high = _column(wide, "low", name), _column(wide, "high", name)
    ok = np.isfinite(est) & np.isfinite(true)
    n = int(ok.sum())
    has_ci = ok & np.isfinite(low) & np.isfinite(high)
    width = _mean(high[has_ci] - low[has_ci])
    if prefix == "w":  # the oracle itself: only its count, interval width (and RQ1 gap) inform
        return [n, math.nan, math.nan, math.nan, math.nan, math.nan, width]
    err = est[ok] - true[ok]
    inside = (low[has_ci] <= true[has_ci]) & (true[has_ci] <= high[has_ci])
    closer = sign = math.nan
    if prefix != "":
        both = ok & np.isfinite(unw)
        d_est = np.abs(est[both] - true[both])
        d_unw = np.abs(unw[both] - true[both])
        closer = _pct(d_est < d_unw - TOL)
        sign = _pct(_sign(est[both] - unw[both]) == _sign(true[both] - unw[both]))
    return [n, _mean(np.abs(err)), _mean(err), closer, sign, _pct(inside), width]


def _sign(d: np.ndarray) -> np.ndarray:
    return np.where(np.abs(d) <= TOL, 0, np.sign(d))


def _mean(x: np.ndarray) -> float:
    return float(np.mean(x)) if len(x) else math.nan


def _pct(flags: np.ndarray) -> float:
    return 100.0 * float(np.mean(flags)) if len(flags) else math.nan


def reference_sources(records: list[dict[str, Any]]) -> str:
    """Where the records' reference rows came from, per method (``""`` without any), e.g.
    "Reference rows of the rectified scores: out-of-bag for none, rus, smote (240 records);
    cross-fitted for ros, weight (160 records)." Records whose rows were unavailable are
    counted apart."""
    by: dict[str, set[str]] = {}
    n: dict[str, int] = {}
    for r in records:
        ref = r.get("reference")
        if not ref:
            continue
        source = "unavailable" if "unavailable" in ref else str(ref.get("source", "?"))
        by.setdefault(source, set()).add(str(r.get("method", "?")))
        n[source] = n.get(source, 0) + 1
    if not by:
        return ""
    parts = [
        f"{src} for {', '.join(sorted(methods))} ({n[src]} record{'s' * (n[src] != 1)})"
        for src, methods in sorted(by.items(), key=lambda kv: (kv[0] == "unavailable", kv[0]))
    ]
    return "Reference rows of the rectified scores: " + "; ".join(parts) + "."


def agreement_markdown(
    table: pd.DataFrame, quality: pd.DataFrame | None = None, sources: str = ""
) -> str:
    """The table with a short reading: per family, the recommended score against BA / pBA /
    cBA; with ``quality`` (:func:`~medeval.analyses.quality.subconcept_model_quality`), the
    data sets whose subconcept model is weak; ``sources``: :func:`reference_sources`."""
    out = ["### RQ4 — agreement of label-free scores with the true-weight scores\n"]
    out.append(
        "Per estimator and family, over every evaluation (data set × method × split): mean "
        "|est − true-weight score| (mae), mean signed error (bias), % of evaluations closer to "
        "the true-weight score than the unweighted score (ties are not closer), % moving from "
        "the unweighted score in the true direction (sign), % of 95 % intervals containing the "
        "true-weight score (coverage), mean interval width, and the RQ1 correlation gap "
        "(the true-weight row gives the oracle's own width and gap for reference); n_weak = "
        "evaluations from data sets whose subconcept model is weak within a class. rM "
        "(rectified) rows appear where the records carry reference rows.\n"
    )
    out.append(markdown_table(table) + "\n")
    out.append(names_note(table["estimator"]) + "\n")
    if sources:
        out.append(sources + "\n")
    out += _reading(table)
    if quality is not None:
        out.append(weak_markdown(quality))
    return "\n".join(out)


def _reading(table: pd.DataFrame) -> list[str]:
    """One sentence per family and subconcept kind: the recommended score against the others."""
    lines = []
    group = ["subconcepts"] if "subconcepts" in table.columns else []
    parts = table.groupby(group, sort=True) if group else [((), table)]
    for key, part in parts:
        kind = f" ({key[0]} subconcepts)" if group else ""
        for family in dict.fromkeys(part["family"]):
            fam = part[part.family == family].set_index("estimator")
            flagged = fam.index[fam["recommended"]] if "recommended" in fam else []
            rec = flagged[0] if len(flagged) else RECOMMENDED.get(family)
            if rec not in fam.index or fam.loc[rec, "n"] == 0:
                lines.append(f"- {family}{kind}: no {rec} scores in these records.")
                continue
            r = fam.loc[rec]
            text = (
                f"- {family}{kind}: {rec} (recommended) is off the true-weight score by "
                f"{fmt(r.mae)} on average (bias {fmt(r.bias, signed=True)}), closer to it than "
                f"{family} in {fmt(r.closer_pct, 0)} % of {r.n} evaluations; its interval "
                f"contains it in {fmt(r.coverage_pct, 0)} %; RQ1 gap {fmt(r.rq1_gap)} "
                f"(true-weight score: {fmt(fam['rq1_gap'].get('w' + family, math.nan))})."
            )
            compare = [
                f"{e}: mae {fmt(fam.loc[e, 'mae'])}, bias {fmt(fam.loc[e, 'bias'], signed=True)}"
                + (f", coverage {fmt(fam.loc[e, 'coverage_pct'], 0)} %" if e[0] == "c" else "")
                for e in (family, "p" + family, "c" + family)
                if e in fam.index and e != rec
            ]
            if "n_weak" in fam and r.n_weak:
                text += (
                    f" {r.n_weak} of these evaluations come from data sets with a weak "
                    "subconcept model."
                )
            lines.append(text + (" For comparison " + "; ".join(compare) + "." if compare else ""))
    return [*lines, ""]


def agreement_figure(
    records: list[dict[str, Any]], table: pd.DataFrame, *, kind: str = ""
) -> Figure:
    """Per family, box plots of est − true-weight score per estimator (unweighted first, grey).

    Each box is annotated with its coverage %; the recommended estimator's box is outlined.

    Args:
        records: the results folder's records (only those of subconcept kind ``kind`` if given).
        table: :func:`agreement_table` of the same records.
    """
    evals = evaluation_frame(records)
    if kind:
        evals = evals[evals.subconcepts == kind]
        if "subconcepts" in table.columns:
            table = table[table.subconcepts == kind]
    families = [f for f in ("BA", "F1", "AUC") if (evals.family == f).any()]
    recommended = set(table.estimator[table.recommended.astype(bool)])
    shown = set(table.estimator)  # rectified scores that are null everywhere have no row
    evals = evals[evals.estimator.isin(shown) | (evals.prefix == "w")]
    wide = _wide(evals, ["value"])["value"]
    fig = Figure(figsize=(4.2 * max(len(families), 1), 4.2), layout="constrained")
    axes = np.atleast_1d(fig.subplots(1, max(len(families), 1), sharey=True, squeeze=False)[0])
    for ax, family in zip(axes, families, strict=False):
        names = [
            e
            for e in sorted(evals.estimator[evals.family == family].unique(), key=score_key)
            if parse_score(e)[0] != "w"
        ]
        if not names:
            continue
        true = wide.get("w" + family, pd.Series(np.nan, index=wide.index)).to_numpy(float)
        diffs = [wide[e].to_numpy(float) - true for e in names]
        data = [d[np.isfinite(d)] for d in diffs]
        box = ax.boxplot(data, tick_labels=names, patch_artist=True, showfliers=True)
        for name, patch in zip(names, box["boxes"], strict=True):
            grey = parse_score(name)[0] == ""
            patch.set_facecolor("#cccccc" if grey else "#9ecae1")
            if name in recommended:
                patch.set_edgecolor("#d62728")
                patch.set_linewidth(2)
        ax.axhline(0, color="black", linewidth=0.8)
        rows = table[table.family == family].set_index("estimator")
        for i, name in enumerate(names, start=1):
            cov = rows["coverage_pct"].get(name, np.nan)
            ax.annotate(
                f"cov {fmt(cov, 0)} %" if math.isfinite(cov) else "no intervals",
                (i, 1.0),
                xycoords=("data", "axes fraction"),
                ha="center",
                va="top",
                fontsize=7,
            )
        ax.set_title(f"{family}: estimate − w{family}")
        ax.tick_params(axis="x", rotation=30)
    axes[0].set_ylabel("estimate − true-weight score")
    title = "RQ4 — label-free scores against the true-weight score"
    n = len(wide)
    fig.suptitle(f"{title}{f' ({kind} subconcepts)' if kind else ''}, {n} evaluations")
    fig.text(
        0.01,
        0.005,
        "grey: unweighted score (reference); red outline: recommended; "
        "cov = % of 95 % intervals containing the true-weight score",
        fontsize=7,
    )
    return fig
