"""Toy benchmark records whose analyses' answers are known (RQ1–RQ3 and the analyze flow)."""

from medeval.evaluation import PAPER_SCORES

PNG = b"\x89PNG"


def record(dataset, split, full, largest, smallest, *, method="none", sc=None, perf=0.8):
    """A minimal record: every measure takes the given full / largest / smallest values."""
    subsets = []
    for score in PAPER_SCORES:
        for name, sub, value in (
            ("full", None, full),
            ("sub_1", "A", largest),
            ("sub_2", "B", smallest),
            ("largest", "A", largest),
            ("smallest", "B", smallest),
        ):
            subsets.append({"subset": name, "subconcept": sub, "score": score, "value": value})
    sc = sc or {"M": (10, 10.0, 10.0), "A": (6, 12.0, 12.0), "B": (2, 16.0, 16.0)}
    per_sc = [
        {
            "subconcept": k,
            "class": int(k != "M"),
            "n_train": n,
            "utility": t / n,
            "n_test": n,
            "prevalence": n / 8 if k != "M" else 1.0,
            "recall": 0.5,
            "true_weight_sum": t,
            "predicted_weight_sum": p,
        }
        for k, (n, t, p) in sc.items()
    ]
    return {
        "collection": "toy",
        "dataset": dataset,
        "method": method,
        "split": split,
        "scores": dict.fromkeys(PAPER_SCORES, full),
        "subsets": subsets,
        "per_subconcept": per_sc,
        "subconcept_model": {"auc_ovr_macro": perf, "balanced_accuracy": perf, "f1_macro": perf},
        "timing": {"unit_s": 1.0, "metrics_s": 0.01, "worker_peak_rss_mb": 100.0},
    }
