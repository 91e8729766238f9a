"""What every command-line tool shares: --out checked before any work (exit 2, one line, the
traceback only with -v), fast --help without the heavy libraries, loader options listed."""

import logging
import subprocess
import sys
import tomllib
from importlib import import_module
from pathlib import Path

import pytest

from medeval.cli.common import show_progress

REPO = Path(__file__).resolve().parents[2]
TOOLS = (
    "evaluate",
    "train",
    "tasks",
    "benchmark",
    "analyze",
    "embed",
    "discover",
    "subconcepts",
    "label",
)


def _bad_out_args(tool: str, tmp: Path, out: Path) -> list[str]:
    table = tmp / "t.csv"
    table.write_text("label,x\na,1\nb,2\n")
    return {
        "evaluate": ["--example", "--out", str(out)],
        "train": ["--out", str(out)],
        "tasks": ["split", "--source", "csv", "--path", str(table), "--out", str(out)],
        "benchmark": ["--collection", "keel", "--out", str(out)],
        "analyze": ["--results", str(tmp), "--out", str(out)],
        "embed": ["--source", "synthetic", "--random-init", "--out", str(out)],
        "discover": [
            *("--train", str(table), "--test", str(table)),
            *("--predictions", str(table), "--out", str(out)),
        ],
        "subconcepts": ["--train", str(table), "--test", str(table), "--out", str(out)],
        "label": ["--predictions", str(table), "--train-sizes", str(table), "--out", str(out)],
    }[tool]


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("case", ["file", "under_file"])
def test_a_bad_out_exits_2_with_one_line_before_any_work(tool, case, tmp_path, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("not a folder")
    out = blocker if case == "file" else blocker / "sub" / "out"
    if tool == "tasks" and case == "file":
        out = tmp_path  # a folder where the manifest file should go
    main = import_module(f"medeval.cli.{tool}").main
    assert main(_bad_out_args(tool, tmp_path, out)) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert "error:" in err and ("is a file" in err or "is a folder" in err)
    assert blocker.read_text() == "not a folder"


def test_verbose_shows_the_traceback(tmp_path, capsys):
    main = import_module("medeval.cli.evaluate").main
    (tmp_path / "f").write_text("x")
    assert main(["--example", "--out", str(tmp_path / "f"), "-v"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" in err and "OutputPathError" in err


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc is Linux")
def test_an_unwritable_out_exits_2(capsys):
    main = import_module("medeval.cli.evaluate").main
    assert main(["--example", "--out", "/proc/medeval-out"]) == 2
    assert "cannot write into /proc" in capsys.readouterr().err


def test_help_imports_no_heavy_library():
    code = (
        "import sys, importlib\n"
        f"for t in {TOOLS!r}:\n"
        "    importlib.import_module('medeval.cli.' + t).build_parser().format_help()\n"
        "    importlib.import_module('medeval.' + ('tasks.__main__' if t == 'tasks' else t))\n"
        "heavy = {'torch', 'pandas', 'matplotlib', 'numpy', 'sklearn', 'scipy', 'timm'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=REPO
    )
    assert proc.stdout.strip() == "[]"


def test_module_help_runs_as_python_dash_m():
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "medeval.evaluate", "--help"],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    assert "--predictions" in proc.stdout and "--seed" in proc.stdout
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines()}
    assert not any(name.split(".")[0] in {"torch", "pandas", "matplotlib"} for name in imported)


@pytest.mark.parametrize(
    ("tool", "argv", "flags"),
    [
        ("tasks", ["describe", "--help"], ["--label-column", "--images", "--tie", "--parts"]),
        ("embed", ["--help"], ["--label-column", "--text-column", "--n-normal", "--verify"]),
        ("train", ["--help"], ["--source", "--require-images", "--group-column", "--seed"]),
        ("benchmark", ["--help"], ["--label-column", "--group-column", "--seed", "--out"]),
        ("evaluate", ["--help"], ["--out", "--seed", "--device", "--quiet", "--verbose"]),
        ("analyze", ["--help"], ["--out", "--quiet", "--verbose"]),
    ],
)
def test_help_lists_the_common_and_loader_options(tool, argv, flags, capsys):
    with pytest.raises(SystemExit) as exc:
        import_module(f"medeval.cli.{tool}").main(argv)
    assert exc.value.code == 0
    text = capsys.readouterr().out
    for flag in flags:
        assert flag in text, flag


def test_every_tool_has_a_console_script():
    scripts = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["scripts"]
    assert set(scripts) == {f"medeval-{t}" for t in TOOLS}
    for name, target in scripts.items():
        module, func = target.split(":")
        assert module == f"medeval.cli.{name.removeprefix('medeval-')}"
        assert callable(getattr(import_module(module), func))


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ([], "no such results folder"),
        (["--rq3-method", "bogus"], "argument --rq3-method: must be one of"),
    ],
)
def test_analyze_bad_input_exits_2(tmp_path, capsys, extra, message):
    main = import_module("medeval.cli.analyze").main
    results = tmp_path / ("absent" if not extra else "")
    try:  # a bad option value is refused while parsing
        code = main(["--results", str(results), "--out", str(tmp_path / "a"), *extra])
    except SystemExit as exc:
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_analyze_of_a_folder_without_records_exits_2(tmp_path, capsys):
    main = import_module("medeval.cli.analyze").main
    assert main(["--results", str(tmp_path), "--out", str(tmp_path / "a")]) == 2
    assert "no records" in capsys.readouterr().err
    assert not (tmp_path / "a").exists()


@pytest.mark.parametrize(
    ("device", "gpus", "message"),
    [
        ("cuda", 0, "no CUDA device is available here"),
        ("cuda:7", 0, "no CUDA device is available here"),
        ("cuda:7", 1, "this machine has 1 CUDA device(s)"),
        ("gpu0", 0, "not a device name"),
    ],
)
def test_a_device_this_machine_lacks_exits_2_before_any_work(
    device, gpus, message, tmp_path, capsys, monkeypatch
):
    import torch

    # the machine as the test describes it, whatever GPUs the machine running it has
    monkeypatch.setattr(torch.cuda, "is_available", lambda: gpus > 0)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: gpus)
    main = import_module("medeval.cli.evaluate").main
    out = tmp_path / "out"
    assert main(["--example", "--device", device, "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and message in err and f"--device {device}" in err
    assert not out.exists()


RUN_COMMAND = """
import atexit, sys
from pathlib import Path
from medeval.cli.common import run_command

def main():
    atexit.register(lambda: Path(sys.argv[1]).write_text("handler ran"))
    sys.stdout.write("buffered, no newline")  # still in the buffer when the process ends
    if sys.argv[2] == "raise":
        raise RuntimeError("a bug")
    return int(sys.argv[2])

run_command(main)
"""


@pytest.mark.parametrize("code", [0, 2, 3])
def test_run_command_ends_the_process_with_main_s_code_after_its_exit_handlers(code, tmp_path):
    marker = tmp_path / "atexit.txt"
    proc = subprocess.run(
        [sys.executable, "-c", RUN_COMMAND, str(marker), str(code)],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == code
    assert proc.stdout == "buffered, no newline"
    assert marker.read_text() == "handler ran"


def test_run_command_lets_a_bug_show_its_traceback(tmp_path):
    marker = tmp_path / "atexit.txt"
    proc = subprocess.run(
        [sys.executable, "-c", RUN_COMMAND, str(marker), "raise"],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    assert proc.returncode == 1
    assert "RuntimeError: a bug" in proc.stderr
    assert marker.read_text() == "handler ran"


@pytest.mark.parametrize("tool", TOOLS)
def test_every_python_dash_m_entry_ends_through_run_command(tool):
    text = (
        (REPO / "medeval" / f"{tool}.py").read_text()
        if tool != "tasks"
        else (REPO / "medeval" / "tasks" / "__main__.py").read_text()
    )
    assert 'if __name__ == "__main__":\n    run_command(main)' in text


def test_a_full_disk_is_one_line_and_exit_2_other_os_errors_still_raise(capsys):
    import argparse
    import errno

    import pytest

    from medeval.cli.common import execute

    def full(args):
        raise OSError(errno.ENOSPC, "No space left on device", "/runs/r/split_0/last.pt")

    parser = argparse.ArgumentParser(prog="python -m medeval.train")
    assert execute(parser, full, []) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "no space left on the device writing /runs/r/split_0/last.pt" in err

    def broken(args):
        raise OSError(errno.EIO, "Input/output error")

    with pytest.raises(OSError, match="Input/output error"):
        execute(parser, broken, [])


def test_warnings_are_one_line_and_ctrl_c_is_one_line_with_exit_130(tmp_path, capsys):
    import argparse
    import subprocess
    import sys

    from medeval.cli.common import execute

    script = tmp_path / "tool.py"  # outside the test runner, which records warnings itself
    script.write_text(
        "import argparse, sys, warnings\n"
        "from medeval.cli.common import execute\n"
        "p = argparse.ArgumentParser(prog='tool')\n"
        "p.add_argument('-v', '--verbose', action='store_true')\n"
        "def body(args):\n"
        "    warnings.warn('records/x/none-0.json: not a record;\\n it is recomputed', "
        "stacklevel=1)\n"
        "    return 0\n"
        "sys.exit(execute(p, body, sys.argv[1:]))\n"
    )
    plain = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert plain.returncode == 0
    assert plain.stderr == "warning: records/x/none-0.json: not a record; it is recomputed\n"
    verbose = subprocess.run([sys.executable, str(script), "-v"], capture_output=True, text=True)
    assert "UserWarning" in verbose.stderr and "tool.py" in verbose.stderr  # -v: Python's form

    parser = argparse.ArgumentParser(prog="python -m medeval.benchmark")

    def interrupted(args):
        raise KeyboardInterrupt

    assert execute(parser, interrupted, []) == 130
    assert capsys.readouterr().err == "python -m medeval.benchmark: interrupted\n"


PROBE = "medeval.tests.logs_probe"  # show_progress: a tool prints its loggers' INFO records


def test_info_records_print_as_bare_messages_and_debug_ones_do_not(capsys):
    log = logging.getLogger(PROBE)
    with show_progress([PROBE]):
        log.info("step %d of %d", 1, 3)
        log.debug("hidden")
    assert capsys.readouterr().out == "step 1 of 3\n"


def test_nothing_prints_when_not_enabled(capsys):
    with show_progress([PROBE], enabled=False):
        logging.getLogger(PROBE).info("quiet")
    assert capsys.readouterr().out == ""


def test_levels_and_handlers_are_restored_even_after_an_error(capsys):
    log = logging.getLogger(PROBE)
    log.setLevel(logging.WARNING)
    handlers = list(log.handlers)
    try:
        with pytest.raises(RuntimeError), show_progress([PROBE]):
            raise RuntimeError("stop")
        assert log.level == logging.WARNING and log.handlers == handlers
        log.info("after")
        assert capsys.readouterr().out == ""
    finally:
        log.setLevel(logging.NOTSET)
