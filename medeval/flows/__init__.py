"""The pipelines behind the command-line tools, each a function taking a small frozen settings
object (see ``docs/layout.md``):

- :mod:`.evaluate`: a predictions file → :class:`~medeval.evaluation.Evaluation`;
- :mod:`.rerun`: a run folder → its splits re-evaluated → the run summary;
- :mod:`.train`: a training config → splits trained, calibrated and evaluated → summary;
- :mod:`.subconcepts`: your own model's features → subconcept posteriors → evaluation;
- :mod:`.discovery`: embeddings → discovered subconcepts → evaluation;
- :mod:`.benchmark`: collections → binary tasks → forests under 5×2 CV → records;
- :mod:`.analyze`: a benchmark's records → the analysis tables, figures and reports;
- :mod:`.embed`: a data source → embeddings → a feature table for the benchmark;
- :mod:`.tasks`: data sets → binary tasks, and a task → a split manifest.

Submodules are imported on use, so importing this package stays cheap.
"""
