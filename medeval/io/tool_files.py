"""Which files are whose: the marker of every folder medeval writes, the files each tool
writes (:data:`WRITES`), those by which an earlier version's output is recognised
(:data:`LEGACY`, :data:`SIGNATURE_KEYS`) and file-browser litter (:data:`BROWSER_LITTER`).
:mod:`medeval.io.outdir` decides with them what a folder may be replaced by.
"""

from __future__ import annotations

__all__ = ["BROWSER_LITTER", "LEGACY", "MARKER", "SIGNATURE_KEYS", "WRITES"]

#: The marker file of every folder medeval writes.
MARKER = ".medeval-output.json"
#: Files by which a folder written before the marker existed is recognised as a tool's output
#: (each pattern must match a file); its other files must be ones the tool writes (:data:`WRITES`).
LEGACY: dict[str, tuple[str, ...]] = {
    "evaluate": ("metrics.json", "metrics.csv", "report.html"),
    "discover": ("discovery.json", "clusters.csv", "report.html"),
    "analyze": ("scores.csv", "scores.md"),
    "benchmark": ("run.json",),
    "train": ("config.yaml",),
    "embed": ("*.embedding.json",),
}
#: JSON files that carry a tool's signature only when they are objects holding these keys: an
#: experiment tracker's ``run.json`` is not a benchmark's (whose settings always name these).
SIGNATURE_KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    "benchmark": {"run.json": ("collection", "seed", "n_estimators")},
}
_EVALUATE = ("metrics.json", "metrics.csv", "per_subconcept.csv", "subconcepts.png", "report.html")
_DISCOVER = ("predictions.csv", "train_sizes.json", "discovery.json", "clusters.*", "examples.png")
_ANALYZE = ("rq*", "agreement*", "coverage_by_dataset.csv", "subconcept_model.csv", "scores.*")
_ANALYZE += ("timing.csv", "summary.md", "report.html", "discovery.*")
#: Every file each tool writes into its folder: ``fnmatch`` patterns of paths relative to the
#: folder (``*`` crosses ``/``). A folder without the tool's marker, or with a marker of an
#: earlier version that lists no files, is the tool's only if every file in it matches (and
#: file-browser litter, see :func:`is_litter`); otherwise it is the user's.
WRITES: dict[str, tuple[str, ...]] = {
    "evaluate": _EVALUATE,
    "discover": _EVALUATE + _DISCOVER,
    "subconcepts": _EVALUATE + _DISCOVER + ("subconcept_model.json", "reference.csv"),
    "analyze": _ANALYZE,
    "benchmark": (
        "run.json",
        "runs.json",
        "records/*",
        "tasks/*",
        "predictions/*",
        "analysis/*",
        ".analysis.*",  # the lock and temporary folders of a replacement of analysis/
    ),
    "train": ("config.yaml", "splits.csv", "task.json", "summary.*", "report.*", "split_*"),
    "embed": ("*.embedding.json", "*.parquet"),
}
#: Files a file browser leaves in any folder it shows; they hold nothing of the user's.
BROWSER_LITTER = (".DS_Store", "Thumbs.db", "desktop.ini")
