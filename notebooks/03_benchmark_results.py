# %% [md]
# # Benchmark results: RQ1–RQ3
#
# `python -m medeval.benchmark` runs the random-forest protocol (5×2 CV, imbalance corrections,
# a shared subconcept forest per fold) over a collection and `python -m medeval.analyze` turns
# the records into the RQ1–RQ3 tables and figures. This notebook reads a results folder.
#
# Set `MEDEVAL_RESULTS` to a results folder (e.g. `runs/benchmark-keel`). Without it, the
# notebook runs a small benchmark itself: four KEEL sets, two corrections, two of the ten
# splits and 20 trees (about a minute), so the numbers are only illustrative; the full
# study's figures are in `docs/benchmark.md`.
# %%
import json
import os
import tempfile
from pathlib import Path

import pandas as pd
from IPython.display import Image, Markdown, display

from medeval.flows.analyze import analyze

RESULTS = os.environ.get("MEDEVAL_RESULTS")
if RESULTS is None:
    from medeval.benchmark import main as benchmark

    # the shared data folder (holds keel/): $MEDEVAL_DATA, else ../shared/data beside the repo
    DATA = os.environ.get("MEDEVAL_DATA") or Path.cwd().resolve().parents[1] / "shared" / "data"
    RESULTS = Path(tempfile.mkdtemp(prefix="medeval-bench-")) / "keel"
    benchmark(
        [
            "--collection",
            "keel",
            "--data",
            str(DATA),
            "--datasets",
            "vehicle,segment,satimage,optdigits",
            "--methods",
            "none,weight",
            "--max-splits",
            "2",
            "--n-estimators",
            "20",
            "--out",
            str(RESULTS),
            "--jobs",
            "2",
            "--quiet",
            "--no-analyze",
        ]
    )
RESULTS = Path(RESULTS)
print(analyze(RESULTS, force=True))  # replaces an earlier analysis/ medeval wrote
OUT = RESULTS / "analysis"
# %% [md]
# ## One record
# One data set × method × split: the nine scores on the full test fold, the subconcept model's
# quality, and per subconcept the recall and the true and predicted weight sums.
# %%
record_file = sorted((RESULTS / "records").glob("*/none-0.json"))[0]
record = json.loads(record_file.read_text())
print(record_file.relative_to(RESULTS))
print({k: round(v, 3) for k, v in record["scores"].items() if v is not None})
print("subconcept model:", {k: round(v, 3) for k, v in record["subconcept_model"].items()})
pd.DataFrame(record["per_subconcept"]).round(3)
# %% [md]
# ## RQ1 — does the full-test score track the largest subconcept?
# The correlation gap r_largest − r_smallest: positive = the full-test score follows the
# largest minority subconcept; a good weighting shrinks it.
# %%
rq1 = pd.read_csv(OUT / "rq1.csv")
display(rq1.round(3).head(9))
for png in sorted(OUT.glob("rq1_gap_*.png")):
    display(Image(filename=str(png)))
# %% [md]
# ## RQ2 — does a better subconcept model give closer predicted weights?
# %%
display(pd.read_csv(OUT / "rq2_datasets.csv").round(3))
display(Markdown((OUT / "rq2.md").read_text()))
for png in sorted(OUT.glob("rq2_scatter_*.png")):
    display(Image(filename=str(png)))
# %% [md]
# ## RQ3 — why a score moves
# Per data set: subconcept prevalence, per-subconcept recall, and the unweighted,
# predicted-weight and true-weight BA. Weighted scores fall when the small subconcepts are hard
# and rise when they are easy.
# %%
for png in sorted(OUT.glob("rq3_sheet_*.png"))[:1]:
    display(Image(filename=str(png)))
# %% [md]
# ## Time
# The share of compute spent on the metrics (the study's goal: under 2 %).
# %%
pd.read_csv(OUT / "timing.csv").round(3)
