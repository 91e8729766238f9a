"""Labels, subconcepts and informative posteriors of five subconcepts on two sides, shared by
the tests of reference files and of the subconcept model's within-class quality."""

import numpy as np
import pandas as pd

NAMES = ["normal", "benign", "A", "B", "C"]
SIDES = np.array([0, 0, 1, 1, 1])
SIZES = {
    n: {"class": int(c), "n": 10 * (i + 1)}
    for i, (n, c) in enumerate(zip(NAMES, SIDES, strict=True))
}


def rows(seed, n=300):
    rng = np.random.default_rng(seed)
    sc = rng.integers(0, 5, n)
    y = SIDES[sc]
    q = rng.dirichlet(np.ones(5), n)
    q[np.arange(n), sc] += rng.random(n)  # informative, not perfect
    q /= q.sum(1, keepdims=True)
    return y, np.array(NAMES)[sc], pd.DataFrame(q, columns=NAMES)
