"""Build the notebooks from their cell sources (kept here so diffs stay readable).

python notebooks/_build.py            # write the .ipynb files, without outputs
python notebooks/_build.py --execute  # and execute them in place (outputs kept)
"""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

HERE = Path(__file__).parent


def _cells(source: str) -> list:
    """Cells separated by lines '# %%' (code) or '# %% [md]' (markdown)."""
    cells, kind, buf = [], None, []
    for line in source.splitlines():
        if line.startswith("# %%"):
            if kind is not None:
                cells.append((kind, "\n".join(buf).strip("\n")))
            kind, buf = ("md" if "[md]" in line else "code"), []
        else:
            buf.append(
                line[2:]
                if kind == "md" and line.startswith("# ")
                else ("" if kind == "md" and line == "#" else line)
            )
    if kind is not None:
        cells.append((kind, "\n".join(buf).strip("\n")))
    return [new_markdown_cell(s) if k == "md" else new_code_cell(s) for k, s in cells]


def build(execute: bool) -> None:
    for src in sorted(HERE.glob("[0-9]*.py")):
        nb = new_notebook(cells=_cells(src.read_text()))
        nb.metadata["kernelspec"] = {
            "name": "python3",
            "display_name": "Python 3",
            "language": "python",
        }
        path = src.with_suffix(".ipynb")
        if execute:
            from nbclient import NotebookClient

            NotebookClient(
                nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(HERE)}}
            ).execute()
        nbformat.write(nb, path)
        print(f"wrote {path}")


if __name__ == "__main__":
    build("--execute" in sys.argv)
