"""RQ1: the gap between the full-test score's correlation with its largest and its smallest
subconcept's, on toy records whose answer is known."""

import numpy as np
import pytest
from scipy import stats

from medeval.analyses.common import dataset_means, subset_frame
from medeval.analyses.correlation_gap import gap_table
from medeval.evaluation import PAPER_SCORES

from .toy_records import record


def test_the_gap_is_positive_when_full_tracks_the_largest_subconcept():
    rng = np.random.default_rng(1)
    full = rng.uniform(0.5, 1, 12)
    smallest = rng.uniform(0.5, 1, 12)
    recs = [
        record(f"d{i}", 0, f, f, s) for i, (f, s) in enumerate(zip(full, smallest, strict=True))
    ]
    table = gap_table(dataset_means(subset_frame(recs)))
    assert len(table) == 9 and set(table.measure) == set(PAPER_SCORES)
    row = table[table.measure == "pBA"].iloc[0]
    assert row.weighting == "predicted" and row.family == "BA" and row.n_datasets == 12
    assert row.r_largest == pytest.approx(1.0)
    assert row.r_smallest == pytest.approx(stats.pearsonr(full, smallest).statistic)
    assert row.gap == pytest.approx(1.0 - row.r_smallest)
