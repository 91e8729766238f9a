"""RQ3: per-subconcept recall panels and their sheets."""

import pytest

from medeval.analyses.recall_panels import recall_panel_data, recall_sheets

from .toy_records import PNG, record


def test_a_panel_averages_splits_and_sheets_are_pngs():
    recs = [record(f"d{i}", k, 0.5 + 0.1 * k, 0.6, 0.4) for i in range(3) for k in range(2)]
    table, scores = recall_panel_data(recs, "d1", "none")
    assert list(table.subconcept) == ["M", "A", "B"]
    assert scores["BA"] == pytest.approx(0.55)
    with pytest.raises(ValueError, match="d1.*smote"):
        recall_panel_data(recs, "d1", "smote")
    panels, sheets = recall_sheets(recs, per_sheet=2)
    assert sorted(panels) == ["d0", "d1", "d2"] and len(sheets) == 2
    assert all(b.startswith(PNG) for b in [*panels.values(), *sheets])
