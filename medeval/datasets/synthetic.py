"""Built-in SYNTHETIC chest-radiograph phantoms with subconcepts of unequal difficulty (the
``synthetic`` source and the default training data; docs/imaging.md): they test the pipeline."""

from __future__ import annotations

import numpy as np

from medeval.datasets.base import LabelledData
from medeval.errors import UserError

__all__ = ["FAINT_CONTRAST", "NOISE_SD", "SUBCONCEPTS", "load_synthetic", "make_phantoms", "render"]

#: Amplitude of the faint-diffuse texture: a fifth of the pixel noise (:data:`NOISE_SD`).
FAINT_CONTRAST = 0.01
#: Standard deviation of the Gaussian pixel noise (intensities in [0, 1]).
NOISE_SD = 0.05

# name → share of the majority size (normal = 1.0); ladder m/2, m/4, m/8 from m = granuloma size.
SUBCONCEPTS: dict[str, float] = {
    "normal": 1.0,
    "calcified granuloma": 0.5,
    "large opacity": 0.25,
    "small nodule": 0.125,
    "faint diffuse": 0.0625,
}


def _blob(yy, xx, cy, cx, r) -> np.ndarray:
    return np.exp(-(((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * r * r)))


def render(label: str, size: int, rng: np.random.Generator) -> np.ndarray:
    """One phantom (size, size) uint8 with the finding ``label`` drawn with ``rng``."""
    ax = (np.arange(size, dtype=np.float32) + 0.5) / size
    yy, xx = np.meshgrid(ax, ax, indexing="ij")  # (rows = y, cols = x) in [0, 1]
    img = 0.75 * np.exp(-(((xx - 0.5) / 0.42) ** 6 + ((yy - 0.52) / 0.46) ** 6))
    lungs = np.zeros_like(img)
    for cx in (0.32, 0.68):
        lungs = np.maximum(
            lungs, np.exp(-((((xx - cx) / 0.14) ** 2 + ((yy - 0.5) / 0.3) ** 2) ** 2))
        )
    img = img - 0.45 * lungs
    phase = rng.uniform(0, 2 * np.pi)
    img += 0.04 * np.sin(2 * np.pi * 7 * yy + phase) * lungs  # ribs
    lung_x = (0.32, 0.68)[int(rng.integers(2))]  # the side of the finding
    cy, cx = 0.5 + rng.uniform(-0.15, 0.15), lung_x + rng.uniform(-0.07, 0.07)
    if label == "calcified granuloma":
        img += 0.55 * _blob(yy, xx, cy, cx, 0.018)
    elif label == "large opacity":
        img += 0.35 * _blob(yy, xx, cy, cx, rng.uniform(0.09, 0.13))
    elif label == "small nodule":
        img += 0.22 * _blob(yy, xx, cy, cx, rng.uniform(0.03, 0.045))
    elif label == "faint diffuse":
        lung = np.exp(-(((xx - lung_x) / 0.14) ** 2 + ((yy - 0.5) / 0.3) ** 2))
        texture = np.sin(2 * np.pi * 11 * (xx + yy) + rng.uniform(0, 6.3))
        img += FAINT_CONTRAST * lung * texture
    elif label != "normal":
        raise ValueError(f"unknown phantom finding {label!r}")
    img += rng.normal(0.0, NOISE_SD, size=img.shape)
    return (np.clip(img, 0.0, 1.0) * 255).round().astype(np.uint8)


def make_phantoms(
    n_normal: int = 240, *, size: int = 48, seed: int = 0, max_per_patient: int = 3
) -> LabelledData:
    """A multiclass phantom set: ``n_normal`` normal images and the other findings in ratio.

    Args:
        n_normal: images of the largest class; the others follow :data:`SUBCONCEPTS`.
        size: image side in pixels.
        seed: everything (counts per patient, geometry, noise) follows from it.
        max_per_patient: each patient holds 1..max images of one finding.

    Returns:
        ``LabelledData`` (source ``"synthetic"``) with ``images`` (N, size, size) uint8,
        ``labels``, ``groups`` (patient ids) and ``meta["synthetic"] = True``.
    """
    if n_normal < 16 * 9:
        raise UserError("n_normal must be >= 144 so the rarest finding keeps > 8 images")
    rng = np.random.default_rng(seed)
    labels, groups, images = [], [], []
    patient = 0
    for label, share in SUBCONCEPTS.items():
        left = round(n_normal * share)
        while left > 0:
            k = min(left, int(rng.integers(1, max_per_patient + 1)))
            for _ in range(k):
                labels.append(label)
                groups.append(f"P{patient:05d}")
                images.append(render(label, size, rng))
            patient += 1
            left -= k
    n = len(labels)
    return LabelledData(
        labels=np.asarray(labels),
        source="synthetic",
        name="synthetic-cxr",
        images=np.stack(images),
        groups=np.asarray(groups),
        ids=np.asarray([f"img{i:05d}" for i in range(n)]),
        meta={"synthetic": True, "size": size, "seed": seed},
    )


def load_synthetic(
    path: object = None, *, n_normal: int = 240, size: int = 48, seed: int = 0
) -> LabelledData:
    """The ``synthetic`` source's loader: :func:`make_phantoms`; ``path`` is ignored (the data
    are built in)."""
    return make_phantoms(int(n_normal), size=int(size), seed=int(seed))
