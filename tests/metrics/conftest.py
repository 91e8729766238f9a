"""Random inputs for the metric oracle tests: ties, zero weights, missing classes, batches."""

import numpy as np
from hypothesis import strategies as st

ALLOW_UNDEFINED = "ignore::medeval.metrics.UndefinedMetricWarning"


@st.composite
def binary_problems(draw, max_rows: int = 4, max_n: int = 40):
    """``(y_true, y_pred, y_score, w)`` each ``(B, N)``: coarse scores (ties), zero weights.

    N >= 2: a ``(B, 1)`` array is a column of B instances (as in scikit-learn), not B rows.
    """
    seed = draw(st.integers(0, 2**32 - 1))
    b = draw(st.integers(1, max_rows))
    n = draw(st.integers(2, max_n))
    rng = np.random.default_rng(seed)
    p1 = draw(st.sampled_from([0.0, 0.1, 0.5, 0.9, 1.0]))
    y = (rng.random((b, n)) < p1).astype(np.int64)
    levels = draw(st.sampled_from([2, 5, 1000]))  # few levels → many ties
    s = rng.integers(0, levels, (b, n)) / levels + 0.3 * y * rng.random((b, n))
    yp = (rng.random((b, n)) < 0.5).astype(np.int64)
    kind = draw(st.sampled_from(["ones", "float", "int", "sparse"]))
    if kind == "ones":
        w = np.ones((b, n))
    elif kind == "float":
        w = rng.random((b, n)) * 5
    elif kind == "int":
        w = rng.integers(0, 4, (b, n)).astype(np.float64)
    else:
        w = rng.random((b, n)) * (rng.random((b, n)) < 0.3)
    return y, yp, s, w
