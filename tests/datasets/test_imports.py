"""No import cycle among the data-set modules, function-level imports included."""

import ast
from pathlib import Path

import medeval.datasets

PACKAGE = Path(medeval.datasets.__file__).parent


def _imports(path: Path) -> set[str]:
    """Modules of ``medeval.datasets`` that ``path`` imports anywhere (top or function level)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            if node.level:  # from .x import y
                base = "medeval.datasets" + ("." + node.module if node.module else "")
            else:
                base = node.module or ""
            found.add(base)
            found.update(f"{base}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {m for m in found if m.startswith("medeval.datasets.")}


def test_no_cycle_between_dataset_modules():
    graph = {f"medeval.datasets.{p.stem}": _imports(p) for p in PACKAGE.glob("*.py")}
    graph = {m: {d for d in deps if d in graph and d != m} for m, deps in graph.items()}
    assert "medeval.datasets.dicom" not in graph["medeval.datasets.images"]
    assert "medeval.datasets.images" not in graph["medeval.datasets.dicom"]

    def cycle_from(node, path):
        if node in path:
            return [*path[path.index(node) :], node]
        for dep in sorted(graph[node]):
            found = cycle_from(dep, [*path, node])
            if found:
                return found
        return None

    for module in sorted(graph):
        assert cycle_from(module, []) is None, " -> ".join(cycle_from(module, []))
