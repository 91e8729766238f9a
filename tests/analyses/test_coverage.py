"""The per-data-set coverage table."""

import math

import pytest

from medeval.analyses.coverage import COVERAGE_COLUMNS, coverage_by_dataset, coverage_markdown

from .results_records import FOLDER, _rec


def test_coverage_table_per_dataset_and_method_by_hand():
    recs = [*FOLDER, *(dict(r, method="ros") for r in FOLDER[:2])]
    table = coverage_by_dataset(recs)
    assert list(table.columns) == COVERAGE_COLUMNS
    ba = table[table.family == "BA"].set_index(["dataset", "method"])
    assert set(ba.index) == {("a", "none"), ("a", "ros"), ("a", "all"), ("b", "none"), ("b", "all")}
    a = ba.loc[("a", "none")]
    assert a.n == 2 and a.c_coverage_pct == 50.0 and a.r_coverage_pct == 100.0
    assert a.c_mae == pytest.approx(0.04) and a.r_mae == pytest.approx(0.01)
    assert a.r_bias == pytest.approx(0.01) and a.r_mean_width == pytest.approx(0.10)
    assert a.recommended == "rBA" and not a.low_coverage and not a.weak_subconcept_model
    assert ba.loc[("a", "all")].n == 4 and ba.loc[("a", "all")].r_coverage_pct == 100.0
    b = ba.loc[("b", "none")]  # rBA misses its only evaluation; weak subconcept model
    assert b.r_coverage_pct == 0.0 and b.low_coverage and b.weak_subconcept_model
    assert b.within_class_ba == 0.5 and b.c_bias == pytest.approx(0.06)
    md = coverage_markdown(table)
    assert "- b none rBA: 0 % of 1 (weak subconcept model)" in md
    assert "rBA coverage < 80 %; weak subconcept model" in md
    # without rectified scores the recommended score is cM, and its coverage is what is flagged
    no_r = coverage_by_dataset([_rec("a", 0, {**FOLDER[0]["scores"], "rBA": None},
                                     FOLDER[0]["intervals"])])  # fmt: skip
    row = no_r[no_r.family == "BA"].iloc[0]
    assert row.recommended == "cBA" and row.low_coverage and math.isnan(row.r_coverage_pct)
