"""Tests of ``medeval.embeddings``; a package because its module names repeat those of
tests/datasets."""
