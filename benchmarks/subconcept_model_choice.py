"""Which subconcept model on image embeddings: the forest or a multinomial logistic regression?

On an embedding table of ``python -m medeval.embed`` (default: the isic_skin dermoscopy images
through ImageNet EfficientNet-Lite0, 1,280 features), over lesion-grouped splits (60 % of the
lesions train, 40 % test), fit :class:`medeval.subconcept_model.SubconceptModel` with

* ``forest``: its default, the subconcept forest (100 trees);
* ``logistic``: standardised features → multinomial logistic regression, its strength C chosen
  by 3-fold cross-validated log loss on the training rows (``LogisticRegressionCV``), which is
  what calibrates it (no test row is seen).

Scored on the test rows' true subconcepts, with the posteriors renormalised within each row's
known class (the q̃ every label-free and rectified score uses): within-class accuracy (argmax
= the true subconcept), within-class log loss, and the expected calibration error of the
within-class top posterior (10 equal-width bins). Paired differences over the splits.

    python benchmarks/subconcept_model_choice.py --table /tmp/isic_lite0/isic_skin.parquet \\
        --positive MEL,BCC,SCC,AK --splits 20
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import pandas as pd
from sklearn.linear_model import LogisticRegressionCV
from sklearn.model_selection import GroupShuffleSplit
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from medeval.io.features import FEATURE
from medeval.subconcept_model import SubconceptModel


def logistic(seed: int):
    """The calibrated multinomial logistic regression measured here."""
    return make_pipeline(
        StandardScaler(),
        LogisticRegressionCV(
            Cs=[1e-3, 1e-2, 1e-1],
            cv=3,
            scoring="neg_log_loss",
            max_iter=3000,
            l1_ratios=(0.0,),
            use_legacy_attributes=False,
        ),
    )


def within_scores(q: np.ndarray, sides: np.ndarray, names: np.ndarray, truth, y) -> dict:
    """Accuracy, log loss and ECE of the posteriors ``q`` renormalised within each row's class."""
    m = q * (sides[None, :] == y[:, None])
    m = m / np.maximum(m.sum(1, keepdims=True), 1e-300)
    col = {n: i for i, n in enumerate(names)}
    t = np.array([col[s] for s in truth])
    p_true = np.clip(m[np.arange(len(t)), t], 1e-15, 1.0)
    top = m.argmax(1)
    conf = m.max(1)
    hit = (top == t).astype(float)
    bins = np.minimum((conf * 10).astype(int), 9)
    ece = sum(
        abs(hit[bins == b].mean() - conf[bins == b].mean()) * (bins == b).mean()
        for b in range(10)
        if (bins == b).any()
    )
    return {"accuracy": hit.mean(), "log_loss": -np.log(p_true).mean(), "ece": ece}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--table", required=True, help="an embed table (.parquet)")
    ap.add_argument("--positive", default="MEL,BCC,SCC,AK", help="labels of class 1")
    ap.add_argument("--splits", type=int, default=20)
    args = ap.parse_args()
    frame = pd.read_parquet(args.table)
    X = frame[[c for c in frame.columns if FEATURE.match(str(c))]].to_numpy(np.float64)
    labels = frame["label"].astype(str).to_numpy()
    y = np.isin(labels, args.positive.split(",")).astype(int)
    groups = frame["group"].fillna("").astype(str).to_numpy()
    alone = groups == ""  # an image without a lesion id is a lesion of its own
    groups[alone] = "image:" + frame["id"].astype(str).to_numpy()[alone]
    print(f"{args.table}: {len(X)} rows x {X.shape[1]} features; load {os.getloadavg()}")
    rows = []
    t0 = time.time()
    for seed in range(args.splits):
        tr, te = next(GroupShuffleSplit(1, test_size=0.4, random_state=seed).split(X, y, groups))
        for name, estimator in (("forest", None), ("logistic", logistic(seed))):
            started = time.time()
            model = SubconceptModel(estimator, random_state=seed).fit(X[tr], labels[tr], y[tr])
            q = model.predict_proba(X[te])
            s = within_scores(q, model.class_of_, model.classes_, labels[te], y[te])
            rows.append({"split": seed, "model": name, "seconds": time.time() - started, **s})
        print(f"split {seed}: {time.time() - t0:.0f} s", flush=True)
    table = pd.DataFrame(rows)
    summary = table.groupby("model")[["accuracy", "log_loss", "ece", "seconds"]].agg(
        ["mean", "std"]
    )
    print(summary.round(3).to_string())
    wide = table.pivot(index="split", columns="model")
    for metric in ("accuracy", "log_loss", "ece"):
        d = wide[(metric, "logistic")] - wide[(metric, "forest")]
        better = (d > 0).mean() if metric == "accuracy" else (d < 0).mean()
        print(
            f"logistic - forest, {metric}: mean {d.mean():+.3f} (sd {d.std():.3f}); "
            f"logistic better in {better:.0%} of {len(d)} splits"
        )
    print(f"load at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
