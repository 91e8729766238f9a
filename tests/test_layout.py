"""The tree reads as the flow (docs/layout.md): modules small enough to read, every tool's
pipeline under medeval/flows/, the command-line modules a thin layer, tests mirroring the
package."""

from pathlib import Path

import medeval

PACKAGE = Path(medeval.__file__).parent
TESTS = Path(__file__).parent
MAX_LINES = 700
#: tools whose pipeline module has another name than the tool
PIPELINE_OF = {"discover": "discovery", "subconcepts": "own_model"}
#: test folders that test across packages rather than mirror one
CROSS_CUTTING = {"robustness", "benchmarks"}


def test_no_module_is_longer_than_700_lines():
    long = {
        str(p.relative_to(PACKAGE)): n
        for p in PACKAGE.rglob("*.py")
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, long


def test_every_tool_has_its_pipeline_under_flows():
    helpers = ("__init__", "common", "options")
    tools = [p.stem for p in (PACKAGE / "cli").glob("*.py") if p.stem not in helpers]
    assert len(tools) >= 8, tools
    flows = PACKAGE / "flows"
    missing = [t for t in tools if not (flows / f"{PIPELINE_OF.get(t, t)}.py").is_file()]
    assert not missing, missing


def test_test_folders_mirror_the_package():
    folders = [p.name for p in TESTS.iterdir() if p.is_dir() and not p.name.startswith((".", "_"))]
    stray = [f for f in folders if f not in CROSS_CUTTING and not (PACKAGE / f).is_dir()]
    assert not stray, stray


def test_every_module_with_logic_has_its_mirrored_test_file():
    """tests/<package>/test_<module>.py for medeval/<package>/<module>.py (a leading underscore
    dropped) for every module of more than 12 lines other than __init__ and __main__."""
    without = set()
    for p in PACKAGE.rglob("*.py"):
        if p.stem in ("__init__", "__main__") or len(p.read_text("utf-8").splitlines()) <= 12:
            continue
        rel = p.relative_to(PACKAGE)
        if not (TESTS / rel.parent / f"test_{p.stem.lstrip('_')}.py").is_file():
            without.add(rel.as_posix())
    assert without == set()
