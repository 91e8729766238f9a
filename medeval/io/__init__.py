"""Reading and writing the files a user gives and gets.

- :mod:`.tables`: one reader for CSV / TSV / Parquet tables (:func:`read_frame`);
- :mod:`.predictions`: predictions and train-sizes files, input checks, the bundled example;
- :mod:`.embeddings`: embedding tables (``f0000…`` features) read and written;
- :mod:`.features`: feature tables (features + per-row columns), checked, for any model;
- reference data: :func:`medeval.io.reference.read_reference`;
- JSON: :func:`medeval.io.atomic.json_text` / :func:`medeval.io.atomic.write_json`, one NaN policy
  for every file (non-finite numbers become ``null``), re-exported here.

Every bad input file raises :class:`medeval.errors.InputError`.
"""

from medeval.errors import InputError
from medeval.io.atomic import json_text, write_json

__all__ = ["InputError", "json_text", "write_json"]
