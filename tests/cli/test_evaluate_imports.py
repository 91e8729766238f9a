"""`python -m medeval.evaluate` imports only what it uses, when it uses it: no training, image,
dataset or scikit-learn modules at all, matplotlib only once the bootstrap is done, pyarrow's
Parquet reader only for a Parquet file. Each check runs in a fresh interpreter, so an eager
import added anywhere on the path makes it fail."""

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]

#: Never needed to evaluate a predictions file (the ``medeval`` ones belong to other tools).
NEVER = (
    "sklearn",
    "torchvision",
    "timm",
    "torchmetrics",
    "torch._dynamo",
    "torch._inductor",
    "medeval.training",
    "medeval.datasets",
    "medeval.models",
    "medeval.embeddings",
    "medeval.protocol",
    "medeval.analyses",
    "medeval.tasks",
)
#: Needed only for the figure, after the bootstrap (where a large run's memory peaks).
FIGURE = ("matplotlib", "medeval.report.figures")


def _loaded(names: set[str], prefixes: tuple[str, ...]) -> list[str]:
    """The ``prefixes`` that are loaded as modules or packages in ``names``."""
    return sorted(p for p in prefixes if any(m == p or m.startswith(p + ".") for m in names))


def _python(code: str) -> dict:
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    return json.loads(proc.stdout.splitlines()[-1])


def test_the_evaluation_library_imports_no_figure_training_or_image_modules():
    found = _python(
        "import json, sys\n"
        "import medeval.cli.evaluate, medeval.flows.evaluate\n"
        "print(json.dumps(sorted(sys.modules)))\n"
    )
    assert "torch" in found  # the bootstrap's library: the check looks at a real import
    assert _loaded(set(found), (*NEVER, *FIGURE, "pyarrow.parquet")) == []


def test_a_run_imports_matplotlib_only_after_the_bootstrap_and_nothing_it_does_not_use(tmp_path):
    out = tmp_path / "out"
    found = _python(
        "import json, sys\n"
        "from medeval.metrics.bootstrap import BatchedBootstrap\n"
        "seen = []\n"
        "run = BatchedBootstrap.run\n"
        "def recording(self, *args, **kwargs):\n"
        "    seen.append(sorted(sys.modules))\n"
        "    return run(self, *args, **kwargs)\n"
        "BatchedBootstrap.run = recording\n"
        "from medeval.cli.evaluate import main\n"
        f"code = main(['--example', '--bootstrap', '20', '--quiet', '--out', {str(out)!r}])\n"
        "print(json.dumps({'code': code, 'at_bootstrap': seen, 'end': sorted(sys.modules)}))\n"
    )
    assert found["code"] == 0 and (out / "report.html").is_file()
    assert found["at_bootstrap"], "the bootstrap ran"
    for names in found["at_bootstrap"]:
        assert _loaded(set(names), FIGURE) == []
    end = set(found["end"])
    assert _loaded(end, FIGURE) == list(FIGURE)  # the figure was drawn, after the bootstrap
    # the example is a CSV file: no Parquet reader
    assert _loaded(end, (*NEVER, "pyarrow.parquet")) == []
