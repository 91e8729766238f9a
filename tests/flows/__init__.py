"""Tests of ``medeval.flows``; a package because its module names repeat those of tests/cli."""
