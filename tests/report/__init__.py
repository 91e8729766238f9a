"""Tests of ``medeval.report``; a package because its module names repeat those of other test
folders."""
