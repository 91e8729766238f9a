"""``python -m medeval.embed``: embeddings of a data set as a table, then the forest protocol.

Images go through a frozen backbone (default VGG16 with ImageNet weights; ``--weights PATH``
offline; ``--random-init`` to say plainly that no weights are wanted) and the pooled features
are cached on disk. Text (MMHS150K, text CSV) goes through a sentence-transformers model
(``--text-model``) or TF-IDF + truncated SVD (``--text-model tfidf``, also the fallback when no
model can be loaded). The table ``<out>/<name>.parquet`` has columns ``f0000…`` (features),
``label`` (original class) and ``group`` when known — what ``python -m medeval.benchmark
--collection <out>`` reads — and that benchmark then runs on it::

    python -m medeval.embed --source nih --path /data/nih --out collections/images
    python -m medeval.embed --source mmhs150k --path /data/MMHS150K --out collections/text
    python -m medeval.embed --source synthetic --random-init --size 32 --out /tmp/emb --no-benchmark
"""

from __future__ import annotations

import argparse
import io
import json
import shlex
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import yaml

from medeval import atomic
from medeval.datasets import SOURCES, DataError, load
from medeval.datasets.base import LabelledData
from medeval.models import WeightsUnavailableError

EXIT_BAD_INPUT = 2


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m medeval.embed",
        description="Frozen-backbone image features or text embeddings → a table per data set "
        "→ the random-forest protocol (python -m medeval.benchmark).",
    )
    p.add_argument("--source", required=True, choices=(*SOURCES, "synthetic"))
    p.add_argument("--path", type=Path, help="data file or folder (default $MEDEVAL_DATA/<source>)")
    p.add_argument("--name", help="data-set name inside a folder of several")
    p.add_argument(
        "--option",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="loader option (YAML value), e.g. --option images=/data/nih/images",
    )
    p.add_argument("--out", type=Path, required=True, help="collection folder for the tables")
    g = p.add_argument_group("images")
    g.add_argument("--model", default="vgg16", help="timm backbone (default vgg16)")
    g.add_argument("--weights", help="local weights file (.pth/.safetensors)")
    g.add_argument(
        "--random-init",
        action="store_true",
        help="randomly initialised backbone (explicit; features carry no ImageNet prior)",
    )
    g.add_argument(
        "--features",
        choices=("head", "conv"),
        default="head",
        help="head: timm num_classes=0 output (VGG16 fc7, 4096-d); conv: pooled conv map",
    )
    g.add_argument("--size", type=int, default=224, help="image side in pixels (default 224)")
    g.add_argument("--batch-size", type=int, default=32)
    g.add_argument("--workers", type=int, default=0, help="DataLoader workers")
    g.add_argument(
        "--cache",
        type=Path,
        default=Path(".medeval-cache/features"),
        help="feature cache folder (default .medeval-cache/features)",
    )
    g.add_argument("--no-cache", action="store_true")
    t = p.add_argument_group("text")
    t.add_argument(
        "--text-model",
        default="all-MiniLM-L6-v2",
        help="sentence-transformers model name or folder, or 'tfidf'",
    )
    t.add_argument("--svd-components", type=int, default=256, help="TF-IDF SVD dimensions")
    p.add_argument("--device", default="auto", help="cpu, cuda, ... (default auto)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--no-benchmark", action="store_true", help="only write the table")
    p.add_argument(
        "--benchmark-args",
        default="",
        metavar="ARGS",
        help='extra arguments for python -m medeval.benchmark, e.g. "--max-splits 1"',
    )
    p.add_argument("--quiet", action="store_true")
    return p


def _options(items: list[str]) -> dict:
    out = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep:
            raise DataError(f"--option {item!r} is not KEY=VALUE")
        out[key] = yaml.safe_load(value)
    return out


def load_data(args: argparse.Namespace) -> LabelledData:
    if args.source == "synthetic":
        from medeval.synthetic import make_phantoms

        opts = _options(args.option)
        return make_phantoms(
            int(opts.get("n_normal", 240)),
            size=int(opts.get("size", 48)),
            seed=int(opts.get("seed", args.seed)),
        )
    return load(args.source, args.path, name=args.name, **_options(args.option))


def embed_table(args: argparse.Namespace, data: LabelledData) -> tuple[pd.DataFrame, dict]:
    """(N, F + 2) table: features f0000…, ``label``, ``group`` (when known)."""
    import torch

    device = (
        args.device if args.device != "auto" else ("cuda" if torch.cuda.is_available() else "cpu")
    )
    if data.kind in ("image", "array_image"):
        from medeval.embeddings.images import embed_images

        X, info = embed_images(
            data,
            model=args.model,
            pretrained=not args.random_init,
            weights=args.weights,
            features=args.features,
            size=args.size,
            batch_size=args.batch_size,
            workers=args.workers,
            device=device,
            cache=None if args.no_cache else args.cache,
            seed=args.seed,
            progress=not args.quiet,
        )
    elif data.kind == "text":
        from medeval.embeddings.text import embed_text

        X, used = embed_text(
            data.text,
            model=args.text_model,
            n_components=args.svd_components,
            seed=args.seed,
            device=device,
            progress=not args.quiet,
        )
        info = {"text_model": used}
    elif data.kind == "tabular":
        raise DataError(
            f"{data.source}/{data.name} is already tabular: run python -m "
            "medeval.benchmark on it directly"
        )
    else:
        raise DataError(f"{data.source}/{data.name}: nothing to embed (no images or text)")
    width = max(4, len(str(X.shape[1] - 1)))
    frame = pd.DataFrame(X, columns=[f"f{j:0{width}d}" for j in range(X.shape[1])])
    frame["label"] = data.labels
    if data.groups is not None:
        frame["group"] = data.groups
    return frame, info


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.random_init and args.weights:
        print("error: --random-init and --weights exclude each other", file=sys.stderr)
        return EXIT_BAD_INPUT
    try:
        data = load_data(args)
        frame, info = embed_table(args, data)
    except (DataError, WeightsUnavailableError, FileNotFoundError) as err:
        print(f"error: {err}", file=sys.stderr)
        return EXIT_BAD_INPUT
    name = args.name or data.name
    table = args.out / f"{name}.parquet"
    buf = io.BytesIO()
    frame.to_parquet(buf, index=False)
    atomic.write_bytes(table, buf.getvalue())
    atomic.write_json(
        args.out / f"{name}.embedding.json",
        {"source": args.source, "name": name, "rows": len(frame), **info},
    )
    if not args.quiet:
        if data.meta.get("synthetic"):
            print("NOTE: the data are SYNTHETIC phantoms (medeval.synthetic), not real images.")
        if args.random_init:
            print(f"NOTE: the {args.model} backbone is RANDOMLY INITIALISED (--random-init).")
        print(
            f"{name}: {len(frame)} rows x {frame.shape[1] - 1 - ('group' in frame)} features "
            f"({json.dumps(info)})"
        )
        print(f"wrote {table}")
    if args.no_benchmark:
        print(f"next: python -m medeval.benchmark --collection {args.out}")
        return 0
    from medeval.cli.benchmark import main as benchmark_main

    bench = ["--collection", str(args.out), "--datasets", name, *shlex.split(args.benchmark_args)]
    if not args.quiet:
        print("running: python -m medeval.benchmark " + " ".join(shlex.quote(b) for b in bench))
    return benchmark_main(bench)


if __name__ == "__main__":
    sys.exit(main())
