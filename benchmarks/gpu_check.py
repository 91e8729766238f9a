"""GPU readiness check: one script, one GPU, under 5 minutes; prints a JSON of figures.

* ``bootstrap``: :class:`~medeval.metrics.bootstrap.BatchedBootstrap` on CUDA, N = 1,000,000,
  B = 10,000, float64 sums (BA, F1, AUC × three weightings), replicates per second.
* ``train``: VGG16 (timm, random weights) with the two heads of :mod:`medeval.models`, 224 px,
  bf16 autocast, channels_last, images per second, fed by :func:`medeval.training.data.make_loader`
  (pinned memory, persistent workers) from in-memory images resized on the fly; the share of the
  step time spent waiting for the DataLoader.
* ``embed``: the frozen VGG16 backbone, 224 px, bf16 autocast, channels_last, images per
  second; and :func:`medeval.embeddings.images.embed_images` end to end.
* ``files``: an NIH-like folder of PNGs (1024 × 1024 grey, written by
  ``bench_image_cache.write_folder``) decoded once into the decoded-image store
  (:mod:`medeval.datasets.cache`; the first pass's images per second), then the ``train``
  section's steps fed from the store by the training data path (``ResizedImageDataset`` with
  uint8 items, ``make_loader``, ``model_input`` normalising on the device: images per second
  and their ratio to the in-memory rate of ``train``; and again with the float32 items the
  training path read before, four times the bytes per item, for comparison), and
  :func:`~medeval.embeddings.images.embed_images` end to end over the store (model building
  included) on ``--embed-rows`` rows (the files, repeated).
* ``ddp``: a 1-GPU nccl DistributedDataParallel smoke run (a few steps, one all-reduce).

Without CUDA it stops at once with exit code 3 and a message on stderr (nothing on stdout).

    python benchmarks/gpu_check.py                 # on a machine with a GPU
    python benchmarks/gpu_check.py --json out.json # also write the figures after each section
    python benchmarks/gpu_check.py --cpu-dry-run   # tiny sizes on the CPU, gloo: code paths only

Figures from an NVIDIA H200 are in ``docs/performance.md``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
import time

EXIT_NO_GPU = 3


def fail_without_cuda() -> None:
    import torch

    if torch.cuda.is_available():
        return
    built = torch.version.cuda or "none (CPU-only build)"
    print(
        "gpu_check: no CUDA device: torch.cuda.is_available() is False "
        f"(torch {torch.__version__}, CUDA build {built}, "
        f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', '(unset)')}). "
        "This check needs one GPU; use --cpu-dry-run to exercise its code paths on the CPU.",
        file=sys.stderr,
    )
    sys.exit(EXIT_NO_GPU)


def _sync(device) -> None:
    import torch

    if device.type == "cuda":
        torch.cuda.synchronize(device)


def bootstrap_figures(device, n: int, B: int) -> dict:
    import numpy as np
    import torch

    from medeval.metrics.bootstrap import BatchedBootstrap, default_memory_budget

    rng = np.random.default_rng(0)
    sc = rng.choice(6, n, p=[0.48, 0.32, 0.1, 0.055, 0.03, 0.015])
    y = (sc >= 2).astype(np.int64)
    score = 1 / (1 + np.exp(-(1.6 * y + rng.normal(-0.8, 1.0, n))))
    u = np.array([1.0, 1.0, 4.8, 8.7, 16.0, 32.0])
    weights = {"": np.ones(n), "w": u[sc], "p": u[sc] * rng.uniform(0.5, 1.5, n)}
    t0 = time.perf_counter()
    boot = BatchedBootstrap(
        y,
        y_pred=(score >= 0.5).astype(np.int64),
        y_score=score,
        weights=weights,
        subsets={"full": np.ones(n, bool)},
        device=device,
        dtype=torch.float64,
    )
    _sync(device)
    t_plan = time.perf_counter() - t0
    boot.run(min(B, 50), seed=1)  # warm-up: kernels, allocator
    _sync(device)
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    t0 = time.perf_counter()
    reps = boot.run(B, seed=0)
    _sync(device)
    t_run = time.perf_counter() - t0
    nan = sum(int(torch.isnan(v).sum()) for v in reps.scores.values())
    return {
        "n": n,
        "replicates": B,
        "dtype": "float64",
        "generator": boot.generator,
        "memory_budget_mib": round(default_memory_budget(device) / 2**20),
        "chunk_replicates": max(boot._chunks(B, None)),
        "plan_s": round(t_plan, 3),
        "run_s": round(t_run, 3),
        "replicates_per_s": round(B / t_run, 1),
        "instance_replicates_per_s": float(f"{B * n / t_run:.3e}"),
        "undefined_replicate_scores": nan,
        "peak_memory_mib": round(torch.cuda.max_memory_allocated(device) / 2**20)
        if device.type == "cuda"
        else None,
    }


def _images(n: int, px: int):
    import numpy as np

    from medeval.datasets.base import LabelledData

    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, (n, px, px, 3), dtype=np.uint8)
    labels = np.array(["normal", "benign", "A", "B"])[rng.integers(0, 4, n)]
    return LabelledData(labels=labels, source="synthetic", name="gpu_check", images=images)


class _TrainItems:
    """(image (3, S, S), y, subconcept) from the embedding rows dataset (same transform)."""

    def __init__(self, data, size: int) -> None:
        import numpy as np

        from medeval.embeddings.images import _rows

        self.rows = _rows(
            data, np.arange(len(data.labels)), size, image_cache=None, workers=0, progress=False
        )
        self.sc = np.unique(data.labels, return_inverse=True)[1]

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i: int):
        return self.rows[i][0], float(self.sc[i] >= 2), int(self.sc[i])


def _model(device):
    import torch

    from medeval.training.config import Config, ModelConfig
    from medeval.training.loop import build_model_for

    torch.manual_seed(0)
    cfg = Config(model=ModelConfig(backbone="vgg16", pretrained=False, features="head"))
    return build_model_for(cfg, 4, device)  # channels_last on CUDA


def _step(model, opt, batch, device):
    import torch.nn.functional as F

    from medeval.device import autocast
    from medeval.models.inputs import model_input

    x = model_input(batch[0], device)  # uint8 items normalised there, as training does
    y, sc = (t.to(device, non_blocking=True) for t in batch[1:])
    with autocast(device):
        logit, sub = model(x)
        loss = F.binary_cross_entropy_with_logits(logit.float(), y.float())
        loss = loss + F.cross_entropy(sub.float(), sc)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    opt.step()
    return loss


def _timed_steps(batches, device, steps: int):
    """``steps`` training steps of a fresh model on ``batches`` after 3 warm-up steps (cuDNN
    autotuning, workers starting): their seconds, the seconds spent waiting for batches, and
    the last loss."""
    import torch

    model = _model(device).train()
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    for _ in range(3):
        _step(model, opt, next(batches), device)
    _sync(device)
    wait = 0.0
    t0 = time.perf_counter()
    for _ in range(steps):
        tw = time.perf_counter()
        b = next(batches)
        wait += time.perf_counter() - tw
        loss = _step(model, opt, b, device)
    _sync(device)
    return time.perf_counter() - t0, wait, loss


def train_figures(device, *, size: int, batch: int, steps: int, workers: int) -> dict:
    import torch

    from medeval.training.data import make_loader

    data = _images(batch * (steps + 3), 64)
    loader = make_loader(
        _TrainItems(data, size),
        batch_size=batch,
        workers=workers,
        shuffle=True,
        seed=0,
        cuda=device.type == "cuda",
    )
    total, wait, loss = _timed_steps(iter(loader), device, steps)
    return {
        "image_px": size,
        "batch": batch,
        "steps": steps,
        "workers": workers,
        "autocast": "bf16" if device.type == "cuda" else "none",
        "channels_last": device.type == "cuda",
        "images_per_s": round(batch * steps / total, 1),
        "dataloader_wait_share": round(wait / total, 3),
        "final_loss_finite": bool(torch.isfinite(loss).item()),
    }


def embed_figures(device, *, size: int, batch: int, steps: int, workers: int) -> dict:
    import torch

    from medeval.device import autocast
    from medeval.embeddings.images import embed_images
    from medeval.models.backbone import build_backbone

    torch.manual_seed(0)
    net = build_backbone("vgg16", pretrained=False).to(device).eval()
    x = torch.randn(batch, 3, size, size, device=device)
    if device.type == "cuda":
        net = net.to(memory_format=torch.channels_last)
        x = x.contiguous(memory_format=torch.channels_last)
    with torch.no_grad(), autocast(device):
        for _ in range(2):
            net(x)
        _sync(device)
        t0 = time.perf_counter()
        for _ in range(steps):
            f = net(x)
        _sync(device)
    t_model = time.perf_counter() - t0
    data = _images(batch * steps, 64)
    t0 = time.perf_counter()
    feats, _info = embed_images(
        data,
        pretrained=False,
        size=size,
        batch_size=batch,
        workers=workers,
        device=device,
        progress=False,
    )
    t_e2e = time.perf_counter() - t0
    return {
        "image_px": size,
        "batch": batch,
        "features": int(f.shape[1]),
        "model_images_per_s": round(batch * steps / t_model, 1),
        "embed_images_end_to_end_images_per_s": round(len(feats) / t_e2e, 1),
        "embed_images_note": "includes building the model and decoding/resizing on the CPU",
    }


def _batches(loader):
    """Batches of ``loader`` epoch after epoch (the sampler's epoch set as training does)."""
    epoch = 0
    while True:
        if hasattr(loader.sampler, "set_epoch"):
            loader.sampler.set_epoch(epoch)
        yield from loader
        epoch += 1


def files_figures(
    device, *, files: int, side: int, size: int, batch: int, steps: int, workers: int,
    embed_rows: int, in_memory_rate: float | None, work: str | None,
) -> dict:  # fmt: skip
    """Training and embedding fed from the decoded-image store of PNG files (see the module's
    docstring); ``in_memory_rate``: the ``train`` section's images per second."""
    import contextlib
    import tempfile
    from pathlib import Path

    import numpy as np
    import torch

    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from bench_image_cache import write_folder

    from medeval.datasets.base import LabelledData
    from medeval.datasets.cache import ImageCache, ResizedImageDataset
    from medeval.embeddings.images import embed_images
    from medeval.training.data import make_loader

    with tempfile.TemporaryDirectory(dir=work) as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        with contextlib.redirect_stdout(sys.stderr):  # stdout carries the JSON alone
            paths = write_folder(root / "png", files, side)
        t_write = time.perf_counter() - t0
        t0 = time.perf_counter()
        reader = ImageCache(root / "store", size=size).ensure(
            paths, workers=workers, progress=False
        )
        t_build = time.perf_counter() - t0
        sc = np.random.default_rng(0).integers(0, 4, len(paths))
        timed = {}  # uint8 items? → (seconds, waiting seconds, last loss) of the steps
        for as_uint8 in (True, False):
            dataset = ResizedImageDataset(
                paths, (sc >= 2).astype(np.int64), sc, size=size, cache=reader, as_uint8=as_uint8
            )
            loader = make_loader(
                dataset, batch_size=batch, workers=workers, shuffle=True, seed=0,
                cuda=device.type == "cuda",
            )  # fmt: skip
            timed[as_uint8] = _timed_steps(_batches(loader), device, steps)
            del loader
        (total, wait, loss), (total_f, wait_f, loss_f) = timed[True], timed[False]
        rate, rate_f = batch * steps / total, batch * steps / total_f
        rows = np.resize(np.asarray(paths, dtype=object), embed_rows)
        data = LabelledData(
            labels=np.array(["a", "b", "c", "d"])[np.resize(sc, embed_rows)],
            source="folder", name="gpu_check_files", files=rows,
        )  # fmt: skip
        t0 = time.perf_counter()
        feats, _info = embed_images(
            data, pretrained=False, size=size, batch_size=batch, workers=workers,
            device=device, progress=False, image_cache=root / "store",
        )  # fmt: skip
        t_embed = time.perf_counter() - t0
        store_mb = sum(p.stat().st_size for p in reader.folder.glob("shard-*")) / 2**20
    return {
        "files": len(paths),
        "file_px": side,
        "image_px": size,
        "write_s": round(t_write, 2),
        "store_first_pass_images_per_s": round(len(paths) / t_build, 1),
        "store_mb": round(store_mb, 1),
        "train_batch": batch,
        "train_steps": steps,
        "workers": workers,
        "train_from_store_images_per_s": round(rate, 1),
        "train_from_store_over_in_memory": None
        if not in_memory_rate
        else round(rate / in_memory_rate, 3),
        "train_dataloader_wait_share": round(wait / total, 3),
        "train_final_loss_finite": bool(torch.isfinite(loss).item()),
        "train_note": "the package's training path: uint8 items, normalised on the device",
        "train_from_store_float32_images_per_s": round(rate_f, 1),
        "train_from_store_float32_over_in_memory": None
        if not in_memory_rate
        else round(rate_f / in_memory_rate, 3),
        "train_float32_dataloader_wait_share": round(wait_f / total_f, 3),
        "train_float32_note": "float32 items normalised in the workers (the path before)",
        "train_float32_final_loss_finite": bool(torch.isfinite(loss_f).item()),
        "embed_rows": len(feats),
        "embed_end_to_end_from_store_images_per_s": round(len(feats) / t_embed, 1),
        "embed_note": "embed_images over the built store: model building and reading included",
    }


def ddp_smoke(device, *, size: int, batch: int) -> dict:
    import socket

    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    with socket.socket() as s:  # a free local port for the rendezvous
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    backend = "nccl" if device.type == "cuda" else "gloo"
    t0 = time.perf_counter()
    dist.init_process_group(
        backend,
        init_method=f"tcp://127.0.0.1:{port}",
        rank=0,
        world_size=1,
        timeout=datetime.timedelta(seconds=60),
    )
    try:
        model = _model(device)
        ddp = DistributedDataParallel(
            model, device_ids=[device.index or 0] if device.type == "cuda" else None
        )
        opt = torch.optim.SGD(ddp.parameters(), lr=1e-3)
        x = torch.randn(batch, 3, size, size)
        y = torch.randint(0, 2, (batch,)).float()
        sc = torch.randint(0, 4, (batch,))
        for _ in range(3):
            loss = _step(ddp, opt, (x, y, sc), device)
        t = torch.ones(1, device=device)
        dist.all_reduce(t)
        _sync(device)
        return {
            "backend": backend,
            "world_size": dist.get_world_size(),
            "steps": 3,
            "all_reduce_ok": t.item() == 1.0,
            "loss_finite": bool(torch.isfinite(loss).item()),
            "wall_s": round(time.perf_counter() - t0, 2),
        }
    finally:
        dist.destroy_process_group()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument(
        "--cpu-dry-run",
        action="store_true",
        help="tiny sizes on the CPU with gloo: checks the code paths, measures nothing useful",
    )
    ap.add_argument("--workers", type=int, default=min(8, os.cpu_count() or 1))
    ap.add_argument("--files", type=int, default=2000, help="PNGs of the files section")
    ap.add_argument(
        "--embed-rows",
        type=int,
        default=20000,
        help="rows embedded from the store (files repeated)",
    )
    ap.add_argument("--work", metavar="DIR", help="folder for the files section's temporary PNGs")
    ap.add_argument(
        "--json",
        metavar="FILE",
        help="also write the figures to FILE, rewritten after each section (a section that "
        "hangs or fails leaves the earlier ones there)",
    )
    args = ap.parse_args(argv)
    if not args.cpu_dry_run:
        fail_without_cuda()
    import torch

    t_start = time.perf_counter()
    if args.cpu_dry_run:
        device = torch.device("cpu")
        sizes = dict(n=2000, B=20, size=32, batch=4, steps=2, workers=0)
        files = dict(files=12, side=64, embed_rows=20)
    else:
        device = torch.device("cuda", 0)
        torch.backends.cudnn.benchmark = True
        sizes = dict(n=1_000_000, B=10_000, size=224, batch=128, steps=30, workers=args.workers)
        files = dict(files=args.files, side=1024, embed_rows=args.embed_rows)
    out = {
        "dry_run": args.cpu_dry_run,
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu",
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cpu_cores": os.cpu_count(),
    }
    kw = {k: sizes[k] for k in ("size", "batch", "steps", "workers")}
    sections = {
        "bootstrap": lambda: bootstrap_figures(device, sizes["n"], sizes["B"]),
        "train": lambda: train_figures(device, **kw),
        "embed": lambda: embed_figures(device, **kw),
        "files": lambda: files_figures(
            device,
            **files,
            **kw,
            work=args.work,
            in_memory_rate=out.get("train", {}).get("images_per_s"),
        ),
        "ddp": lambda: ddp_smoke(device, size=sizes["size"], batch=min(sizes["batch"], 32)),
    }
    for name, section in sections.items():
        t0 = time.perf_counter()
        out[name] = section()
        print(f"gpu_check: {name} done in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
        out["total_s"] = round(time.perf_counter() - t_start, 1)
        if args.json:
            from medeval.io.atomic import write_text

            write_text(args.json, json.dumps(out, indent=2) + "\n")
    print(json.dumps(out, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
