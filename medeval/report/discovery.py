"""Rendering discovered subconcepts: the cluster table, the sheet of typical instances per
cluster and the report that shows them (the flow: :mod:`medeval.flows.discovery`)."""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from medeval.discovery import Discovery
from medeval.evaluation import Evaluation

__all__ = ["Example", "cluster_figure", "cluster_files", "cluster_table", "examples_figure"]


@dataclass(frozen=True)
class Example:
    """One typical training instance: its caption, and its image or text (either may be None)."""

    caption: str
    image: np.ndarray | None = None
    text: str | None = None


def examples_figure(
    disc: Discovery,
    examples: Mapping[str, Sequence[Example]],
    *,
    n_examples: int = 6,
    recall: pd.DataFrame | None = None,
) -> Figure:
    """The ``n_examples`` most typical training instances of every discovered subconcept, one
    row per subconcept labelled with its name, training size and label-free recall.

    ``examples``: per subconcept name, its instances, most typical first (image thumbnails when
    given, else the text, else the caption).
    """
    fig = Figure(
        figsize=(1.6 * n_examples + 2.2, 1.5 * len(disc.names) + 0.6), layout="constrained"
    )
    axes = fig.subplots(len(disc.names), n_examples, squeeze=False)
    est = {} if recall is None else dict(zip(recall.subconcept, recall.est_recall, strict=True))
    for j, name in enumerate(disc.names):
        shown = list(examples.get(name, ()))
        for c, ax in enumerate(axes[j]):
            ax.set_xticks([])
            ax.set_yticks([])
            for spine in ax.spines.values():
                spine.set_visible(False)
            if c < len(shown):
                _draw_example(ax, shown[c])
        side = int(disc.sides[j])
        rec = est.get(name, float("nan"))
        axes[j][0].set_ylabel(
            f"{name}\nclass {side}, n={int(disc.counts[j])}\nrecall≈{rec:.2f}", fontsize=8
        )
    fig.suptitle("Discovered subconcepts: most typical training instances (name them)")
    return fig


def _draw_example(ax, ex: Example) -> None:
    if ex.image is not None:
        # Fixed grey range: a flat image must not be stretched to black.
        grey = {"cmap": "gray", "vmin": 0, "vmax": 255} if ex.image.ndim == 2 else {}
        ax.imshow(ex.image, **grey)
        ax.set_xlabel(ex.caption, fontsize=6)
    else:
        body = ex.text if ex.text is not None else ex.caption
        words = " ".join(body.split())
        lines = textwrap.wrap(words, 22, break_long_words=False, break_on_hyphens=False) or [""]
        text = "\n".join(lines[:6]) + ("…" if len(lines) > 6 else "")
        ax.text(0.5, 0.5, text, ha="center", va="center", fontsize=6, wrap=True)


def cluster_table(per_subconcept: pd.DataFrame, y: np.ndarray) -> pd.DataFrame:
    """Per discovered subconcept: training size, utility, soft test count and share of its
    class, label-free recall with its interval (from the evaluation's per-subconcept rows)."""
    cols = ["subconcept", "class", "n_train", "utility", "est_n_test", "est_recall"]
    t = per_subconcept[[*cols, "est_low", "est_high"]].copy()
    n_class = np.array([(y == c).sum() for c in t["class"]], dtype=np.float64)
    t.insert(
        5,
        "prevalence",
        np.divide(t.est_n_test, n_class, out=np.full(len(t), np.nan), where=n_class > 0),
    )
    return t.reset_index(drop=True)


def cluster_figure(clusters: pd.DataFrame, scores: Mapping[str, float]) -> Figure:
    """Soft prevalence and label-free recall of each discovered subconcept. The recall keeps
    its ``est_*`` columns, so it is drawn (and named in the legend) as the label-free estimate,
    hatched: discovered subconcepts have no true recall."""
    from medeval.report.figures import subconcept_figure

    title = "Discovered subconcepts: soft prevalence and label-free recall"
    return subconcept_figure(clusters, scores, title=title)


def cluster_files(
    clusters: pd.DataFrame, ev: Evaluation, examples_png: bytes, source: str
) -> dict[str, bytes]:
    """clusters.csv, clusters.png, examples.png, and a report.html that shows them (the
    evaluation's own per-subconcept figure needs true test subconcepts, so it is left out)."""
    from medeval.report.figures import figure_png
    from medeval.report.html import Section, evaluation_sections, render

    bars = figure_png(cluster_figure(clusters, ev.scores))
    sections = evaluation_sections(ev, figure_png=bars)
    sections.append(
        Section("Discovered subconcepts")
        .text(
            "Clusters found per class in the training embeddings (names c<class>_k<rank>, "
            "largest first). Recall is the label-free estimate with its bootstrap interval. "
            "Below: the most typical training instances of each cluster, to name them."
        )
        .table(clusters)
        .image(examples_png, caption="examples per discovered subconcept")
    )
    sections.append(Section("Inputs").pre(source))
    return {
        "clusters.csv": clusters.to_csv(index=False).encode(),
        "clusters.png": bars,
        "examples.png": examples_png,
        "report.html": render("medeval evaluation with discovered subconcepts", sections).encode(),
    }
