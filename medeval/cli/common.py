"""What every command-line tool shares: the common options, output-path checks, and exit code
2 with one line on stderr for a user error (``-v``: the traceback). Only the standard library is
imported here, so ``--help`` is instant: each tool imports the library inside its run function."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import errno
import functools
import logging
import os
import sys
import traceback
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from numbers import Integral
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from medeval._validation import Interval
from medeval.cli.options import option_type
from medeval.device import check_device
from medeval.errors import EXIT_BAD_INPUT, UserError, one_line

if TYPE_CHECKING:
    from medeval.io.outdir import OutputFolder

__all__ = [
    "EXIT_BAD_INPUT",
    "add_paths",
    "add_task_arguments",
    "check_outside_data",
    "common_options",
    "execute",
    "output_folder",
    "parse_nested",
    "refuse_repeats",
    "say",
    "show_progress",
    "task_spec",
    "tool_parser",
]

#: ``errno`` values of a full disk or quota.
_NO_SPACE = (errno.ENOSPC, errno.EDQUOT)
#: Exceptions that mean "the user gave something unusable", not a bug.
USER_ERRORS: tuple[type[BaseException], ...] = (
    UserError,
    FileNotFoundError,
    FileExistsError,
    NotADirectoryError,
    IsADirectoryError,
    PermissionError,
)


def common_options(
    *,
    out_help: str,
    seed_help: str | None = None,
    device_help: str | None = None,
    out_required: bool = False,
    out_metavar: str = "DIR",
    force_help: str | None = None,
) -> argparse.ArgumentParser:
    """The shared parent parser; a tool without randomness, a device or ``--force`` (what it
    does with an existing ``--out``) leaves those out."""
    p = argparse.ArgumentParser(add_help=False)
    g = p.add_argument_group("common options")
    g.add_argument("--out", type=Path, required=out_required, metavar=out_metavar, help=out_help)
    if force_help is not None:
        g.add_argument("--force", action="store_true", help=force_help)
    if seed_help is not None:
        from medeval.options import SEED

        g.add_argument("--seed", type=option_type([SEED]), metavar="S", help=seed_help)
    if device_help is not None:
        g.add_argument("--device", default=None, metavar="DEV", help=device_help)
    g.add_argument("--quiet", action="store_true", help="print only where the results are")
    g.add_argument(
        "-v", "--verbose", action="store_true", help="show the traceback of an error as well"
    )
    return p


#: ``--device`` of a tool whose bootstrap may run on an accelerator.
DEVICE_HELP = "device for the bootstrap: cpu, cuda, ... (default cpu)"
#: ``--force`` of a tool that writes its folder whole.
FORCE_HELP = (
    "replace --out if it holds an earlier output of medeval (whole, once the run is complete); "
    "never a folder holding other files"
)


def tool_parser(
    prog: str,
    description: str,
    *,
    named_by: str | None = None,
    epilog: str | None = None,
    **common: Any,
) -> argparse.ArgumentParser:
    """A tool's parser with the common options (:func:`common_options`). ``named_by``: the
    input whose file name names the default output folder, written whole (:func:`output_folder`;
    the help of ``--out`` and ``--force`` follows); ``epilog``: text shown as written."""
    if named_by is not None:
        tool = prog.rsplit(".", 1)[-1]
        common.setdefault(
            "out_help",
            f"output folder, new or empty (default: a new one, $MEDEVAL_RUNS/{tool}-<{named_by} "
            "file name>-<time>, $MEDEVAL_RUNS = runs)",
        )
        common.setdefault("force_help", FORCE_HELP)
    return argparse.ArgumentParser(
        prog=prog,
        parents=[common_options(**common)],
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter if epilog else argparse.HelpFormatter,
    )


def output_folder(
    args: argparse.Namespace, tool: str, named_by: Path, inputs: Sequence[object]
) -> OutputFolder:
    """``--out``, or a new folder ``$MEDEVAL_RUNS/<tool>-<named_by's name>-<time>``, checked
    before any work (:class:`~medeval.io.outdir.OutputFolder`)."""
    from medeval.io.outdir import OutputFolder, default_out

    name = f"{tool}-{named_by.name.split('.')[0]}"
    return OutputFolder(
        args.out or default_out(name),
        tool,
        force=args.force,
        inputs=tuple(inputs),
        fresh=args.out is None,
    ).check()


def add_paths(
    parser: argparse._ActionsContainer,
    paths: Mapping[str, str | tuple[str, str]],
    *,
    required: Sequence[str] = (),
) -> None:
    """One option per ``{flag: help}`` (or ``{flag: (metavar, help)}``; default ``FILE``)
    that names a file or folder; the flags in ``required`` must be given."""
    for flag, spec in paths.items():
        metavar, text = ("FILE", spec) if isinstance(spec, str) else spec
        parser.add_argument(flag, type=Path, required=flag in required, metavar=metavar, help=text)


def say(args: argparse.Namespace, *lines: str) -> None:
    """Print unless ``--quiet``."""
    if not getattr(args, "quiet", False):
        for line in lines:
            print(line)


@contextlib.contextmanager
def show_progress(loggers: Sequence[str], *, enabled: bool = True) -> Iterator[None]:
    """Print the INFO records of ``loggers`` as bare messages while the block runs (nothing when
    not ``enabled``; the library's loggers print nothing themselves); the loggers' levels and
    handlers are restored afterwards."""
    if not enabled:
        yield
        return
    handler = logging.StreamHandler(sys.stdout)  # the bare message: logging's default format
    handler.setLevel(logging.INFO)
    saved = []
    for name in loggers:
        log = logging.getLogger(name)
        saved.append((log, log.level))
        log.setLevel(logging.INFO)
        log.addHandler(handler)
    try:
        yield
    finally:
        for log, level in saved:
            log.removeHandler(handler)
            log.setLevel(level)


def run_command(main: Callable[[], int]) -> NoReturn:
    """Run a tool's ``main()`` as the whole process and end it with its exit code, skipping the
    interpreter's teardown (torch's object graph) when no other thread or child process runs
    (joblib's loky executor keeps some alive after a grid): the outputs are written by then,
    and the exit handlers still run."""
    import multiprocessing
    import threading

    code = main()
    if threading.active_count() > 1 or multiprocessing.active_children():
        sys.exit(code)
    try:
        atexit._run_exitfuncs()  # the handlers os._exit would skip: logging, finalizers, pools
    finally:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (OSError, ValueError):  # a closed pipe or stream: nothing left to say
                pass
        os._exit(code if isinstance(code, int) else 1)


def _plain(message, category, filename, lineno, line=None) -> str:
    """A warning as one line, ``warning: <message>`` (recorded warnings stay recorded)."""
    return f"warning: {' '.join(str(message).split())}\n"


def execute(
    parser: argparse.ArgumentParser,
    body: Callable[[argparse.Namespace], int],
    argv: Sequence[str] | None = None,
    *,
    intermixed: bool = False,
) -> int:
    """Parse ``argv``, run ``body(args)`` and turn user errors (and a full disk) into exit
    code 2; ``intermixed``: positional arguments may stand between options (``train``'s
    ``key=value`` overrides), as :meth:`argparse.ArgumentParser.parse_intermixed_args`."""
    argv = sys.argv[1:] if argv is None else list(argv)
    checked_options(parser)
    args = parser.parse_intermixed_args(argv) if intermixed else parser.parse_args(argv)
    args.argv = argv
    verbose = getattr(args, "verbose", False)
    shown = warnings.formatwarning
    warnings.formatwarning = shown if verbose else _plain
    try:
        check_device(getattr(args, "device", None))
        return body(args)
    except KeyboardInterrupt:  # Ctrl-C: what is written is whole, a rerun resumes or redoes
        print(f"{parser.prog}: interrupted", file=sys.stderr)
        return 130
    except (*USER_ERRORS, OSError) as err:
        full = not isinstance(err, USER_ERRORS)  # a full disk: a line the user can act on
        if full and err.errno not in _NO_SPACE:
            raise
        if verbose:
            traceback.print_exc()
        where = f" writing {err.filename}" if full and err.filename else ""
        message = (
            f"no space left on the device{where}; free space (or choose another --out) and run "
            "again: files are written whole, a run resumes"
            if full
            else one_line(err)
        )
        print(f"{parser.prog}: error: {message}", file=sys.stderr)
        return EXIT_BAD_INPUT
    finally:
        warnings.formatwarning = shown


def checked_options(
    parser: argparse.ArgumentParser, error: Callable[[str], NoReturn] | None = None
) -> argparse.ArgumentParser:
    """Make a parse error of ``parser`` and its subcommands one line, naming the option:
    ``PROG: error: argument --jobs: must be >= 1, got 0`` (``--help`` shows the usage), or
    ``error(message)``. Each option's range is its own type's (:mod:`medeval.cli.options`)."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                checked_options(sub, error)
    parser.error = error or functools.partial(_parse_error, parser)  # type: ignore[method-assign]
    return parser


class _StoreOnce(argparse._StoreAction):
    """A single-value option given a second time is refused (argparse keeps the last one
    silently: ``--predictions a.csv --predictions b.csv`` would evaluate ``b.csv`` alone)."""

    def __call__(self, parser, namespace, values, option_string=None) -> None:
        given = namespace.__dict__.setdefault("_given_once", {})
        if self.dest in given:
            raise argparse.ArgumentError(
                self, f"given twice ({given[self.dest]}, then {values}); give it once"
            )
        given[self.dest] = values
        super().__call__(parser, namespace, values, option_string)


def refuse_repeats(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``parser`` with each of its single-value options refused when given twice (one line
    naming the option, exit code 2, at parse time)."""
    for action in parser._actions:
        if type(action) is argparse._StoreAction:
            action.__class__ = _StoreOnce
    return parser


def _parse_error(parser: argparse.ArgumentParser, message: str) -> NoReturn:
    parser.exit(EXIT_BAD_INPUT, f"{parser.prog}: error: {one_line(ValueError(message))}\n")


def parse_nested(parser: argparse.ArgumentParser, text: str, *, what: str) -> argparse.Namespace:
    """Parse the arguments in ``text`` (shell-quoted, as in ``--benchmark-args``) with another
    tool's ``parser``, before any work: a bad one is a :class:`UserError` naming ``what``."""
    import shlex

    try:
        argv = shlex.split(text)
    except ValueError as err:
        raise UserError(f"{what} {text!r}: {err}") from None

    def refuse(message: str) -> NoReturn:
        raise UserError(f"{what} {text!r}: {message}")

    return checked_options(parser, refuse).parse_args(argv)


def add_source_arguments(
    parser: argparse.ArgumentParser,
    *,
    sources: Sequence[str] | None = None,
    with_source: bool = True,
    required: bool = True,
) -> None:
    """``--source``, ``--path``, ``--name`` and every loader option of the registry
    (:mod:`medeval.datasets.sources`), each flag once, its help naming the sources that take it."""
    from medeval.datasets.sources import SOURCES, all_options

    names = list(sources) if sources is not None else list(SOURCES)
    g = parser.add_argument_group("data source")
    if with_source:
        g.add_argument(
            "--source",
            required=required,
            choices=names,
            help="; ".join(f"{n}: {SOURCES[n].help}" for n in names),
        )
        g.add_argument("--path", type=Path, help="file or folder (default $MEDEVAL_DATA/<source>)")
        g.add_argument("--name", help="data set inside a folder of several")
    o = parser.add_argument_group("loader options (declared by each source's loader)")
    for flag, (opt, takers) in all_options(names).items():
        how: dict[str, Any] = {"action": argparse.BooleanOptionalAction}
        if opt.type is not bool:  # its declared range, else its type (an int: one line if not)
            allowed = opt.allowed or ([Interval(Integral, None, None)] if opt.type is int else ())
            metavar = "N" if opt.type is int else flag.split("-")[-1].upper()
            how = {"type": option_type(allowed) if allowed else opt.type, "choices": opt.choices}
            how["metavar"] = None if opt.choices else metavar
        help_text = f"{opt.help} [{', '.join(takers)}]"
        o.add_argument(f"--{flag}", dest=opt.dest, default=None, help=help_text, **how)


#: The task's lists of labels: what each holds.
TASK_LABELS = {
    "--positive": "of class 1 (e.g. MEL,BCC,SCC,AK); the rest are class 0; each label is a "
    "subconcept and every row is kept",
    "--negative": "of class 0; then any other label is an error unless given to --drop",
    "--drop": "whose rows are left out",
}


def add_task_arguments(parser: argparse.ArgumentParser) -> None:
    """The options of the user's own binary task (a config's ``task.*``; docs/method.md)."""
    g = parser.add_argument_group(
        "the task (default: the paper's ladder; with --positive: your own; docs/method.md)"
    )
    for flag, text in TASK_LABELS.items():
        g.add_argument(flag, metavar="LABELS", help=f"comma-separated labels {text}")
    g.add_argument(
        "--downsample",
        action="store_true",
        default=None,
        help="down-sample class 1's subconcepts along the paper's ladder (docs/method.md); "
        "default: every row kept",
    )


def task_spec(args: argparse.Namespace):
    """The ``TaskSpec`` of the task flags, or ``None`` (the paper's ladder); checked by
    :meth:`~medeval.tasks.user.TaskSpec.build`."""
    from medeval.tasks.user import TaskSpec

    return TaskSpec.build(args.positive, args.negative, args.drop, downsample=bool(args.downsample))


def check_outside_data(out: Path, source: str, path: object, images: object = None) -> None:
    """Refuse an ``out`` inside the folders an image source reads by walking them: ``path``,
    ``images``, and for a metadata or image table given as a file its folder (where its images
    are looked for by default)."""
    from medeval.datasets.sources import SOURCES
    from medeval.io.outdir import check_outside

    folders = [path, images]
    image = source in SOURCES and SOURCES[source].kind == "image"
    if image and path is not None and Path(str(path)).is_file():
        folders.append(Path(str(path)).parent)
    check_outside(out, folders)


def source_options(args: argparse.Namespace, source: str) -> dict:
    """Loader keywords of ``source`` from the flags in ``args``; a flag given for a source that
    does not take it is a :class:`~medeval.errors.UserError`."""
    from medeval.datasets.sources import all_options, options_for_flags

    given = {flag: getattr(args, opt.dest, None) for flag, (opt, _takers) in all_options().items()}
    return options_for_flags(source, given)
