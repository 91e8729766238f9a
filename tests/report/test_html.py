"""The HTML report's tables: readable headers, each recall with its interval, the interval method
named, every score with an interval (rectified ones included), links and the run's table."""

import math

import pandas as pd

from medeval.report.html import (
    Section,
    evaluation_sections,
    interval_cell,
    ordered_scores,
    per_subconcept_frames,
    render,
    scores_frame,
)
from medeval.scores import ALL_SCORES, weighting

RAW_SECONDARY = ("true_weight_sum", "predicted_weight_sum", "est_n_test", "n_train")


def _main_table_html(page: str) -> str:
    """The per-subconcept main table: from the section's heading to the collapsed block."""
    part = page[page.index("<h2>Per subconcept</h2>") :]
    return part[: part.index("<details>")]


def test_per_subconcept_main_table_has_readable_headers_not_raw_field_names(ev):
    page = render("t", evaluation_sections(ev))
    main = _main_table_html(page)
    for head in ("true recall [95% CI]", "label-free recall [95% CI]", "test n", "utility"):
        assert f">{head}</th>" in main
    for raw in (*RAW_SECONDARY, "est_recall", "est_low", "est_high", "prevalence"):
        assert raw not in main
    assert ">low</th>" not in main and ">high</th>" not in main
    # the secondary columns are kept, in the collapsed block, under readable names
    start = page.index("<details>")  # the warnings' list is a <details class="warnings">
    details = page[start : page.index("</details>", start)]
    assert "true-weight sum (test)" in details and "soft test n (posteriors)" in details


def test_each_recall_and_its_interval_share_one_cell(ev):
    main, extra, _ = per_subconcept_frames(ev.per_subconcept)
    row = ev.per_subconcept.iloc[0]
    assert main["true recall [95% CI]"].iloc[0] == (
        f"{row.recall:.3f} [{row.low:.3f}, {row.high:.3f}]"
    )
    assert main["label-free recall [95% CI]"].iloc[0] == (
        f"{row.est_recall:.3f} [{row.est_low:.3f}, {row.est_high:.3f}]"
    )
    assert len(main.columns) <= 8 and "training n" in extra.columns


def test_interval_method_is_named_when_given_and_its_absence_said(ev):
    _, _, caption = per_subconcept_frames(ev.per_subconcept)
    assert "Clopper–Pearson" in caption
    _, _, caption = per_subconcept_frames(
        ev.per_subconcept.assign(interval_method="wilson (effective n over groups)")
    )
    assert "Wilson score (effective n over groups)" in caption
    old = ev.per_subconcept.drop(columns="interval_method")  # a per_subconcept.csv of before
    _, _, caption = per_subconcept_frames(old)
    assert "not recorded" in caption
    assert "Clopper" in render("t", evaluation_sections(ev))


def test_columns_without_any_value_are_left_out():
    df = pd.DataFrame(
        {
            "subconcept": ["M", "A"],
            "class": [0, 1],
            "recall": [math.nan, math.nan],  # no test subconcepts
            "est_recall": [0.9, 0.5],
            "est_low": [0.8, 0.3],
            "est_high": [0.95, 0.7],
            "n_reference": [math.nan, math.nan],
        }
    )
    main, _, _ = per_subconcept_frames(df)
    assert list(main.columns) == ["subconcept", "class", "label-free recall [95% CI]"]


def test_scores_table_shows_every_interval_and_the_rectified_rows_when_present(ev):
    r_names = list(weighting("r").scores())
    scores = {**ev.scores, **dict.fromkeys(r_names, 0.7)}
    intervals = {**ev.intervals, **{k: {"low": 0.6, "high": 0.8} for k in r_names}}
    table, marked, missing = scores_frame(scores, intervals, recommended=r_names)
    cells = dict(zip(table.score, table["value [95% CI]"], strict=True))
    for k, (lo, hi) in ev.intervals.items():
        if not math.isnan(lo):
            assert cells[k].endswith(f"[{lo:.3f}, {hi:.3f}]")
    assert all(cells[k] == "0.700 [0.600, 0.800]" for k in r_names)
    assert [table.score[i] for i in marked] == ordered_scores(r_names) and not missing
    # without reference rows: no rows for them, one line with the reason
    unavailable = dict.fromkeys(r_names, "no reference rows")
    table, _, missing = scores_frame(scores, intervals, unavailable=unavailable)
    assert not set(r_names) & set(table.score)
    assert missing == [f"{', '.join(ordered_scores(r_names))} not computed: no reference rows"]


def test_scores_follow_the_vocabulary_family_by_family():
    order = ordered_scores([*ALL_SCORES, *weighting("r").scores(), "other"])
    assert order[-1] == "other"
    families = [k for k in order[:-1] if k.endswith("BA")]
    assert order[: len(families)] == families  # the BA family first, all of it


def test_interval_cell():
    assert interval_cell(0.5, 0.4, 0.6) == "0.500 [0.400, 0.600]"
    assert interval_cell(0.5, math.nan, 0.6) == "0.500"
    assert interval_cell(None) == "—" and interval_cell(math.nan, 0.1, 0.2) == "—"


def test_links_are_relative_and_escaped():
    sec = Section("Splits").links([("split_0/report.html", "split 0 <report>")])
    block = sec.blocks[0]
    assert '<a href="split_0/report.html">split 0 &lt;report&gt;</a>' in block


def test_text_columns_left_and_number_columns_right_aligned():
    df = pd.DataFrame({"score": ["BA"], "meaning": ["balanced accuracy"], "v": ["0.5 [0.4, 0.6]"]})
    block = Section("s").table(df).blocks[0]
    assert '<td class="t">balanced accuracy</td>' in block and "<td>0.5 [0.4, 0.6]</td>" in block
