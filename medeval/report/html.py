"""Self-contained HTML reports: tables, embedded PNG figures, configuration and warnings.

One file, no external assets (figures are base64 data URIs), so a report can be mailed, archived
next to a run, or opened from a container's mounted results folder.
"""

from __future__ import annotations

import base64
import html
import math
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import pandas as pd

from .. import __version__

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1100px;color:#222;line-height:1.45;padding:0 1rem}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;margin-top:2rem;
border-bottom:1px solid #ddd;padding-bottom:.2rem}.sub{color:#666;margin-top:0}
table{border-collapse:collapse;margin:.6rem 0;font-size:.9rem}
th,td{border:1px solid #ddd;padding:.25rem .55rem;text-align:right}
th{background:#f4f5f7}td:first-child,th:first-child{text-align:left}
img{max-width:100%;border:1px solid #eee;margin:.5rem 0}
pre{background:#f6f8fa;padding:.8rem;overflow:auto;font-size:.85rem}
.warn{background:#fff8e1;border-left:4px solid #f0b400;padding:.5rem .8rem;margin:.4rem 0}
.note{background:#eef5ff;border-left:4px solid #4a90d9;padding:.5rem .8rem;margin:.4rem 0}
figcaption{color:#555;font-size:.9rem}
"""


@dataclass
class Section:
    """A titled part of a report; blocks are rendered in the order they were added."""

    title: str
    blocks: list[str] = field(default_factory=list)

    def text(self, text: str) -> Section:
        self.blocks.append(f"<p>{html.escape(text)}</p>")
        return self

    def table(self, df: pd.DataFrame, *, caption: str = "", digits: int = 3) -> Section:
        def fmt(x: Any) -> str:
            if isinstance(x, float):
                return "—" if math.isnan(x) else f"{x:.{digits}f}"
            return html.escape(str(x))

        cap = f"<caption>{html.escape(caption)}</caption>" if caption else ""
        head = "".join(f"<th>{html.escape(str(c))}</th>" for c in df.columns)
        rows = "".join(
            "<tr>" + "".join(f"<td>{fmt(v)}</td>" for v in row) + "</tr>"
            for row in df.itertuples(index=False)
        )
        self.blocks.append(
            f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>"
        )
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


def render(title: str, sections: list[Section], *, subtitle: str = "") -> str:
    """The report as one HTML document."""
    stamp = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    sub = html.escape(subtitle + (" · " if subtitle else "")) + f"medeval {__version__} · {stamp}"
    body = "".join(
        f"<section><h2>{html.escape(s.title)}</h2>{''.join(s.blocks)}</section>" for s in sections
    )
    return (
        f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{html.escape(title)}"
        f"</title><style>{_CSS}</style></head><body><h1>{html.escape(title)}</h1>"
        f"<p class='sub'>{sub}</p>{body}</body></html>\n"
    )


_READ_LABEL_FREE = (
    "Read {BA}, {F1} and {AUC}: label-free estimates of the "
    "true-weight scores wBA / wF1 / wAUC. They weight each test instance by the expected "
    "utility of its subconcept given the subconcept model's posteriors and the instance's "
    "known class, so they need no test subconcept labels. If cBA lies below BA, the small "
    "subconcepts are the hard ones and the headline score hides it; above BA, they are "
    "the easy ones. wBA / wF1 / wAUC use the true test subconcepts (an oracle, shown when "
    "labels exist). pBA / pF1 / pAUC are the original predicted-weight scores, kept for "
    "reproduction: they are biased upward (missed minority instances tend to look like "
    "majority subconcepts to the subconcept model as well) and can point the wrong way."
)

_UNCHECKED_MODEL = (
    "The subconcept model's quality within each class could not be checked here (no "
    "true test subconcepts). Give reference rows with true subconcepts (python -m "
    "medeval.evaluate --reference FILE) to check it and to rectify the label-free scores; a "
    "weak or miscalibrated subconcept model makes the label-free scores understate hidden "
    "failures, and their intervals cannot show it."
)


def evaluation_sections(ev: Any, *, figure_png: bytes | None = None) -> list[Section]:
    """Sections for one :class:`~medeval.evaluation.Evaluation`: scores, subsets, subconcepts."""
    out = [_scores_section(ev), _per_subconcept_section(ev, figure_png)]
    wide = ev.subsets.pivot_table(index=["subset"], columns="score", values="value", sort=False)
    out.append(
        Section("Scores on the evaluation subsets")
        .text(
            "full = all test instances; sub_i = all majority instances plus minority subconcept "
            "i (largest first); largest = sub_1, smallest = the last."
        )
        .table(wide.reset_index())
    )
    if ev.notes or ev.unavailable:
        warn = Section("Warnings")
        warn.notes([f"{k} not computed: {v}" for k, v in _grouped(ev.unavailable).items()])
        warn.notes(ev.notes)
        out.append(warn)
    return out


def _grouped(unavailable: dict[str, str]) -> dict[str, str]:
    """``{"rBA / rF1 / rAUC": reason}``: scores missing for the same reason share one line."""
    by_reason: dict[str, list[str]] = {}
    for k, why in unavailable.items():
        by_reason.setdefault(why, []).append(k)
    return {" / ".join(ks): why for why, ks in by_reason.items()}


def _rectified_text(ev: Any) -> str:
    """What the rectified scores are and which reference rows corrected them."""
    ref = ev.reference or {}
    counts = ", ".join(f"{k} {v}" for k, v in (ref.get("per_subconcept") or {}).items())
    return (
        "Read {BA}, {F1} and {AUC}: the class-conditional scores corrected by their own error "
        "measured on {n:,} reference rows ({source}; rows per subconcept: {counts}), "
        "rM = cM(test) − (cM(R) − wM(R)). Their intervals come from a joint bootstrap of the "
        "test and the reference rows, so they also carry the uncertainty of that correction. "
        "The correction is valid when the reference rows come from the same classifier, "
        "subconcept model and population as the test rows and were used to fit neither."
    ).format(**ev.recommended, n=ref.get("n", 0), source=ref.get("source", "?"), counts=counts)


def _scores_section(ev: Any) -> Section:
    """The full-test scores with their meaning, what to read, and the subconcept model."""
    from ..evaluation import EVALUATION_DESCRIPTIONS as SCORE_DESCRIPTIONS
    from .tables import RECTIFIED_LINE

    pct = f"{ev.confidence:.0%}"
    scores = ev.table()
    scores.insert(1, "meaning", [SCORE_DESCRIPTIONS[k] for k in scores.score])
    scores = scores.rename(columns={"low": f"{pct} low", "high": f"{pct} high"})
    head = Section("Scores on the full test set")
    head.text(
        f"{ev.n:,} test instances, {ev.n_positive:,} of class 1. Intervals: {pct} percentile "
        f"bootstrap, {ev.bootstrap['n']:,} replicates stratified by {ev.bootstrap['stratify']} "
        f"(seed {ev.bootstrap['seed']})."
    )
    if ev.rectified is not None:
        head.notes([_rectified_text(ev)], warning=False)
    else:
        head.notes([_READ_LABEL_FREE.format(**ev.recommended)], warning=False)
    head.notes(
        [
            f"The subconcept model is weak within {c}: balanced accuracy "
            f"{ev.subconcept_model[c]:.2f} over that class's subconcepts (measured on the "
            f"{ev.subconcept_model_source}). Its class-conditional "
            "weights then shrink toward the class average, so cBA / cF1 / cAUC move toward BA / "
            "F1 / AUC and understate a failure on small subconcepts; per-subconcept label-free "
            "recalls blur together."
            for c in ev.weak_classes()
        ]
    )
    if not ev.subconcept_model:
        head.notes([_UNCHECKED_MODEL], warning=False)
    head.table(scores)
    head.text(RECTIFIED_LINE)
    if ev.subconcept_model:
        head.table(_subconcept_model_table(ev))
    return head


def _subconcept_model_table(ev: Any) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "class": list(ev.subconcept_model),
            "subconcept model balanced accuracy within the class": list(
                ev.subconcept_model.values()
            ),
            "used by the label-free weights": [
                "yes" if c in ev.weighted_classes else "no (equal utilities)"
                for c in ev.subconcept_model
            ],
        }
    )


def _per_subconcept_section(ev: Any, figure_png: bytes | None) -> Section:
    sub = Section("Per subconcept")
    if ev.per_subconcept.empty:
        sub.text("No test subconcepts and no posteriors were given: no per-subconcept results.")
        return sub
    if figure_png is not None:
        sub.image(
            figure_png,
            caption="Subconcept prevalence within its class and recall (solid: from the true "
            "test subconcepts; hatched: label-free estimate from the posteriors), with the "
            "BA variants as lines.",
        )
    sub.table(ev.per_subconcept)
    return sub
