"""Rendering only: printed tables, figures, HTML and Markdown reports of results passed in."""
