# %% [md]
# # medeval metrics walkthrough
#
# A class such as "diseased" is a mix of **subconcepts** (lesion types, disease subtypes).
# Balanced accuracy (BA) is dominated by the largest ones. This notebook shows, with
# `medeval.metrics` and `medeval.evaluate_predictions` only:
#
# 1. a failure on a small subconcept hidden by BA ([method](../docs/method.md#why-subconcepts));
# 2. BA against the small subconcept's recall, unweighted vs utility-weighted;
# 3. accuracy standardised to a target class mix;
# 4. what NaN means when a class is absent;
# 5. the one-call evaluation on real test predictions (a random forest on KEEL *letter*).
# %%
import warnings

import matplotlib.pyplot as plt
import numpy as np

import medeval
from medeval.metrics import (
    UndefinedMetricWarning,
    balanced_accuracy,
    class_recalls,
    weighted_accuracy,
)
from medeval.weights import true_weights, utilities

print("medeval", medeval.__version__)


# %% [md]
# ## 1. A failure BA hides ([method](../docs/method.md#why-subconcepts))
# Majority recall 0.95. The minority class holds subconcept A (90 % of positives, recall 0.95)
# and subconcept B (10 %, recall 0.10).
# %%
def example(recall_b: float, n0=2000, n_a=900, n_b=100):
    y = np.r_[np.zeros(n0), np.ones(n_a + n_b)].astype(int)
    sub = np.r_[["healthy"] * n0, ["A"] * n_a, ["B"] * n_b]
    hit_b = round(recall_b * n_b)
    y_pred = np.r_[
        np.r_[np.ones(100), np.zeros(n0 - 100)],  # majority recall 0.95
        np.r_[np.ones(855), np.zeros(n_a - 855)],  # A: 0.95
        np.r_[np.ones(hit_b), np.zeros(n_b - hit_b)],  # B
    ].astype(int)
    return y, y_pred, sub


y, y_pred, sub = example(0.10)
# Utilities from the training sizes (here: the same as the test sizes):
# u_s = max majority size / |s|;
# only the ratio between A and B matters for the minority recall.
u = utilities([2000, 900, 100], [0, 1, 1], ["healthy", "A", "B"])
w = true_weights(sub, u)
print("utilities:", {n: round(float(v), 3) for n, v in zip(u.names, u.values, strict=True)})
print("class recalls (unweighted):", class_recalls(y, y_pred).round(3))
print(f"BA  = {balanced_accuracy(y, y_pred):.3f}   (minority recall 0.865 hides B)")
print(
    f"wBA = {balanced_accuracy(y, y_pred, sample_weight=w):.3f}   "
    "(A and B get equal influence: (0.95 + 0.10) / 2 = 0.525)"
)
# %% [md]
# ## 2. BA against the small subconcept's recall
# As B's recall goes from 0 to 1, BA barely moves; the utility-weighted BA (wBA) moves a lot.
# %%
recalls = np.linspace(0, 1, 21)
ba, wba = [], []
for r in recalls:
    y, y_pred, sub = example(r)
    ba.append(balanced_accuracy(y, y_pred))
    wba.append(balanced_accuracy(y, y_pred, sample_weight=true_weights(sub, u)))
fig, ax = plt.subplots(figsize=(6, 4))
ax.plot(recalls, ba, "k-", label="BA (unweighted)")
ax.plot(recalls, wba, "g:", lw=2.5, label="wBA (utility-weighted)")
ax.set_xlabel("recall of the small subconcept B (10 % of positives)")
ax.set_ylabel("balanced accuracy")
ax.legend()
ax.grid(alpha=0.3)
plt.show()
print(
    f"slope of BA: {np.polyfit(recalls, ba, 1)[0]:.3f}, slope of wBA: "
    f"{np.polyfit(recalls, wba, 1)[0]:.3f}"
)
# %% [md]
# ## 3. Accuracy standardised to a target class mix
# `Acc(q) = q·Recall_1 + (1−q)·Recall_0`: q = ½ gives BA, q = the observed prevalence gives
# ordinary accuracy, and any other q reports the accuracy expected in a population with that
# share of positives (for example a screening population with 5 % positives).
# %%
y, y_pred, sub = example(0.10)
prevalence = y.mean()
for q, label in [
    (0.5, "balanced (BA)"),
    (prevalence, "observed mix = accuracy"),
    (0.05, "screening population, 5 % positives"),
]:
    acc = weighted_accuracy(y, y_pred, q=q)
    print(f"q = {q:.2f}  {label:<38} Acc(q) = {acc:.3f}")
print("plain accuracy:", (y == y_pred).mean().round(3))
# %% [md]
# ## 4. When a class is absent the score is undefined: NaN and a warning, never 0 or 1
# A test subset without any positive instance has no recall for class 1, so BA and AUC are
# undefined there. medeval returns NaN and says which class is missing.
# %%
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    value = balanced_accuracy(np.zeros(5, dtype=int), np.array([0, 0, 1, 0, 0]))
print("BA on a set without positives:", value)
for w_ in caught:
    print(f"{w_.category.__name__}: {w_.message}")
assert issubclass(caught[0].category, UndefinedMetricWarning)
# %% [md]
# ## 5. One call on real predictions
# The bundled example holds one test fold of a random forest on KEEL *letter* (4 majority
# letters, minority = M, A, X, Y down-sampled to a geometric ladder), with the subconcept
# forest's posteriors `q_<letter>` and the training subconcept sizes.
# %%
import json
from importlib import resources

import pandas as pd

base = resources.files("medeval") / "examples"
pred = pd.read_csv(base / "predictions.csv")
sizes = json.loads((base / "train_sizes.json").read_text())
post = pred[[c for c in pred if c.startswith("q_")]].rename(columns=lambda c: c[2:])
ev = medeval.evaluate_predictions(
    pred.y_true,
    y_score=pred.y_score,
    subconcept=pred.subconcept.astype(str),
    posteriors=post,
    train_sizes=sizes,
    n_bootstrap=1000,
    seed=0,
)
ev.table().round(3)
# %%
ev.per_subconcept[
    ["subconcept", "class", "n_test", "utility", "recall", "low", "high", "est_recall"]
].round(3)
# %%
from medeval.report.figures import subconcept_figure

subconcept_figure(ev.per_subconcept, ev.scores, title="KEEL letter, one test fold")
# %% [md]
# BA (0.94) hides that the smallest letter, Y, is recognised only about a third of the time;
# the oracle wBA (0.87) shows it, and so does the label-free cBA (0.88), which needs no test
# subconcept labels: it renormalises the subconcept forest's posteriors within each instance's
# known class, so a missed Y that looks like a majority letter still counts as a likely Y. The
# paper's pBA (0.94) barely moves: without the class condition, the missed Y instances get the
# majority utility. The label-free per-subconcept recall (`est_recall`, hatched bars) tracks the
# true recall; when the subconcept model is weak within a class (`ev.subconcept_model`), cBA moves
# toward BA and understates the failure.
