"""report.html answer first, for evaluate's outputs and a training run's report: the
recommended scores, which subconcept fails and the per-subconcept figure on the first screen at
1280 px wide, every warning in one folded list below, no sideways scroll (headless Chromium
where it is installed)."""

from __future__ import annotations

import pytest
from browser_probe import CHROMIUM, first_screen

from medeval.report.figures import figure_png, subconcept_figure
from medeval.report.outputs import output_files
from medeval.report.summary import SplitView, report_html

NEEDS_CHROMIUM = pytest.mark.skipif(
    CHROMIUM is None, reason="needs Chromium (apt-get install chromium)"
)
#: Long warnings, enough to fill a screen if they were not folded.
MANY = [f"split_{i}: a warning long enough to wrap at this width, " * 3 for i in range(20)]


def _evaluate_page(ev) -> str:
    return output_files(ev, title="x")["report.html"].decode()


def _run_page(ev) -> str:
    splits = ["split_0", "split_1"]
    summary = {
        "run": "r",
        "splits": splits,
        "scores": {
            k: {"mean": v, "sd": 0.01, "per_split": dict.fromkeys(splits, v)}
            for k, v in ev.scores.items()
        },
        "intervals": {
            s: {k: {"low": lo, "high": hi} for k, (lo, hi) in ev.intervals.items()} for s in splits
        },
        "recommended": ev.recommended,
        "reference": {},
        "worst_subconcepts": {s: ev.worst_subconcepts for s in splits},
        "calibration": {},
        "notes": ["The x backbone: weights ImageNet (timm), trained."],
    }
    png = figure_png(subconcept_figure(ev.per_subconcept, ev.scores))
    views = [SplitView(s, {"notes": MANY[:10]}, png, ev.per_subconcept) for s in splits]
    rows = [{"score": "BA", **{f"{s}_{k}": 0.7 for s in splits for k in "abcdefgh"}}]
    return report_html("medeval run r", "r", summary, rows, "a: 1", None, views)


def _order(page: str, *parts: str) -> list[int]:
    return [page.index(p) for p in parts]


def test_the_evaluate_report_puts_the_answer_first_and_folds_the_warnings(ev):
    page = _evaluate_page(ev)
    lead, warn, scores = _order(
        page, '<section class="lead">', '<details class="warnings">', "Scores on the full test"
    )
    assert lead < warn < scores
    answer = page[lead:warn]
    assert "worst subconcept of class 1 — " in answer and "data:image/png;base64," in answer
    rec = ", ".join(dict.fromkeys(ev.recommended.values()))
    assert f'<p class="rec">Recommended: {rec.split(", ")[0]} ' in answer
    assert page.count('<details class="warnings">') == 1 and 'class="warn"' not in page.replace(
        '<ul class="warn">', ""
    )
    assert "; true recall" not in page and "-0.00" not in answer


def test_the_run_report_puts_the_answer_first_and_folds_the_warnings(ev):
    page = _run_page(ev)
    lead, warn, scores = _order(
        page, '<section class="lead">', '<details class="warnings">', "Scores over the splits"
    )
    assert lead < warn < scores
    answer = page[lead:warn]
    assert "worst subconcept of class 1 over 2 splits — " in answer
    assert "Each split's worst subconcepts (4)" in answer
    assert "(mean ± sd over 2 splits)" in answer and "data:image/png;base64," in answer
    # every warning in the one list: the run's note and each split's
    assert page.count("<li>split_0: split_3: a warning") == 1
    assert page.count('<details class="warnings">') == 1


@NEEDS_CHROMIUM
@pytest.mark.parametrize("which", ["evaluate", "run"])
def test_the_answer_fits_the_first_screen_and_nothing_scrolls_sideways(ev, tmp_path, which):
    page = _evaluate_page(ev) if which == "evaluate" else _run_page(ev)
    probe = first_screen(page, tmp_path)
    assert probe["width"] == 1280 and probe["scroll_width"] <= probe["width"], probe
    assert probe["first_section"] == "Which subconcept fails?"
    lead = {p["text"].split(" — ")[0]: p for p in probe["lead"]}
    worst = [p for k, p in lead.items() if k.startswith("worst subconcept of class")]
    assert len(worst) == 2 and all(p["bottom"] <= probe["height"] for p in worst), probe
    (rec,) = [p for p in probe["lead"] if p["cls"] == "rec"]
    assert rec["text"].startswith("Recommended: ") and rec["bottom"] <= probe["height"]
    assert probe["figure_loaded"] and probe["figure_bottom"] <= probe["height"], probe
    assert probe["warning_lists"] == 1 and probe["loose_warnings"] == 0
    assert len(probe["warnings"]) >= (21 if which == "run" else 1)


def test_an_untrained_backbone_and_synthetic_data_stay_above_the_fold():
    """Of the warnings, the two a reader must see before any number are not folded away."""
    from medeval.report.html import warnings_section

    loud = "The vgg16 backbone is RANDOMLY INITIALISED (model.pretrained=false)."
    fake = "NOTE: the data are SYNTHETIC chest-radiograph phantoms, not real images."
    section = "".join(warnings_section([loud, "a", fake, "b"]).blocks)
    folded = section.index('<details class="warnings">')
    assert section.index(loud) < folded and section.index(fake) < folded
    assert "2 more warnings (click to show)" in section and section.index("<li>a</li>") > folded
    only = "".join(warnings_section([loud]).blocks)
    assert "<details" not in only and loud in only
