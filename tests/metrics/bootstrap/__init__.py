"""Tests of ``medeval.metrics.bootstrap``."""
