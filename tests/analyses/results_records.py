"""Hand-made result records of a tiny results folder, shared by the tests of the rectified
scores' rows, the weak subconcept model flags and the coverage table."""


def _rec(dataset, split, scores, intervals=None, *, method="none", within=0.9, utilities=None):
    """A record: subsets repeat the scores on full / largest / smallest; per-subconcept rows
    with ``utilities`` ``{class: [u, ...]}`` (default: class 1 weighted)."""
    utilities = utilities or {0: [1.0], 1: [2.0, 8.0]}
    subsets = [
        {"subset": subset, "subconcept": sc, "score": name, "value": v}
        for name, v in scores.items()
        for subset, sc in (("full", None), ("largest", "A"), ("smallest", "B"))
    ]
    per_sc = [
        {"subconcept": f"s{c}{i}", "class": c, "n_train": 10, "utility": u, "n_test": 5,
         "prevalence": 0.5, "recall": 0.5, "true_weight_sum": 5.0, "predicted_weight_sum": 5.0}
        for c, us in utilities.items()
        for i, u in enumerate(us)
    ]  # fmt: skip
    return {
        "collection": "toy",
        "dataset": dataset,
        "method": method,
        "split": split,
        "scores": scores,
        "intervals": intervals or {},
        "subsets": subsets,
        "per_subconcept": per_sc,
        "subconcept_model_within_class": {"class 0": 0.95, "class 1": within},
        "subconcept_model": dict.fromkeys(("auc_ovr_macro", "balanced_accuracy", "f1_macro"), 0.8),
        "timing": {"unit_s": 1.0, "metrics_s": 0.01, "worker_peak_rss_mb": 100.0},
    }


def _s(ba, wba, cba, rba):
    return {"BA": ba, "wBA": wba, "pBA": cba, "cBA": cba, "rBA": rba}


# Hand-checked (BA family):
#   a/0: BA .80 wBA .70 cBA .74 rBA .71   cBA [.72, .76] (misses)   rBA [.66, .76] (covers)
#   a/1: BA .60 wBA .64 cBA .60 rBA .65   cBA [.55, .65] (covers)   rBA [.60, .70] (covers)
#   b/0: BA .90 wBA .80 cBA .86 rBA .78   cBA [.84, .88] (misses)   rBA [.70, .79] (misses)
#         b has a weak subconcept model (within-class BA 0.5 in class 1)
FOLDER = [
    _rec("a", 0, _s(0.80, 0.70, 0.74, 0.71), {"cBA": [0.72, 0.76], "rBA": [0.66, 0.76]}),
    _rec("a", 1, _s(0.60, 0.64, 0.60, 0.65), {"cBA": [0.55, 0.65], "rBA": [0.60, 0.70]}),
    _rec(
        "b", 0, _s(0.90, 0.80, 0.86, 0.78), {"cBA": [0.84, 0.88], "rBA": [0.70, 0.79]}, within=0.5
    ),
]
