"""medeval's import graph has no cycle, counting imports inside functions as well, and the
loaders the source registry imports by name."""

import ast
from pathlib import Path

import pytest

import medeval
from medeval.datasets.sources import SOURCES

PACKAGE = Path(medeval.__file__).parent


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules() -> dict[str, Path]:
    return {_module_name(p): p for p in PACKAGE.rglob("*.py")}


def _targets(node: ast.AST, here: str, is_package: bool, known: set[str]) -> list[str]:
    """medeval modules named by one import statement (``from a import b`` may name a.b)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "medeval"]
    if not isinstance(node, ast.ImportFrom):
        return []
    if node.level:
        base = here.split(".") if is_package else here.split(".")[:-1]
        base = base[: len(base) - (node.level - 1)]
        module = ".".join([*base, node.module] if node.module else base)
    else:
        module = node.module or ""
    if module.split(".")[0] != "medeval":
        return []
    subs = [f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in known]
    names_only_submodules = len(subs) == len(node.names)
    return subs if names_only_submodules else [module, *subs]


def import_graph() -> dict[str, set[str]]:
    """Module → the medeval modules it imports anywhere (top level or inside functions)."""
    modules = _modules()
    known = set(modules)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), filename=str(path))
        edges = set()
        for node in ast.walk(tree):
            for target in _targets(node, name, path.name == "__init__.py", known):
                if target in known and target != name:
                    edges.add(target)
        graph[name] = edges
    graph["medeval.datasets.sources"] |= _registry_edges(known)
    return graph


def _registry_edges(known: set[str]) -> set[str]:
    """Modules the registry imports by name (``"module:function"`` loaders and listers)."""
    refs = [ref for s in SOURCES.values() for ref in (s.loader, s.names) if isinstance(ref, str)]
    return {ref.partition(":")[0] for ref in refs} & known


def find_cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def test_the_cycle_finder_finds_a_cycle_through_a_function_level_import():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}
    assert find_cycles(graph) == [["a", "b", "c"]]
    assert find_cycles({"a": {"b"}, "b": set()}) == []


def test_function_level_imports_are_edges():
    graph = import_graph()
    # the tasks tool imports the loaders inside its run function
    assert "medeval.datasets" in graph["medeval.cli.tasks"]


def test_the_loaders_the_registry_names_are_edges():
    graph = import_graph()
    loaders = {"medeval.datasets.keel", "medeval.datasets.synthetic"}
    assert loaders <= graph["medeval.datasets.sources"]


def test_medeval_has_no_import_cycle():
    cycles = find_cycles(import_graph())
    if cycles:
        pytest.fail("import cycles: " + "; ".join(" <-> ".join(c) for c in cycles))


def test_the_data_layer_imports_nothing_above_it():
    graph = import_graph()
    lower = [m for m in graph if m.startswith("medeval.datasets")]
    above = ("medeval.training", "medeval.cli", "medeval.tasks", "medeval.flows")
    for module in lower:
        assert not [t for t in graph[module] if t.startswith(above)], module
