# %% [md]
# # Inspecting a run folder
#
# `python -m medeval.train` writes everything of a run into one folder. This notebook reads one:
# the headline table, the per-subconcept figure, the training curve, the calibration of the
# subconcept head, and the hardest test images of each subconcept.
#
# Set `MEDEVAL_RUN` to a run folder (e.g. `runs/nih-20261129-120000`). Without it, the notebook
# trains a tiny run on the built-in **synthetic** phantoms (randomly initialised, about a
# minute) so that it has something to show.
# %%
import json
import os
import tempfile
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from IPython.display import Image, display

RUN = os.environ.get("MEDEVAL_RUN")
if RUN is None:
    from medeval.flows.train import run_training
    from medeval.training.config import SYNTHETIC, load_config

    tiny = [
        "data.synthetic.n_normal=144",
        "data.synthetic.size=32",
        "model.backbone=vgg11",
        "train.image_size=32",
        "train.epochs=2",
        "train.max_steps_per_epoch=3",
        "train.keep_checkpoints=0",
        "evaluation.n_bootstrap=200",
    ]
    RUN = Path(tempfile.mkdtemp(prefix="medeval-run-")) / "tiny"
    os.environ.setdefault("TQDM_DISABLE", "1")  # no progress bars in the notebook
    run_training(load_config(None, tiny, preset=SYNTHETIC), RUN)
RUN = Path(RUN)
print("run folder:", RUN)
print(sorted(p.name for p in RUN.iterdir()))
# %% [md]
# ## The nine scores over the splits
# %%
summary = json.loads((RUN / "summary.json").read_text())
for note in summary["notes"]:
    print("NOTE:", note)
pd.read_csv(RUN / "summary.csv").round(3)
# %% [md]
# ## One split: per-subconcept results
# %%
split = sorted(RUN.glob("split_*"))[0]
metrics = json.loads((split / "metrics.json").read_text())
display(pd.DataFrame(metrics["per_subconcept"]).round(3))
Image(filename=str(split / "subconcepts.png"))
# %% [md]
# ## Training curve
# %%
log = pd.read_csv(split / "log.csv")
fig, ax = plt.subplots(1, 2, figsize=(9, 3))
ax[0].plot(log.epoch, log.loss, "o-")
ax[0].set(xlabel="epoch", ylabel="training loss")
ax[1].plot(log.epoch, log.val_BA, "o-")
ax[1].set(xlabel="epoch", ylabel="validation BA")
plt.tight_layout()
plt.show()
# %% [md]
# ## Calibration of the subconcept head
# A temperature fitted on the calibration part; ECE before and after. The reliability diagram
# uses the calibrated test posteriors saved in `predictions.csv`.
# %%
print(json.dumps(json.loads((split / "calibration.json").read_text()), indent=1))
pred = pd.read_csv(split / "predictions.csv")
q_cols = [c for c in pred if c.startswith("q_")]
names = [c[2:] for c in q_cols]
q = pred[q_cols].to_numpy()
conf = q.max(axis=1)
correct = np.asarray(names)[q.argmax(axis=1)] == pred.subconcept.astype(str).to_numpy()
bins = np.linspace(0, 1, 11)
which = np.clip(np.digitize(conf, bins) - 1, 0, 9)
acc = [correct[which == b].mean() if (which == b).any() else np.nan for b in range(10)]
fig, ax = plt.subplots(figsize=(4, 4))
ax.plot([0, 1], [0, 1], "k:", label="perfect calibration")
ax.bar(bins[:-1] + 0.05, acc, width=0.09, alpha=0.7, label="calibrated test posteriors")
ax.set(xlabel="confidence (max posterior)", ylabel="accuracy", title="reliability")
ax.legend()
plt.show()
# %% [md]
# ## The hardest test images of each subconcept
# For a minority subconcept the hardest images are those with the lowest score for class 1
# (missed first); for a majority subconcept, those with the highest.
# %%
from medeval.datasets.images import ImageDataset
from medeval.training.config import load_config
from medeval.training.data import build_task

cfg = load_config(RUN / "config.yaml")
task = build_task(cfg.data)
row_of = {str(i): k for k, i in enumerate(task.ids)}
sides = dict(zip(task.subconcept_names, task.sides, strict=True))
k = 3
fig, axes = plt.subplots(len(names), k, figsize=(1.8 * k, 1.9 * len(names)), squeeze=False)
for r, name in enumerate(names):
    rows = pred[pred.subconcept.astype(str) == name]
    rows = rows.sort_values("y_score", ascending=sides[name] == 1).head(k)
    for c in range(k):
        ax = axes[r, c]
        ax.axis("off")
        if c < len(rows):
            item = rows.iloc[c]
            img, _, _ = ImageDataset.from_task(task, np.array([row_of[str(item.id)]]))[0]
            ax.imshow(img[0].numpy(), cmap="gray")
            ax.set_title(f"{name[:14]}\nscore {item.y_score:.3f}", fontsize=7)
plt.tight_layout()
plt.show()
