"""Does the forecast of labels still needed (medeval.evaluation.label_forecast) match what the
loop then takes? Simulation with known truth, the cells of ``benchmarks/label_decide.py``.

Per cell (rare share × posterior weight) and seed: the design labels ``--after`` batches
(seeds in which ``rare`` is decided by then are left out); then the
forecast of more labels to decide ``rare``'s verdict is made from what is known (``--worlds``
worlds, batches of ``--batch``, at most ``--max-labels`` more), and the loop goes on in the true
world until ``rare`` is decided or ``--max-labels`` more are spent. Per cell: the median
forecast over the seeds against the median labels the loop took (a seed that did not decide
counts as more than the maximum), and whether they are within ±30 % of each other; per seed the
share of forecasts within ±30 %.

    python benchmarks/label_forecast.py --seeds 40 --worlds 8
"""

from __future__ import annotations

import argparse
import itertools
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).parent))
from label_decide import NAMES, RARE, SIDES, draw, shares

from medeval.evaluation.label_design import plan_batch
from medeval.evaluation.label_forecast import labels_to_decide
from medeval.evaluation.rectified_recall import VERDICTS, LabelledRows, rectified_recall, verdicts
from medeval.weights import utilities_from_train_sizes


def one(rng, n, rare, w, batch, max_labels, worlds, focus, after=1, looks=False) -> dict:
    sub, hit, q = draw(rng, n, rare, w)
    y = SIDES[sub]
    sizes = np.rint(shares(rare) * 4 * n).astype(int)
    u = utilities_from_train_sizes(
        {nm: {"class": int(c), "n": int(k)} for nm, c, k in zip(NAMES, SIDES, sizes, strict=True)}
    )
    seed = int(rng.integers(2**31))
    cr = hit[y == 1].mean()
    fc = "rare" if focus else None
    rows, pi, bt = np.zeros(0, int), np.zeros(0), np.zeros(0, int)
    forecast, took, k = np.nan, np.inf, 0
    t_forecast = 0.0
    plan = -(-(after * batch + max_labels) // batch) if looks else None  # the loop's looks
    while len(rows) < after * batch + max_labels:
        k += 1
        lab = LabelledRows(rows, sub[rows], pi, bt, looks=plan) if len(rows) else None
        if k == after + 1:  # after the first batches: the forecast from what is known
            target = np.asarray(NAMES) == "rare"
            t0 = time.perf_counter()
            f = labels_to_decide(
                q, hit, y, SIDES, NAMES, targets=target, labelled=lab, batch=batch,
                max_labels=max_labels, worlds=worlds, seed=seed, utility=u.values, focus=fc,
                looks=plan,
            )  # fmt: skip
            t_forecast = time.perf_counter() - t0
            forecast = float(f.median[RARE])
        d, _ = plan_batch(
            q, hit, y, SIDES, NAMES, reference=None, labelled=lab, budget=batch,
            seed=seed + k, utility=u.values, focus=fc,
        )  # fmt: skip
        rows, pi = np.r_[rows, d.rows], np.r_[pi, d.inclusion]
        bt = np.r_[bt, np.full(len(d.rows), k)]
        res = rectified_recall(
            q, hit, y, SIDES, None, labelled=LabelledRows(rows, sub[rows], pi, bt, looks=plan),
            confidence=0.95,
        )  # fmt: skip
        v = verdicts(np.array([cr - res.high[RARE]]), np.array([cr - res.low[RARE]]))[0]
        if v != VERDICTS[2]:
            took = float(len(rows) - after * batch) if k > after else np.nan
            break
    return dict(forecast=forecast, took=took, seconds=t_forecast)


def within(a: float, b: float) -> bool:
    """Within ±30 % of each other (both more than the maximum counts as agreeing)."""
    if np.isinf(a) and np.isinf(b):
        return True
    if not (np.isfinite(a) and np.isfinite(b)):
        return False
    return abs(a - b) <= 0.3 * max(b, 1.0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=40)
    ap.add_argument("--worlds", type=int, default=8)
    ap.add_argument("--batch", type=int, default=20)
    ap.add_argument("--max-labels", type=int, default=180)
    ap.add_argument("--n", type=int, default=2000)
    ap.add_argument("--rare", default="0.01,0.025,0.05")
    ap.add_argument("--w", default="2,4,8")
    ap.add_argument("--focus", action="store_true", help="label --focus rare")
    ap.add_argument("--after", type=int, default=1, help="batches labelled before the forecast")
    ap.add_argument("--out", default=None)
    ap.add_argument(
        "--looks", action="store_true", help="the error spent over the loop's planned looks"
    )
    a = ap.parse_args(argv)
    cells = list(
        itertools.product([float(x) for x in a.rare.split(",")], [float(x) for x in a.w.split(",")])
    )
    print(f"load average {os.getloadavg()[0]:.2f} ({os.cpu_count()} cores)", flush=True)
    t0, out = time.perf_counter(), []
    for ci, (rare, w) in enumerate(cells):
        rng = np.random.default_rng([ci, 20261207, 3])
        for s in range(a.seeds):
            r = one(rng, a.n, rare, w, a.batch, a.max_labels, a.worlds, a.focus, a.after, a.looks)
            out.append(dict(rare=rare, w=w, seed=s, **r))
        d = pd.DataFrame([o for o in out if o["rare"] == rare and o["w"] == w])
        d = d.dropna(subset=["took"])  # decided before the forecast was made
        if d.empty:
            print(
                f"[{ci + 1}/{len(cells)}] rare {rare} w {w}: every seed decided within the first"
                f" {a.after} batch(es): nothing to forecast ({time.perf_counter() - t0:.0f} s)",
                flush=True,
            )
            continue
        fm = float(np.quantile(d.forecast, 0.5, method="inverted_cdf"))
        tm = float(np.quantile(d.took, 0.5, method="inverted_cdf"))
        print(
            f"[{ci + 1}/{len(cells)}] rare {rare} w {w}: median forecast {fm:.0f}, took {tm:.0f}"
            f" ({'within' if within(fm, tm) else 'OUTSIDE'} ±30 %); per seed within "
            f"{np.mean([within(x, y) for x, y in zip(d.forecast, d.took, strict=True)]):.2f}; "
            f"{len(d)} seeds open; forecast {d.seconds.mean():.2f} s "
            f"({time.perf_counter() - t0:.0f} s)",
            flush=True,
        )
    df = pd.DataFrame(out).dropna(subset=["took"])  # seeds decided before the forecast: none
    if a.out:
        df.to_csv(a.out, index=False)
    g = df.groupby(["rare", "w"])
    med = g.agg(
        forecast=("forecast", lambda x: np.quantile(x, 0.5, method="inverted_cdf")),
        took=("took", lambda x: np.quantile(x, 0.5, method="inverted_cdf")),
    )
    ok = [within(f, t) for f, t in zip(med.forecast, med.took, strict=True)]
    print(med.assign(within=ok).to_string())
    print(
        f"cells with the median forecast within ±30 % of the median taken: {sum(ok)} of {len(ok)};"
        f" load average {os.getloadavg()[0]:.2f}; {time.perf_counter() - t0:.0f} s"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
