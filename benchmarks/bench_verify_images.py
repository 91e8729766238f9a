"""Cost of checking image files up front: no check, the header check (default), a full decode.

Writes N images of noise (the worst case for compression, so the most bytes to read) per size
and format into a temporary folder-per-class set, then times ``load_image_folder`` with
``verify=False``, ``verify=True`` (the header check) and ``verify="full"`` (best of
``--repeat``). Run: ``python benchmarks/bench_verify_images.py --n 200``.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

import numpy as np
from PIL import Image

from medeval.datasets.folder import load_image_folder


def _write(folder: Path, n: int, size: int, suffix: str) -> None:
    rng = np.random.default_rng(0)
    (folder / "a").mkdir(parents=True)
    for i in range(n):
        pixels = rng.integers(0, 256, (size, size), dtype=np.uint8)
        Image.fromarray(pixels).save(folder / "a" / f"{i}{suffix}")


def _best(folder: Path, verify: bool | str, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        load_image_folder(folder, verify=verify)
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--size", type=int, nargs="+", default=[224, 1024])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        for size in args.size:
            for suffix in (".png", ".jpg"):
                folder = Path(tmp) / f"{size}{suffix}"
                _write(folder, args.n, size, suffix)
                ms = {
                    v: _best(folder, v, args.repeat) * 1e3 / args.n for v in (False, True, "full")
                }
                print(
                    f"{args.n} x {size} px {suffix}: no check {ms[False]:.3f} ms/file, "
                    f"header check {ms[True]:.3f} ms/file, full decode {ms['full']:.3f} ms/file"
                )
    print(f"load average after: {os.getloadavg()[0]:.2f} (1 min)")


if __name__ == "__main__":
    main()
