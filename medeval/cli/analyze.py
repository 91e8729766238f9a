"""``python -m medeval.analyze --results DIR`` (``medeval-analyze``): RQ1–RQ4 tables and figures
of a benchmark results folder. The library side is :mod:`medeval.flows.analyze`.
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from medeval._validation import StrOptions
from medeval.cli.common import FORCE_HELP, execute, tool_parser
from medeval.cli.options import option_type
from medeval.errors import UserError
from medeval.options import CORRECTIONS
from medeval.scores import FAMILIES

PROG = "python -m medeval.analyze"


def build_parser() -> argparse.ArgumentParser:
    p = tool_parser(
        PROG,
        "RQ1–RQ4 tables, figures and a report of a benchmark results folder (python -m "
        "medeval.benchmark). RQ4 (agreement.csv) says how close each label-free estimate (cBA, "
        "cF1, cAUC: class-conditional predicted weights; rBA, rF1, rAUC: rectified with "
        "reference rows; pBA…: the paper's predicted weights) comes to the true-weight score "
        "(wBA…), with interval coverage.",
        out_help="output folder, new or empty (default: a new one, RESULTS/analysis-<time>)",
        force_help=FORCE_HELP,
    )
    p.add_argument("--results", required=True, help="results folder of python -m medeval.benchmark")
    p.add_argument(
        "--rq3-method",
        type=option_type([StrOptions(CORRECTIONS)]),
        metavar="{" + ",".join(CORRECTIONS) + "}",
        help="correction method drawn in RQ3, one the results hold (default: none, or the "
        "first method of a data set without it)",
    )
    p.add_argument(
        "--metric",
        type=option_type([StrOptions(FAMILIES)]),
        default="BA",
        metavar="{" + ",".join(FAMILIES) + "}",
        help="RQ3 score family (default BA)",
    )
    p.add_argument(
        "--partial",
        action="store_true",
        help="analyse the records written so far of a benchmark that has not finished "
        "(still running, or stopped before its end; refused otherwise); the benchmark's own "
        "analysis goes to RESULTS/analysis when it ends",
    )
    return p


def run(args: argparse.Namespace) -> int:
    from medeval.io.outdir import OutputFolder, default_out
    from medeval.protocol.store import ResultsStore

    store = ResultsStore(args.results)
    partial = not store.finished()
    if partial and not args.partial:
        raise UserError(
            f"--results {args.results}: its benchmark has not finished (it is still running, or "
            "it stopped: continue it with --resume); add --partial to analyse the records "
            "written so far"
        )
    out = args.out or default_out("analysis", root=args.results)
    OutputFolder(out, "analyze", force=args.force, inputs=(args.results,)).check()
    from medeval.flows.analyze import analyze

    if not store.root.is_dir():
        raise UserError(f"--results {args.results}: no such results folder")
    if args.rq3_method is not None:  # asked for: drawn as asked, never another one instead
        present = sorted({method for _path, (_ds, method, _split) in store._record_files()})
        if present and args.rq3_method not in present:
            raise UserError(
                f"--rq3-method {args.rq3_method}: {args.results} holds no record of it "
                f"(methods present: {', '.join(present)})"
            )

    method = args.rq3_method or "none"
    line = analyze(args.results, out, rq3_method=method, metric=args.metric, force=args.force)
    if not args.quiet:
        print((out / "scores.md").read_text())
    if partial:  # said last, where the eye lands
        line = f"PARTIAL (the benchmark writing {args.results} has not finished): {line}"
    print(line)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    return execute(build_parser(), run, argv)
