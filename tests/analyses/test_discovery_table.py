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
