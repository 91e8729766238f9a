"""The rectified per-subconcept recall on real folds, against the test rows' true recalls
(docs/method.md, "Per-subconcept recall"; docs/benchmark.md).

Reads the folds a benchmark saved (``python -m medeval.benchmark ... --save-predictions``:
``predictions/<set>/<method>-<k>/`` with the test predictions, their true subconcepts, the
out-of-bag reference rows and the train sizes), evaluates each fold **without** its test
subconcepts — as a user would — and compares with them:

* per subconcept: whether ``r_recall``'s interval (and ``est_recall``'s) holds the true test
  recall, the widths, and, with ``--old RESULTS`` (the records of an earlier version on the same
  folds), the width of that version's ``r_recall`` interval;
* verdicts: among subconcepts truly ≥ 0.10 below their class, the share called ``below``
  (power); among those not below it, the share wrongly called ``below``;
* per class: whether the could-be-worst set holds the truly worst subconcept, whether it is a
  single one where the worst is ≥ 0.10 below the next, whether the subconcept named worst is
  the truly worst (and whether ``est_recall`` names it), whether the interval printed for it
  (after selection) holds its true recall, and the rectified rBA's coverage of wBA.

Usage: ``python benchmarks/subconcept_recall_real.py /tmp/keel [--old /tmp/old-keel]``; a training
run's folder works too (its ``split_*`` folders, reference rows = validation + calibration).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd

from medeval.evaluation import EvaluateSettings, evaluate
from medeval.io.predictions import read_predictions, read_train_sizes
from medeval.io.reference import load_reference


def fold_rows(fold: Path, n_bootstrap: int, old: dict | None) -> tuple[list[dict], list[dict]]:
    """Per-subconcept and per-class rows of one saved fold."""
    u = read_train_sizes(fold / "train_sizes.json")
    truth = pd.read_csv(fold / "predictions.csv", dtype={"subconcept": str})
    hit = (truth["y_score"] >= 0.5).astype(int) == truth["y_true"]
    settings = EvaluateSettings(n_bootstrap=n_bootstrap, seed=0)
    ref, _ = load_reference(fold / "reference.csv", u, threshold=0.5)
    table = read_predictions(fold / "predictions.csv", u)
    table.subconcept = None  # evaluated as a user without test subconcepts would
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ev = evaluate(table, u, reference=ref, settings=settings)
    ps = ev.per_subconcept.set_index("subconcept")
    true = {
        s: float(hit[truth.subconcept == s].mean())
        for s in ps.index
        if (truth.subconcept == s).any()
    }
    cr = {c: float(hit[truth.y_true == c].mean()) for c in (0, 1)}
    minority = [s for s in u.minority]
    smallest = minority[-1] if minority else None
    old_ps = {r["subconcept"]: r for r in (old or {}).get("per_subconcept", [])}
    subs = []
    for s, r in ps.iterrows():
        if s not in true or not np.isfinite(r.r_low):
            continue
        o = old_ps.get(s, {})
        gap = cr[int(r["class"])] - true[s]
        subs.append(
            dict(
                fold=str(fold),
                subconcept=s,
                cls=int(r["class"]),
                smallest=s == smallest,
                covers=r.r_low <= true[s] <= r.r_high,
                width=r.r_high - r.r_low,
                est_covers=r.est_low <= true[s] <= r.est_high,
                est_width=r.est_high - r.est_low,
                ref_width=r.ref_high - r.ref_low,
                old_width=(o.get("r_high") or math.nan) - (o.get("r_low") or math.nan),
                old_covers=(o.get("r_low") or math.nan) <= true[s] <= (o.get("r_high") or math.nan),
                truly_below=gap >= 0.10,
                not_below=gap <= 0,
                called_below=r.r_verdict == "below",
                ess=r.r_ess,
                n_reference=r.n_reference,
            )
        )
    classes = []
    for w in ev.worst_subconcepts:
        c = w["class"]
        members = {s: v for s, v in true.items() if int(ps.loc[s, "class"]) == c}
        if len(members) < 2 or w["source"] != "rectified":
            continue
        order = sorted(members, key=members.get)
        worst, nxt = order[0], order[1]
        est = ps[ps["class"] == c].est_recall.astype(float).idxmin()
        classes.append(
            dict(
                fold=str(fold),
                cls=c,
                set_holds=any(members[x] == members[worst] for x in w["could_be_worst"]),
                set_size=len(w["could_be_worst"]),
                clear=members[nxt] - members[worst] >= 0.10,
                named_right=members[w["subconcept"]] == members[worst],  # a tie names it too
                est_right=members[est] == members[worst],
                named_covers=w["low"] <= members[w["subconcept"]] <= w["high"],
                naive_covers=ps.loc[w["subconcept"], "r_low"]
                <= members[w["subconcept"]]
                <= ps.loc[w["subconcept"], "r_high"],
            )
        )
    return subs, classes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", nargs="+", type=Path)
    ap.add_argument("--old", type=Path, nargs="*", default=[], help="an earlier version's results")
    ap.add_argument("--bootstrap", type=int, default=200)
    ap.add_argument("--out", type=Path, default=None, help="CSV prefix for the rows")
    a = ap.parse_args(argv)
    subs, classes = [], []
    for i, res in enumerate(a.results):
        old_root = a.old[i] if i < len(a.old) else None
        found = sorted((res / "predictions").glob("*/*")) or sorted(res.glob("split_*"))
        for fold in found:
            if not (fold / "reference.csv").exists():
                continue
            old = None
            if old_root is not None:
                rec = old_root / "records" / fold.parent.name / f"{fold.name}.json"
                old = json.loads(rec.read_text()) if rec.exists() else None
            s, c = fold_rows(fold, a.bootstrap, old)
            subs += s
            classes += c
    s, c = pd.DataFrame(subs), pd.DataFrame(classes)
    if a.out:
        s.to_csv(f"{a.out}_subconcepts.csv", index=False)
        c.to_csv(f"{a.out}_classes.csv", index=False)
    sm = s[s.smallest]
    print(f"{len(s)} subconcept-evaluations in {s.fold.nunique()} folds")
    print(
        f"r_recall coverage {s.covers.mean():.3f} (smallest minority {sm.covers.mean():.3f}, "
        f"{len(sm)}); est_recall {s.est_covers.mean():.3f}"
    )
    print(
        f"width: r_recall {s.width.mean():.3f}, reference rows alone {s.ref_width.mean():.3f}"
        f", est_recall {s.est_width.mean():.3f}; r_ess / n_reference "
        f"{(s.ess / s.n_reference).median():.2f} (median)"
    )
    if s.old_width.notna().any():
        o = s[s.old_width.notna()]
        print(
            f"earlier r_recall: coverage {o.old_covers.mean():.3f}, width "
            f"{o.old_width.mean():.3f}; width ratio new/earlier "
            f"{o.width.mean() / o.old_width.mean():.3f}"
            f" (smallest minority {sm.width.mean() / sm.old_width.mean():.3f})"
        )
    tb, nb = s[s.truly_below], s[s.not_below]
    print(
        f"verdict power {tb.called_below.mean():.3f} ({len(tb)} truly >= 0.10 below); "
        f"wrongly below {nb.called_below.mean():.4f} ({len(nb)} not below)"
    )
    if len(c):
        cl = c[c.clear]
        print(
            f"could-be-worst set holds the worst {c.set_holds.mean():.3f} ({len(c)} classes); "
            f"single where clear {(cl.set_size == 1).mean():.3f} ({len(cl)}); mean size "
            f"{c.set_size.mean():.2f}"
        )
        print(
            f"named worst right {c.named_right.mean():.3f} (est_recall {c.est_right.mean():.3f});"
            f" printed interval holds it {c.named_covers.mean():.3f} "
            f"(unadjusted {c.naive_covers.mean():.3f})"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
