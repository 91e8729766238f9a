"""Tests of ``medeval.analyses``; a package because its module names repeat those of other test
folders."""
