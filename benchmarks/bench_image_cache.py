"""Images per second of the training data loader with and without the decoded-image cache.

Writes an NIH-like folder (default 2,000 grayscale PNGs of 1024 × 1024: a smooth field, bright
ellipses and a little noise, ``compress_level=1``) into ``--work`` (kept and reused when it
already holds them), then measures in one process:

* the float loader that training used before the store (``ImageDataset`` + ``default_transform``:
  decode, resize, normalise every epoch) on ``--uncached`` files;
* the first pass of the cache (:meth:`ImageCache.ensure`: decode + resize + store) on all files;
* the same decode without a store (``ResizedImageDataset``: grey images resized as one plane);
* cached passes (``ResizedImageDataset`` over the store, shuffled as a training epoch): uint8
  items with each batch normalised by :func:`~medeval.models.inputs.model_input` on the CPU
  (what training reads; on a GPU the normalisation runs there), float32 normalised items (what
  training read before) and uint8 items from the loader alone;

for 224 and 32 px, batch 32, DataLoader workers 0 and 2. Each figure is taken ``--repeats``
times; the ratio is cached / uncached images/s. The load average is printed with every row.
The same files, hard-linked into ``<work>/by_class/<class>/``, make a ``folder`` data set for
timing whole ``python -m medeval.train`` epochs with ``data.cache`` on and off::

    python benchmarks/bench_image_cache.py --work /tmp/nih-like
    python benchmarks/bench_image_cache.py --images 200 --uncached 64 --repeats 1   # quick look
"""

from __future__ import annotations

import argparse
import os
import shutil
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
import torch
from PIL import Image, ImageDraw
from torch.utils.data import DataLoader, RandomSampler

from medeval.datasets.cache import ImageCache, ResizedImageDataset
from medeval.datasets.images import ImageDataset, default_transform
from medeval.models.inputs import model_input

SIDE = 1024
CPU = torch.device("cpu")


def _write_one(args: tuple[str, int, int]) -> None:
    path, seed, side = args
    rng = np.random.default_rng(seed)
    field = Image.fromarray(rng.integers(40, 140, size=(8, 8), dtype=np.uint8))
    canvas = field.resize((side, side), Image.Resampling.BICUBIC)
    draw = ImageDraw.Draw(canvas)
    for _ in range(int(rng.integers(3, 8))):  # "lungs", "ribs": bright smooth-edged shapes
        x, y = rng.integers(0, side, size=2)
        w, h = rng.integers(side // 16, side // 3, size=2)
        draw.ellipse([x - w, y - h, x + w, y + h], fill=int(rng.integers(150, 250)))
    pixels = np.asarray(canvas, dtype=np.int16) + rng.integers(-3, 4, size=(side, side))
    Image.fromarray(pixels.clip(0, 255).astype(np.uint8)).save(path, compress_level=1)


def write_folder(folder: Path, n: int, side: int) -> list[str]:
    """``n`` PNGs in ``folder`` (written in parallel; an existing complete set is reused)."""
    folder.mkdir(parents=True, exist_ok=True)
    files = [str(folder / f"{i:08d}_000.png") for i in range(n)]
    todo = [(f, i, side) for i, f in enumerate(files) if not os.path.exists(f)]
    if todo:
        t0 = time.perf_counter()
        with ProcessPoolExecutor(max_workers=os.cpu_count()) as pool:
            list(pool.map(_write_one, todo, chunksize=16))
        print(f"wrote {len(todo)} PNGs of {side}² in {time.perf_counter() - t0:.1f} s")
    mb = sum(os.path.getsize(f) for f in files) / 2**20
    print(f"{n} PNGs in {folder}: {mb:.0f} MB ({mb / n:.2f} MB each)")
    return files


#: Class folders for ``--source folder`` (sizes as shares of the images): 2 majority and 2
#: minority classes, so that ``medeval.train`` makes a kept binary task with subconcepts.
CLASSES = {"no_finding": 0.4, "infiltration": 0.3, "effusion": 0.18, "nodule": 0.12}


def link_class_folders(files: list[str], root: Path) -> Path:
    """Hard links of ``files`` under ``root/<class>/`` for ``python -m medeval.train``."""
    bounds = np.cumsum(list(CLASSES.values())) * len(files)
    for i, f in enumerate(files):
        label = list(CLASSES)[int(np.searchsorted(bounds, i, side="right"))]
        link = root / label / Path(f).name
        if not link.exists():
            link.parent.mkdir(parents=True, exist_ok=True)
            os.link(f, link)
    return root


def _load() -> str:
    return "load {:.1f} {:.1f} {:.1f}".format(*os.getloadavg())


def _epoch(dataset, workers: int, seed: int, *, to_model: bool = False) -> float:
    """Images/s of one shuffled pass of a training-style loader (batch 32); ``to_model``:
    each batch also through :func:`model_input` on the CPU, as training does before the model
    (for uint8 items: the normalisation, here on the CPU instead of a GPU)."""
    loader = DataLoader(
        dataset,
        batch_size=32,
        sampler=RandomSampler(dataset, generator=torch.Generator().manual_seed(seed)),
        num_workers=workers,
    )
    t0 = time.perf_counter()
    n = 0
    for batch in loader:
        x = model_input(batch[0], CPU) if to_model else batch[0]
        n += len(x)
    return n / (time.perf_counter() - t0)


def _row(what: str, rates: list[float], extra: str = "") -> float:
    best = max(rates)
    shown = " ".join(f"{r:8.1f}" for r in rates)
    print(f"  {what:<34} {shown}  img/s  (best {best:.1f}){extra}   [{_load()}]", flush=True)
    return best


def measure(files: list[str], work: Path, size: int, args) -> dict[str, float]:
    n = len(files)
    y = np.zeros(n, dtype=np.int64)
    print(f"\n{size} px, batch 32")
    out: dict[str, float] = {}
    sub = files[: args.uncached]
    plain = ImageDataset(
        y=y[: len(sub)], subconcept=y[: len(sub)], files=np.asarray(sub, dtype=object),
        transform=default_transform(size),
    )  # fmt: skip
    one_plane = ResizedImageDataset(sub, y[: len(sub)], y[: len(sub)], size=size)
    for workers in (0, 2):
        rates = [_epoch(plain, workers, seed) for seed in range(args.repeats)]
        out[f"uncached w{workers}"] = _row(f"uncached, workers {workers} ({len(sub)})", rates)
    for workers in (0, 2):
        rates = [_epoch(one_plane, workers, seed) for seed in range(args.repeats)]
        ratio = max(rates) / out[f"uncached w{workers}"]
        _row(f"no store, one plane, workers {workers}", rates, f"  = {ratio:.1f}× uncached")
    rates = []
    for rep in range(args.repeats):
        root = work / f"cache-{size}-{rep}"
        shutil.rmtree(root, ignore_errors=True)
        t0 = time.perf_counter()
        ImageCache(root, size=size).ensure(files, workers=args.build_workers, progress=False)
        rates.append(n / (time.perf_counter() - t0))
    out["first pass"] = _row(f"first pass, workers {args.build_workers} ({n})", rates)
    t0 = time.perf_counter()
    reader = ImageCache(root, size=size).ensure(files, progress=False)
    print(f"  opening the complete store (stat of {n} files): {time.perf_counter() - t0:.2f} s")
    floats = ResizedImageDataset(files, y, y, size=size, cache=reader)
    pixels = ResizedImageDataset(files, y, y, size=size, cache=reader, as_uint8=True)
    for what, dataset, to_model in (
        ("cached, uint8 + model_input", pixels, True),  # what training reads
        ("cached, float32 items", floats, False),  # what training read before
        ("cached, uint8, loader alone", pixels, False),
    ):
        for workers in (0, 2):
            rates = [
                _epoch(dataset, workers, seed, to_model=to_model)
                for seed in range(args.repeats + 1)
            ]
            ratio = max(rates) / out[f"uncached w{workers}"]
            out[f"{what} w{workers}"] = _row(
                f"{what}, workers {workers}", rates, f"  = {ratio:.0f}× uncached"
            )
    store_mb = sum(p.stat().st_size for p in reader.folder.glob("shard-*")) / 2**20
    print(f"  store: {store_mb:.1f} MB for {n} images ({store_mb * 2**10 / n:.0f} KB each)")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--work", type=Path, default=None, help="folder for PNGs and stores")
    parser.add_argument("--images", type=int, default=2000)
    parser.add_argument("--side", type=int, default=SIDE)
    parser.add_argument("--uncached", type=int, default=256, help="files per uncached pass")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--build-workers", type=int, default=2)
    parser.add_argument("--sizes", type=int, nargs="+", default=[224, 32])
    args = parser.parse_args()
    torch.set_num_threads(max(1, (os.cpu_count() or 1)))
    work = args.work or Path(tempfile.mkdtemp(prefix="medeval-cache-bench-"))
    print(f"{os.cpu_count()} CPUs, torch {torch.__version__}, {_load()}")
    files = write_folder(work / "images", args.images, args.side)
    by_class = link_class_folders(files, work / "by_class")
    print(f"class folders for medeval.train (--source folder --path {by_class}) ready")
    for size in args.sizes:
        measure(files, work, size, args)
    for stale in work.glob("cache-*"):
        shutil.rmtree(stale, ignore_errors=True)


if __name__ == "__main__":
    main()
