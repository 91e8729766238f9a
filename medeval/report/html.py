"""Self-contained HTML reports (tables, base64-embedded PNG figures, configuration, warnings): one
file, no external assets."""

from __future__ import annotations

import base64
import html
import math
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from .. import __version__
from ..evaluation.quality import weak_model_warning
from ..scores import RECOMMENDED, REFERENCE_SCORES, SCORE_DESCRIPTIONS, score_key

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1100px;color:#222;line-height:1.45;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;margin-top:2rem;
border-bottom:1px solid #ddd;padding-bottom:.2rem}.sub{color:#666;margin-top:0}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.6rem 0;font-size:.9rem}
.cap{color:#555;font-size:.85rem;margin:-.3rem 0 .6rem}
th,td{border:1px solid #ddd;padding:.25rem .55rem;text-align:right;vertical-align:top}
td{white-space:nowrap}td.t{white-space:normal}
th{background:#f4f5f7}td:first-child,th:first-child,td.t,th.t{text-align:left}
td{font-variant-numeric:tabular-nums}tr.rec td{background:#f3f9f1;font-weight:600}
details{margin:.4rem 0}summary{cursor:pointer;color:#245;font-size:.92rem}
img{max-width:100%;border:1px solid #eee;margin:.5rem 0}
pre{background:#f6f8fa;padding:.8rem;overflow:auto;font-size:.85rem}
.warn{background:#fff8e1;border-left:4px solid #f0b400;padding:.5rem .8rem;margin:.4rem 0}
.note{background:#eef5ff;border-left:4px solid #4a90d9;padding:.5rem .8rem;margin:.4rem 0}
figcaption{color:#555;font-size:.9rem}ul.links{padding-left:1.2rem}
.lead img{max-height:430px;width:auto}.lead figure{margin:.4rem 0}.lead p{margin:.45rem 0}
p.rec{font-weight:600}details.warnings summary{color:#8a5a00;font-weight:600}
ul.warn{padding-left:1.4rem}ul.warn li{background:#fff8e1;margin:.25rem 0;padding:.2rem .4rem}
"""


def interval_cell(value: Any, low: Any = math.nan, high: Any = math.nan, *, digits: int = 3) -> str:
    """One table cell for a value and its interval: ``"0.878 [0.847, 0.911]"``; the value alone
    where a bound is missing, ``"—"`` where the value is."""
    if missing(value):
        return "—"
    text = f"{float(value):.{digits}f}"
    if missing(low) or missing(high):
        return text
    return f"{text} [{float(low):.{digits}f}, {float(high):.{digits}f}]"


def missing(x: Any) -> bool:
    """True for None, NaN and anything that is not a number."""
    if x is None:
        return True
    try:
        return math.isnan(float(x))
    except (TypeError, ValueError):
        return True


def _is_words(x: Any) -> bool:
    return isinstance(x, str) and any(ch.isalpha() for ch in x)


def _bounds(interval: Any) -> tuple[float, float]:
    """``(low, high)`` from a pair or a ``metrics.json`` record ``{"low", "high", ...}``."""
    if interval is None:
        return math.nan, math.nan
    if isinstance(interval, Mapping):
        interval = (interval.get("low"), interval.get("high"))
    lo, hi = interval
    return (math.nan if lo is None else lo), (math.nan if hi is None else hi)


@dataclass
class Section:
    """A titled part of a report; blocks are rendered in the order they were added (``lead``:
    the answer a reader sees first, its figure kept within the first screen)."""

    title: str
    blocks: list[str] = field(default_factory=list)
    lead: bool = False

    def html(self, text: str) -> Section:
        """A block of HTML as it is (the caller escapes what it holds)."""
        self.blocks.append(text)
        return self

    def text(self, *texts: str) -> Section:
        """One paragraph per text."""
        self.blocks += [f"<p>{html.escape(t)}</p>" for t in texts]
        return self

    def table(
        self,
        df: pd.DataFrame,
        *,
        caption: str = "",
        digits: int = 3,
        highlight: Collection[int] = (),
    ) -> Section:
        """An HTML table of ``df``: floats to ``digits`` places (NaN as "—"), text columns
        left-aligned, the rows at positions ``highlight`` emphasised; wider than the page, it
        scrolls inside its own box instead of pushing the page wider."""
        self.blocks.append(_table_html(df, caption=caption, digits=digits, highlight=highlight))
        return self

    def links(self, links: Sequence[tuple[str, str]], *, intro: str = "") -> Section:
        """A list of links ``(href, text)``; hrefs are relative paths next to the report
        (e.g. ``"split_0/report.html"``), never fetched by the report itself."""
        items = "".join(
            f'<li><a href="{html.escape(href, quote=True)}">{html.escape(text)}</a></li>'
            for href, text in links
        )
        head = f"<p>{html.escape(intro)}</p>" if intro else ""
        self.blocks.append(f'{head}<ul class="links">{items}</ul>')
        return self

    def per_subconcept(self, df: pd.DataFrame, *, confidence: float = 0.95) -> Section:
        """The per-subconcept results (``per_subconcept.csv`` or
        :attr:`Evaluation.per_subconcept <medeval.evaluation.Evaluation>`): a main table that
        fits the page (readable headers, each recall with its interval in one cell, the
        interval method named) and the secondary columns in a collapsed block (``<details>``,
        opened by a click)."""
        main, extra, caption = per_subconcept_frames(df, confidence=confidence)
        self.table(main, caption=caption)
        if len(extra.columns) > 1:
            more = "More columns: training size, weight sums, soft test size"
            table = _table_html(extra, caption="", digits=3, highlight=())
            self.blocks.append(f"<details><summary>{more}</summary>{table}</details>")
        return self

    def image(self, png: bytes, *, caption: str = "") -> Section:
        data = base64.b64encode(png).decode("ascii")
        cap = f"<figcaption>{html.escape(caption)}</figcaption>" if caption else ""
        self.blocks.append(
            f'<figure><img src="data:image/png;base64,{data}" '
            f'alt="{html.escape(caption)}">{cap}</figure>'
        )
        return self

    def pre(self, text: str) -> Section:
        self.blocks.append(f"<pre>{html.escape(text)}</pre>")
        return self

    def notes(self, notes: list[str], *, warning: bool = True) -> Section:
        cls = "warn" if warning else "note"
        self.blocks += [f'<div class="{cls}">{html.escape(n)}</div>' for n in notes]
        return self


def _table_html(df: pd.DataFrame, *, caption: str, digits: int, highlight: Collection[int]) -> str:
    def fmt(x: Any) -> str:
        if isinstance(x, float):
            return "—" if math.isnan(x) else f"{x:.{digits}f}"
        return html.escape(str(x))

    # words are left-aligned; numbers, "0.878 [0.847, 0.911]" and "—" stay right-aligned
    cls = ["t" if df[c].map(_is_words).any() else "" for c in df.columns]

    def cell(tag: str, value: str, c: str) -> str:
        return f'<{tag} class="{c}">{value}</{tag}>' if c else f"<{tag}>{value}</{tag}>"

    # a paragraph, not <caption>: a long caption would stretch the table to its own width
    cap = f'<p class="cap">{html.escape(caption)}</p>' if caption else ""
    head = "".join(cell("th", html.escape(str(c)), k) for c, k in zip(df.columns, cls, strict=True))
    rows = "".join(
        ('<tr class="rec">' if i in highlight else "<tr>")
        + "".join(cell("td", fmt(v), k) for v, k in zip(row, cls, strict=True))
        + "</tr>"
        for i, row in enumerate(df.itertuples(index=False))
    )
    return (
        f'<div class="scroll"><table><thead><tr>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table></div>{cap}"
    )


LEAD = ' class="lead"'  # the answer's section


def render(title: str, sections: list[Section], *, subtitle: str = "") -> str:
    """The report as one HTML document."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    sub = html.escape(subtitle + (" · " if subtitle else "")) + f"medeval {__version__} · {stamp}"
    body = "".join(
        f"<section{LEAD if s.lead else ''}><h2>{html.escape(s.title)}</h2>"
        f"{''.join(s.blocks)}</section>"
        for s in sections
    )
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}"
        f"</title><style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>"
        f"<p class='sub'>{sub}</p>{body}</body></html>\n"
    )


_READ_LABEL_FREE = (
    "{lead}{BA}, {F1} and {AUC}{verb} label-free estimates of the "
    "true-weight scores wBA / wF1 / wAUC. They weight each test instance by the expected "
    "utility of its subconcept given the subconcept model's posteriors and the instance's "
    "known class, so they need no test subconcept labels. If cBA lies below BA, the small "
    "subconcepts are the hard ones and the headline score hides it; above BA, they are "
    "the easy ones. wBA / wF1 / wAUC use the true test subconcepts (an oracle, shown when "
    "labels exist). pBA / pF1 / pAUC are the original predicted-weight scores, kept for "
    "reproduction: they are biased upward (missed minority instances tend to look like "
    "majority subconcepts to the subconcept model as well) and can point the wrong way."
)

_READ_RECTIFIED = (
    "{names} are rectified: each is the class-conditional score minus that score's error "
    "measured on {n} reference rows ({source}) whose subconcepts are known, "
    "rM = cM(test) − (cM(R) − wM(R)). Their interval comes from a joint bootstrap of the test "
    "and the reference rows, so it also sees the subconcept model's error, which the "
    "class-conditional scores' interval cannot. They assume the reference rows come from the "
    "same classifier, subconcept model and population (in its subconcept mix) as the test "
    "rows and were used to fit neither model."
)

_UNCHECKED_MODEL = (
    "The subconcept model's quality within each class could not be checked here (no "
    "true test subconcepts and no reference rows). Give reference rows with true subconcepts "
    "(python -m medeval.evaluate --reference FILE): they check the subconcept model and "
    "rectify the label-free scores ({names}); a weak subconcept model makes the "
    "class-conditional scores understate hidden failures, and their interval cannot see it."
)

#: Readable names of :data:`medeval.metrics.proportion.METHODS` (others are shown as written).
INTERVAL_METHOD_NAMES = {
    "clopper-pearson": "Clopper–Pearson (exact binomial)",
    "wilson": "Wilson score",
    "jeffreys": "Jeffreys",
    "difference-jeffreys": "Jeffreys on the effective reference rows of the difference "
    "estimator, for the test rows' own recall",
    "difference-jeffreys-clustered": "Jeffreys on the effective reference rows of the "
    "difference estimator, for the test rows' own recall, rows counted by cluster (group)",
}


def ordered_scores(names: Iterable[str]) -> list[str]:
    """Score names in table order: family by family (BA, F1, AUC), within a family by
    weighting (``"", w, p, c, r``: :func:`medeval.scores.score_key`); names outside the
    vocabulary last, as given."""
    names = list(dict.fromkeys(names))
    known, other = [], []
    for k in names:
        try:
            score_key(k)
        except ValueError:
            other.append(k)
        else:
            known.append(k)
    return sorted(known, key=score_key) + other


def scores_frame(
    scores: Mapping[str, float | None],
    intervals: Mapping[str, Any] | None = None,
    *,
    descriptions: Mapping[str, str] | None = None,
    unavailable: Mapping[str, str] | None = None,
    recommended: Collection[str] = (),
    confidence: float = 0.95,
) -> tuple[pd.DataFrame, list[int], list[str]]:
    """The full-test scores as a readable table: one row per computed score (every name in
    ``scores``, in :func:`ordered_scores` order), its value and interval in one cell.

    Args:
        scores: ``{name: value}`` (None/NaN where undefined).
        intervals: ``{name: (low, high)}`` or ``metrics.json``'s ``{name: {"low", "high"}}``.
        descriptions: ``{name: meaning}`` for a "meaning" column (left out when None).
        unavailable: ``{name: reason}``: these rows are left out and summarised, one line per
            reason, in the returned notes.
        recommended: names to mark (and highlight) as the scores to read.

    Returns:
        (the table, the positions of the recommended rows, the notes on scores not computed).
    """
    intervals = intervals or {}
    unavailable = unavailable or {}
    pct = f"{confidence:.0%}"
    rows, marked = [], []
    for k in ordered_scores(scores):
        if k in unavailable:
            continue
        row = {"score": k}
        if descriptions is not None:
            row["meaning"] = descriptions.get(k, "")
        row[f"value [{pct} CI]"] = interval_cell(scores[k], *_bounds(intervals.get(k)))
        row["read"] = "recommended" if k in recommended else ""
        if k in recommended:
            marked.append(len(rows))
        rows.append(row)
    by_reason: dict[str, list[str]] = {}
    for k in ordered_scores(unavailable):
        by_reason.setdefault(unavailable[k], []).append(k)
    missing = [f"{', '.join(ks)} not computed: {why}" for why, ks in by_reason.items()]
    return pd.DataFrame(rows), marked, missing


def warnings_section(notes: Sequence[str]) -> Section | None:
    """Every warning of a report in ONE list, folded (``<details>``, opened by a click) below
    the answer, but for those of :data:`LOUD_MARKERS` (synthetic data, a randomly initialised
    backbone), shown above the fold; ``None`` without any."""
    notes = list(dict.fromkeys(notes))
    if not notes:
        return None
    loud = [n for n in notes if any(m in n for m in LOUD_MARKERS)]
    rest = [n for n in notes if n not in loud]
    shown = "".join(f"<li><strong>{html.escape(n)}</strong></li>" for n in loud)
    body = f'<ul class="warn">{shown}</ul>' if loud else ""
    if rest:
        items = "".join(f"<li>{html.escape(n)}</li>" for n in rest)
        said = f"{len(rest)} {'more ' * bool(loud)}warning{'s' * (len(rest) != 1)} (click to show)"
        body += (
            f'<details class="warnings"><summary>{said}</summary><ul class="warn">{items}</ul>'
            "</details>"
        )
    return Section("Warnings").html(body)


#: Notes that stay unfolded in a report's warnings: synthetic data, an untrained backbone (what a
#: reader must see before any number).
LOUD_MARKERS = ("RANDOMLY INITIALISED", "SYNTHETIC")


def recommended_line(names: Iterable[str], scores: Mapping[str, Any], intervals: Any) -> str:
    """``"Recommended: rBA 0.759 [0.707, 0.806], rF1 …"``: the scores to read, each with its
    interval."""
    intervals = intervals or {}
    parts = [f"{k} {interval_cell(scores.get(k), *_bounds(intervals.get(k)))}" for k in names]
    return "Recommended: " + ", ".join(parts)


def evaluation_sections(ev: Any, *, figure_png: bytes | None = None) -> list[Section]:
    """Sections for one :class:`~medeval.evaluation.Evaluation`, the answer first: the
    recommended scores, which subconcept fails and the per-subconcept figure, then every
    warning in one folded list, the scores, the per-subconcept table and the subsets."""
    out = []
    caption = (
        "Top: each subconcept's share of its class. Bottom: its recall (solid: from the true "
        "test subconcepts; hatched: label-free estimate from the posteriors; dotted: rectified "
        "on the reference rows, where given), with the full-test BA variants as lines, "
        "labelled at the right (the recommended one so marked in the legend)."
    )
    shown = figure_png is not None and not ev.per_subconcept.empty
    if ev.worst_subconcepts or shown:
        from medeval.evaluation.worst_subconcept import worst_sentences

        worst = Section("Which subconcept fails?", lead=True)
        names = list(dict.fromkeys(ev.recommended.values()))
        worst.html(
            f'<p class="rec">{html.escape(recommended_line(names, ev.scores, ev.intervals))}</p>'
        )
        worst.text(*worst_sentences(ev.worst_subconcepts))
        if shown:
            worst.image(figure_png, caption=caption)
        if ev.worst_subconcepts:
            worst.text(
                "gap: the class's recall minus the subconcept's (positive = below its class). "
                "With reference rows each subconcept gets a verdict — below its class, not "
                "below, or not known (with the further reference rows that would decide it) — "
                "and the subconcepts that could be the worst at the stated level; the interval "
                "of the one named worst holds after it was chosen (docs/reading.md)."
            )
        out.append(worst)
    where = ev.subconcept_model_source
    weak = [weak_model_warning(c, ev.subconcept_model[c]) for c in ev.weak_classes()]
    warn = warnings_section(
        [
            *[f"{w[0].upper()}{w[1:]} (measured on the {where})." for w in weak],
            *scores_frame(ev.scores, unavailable=ev.unavailable)[2],
            *ev.notes,
        ]
    )
    if warn is not None:
        out.append(warn)
    sub = Section("Per subconcept")
    if ev.per_subconcept.empty:
        sub.text("No test subconcepts and no posteriors were given: no per-subconcept results.")
    else:
        if figure_png is not None and not shown:
            sub.image(figure_png, caption=caption)
        sub.per_subconcept(ev.per_subconcept, confidence=ev.confidence)
    out += [_scores_section(ev), sub]
    wide = ev.subsets.pivot_table(index=["subset"], columns="score", values="value", sort=False)
    wide = wide[ordered_scores(wide.columns)]
    out.append(
        Section("Scores on the evaluation subsets")
        .text(
            "full = all test instances; sub_i = all majority instances plus minority subconcept "
            "i (largest first); largest = sub_1, smallest = the last."
        )
        .table(wide.reset_index())
    )
    return out


def _scores_section(ev: Any) -> Section:
    """The full-test scores with their meaning, what to read, and the subconcept model."""
    pct = f"{ev.confidence:.0%}"
    rectified = [k for k in REFERENCE_SCORES if k in ev.recommended.values()]
    table, marked, missing = scores_frame(
        ev.scores,
        ev.intervals,
        descriptions=SCORE_DESCRIPTIONS,
        unavailable=ev.unavailable,
        recommended=set(ev.recommended.values()),
        confidence=ev.confidence,
    )
    head = Section("Scores on the full test set")
    intro = (
        f"{ev.n:,} test instances, {ev.n_positive:,} of class 1. Intervals: {pct} percentile "
        f"bootstrap, {ev.bootstrap['n']:,} replicates stratified by {ev.bootstrap['stratify']} "
        f"(seed {ev.bootstrap['seed']})"
    )
    head.text(
        intro
        + ("; for the rectified scores, test and reference rows jointly." if rectified else ".")
    )
    if rectified:
        ref = ev.reference or {}
        head.notes(
            [
                _READ_RECTIFIED.format(
                    names=", ".join(rectified),
                    n=f"{ref.get('n', 0):,}",
                    source=ref.get("source", "reference rows"),
                )
            ],
            warning=False,
        )
    lead, verb = ("Uncorrected, ", " are") if rectified else ("Read ", ":")
    head.notes([_READ_LABEL_FREE.format(lead=lead, verb=verb, **RECOMMENDED)], warning=False)
    if ev.weak_classes():
        head.text("The subconcept model is weak within a class: see the warnings.")
    if not ev.subconcept_model:
        head.notes([_UNCHECKED_MODEL.format(names=", ".join(REFERENCE_SCORES))], warning=False)
    head.table(table, highlight=marked)
    head.notes(missing, warning=False)
    if ev.subconcept_model:
        used = [c in ev.weighted_classes for c in ev.subconcept_model]
        head.table(
            pd.DataFrame(
                {
                    "class": list(ev.subconcept_model),
                    "subconcept model balanced accuracy within the class": list(
                        ev.subconcept_model.values()
                    ),
                    "used by the label-free weights": [
                        "yes" if u else "no (equal utilities)" for u in used
                    ],
                }
            )
        )
    return head


def interval_method_text(method: Any) -> str:
    """Readable name of a per-subconcept ``interval_method`` value (e.g. ``"clopper-pearson
    (effective n over groups)"`` → ``"Clopper–Pearson (exact binomial) (effective n over
    groups)"``)."""
    text = str(method)
    for key, name in INTERVAL_METHOD_NAMES.items():
        if text == key or text.startswith(key + " "):
            return name + text[len(key) :]
    return text


def per_subconcept_frames(
    df: pd.DataFrame, *, confidence: float = 0.95
) -> tuple[pd.DataFrame, pd.DataFrame, str]:
    """The per-subconcept rows as (main table, secondary table, caption naming the intervals).

    The main table keeps what a reader compares: subconcept, class, utility, test size, share
    of its class, the true and the label-free recall each with its interval in one cell, and
    the reference rows when there are any; columns with no value at all are left out. The
    secondary one holds training size, true and predicted weight sums and the soft
    (posterior) test size. The caption names ``interval_method`` (the column
    :func:`~medeval.evaluation.evaluate_predictions` adds), or says that it is not recorded.
    """
    from medeval.evaluation.subconcept_recall import BOUNDS

    pct = f"{confidence:.0%}"

    def has(col: str) -> bool:
        return col in df.columns and df[col].notna().any()

    def col(name: str) -> pd.Series:
        return df[name] if name in df.columns else pd.Series(math.nan, index=df.index)

    def cells(value: str, low: str, high: str) -> list[str]:
        return [interval_cell(*x) for x in zip(df[value], col(low), col(high), strict=True)]

    main = pd.DataFrame({"subconcept": df["subconcept"].astype(str)})
    main["class"] = [_class_text(c) for c in df["class"]]
    if has("utility"):
        main["utility"] = [_num_text(v, 2) for v in df["utility"]]
    if has("n_test"):
        main["test n"] = [_count_text(v) for v in df["n_test"]]
    if has("prevalence"):
        main["share of class"] = ["—" if missing(v) else f"{v:.1%}" for v in df["prevalence"]]
    for head, value in (
        ("true", "recall"),
        ("label-free", "est_recall"),
        ("rectified", "r_recall"),
    ):
        if has(value):
            main[f"{head} recall [{pct} CI]"] = cells(value, *BOUNDS[value])
    if has("r_verdict"):
        main["verdict (gap to its class)"] = [
            f"{v} ({interval_cell(g, lo, hi)})"
            for v, g, lo, hi in zip(
                df["r_verdict"], col("r_gap"), col("r_gap_low"), col("r_gap_high"), strict=True
            )
        ]
    if has("n_reference"):
        main["reference n"] = [_count_text(v) for v in df["n_reference"]]
    if has("r_more_rows"):
        main["more reference rows to decide"] = [_count_text(v) for v in df["r_more_rows"]]
    extra = pd.DataFrame({"subconcept": main["subconcept"]})
    if has("ref_recall"):
        extra[f"reference rows' recall [{pct} CI]"] = cells("ref_recall", "ref_low", "ref_high")
    for name, head, digits in (
        ("n_train", "training n", None),
        ("true_weight_sum", "true-weight sum (test)", 1),
        ("predicted_weight_sum", "predicted-weight sum (test)", 1),
        ("est_n_test", "soft test n (posteriors)", 1),
    ):
        if has(name):
            extra[head] = [
                _count_text(v) if digits is None else _num_text(v, digits) for v in df[name]
            ]
    return main, extra, _interval_caption(df, pct)


def _interval_caption(df: pd.DataFrame, pct: str) -> str:
    def named(column: str) -> str:
        methods = dict.fromkeys(str(m) for m in df.get(column, pd.Series()).dropna())
        return "; ".join(interval_method_text(m) for m in methods)

    if "interval_method" not in df.columns or df["interval_method"].isna().all():
        return f"Recall intervals: {pct}; the interval method is not recorded."
    text = (
        f"Recall intervals: {pct} {named('interval_method')}, on each subconcept's test rows "
        "(true recall) and on the effective number of its posterior-weighted rows (label-free "
        "recall). The label-free interval sees sampling noise, not the subconcept model's error."
    )
    if "r_interval_method" in df.columns and df["r_interval_method"].notna().any():
        text += (
            f" Rectified recall: the recall of the subconcept's own test rows, the label-free "
            f"estimate corrected on the reference rows; {pct} {named('r_interval_method')} (it "
            "sees the subconcept model's error too). Verdict: below its class where the gap's "
            "interval lies above 0, not below where it lies at or under 0, else not known."
        )
    return text


def _class_text(c: Any) -> str:
    try:
        k = int(c)
    except (TypeError, ValueError):
        return str(c)
    return {0: "0 (majority)", 1: "1 (minority)"}.get(k, str(k))


def _num_text(v: Any, digits: int) -> str:
    return "—" if missing(v) else f"{float(v):,.{digits}f}"


def _count_text(v: Any) -> str:
    return "—" if missing(v) else f"{round(float(v)):,}"
