"""Images per second for embedding extraction and for training steps, and the share of time
spent waiting for data (decoding PNGs + resizing), at 224 px by default.

The images are synthetic phantoms written as 256-px PNG files into a temporary folder, read back
through the real data path (``ImageDataset`` → ``default_transform``), so decoding counts.
Random initialisation (no weights needed; speed does not depend on the weights)::

    python benchmarks/bench_imaging.py                          # CPU, vgg16, 224 px
    python benchmarks/bench_imaging.py --device cuda --images 512 --batch-size 64 --workers 8
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import torch
from PIL import Image

from medeval.datasets.images import ImageDataset, default_transform
from medeval.datasets.synthetic import make_phantoms
from medeval.device import autocast
from medeval.models import build_backbone, build_model


def write_images(folder: Path, n: int, size: int) -> list[str]:
    data = make_phantoms(max(144, n), size=size, seed=0)
    files = []
    for i in range(n):
        path = folder / f"img{i:05d}.png"
        Image.fromarray(data.images[i]).save(path)
        files.append(str(path))
    return files


def loader(files, size: int, batch_size: int, workers: int, cuda: bool):
    ds = ImageDataset(
        y=np.zeros(len(files), dtype=int),
        subconcept=np.arange(len(files)) % 5,
        files=np.asarray(files, dtype=object),
        transform=default_transform(size),
    )
    return torch.utils.data.DataLoader(
        ds, batch_size=batch_size, num_workers=workers, pin_memory=cuda, shuffle=False
    )


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def timed_pass(batches, step, device: torch.device, warmup: int = 1) -> dict:
    """Run ``step(x, y, sc)`` over ``batches``; the first ``warmup`` batches are not timed."""
    n, data_s, total_s = 0, 0.0, 0.0
    it = iter(batches)
    k = 0
    while True:
        t0 = time.perf_counter()
        try:
            x, y, sc = next(it)
        except StopIteration:
            break
        x = x.to(device, non_blocking=True)
        if device.type == "cuda":
            x = x.contiguous(memory_format=torch.channels_last)
        _sync(device)
        t1 = time.perf_counter()
        step(x, y.to(device), sc.to(device))
        _sync(device)
        t2 = time.perf_counter()
        if k >= warmup:
            n += len(x)
            data_s += t1 - t0
            total_s += t2 - t0
        k += 1
    return {
        "images": n,
        "seconds": round(total_s, 3),
        "images_per_s": round(n / total_s, 2) if total_s else float("nan"),
        "data_share": round(data_s / total_s, 4) if total_s else float("nan"),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--model", default="vgg16")
    p.add_argument("--features", default="head", choices=("head", "conv"))
    p.add_argument("--size", type=int, default=224)
    p.add_argument("--images", type=int, default=24, help="images per pass (incl. 1 warm-up batch)")
    p.add_argument("--batch-size", type=int, default=8)
    p.add_argument("--workers", type=int, default=0)
    p.add_argument("--device", default="cpu")
    p.add_argument("--threads", type=int, default=0, help="torch threads (0 = torch default)")
    p.add_argument("--json", type=Path, help="also write the figures here")
    args = p.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    cuda = device.type == "cuda"
    torch.manual_seed(0)
    results = {
        "model": args.model,
        "features": args.features,
        "size": args.size,
        "device": str(device),
        "threads": torch.get_num_threads(),
        "batch_size": args.batch_size,
        "workers": args.workers,
    }
    with tempfile.TemporaryDirectory() as tmp:
        files = write_images(Path(tmp), args.images, 256)

        backbone = build_backbone(args.model, pretrained=False, features=args.features)
        backbone = backbone.to(device).eval()
        if cuda:
            backbone = backbone.to(memory_format=torch.channels_last)

        @torch.no_grad()
        def embed_step(x, y, sc):
            with autocast(device):
                backbone(x)

        results["embedding"] = timed_pass(
            loader(files, args.size, args.batch_size, args.workers, cuda), embed_step, device
        )
        backbone = None  # free its memory before the training model

        model = build_model(args.model, 5, pretrained=False, features=args.features).to(device)
        if cuda:
            model = model.to(memory_format=torch.channels_last)
        model.train()
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4)

        def train_step(x, y, sc):
            with autocast(device):
                logit, sub = model(x)
            loss = torch.nn.functional.binary_cross_entropy_with_logits(
                logit.float(), y.float()
            ) + torch.nn.functional.cross_entropy(sub.float(), sc)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            opt.step()

        results["training"] = timed_pass(
            loader(files, args.size, args.batch_size, args.workers, cuda), train_step, device
        )
        # Data path alone: decoding + resizing throughput without any model.
        results["loading_only"] = timed_pass(
            loader(files, args.size, args.batch_size, args.workers, cuda),
            lambda x, y, sc: None,
            device,
        )
    for k in ("embedding", "training", "loading_only"):
        r = results[k]
        print(
            f"{k:<13} {r['images_per_s']:>8.2f} images/s   data-loading share "
            f"{r['data_share']:.1%}   ({r['images']} images, {r['seconds']} s)"
        )
    print(json.dumps(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")


if __name__ == "__main__":
    main()
