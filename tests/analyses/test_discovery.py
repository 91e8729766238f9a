"""analysis/discovery.csv: discovery quality averaged over splits."""

import math

from medeval.analyses.discovery import COLUMNS, discovery_table


def _record(dataset, split, q1, method="none"):
    quality = [
        {"class": 0, "n": 50, "k_true": 2, "k_found": 3, "ari": 0.5, "nmi": 0.6},
        {"class": 1, "n": 20, "k_true": 3, "k_found": q1[0], "ari": q1[1], "nmi": q1[2]},
    ]
    return {
        "collection": "keel",
        "dataset": dataset,
        "method": method,
        "split": split,
        "discovery": {"quality": quality},
    }


def test_means_over_splits_per_dataset_method_and_class():
    records = [
        _record("a", 0, (2, 0.2, 0.4)),
        _record("a", 1, (4, 0.6, 0.8)),
        _record("b", 0, (3, 1.0, 1.0)),
        {"collection": "keel", "dataset": "c", "method": "none", "split": 0},  # true run
    ]
    t = discovery_table(records)
    assert list(t.columns) == COLUMNS
    assert set(t.dataset) == {"a", "b"}
    row = t[(t.dataset == "a") & (t["class"] == 1)].iloc[0]
    assert (row.k_true, row.k_found, row.n_splits) == (3, 3, 2)
    assert math.isclose(row.ari, 0.4) and math.isclose(row.nmi, 0.6)


def test_no_discovered_records_gives_an_empty_table():
    assert discovery_table([{"dataset": "a", "method": "none", "split": 0}]).empty


def _subset_record(dataset, kind, full, largest, smallest):
    subsets = [
        {"subset": s, "subconcept": None if s == "full" else s, "score": "BA", "value": v}
        for s, v in (("full", full), ("largest", largest), ("smallest", smallest))
    ]
    rec = {"collection": "keel", "dataset": dataset, "method": "none", "split": 0}
    rec["subsets"] = subsets
    if kind is not None:
        rec["subconcepts"] = kind
    return rec


def test_rq1_table_has_a_subconcepts_column_and_separates_the_kinds():
    from medeval.analyses.common import dataset_means, subset_frame
    from medeval.analyses.correlation_gap import gap_markdown, gap_table

    full = [0.6, 0.7, 0.8, 0.9]
    true = [
        _subset_record(f"d{i}", None, f, f + 0.01 * i, 0.5 - 0.1 * (i % 2))
        for i, f in enumerate(full)
    ]
    # Discovered: the smallest subset tracks the full score exactly, the largest is flat-ish.
    disc = [
        _subset_record(f"d{i}", "discovered", f, 0.7 + 0.01 * (i % 2), f)
        for i, f in enumerate(full)
    ]
    table = gap_table(dataset_means(subset_frame(true + disc)))
    assert list(table.columns[:3]) == ["collection", "subconcepts", "method"]
    gaps = table.set_index("subconcepts")["gap"]
    assert gaps["true"] > 0.9  # the full score tracks the largest subset
    assert gaps["discovered"] < 0
    md = gap_markdown(table)
    assert "RQ1 — keel (4 data sets)" in md and "RQ1 — keel, discovered subconcepts" in md
