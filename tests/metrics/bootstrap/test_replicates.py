"""medeval/metrics/bootstrap/replicates.py: percentile intervals over the replicates."""

import numpy as np
import pytest
import torch

from medeval._validation import InvalidParameterError
from medeval.metrics.bootstrap import percentile_interval


def test_undefined_replicates_are_excluded_and_counted():
    reps = torch.tensor([[0.5, np.nan], [0.7, np.nan], [np.nan, np.nan], [0.6, np.nan]])
    lo, hi, n_undef = percentile_interval(reps, 0.5)
    assert n_undef.tolist() == [1, 4]
    assert lo[0].item() == pytest.approx(np.percentile([0.5, 0.7, 0.6], 25))
    assert hi[0].item() == pytest.approx(np.percentile([0.5, 0.7, 0.6], 75))
    assert torch.isnan(lo[1]) and torch.isnan(hi[1])


def test_the_interval_narrows_with_the_confidence():
    reps = torch.arange(101, dtype=torch.float64)[:, None]
    lo90, hi90, _ = percentile_interval(reps, 0.9)
    lo50, hi50, n_undef = percentile_interval(reps, 0.5)
    assert (lo90.item(), hi90.item()) == pytest.approx((5.0, 95.0))
    assert (lo50.item(), hi50.item()) == pytest.approx((25.0, 75.0))
    assert n_undef.tolist() == [0]


@pytest.mark.parametrize("confidence", [0, 1, 1.5])
def test_a_confidence_outside_the_open_unit_interval_is_refused(confidence):
    with pytest.raises(InvalidParameterError, match="confidence must be a number in"):
        percentile_interval(torch.zeros(3, 2), confidence)
