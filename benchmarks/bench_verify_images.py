"""Cost of checking image files up front: no check, PIL header check, full decode.

Writes N small PNGs (and JPEGs) of noise into a temporary folder, then times one pass of each
check over them (best of ``--repeat``). Run: ``python benchmarks/bench_verify_images.py --n 300``.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from medeval.datasets.pixels import check_image


def _write(folder: Path, n: int, size: int, suffix: str) -> list[Path]:
    rng = np.random.default_rng(0)
    paths = []
    for i in range(n):
        path = folder / f"{i}{suffix}"
        Image.fromarray(rng.integers(0, 256, (size, size), dtype=np.uint8)).save(path)
        paths.append(path)
    return paths


def _best(fn, paths: list[Path], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        for p in paths:
            fn(p)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--n", type=int, default=300)
    parser.add_argument("--size", type=int, nargs="+", default=[224, 1024])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.size:
            for suffix in (".png", ".jpg"):
                folder = Path(tmp) / f"{size}{suffix}"
                folder.mkdir()
                paths = _write(folder, args.n, size, suffix)
                listing = _best(lambda p: p.stat(), paths, args.repeat)
                header = _best(lambda p: check_image(p, level="header"), paths, args.repeat)
                full = _best(lambda p: check_image(p, level="full"), paths, args.repeat)
                print(
                    f"{args.n} x {size}px {suffix}: stat {listing * 1e3 / args.n:.3f} ms/file, "
                    f"header {header * 1e3 / args.n:.3f} ms/file, "
                    f"full decode {full * 1e3 / args.n:.3f} ms/file"
                )


if __name__ == "__main__":
    main()
