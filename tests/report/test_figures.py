"""The per-subconcept figure: line labels that do not overlap, legend swatches that match the
bars, a line for every weighting's score that is given."""

import math

import numpy as np
import pandas as pd
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.colors import to_rgba
from matplotlib.patches import Rectangle

from medeval.report.figures import LABEL_GAP, spread_labels, subconcept_figure
from medeval.scores import WEIGHTINGS

from .conftest import PER_SC


@pytest.mark.parametrize(
    "values",
    [
        [0.943, 0.936, 0.878, 0.869],  # the example's BA, pBA, cBA, wBA: two close pairs
        [0.5, 0.5, 0.5, 0.5, 0.5],  # every line at the same value
        [1.0, 1.03, 0.99],  # at the top of the axis
        [0.0, 0.01, 0.02],  # at the bottom
        [0.2, 0.8],  # far apart: labels at their values
    ],
)
def test_labels_of_close_lines_do_not_overlap_and_stay_near_their_values(values):
    y = spread_labels(values)
    gaps = np.diff(np.sort(y))
    assert (gaps >= LABEL_GAP - 1e-12).all()
    assert y.min() >= 0 and y.max() <= 1.05
    order = np.argsort(values, kind="stable")
    assert (np.diff(y[order]) > 0).all() or len(set(values)) == 1  # order kept
    assert np.abs(y - values).max() <= LABEL_GAP * len(values)
    if values == [0.2, 0.8]:
        np.testing.assert_allclose(y, values)


def test_labels_of_a_close_pair_are_centred_on_their_values():
    y = spread_labels([0.5, 0.51], gap=0.05)
    np.testing.assert_allclose(y, [0.48, 0.53])


def test_too_many_labels_for_the_axis_raise():
    with pytest.raises(ValueError, match="do not fit"):
        spread_labels([0.5] * 30, gap=0.05)


def _line_labels(fig):
    ax = fig.axes[1]
    return [t for t in ax.texts if t.get_text().split()[0].endswith("BA")]


def test_figure_labels_every_given_score_line_without_overlap():
    scores = {f"{w.prefix}BA": 0.9 - 0.005 * i for i, w in enumerate(WEIGHTINGS)}
    fig = subconcept_figure(PER_SC, scores)
    labels = _line_labels(fig)
    assert sorted(t.get_text().split()[0] for t in labels) == sorted(scores)
    fig.canvas.draw()
    boxes = [t.get_window_extent() for t in labels]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1 :]:
            assert not a.overlaps(b), (a, b)


def test_nan_and_missing_scores_draw_no_line():
    fig = subconcept_figure(PER_SC, {"BA": 0.9, "wBA": math.nan})
    assert [t.get_text() for t in _line_labels(fig)] == ["BA 0.900"]


def _style(p):
    return (
        tuple(np.round(to_rgba(p.get_facecolor()), 3)),
        p.get_hatch() or None,
        tuple(np.round(to_rgba(p.get_edgecolor()), 3)),
    )


ESTIMATED = ["est_recall", "est_low", "est_high"]


@pytest.mark.parametrize("columns", [None, ESTIMATED, ["recall"]])
def test_every_legend_swatch_looks_like_bars_of_the_figure(columns):
    df = PER_SC if columns is None else PER_SC.drop(columns=columns)
    fig = subconcept_figure(df, {"BA": 0.9, "cBA": 0.8})
    ax = fig.axes[1]
    bars = {_style(p) for p in ax.patches if isinstance(p, Rectangle)}
    legend = fig.legends[0]
    swatches = [h for h in legend.legend_handles if isinstance(h, Rectangle)]
    kinds = 2 if columns is None else 1
    assert len(swatches) == 2 * kinds  # one per class and kind of bar drawn
    for h in swatches:
        assert _style(h) in bars, _style(h)
    texts = [t.get_text() for t in legend.get_texts()]
    assert any("true test subconcepts" in t for t in texts) == (columns != ["recall"])
    assert any("label-free estimate" in t for t in texts) == (columns != ESTIMATED)


@pytest.mark.parametrize("n_minority", [1, 2, 4, 8])  # 4: the main job's 5 subconcepts
def test_legend_and_labels_lie_inside_the_figure_whatever_the_number_of_subconcepts(n_minority):
    """With few subconcepts the figure is narrow; its legend (every weighting's line and every
    kind of bar) and the line labels must still fit inside it, not be cut at its edges."""
    names = ["M"] + [f"minority subconcept {i}" for i in range(n_minority)]
    df = pd.DataFrame(
        {
            "subconcept": names,
            "class": [0] + [1] * n_minority,
            "prevalence": [1.0] + [1 / n_minority] * n_minority,
            "recall": [0.98] + [0.7] * n_minority,
            "low": [0.96] + [0.5] * n_minority,
            "high": [0.99] + [0.9] * n_minority,
            "est_recall": [0.97] + [0.72] * n_minority,
            "est_low": [0.95] + [0.5] * n_minority,
            "est_high": [0.99] + [0.9] * n_minority,
        }
    )
    scores = {f"{w.prefix}BA": 0.9 - 0.02 * i for i, w in enumerate(WEIGHTINGS)}
    fig = subconcept_figure(df, scores)
    canvas = FigureCanvasAgg(fig)  # what figure_png saves with
    canvas.draw()
    renderer = canvas.get_renderer()
    inside = fig.bbox.padded(1)  # a pixel of rounding
    legend = fig.legends[0].get_window_extent(renderer)
    assert inside.contains(legend.x0, legend.y0) and inside.contains(legend.x1, legend.y1)
    for t in _line_labels(fig):
        box = t.get_window_extent(renderer)
        assert inside.contains(box.x0, box.y0) and inside.contains(box.x1, box.y1), t.get_text()
