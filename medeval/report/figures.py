"""Per-subconcept figure: where a headline score comes from (RQ3; docs/method.md,
"Evaluation subsets and analyses"); matplotlib's object-oriented API, no pyplot or global state."""

from __future__ import annotations

import io
import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.lines import Line2D

from ..scores import RECOMMENDED, RECOMMENDED_RECTIFIED, WEIGHTINGS

CLASS_COLORS = {0: "#7f8fa6", 1: "#e1812c"}
#: Colour and line style of each weighting's full-test score line, by prefix (the names and
#: their meaning come from :data:`medeval.scores.WEIGHTINGS`).
LINE_STYLES = {
    "": ("black", "-"),
    "p": ("#1f77b4", "--"),
    "c": ("#d62728", "-."),
    "w": ("#2ca02c", ":"),
    "r": ("#9467bd", (0, (5, 1.5, 1, 1.5, 1, 1.5))),
}
#: How each kind of recall bar is drawn (``Axes.bar`` keywords; the colour is the class's). The
#: legend draws its swatches from the same styles, so a swatch always looks like its bars.
RECALL_BARS = {
    kind: {
        "label": f"recall, {label}",
        "style": {"alpha": alpha, "hatch": hatch, "edgecolor": "#333333", "linewidth": 0.5},
    }
    for kind, label, alpha, hatch in (
        ("true", "true test subconcepts", 1.0, None),
        ("est", "label-free estimate (posteriors)", 0.55, "//"),
        ("rect", "rectified on reference rows", 0.8, ".."),
    )
}
_CLASS_NAMES = {0: "majority (class 0)", 1: "minority (class 1)"}
#: Vertical gap between two line labels, in data units of the recall axis (0–1.05): one line of
#: 8-point text at the figure's height, with a little air.
LABEL_GAP = 0.055
_LEGEND_PT = 8  # the legend's font size


def subconcept_figure(
    per_subconcept: pd.DataFrame,
    scores: Mapping[str, float],
    *,
    metric: str = "BA",
    title: str | None = None,
    recommended: Collection[str] | None = None,
) -> Figure:
    """Bars of subconcept prevalence and per-subconcept recall; lines for the full-test scores.

    Args:
        per_subconcept: rows with ``subconcept, class, prevalence, recall`` and optionally
            ``low, high`` (recall interval) and the label-free ``est_recall, est_low,
            est_high, est_n_test`` (drawn hatched beside the true recall), majority first.
        scores: full-test scores, e.g. ``{"BA": .., "pBA": .., "wBA": .., "rBA": ..}``: one
            line per weighting of :data:`medeval.scores.WEIGHTINGS` whose score is there and
            not NaN, labelled at the right edge with its value (labels of close values are
            spread apart, :func:`spread_labels`).
        metric: which score family to draw as lines (``"BA"``, ``"F1"`` or ``"AUC"``).
        recommended: the score names to mark as recommended (e.g. ``ev.recommended.values()``);
            default: the rectified score where it is there, else the class-conditional one.
    """
    df = per_subconcept.reset_index(drop=True)
    fig = Figure(figsize=(max(6.0, 0.9 * len(df) + 2) + 1.6, 7.4), layout="constrained")
    ax_prev, ax_rec = fig.subplots(2, 1, sharex=True, height_ratios=(1, 1.6))
    x = np.arange(len(df))
    _prevalence_bars(ax_prev, df, x)
    kinds = _recall_bars(ax_rec, df, x)
    if recommended is None:  # the rectified score where it is there, else the class-conditional
        rectified = RECOMMENDED_RECTIFIED[metric]
        value = scores.get(rectified)
        recommended = [
            rectified if value is not None and not math.isnan(value) else RECOMMENDED[metric]
        ]
    lines = _score_lines(ax_rec, scores, metric, set(recommended))
    ax_rec.set_ylim(0, 1.05)
    ax_rec.set_ylabel("recall of the subconcept")
    ax_rec.set_xticks(x, [str(s) for s in df["subconcept"]], rotation=30, ha="right")
    _label_lines(ax_rec, lines)
    _legend(fig, ax_rec, classes=sorted({int(c) for c in df["class"]}), kinds=kinds)
    fig.suptitle(title or f"Per-subconcept recall and the full-test {metric} variants")
    return fig


def _score_lines(
    ax: Any, scores: Mapping[str, float], metric: str, recommended: set[str]
) -> list[tuple[str, float, str]]:
    """One horizontal line per weighting's score; returns ``(name, value, colour)`` of each."""
    out = []
    for w in WEIGHTINGS:
        name = f"{w.prefix}{metric}"
        value = scores.get(name)
        if value is None or math.isnan(value) or w.prefix not in LINE_STYLES:
            continue
        color, style = LINE_STYLES[w.prefix]
        legend = w.legend.format(f=metric) + (" — recommended" if name in recommended else "")
        ax.axhline(value, color=color, linestyle=style, linewidth=1.8, label=legend)
        out.append((name, float(value), color))
    return out


def spread_labels(
    values: Sequence[float], *, gap: float = LABEL_GAP, low: float = 0.0, high: float = 1.05
) -> np.ndarray:
    """Label heights ``(L,)`` for lines at ``values`` ``(L,)``: as close to each value as they can
    be while any two are at least ``gap`` apart and all lie in ``[low, high]``; the labels keep
    the order of their values (of tied values, the first given is the top one).

    Labels that would overlap are placed as a block centred on their values' mean (then moved
    inside ``[low, high]``), and blocks that then touch are merged, until none overlap.
    """
    v = np.asarray(values, dtype=float)
    if v.size == 0:
        return v.copy()
    if gap * (v.size - 1) > high - low:
        raise ValueError(f"{v.size} labels {gap} apart do not fit in [{low}, {high}]")
    order = np.lexsort((-np.arange(v.size), v))
    blocks: list[list[int]] = []  # positions in `order`, each block consecutive

    def place(block: list[int]) -> float:
        """Bottom of a block centred on its values, kept inside [low, high]."""
        size = gap * (len(block) - 1)
        bottom = float(v[order[block]].mean()) - size / 2
        return min(max(bottom, low), high - size)

    for i in range(v.size):
        blocks.append([i])
        while len(blocks) > 1 and place(blocks[-2]) + gap * len(blocks[-2]) > place(blocks[-1]):
            last = blocks.pop()
            blocks[-1] += last
    out = np.empty(v.size)
    for block in blocks:
        bottom = place(block)
        for j, i in enumerate(block):
            out[order[i]] = bottom + gap * j
    return out


def _label_lines(ax: Any, lines: list[tuple[str, float, str]]) -> None:
    """Each score line's name and value right of the axes, without overlap, with a leader."""
    if not lines:
        return
    heights = spread_labels([v for _, v, _ in lines])
    at = ax.get_yaxis_transform()  # x in axes fraction, y in data
    for (name, value, color), y in zip(lines, heights, strict=True):
        ax.add_line(
            Line2D([1.0, 1.045], [value, y], transform=at, color=color, lw=0.8, clip_on=False)
        )
        ax.text(
            1.05,
            y,
            f"{name} {value:.3f}",
            transform=at,
            va="center",
            ha="left",
            fontsize=8,
            color=color,
            clip_on=False,
        )


def _prevalence_bars(ax: Any, df: pd.DataFrame, x: np.ndarray) -> None:
    """Top panel: each subconcept's share of its class (true, else the posteriors' soft share)."""
    colors = _class_colors(df)
    prev = df["prevalence"].to_numpy(dtype=float)
    estimated_prev = np.isnan(prev).all() and "est_n_test" in df.columns
    if estimated_prev:  # no true test subconcepts: the soft (posterior) share of its class
        mass = df["est_n_test"].to_numpy(dtype=float)
        totals = df.groupby("class")["est_n_test"].transform("sum").to_numpy(dtype=float)
        prev = mass / np.where(totals > 0, totals, np.nan)
    style = RECALL_BARS["est" if estimated_prev else "true"]["style"]
    ax.bar(x, prev, color=colors, **style)
    ax.set_ylabel(
        "estimated share of its\nclass (posteriors)"
        if estimated_prev
        else "share of its class\nin the test set"
    )
    ax.set_ylim(0, 1)
    for xi, p in zip(x, prev, strict=True):
        if not math.isnan(p):
            ax.text(xi, p + 0.02, f"{p:.0%}", ha="center", va="bottom", fontsize=8)


def _class_colors(df: pd.DataFrame) -> list[str]:
    return [CLASS_COLORS.get(int(c), "grey") for c in df["class"]]


def _recall_bars(ax: Any, df: pd.DataFrame, x: np.ndarray) -> list[str]:
    """True (solid) and label-free (hatched) recall bars; returns the kinds drawn."""
    from medeval.evaluation.subconcept_recall import BOUNDS

    columns = {"true": "recall", "est": "est_recall", "rect": "r_recall"}
    kinds = [k for k, v in columns.items() if v in df.columns and df[v].notna().any()]
    width = 0.8 / max(len(kinds), 1)
    for j, kind in enumerate(kinds):
        value = columns[kind]
        low, high = BOUNDS[value]
        v, yerr = df[value].to_numpy(float), None  # error bars only where every bound is there
        if {low, high} <= set(df.columns) and df[[low, high]].notna().all().all():
            yerr = np.vstack([v - df[low].to_numpy(float), df[high].to_numpy(float) - v])
        ax.bar(
            x + (j - (len(kinds) - 1) / 2) * width,
            v,
            width,
            color=_class_colors(df),
            yerr=None if yerr is None else np.clip(yerr, 0, None),
            capsize=3,
            ecolor="#444444",
            label=f"_{kind}",  # underscore: not collected by the legend itself
            gid=f"recall-{kind}",
            **RECALL_BARS[kind]["style"],
        )
    return kinds


def _legend(fig: Figure, ax: Any, *, classes: list[int], kinds: list[str]) -> None:
    """Legend below the plots: score lines and one swatch per (class, kind of bar) drawn."""
    from matplotlib.patches import Patch

    handles, labels = ax.get_legend_handles_labels()
    for kind in kinds:
        for c in classes:
            handles.append(
                Patch(facecolor=CLASS_COLORS.get(c, "grey"), **RECALL_BARS[kind]["style"])
            )
            labels.append(f"{_CLASS_NAMES.get(c, f'class {c}')}: {RECALL_BARS[kind]['label']}")
    # a generous width of one legend column: about 0.6 em a character, plus the swatch
    column = max((len(label) for label in labels), default=0) * _LEGEND_PT * 0.6 / 72 + 0.8
    ncols = 2 if 2 * column <= fig.get_figwidth() else 1
    fig.legend(
        handles, labels, loc="outside lower center", ncols=ncols, fontsize=_LEGEND_PT, frameon=False
    )


def figure_png(fig: Figure, dpi: int = 120) -> bytes:
    """The figure as PNG bytes (for atomic writes and HTML embedding)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()
