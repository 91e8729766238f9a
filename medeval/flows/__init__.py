"""The pipelines behind the command-line tools, one module per tool, each a function taking a
small frozen settings object (``docs/layout.md``). Submodules are imported on use.
"""
