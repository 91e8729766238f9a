"""Command-line tools: thin layers over the library, one module per tool.

Each tool runs as ``python -m medeval.<tool>`` and as the console script ``medeval-<tool>``.
"""
