"""Tests of ``medeval.cli``; a package because its module names repeat those of tests/flows."""
