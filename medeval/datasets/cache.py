"""Decoded-image cache: each image file decoded and resized once (bit-identical to
:func:`prepare_image`) into uint8 shards under ``<cache_dir>/images-<size>px-<key>/``, one store
per pixel recipe (size, DICOM frame, :data:`DECODE_VERSION`); docs/imaging.md explains it."""

from __future__ import annotations

import copy
import hashlib
import json
import os
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset
from torchvision import transforms

from medeval.datasets.base import DataError, LabelledData, SkippedFile
from medeval.datasets.images import pixel_table, to_tensor
from medeval.datasets.pixels import FRAME_KEY, read_image_array, without_unreadable
from medeval.errors import UserError
from medeval.io import atomic
from medeval.progress import progress as progress_bar

__all__ = [
    "DECODE_VERSION",
    "DEFAULT_CACHE_DIR",
    "CacheFolderError",
    "CachedImages",
    "ImageCache",
    "ResizedImageDataset",
    "data_images",
    "prepare_image",
    "quantize",
]

#: Bump when :func:`prepare_image` (or the decode rules it calls) changes its pixels: every
#: store built by the previous rule is then left alone and a new one is built.
DECODE_VERSION = 1
#: Beside the feature cache of ``python -m medeval.embed`` (``.medeval-cache/features``).
DEFAULT_CACHE_DIR = Path(".medeval-cache/images")
_INDEX, _RECIPE, _LOCK = "index.json", "recipe.json", ".lock"


class CacheFolderError(UserError):
    """The image cache folder cannot be created or written; the message names it."""


def quantize(image: torch.Tensor) -> np.ndarray:
    """(C, S, S) float in [0, 1] → uint8 (S, S) for C = 1, else (S, S, C); ``round(255 · x)``."""
    u8 = (image.clamp(0.0, 1.0) * 255.0).round_().to(torch.uint8)
    return u8[0].numpy() if u8.shape[0] == 1 else u8.permute(1, 2, 0).contiguous().numpy()


def prepare_image(path: str | Path, *, size: int, frame: int | None = None) -> np.ndarray:
    """One file decoded, converted and resized to (size, size) as the training path does; grey
    images stay one channel (the three copies are made when read).

    Raises:
        DataError: naming the file when it cannot be read or decoded.
    """
    array = read_image_array(path, frame=frame)
    if array.ndim == 2:  # one plane: the three copies ``to_tensor`` would make are left out
        tensor = torch.from_numpy(np.ascontiguousarray(array, dtype=np.float32)).unsqueeze(0)
    else:
        tensor = to_tensor(array)
        if bool((tensor[0] == tensor[1]).all() and (tensor[0] == tensor[2]).all()):
            tensor = tensor[:1]  # RGB whose channels agree (a grey JPEG saved as RGB)
    resized = transforms.functional.resize(tensor, [size, size], antialias=True)
    return quantize(resized)


@dataclass(frozen=True)
class _Stat:
    name: str  # the file as given (named in messages)
    key: str  # its resolved path (the index key)
    size: int
    mtime_ns: int


def _stat(file: str | Path) -> _Stat:
    path = Path(file).resolve()
    try:
        st = os.stat(path)
    except FileNotFoundError as exc:
        raise DataError(f"{file}: image file not found") from exc
    return _Stat(str(file), str(path), st.st_size, st.st_mtime_ns)


def _as_is(item):
    return item


class _Decode(Dataset):
    """Files to decode for a build; an item is (position, uint8 image or the error text)."""

    def __init__(self, files: list[str], size: int, frame: int | None) -> None:
        self.files, self.size, self.frame = files, size, frame

    def __len__(self) -> int:
        return len(self.files)

    def __getitem__(self, i: int) -> tuple[int, np.ndarray | str]:
        try:
            return i, prepare_image(self.files[i], size=self.size, frame=self.frame)
        except DataError as exc:  # raised again in the builder, so that it names the file
            return i, str(exc)


class ImageCache:
    """The store of one pixel recipe (``size``, ``frame``) under ``cache_dir``.

    Args:
        cache_dir: the folder holding stores (one sub-folder per recipe).
        size: the side of the square images stored.
        frame: the frame read from multi-frame DICOM files (``None``: single-frame only).
    """

    def __init__(self, cache_dir: str | Path, *, size: int, frame: int | None = None) -> None:
        if int(size) < 1:
            raise ValueError(f"size must be a positive number of pixels; got {size!r}")
        self.size, self.frame = int(size), frame
        self.recipe = {"decode_version": DECODE_VERSION, "size": self.size, "frame": frame}
        key = hashlib.sha256(json.dumps(self.recipe, sort_keys=True).encode()).hexdigest()[:16]
        self.folder = Path(cache_dir) / f"images-{self.size}px-{key}"

    def read_index(self) -> dict[str, list]:
        """Resolved path → [file size, mtime_ns, shard name, byte offset, channels]."""
        path = self.folder / _INDEX
        if not path.is_file():
            return {}
        try:
            return json.loads(path.read_text())["files"]
        except (ValueError, KeyError, TypeError) as exc:  # written atomically: not by medeval
            raise CacheFolderError(
                f"{path}: not an image cache index ({exc}); delete {self.folder} to rebuild it"
            ) from exc

    def ensure(
        self, files, *, workers: int = 0, progress: bool = True, desc: str | None = None
    ) -> CachedImages:
        """Add the images of ``files`` that the store lacks or holds from an older file.

        Returns:
            A reader of ``files`` in their order (``reader[i]`` is the image of ``files[i]``).

        Raises:
            DataError: naming the first file that is missing or cannot be decoded (the images
                decoded before it are kept in the store).
            CacheFolderError: the store needs images and its folder cannot be written.
        """
        stats = [_stat(f) for f in files]
        index = self._add(stats, None, workers=workers, progress=progress, desc=desc)
        return CachedImages(self.folder, self.size, [index[s.key][2:] for s in stats])

    def _add(self, stats: list[_Stat], failed: dict[str, str] | None, **decode) -> dict:
        """Decode the files the store lacks, under its lock; the index after (:meth:`_build`)."""
        index = self.read_index()
        if self._stale(stats, index):
            self._make_folder()
            from filelock import FileLock  # torch's own dependency: one builder at a time

            with FileLock(self.folder / _LOCK):
                index = self.read_index()  # another builder may have added them meanwhile
                todo = self._stale(stats, index)
                if todo:
                    self._build(todo, index, failed, **decode)
                    index = self.read_index()
        return index

    @staticmethod
    def _stale(stats: list[_Stat], index: dict[str, list]) -> list[_Stat]:
        """Distinct files absent from ``index`` or changed since (size or mtime)."""
        todo: dict[str, _Stat] = {}
        for s in stats:
            entry = index.get(s.key)
            if entry is None or entry[0] != s.size or entry[1] != s.mtime_ns:
                todo[s.key] = s
        return list(todo.values())

    def _make_folder(self) -> None:
        """Create the store's folder and prove that a file can be written there."""
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            probe = self.folder / f".probe-{uuid.uuid4().hex}"
            probe.write_bytes(b"")
            probe.unlink()
        except OSError as exc:
            raise CacheFolderError(
                f"{self.folder}: the image cache folder cannot be written ({exc.strerror}); "
                "point the cache elsewhere (data.cache_dir) or turn it off (data.cache: false)"
            ) from exc
        if not (self.folder / _RECIPE).is_file():
            atomic.write_json(self.folder / _RECIPE, self.recipe)

    def _build(
        self,
        todo: list[_Stat],
        index: dict,
        failed: dict[str, str] | None,
        *,
        workers: int,
        progress: bool,
        desc: str | None,
    ) -> None:
        """Decode ``todo`` into a new shard; stop at a failure unless ``failed`` collects them."""
        name = f"shard-{uuid.uuid4().hex}.u8"
        tmp = self.folder / f".{name}.tmp"
        loader = DataLoader(
            _Decode([s.name for s in todo], self.size, self.frame),
            batch_size=None,  # one image per item, kept as numpy (no collation)
            collate_fn=_as_is,
            num_workers=workers,
        )
        added: dict[str, list] = {}
        failure, offset = None, 0
        try:
            with (
                progress_bar(
                    total=len(todo), desc=desc or f"image cache {self.size}px", disable=not progress
                ) as bar,
                open(tmp, "wb") as out,
            ):
                for pos, image in loader:
                    s = todo[pos]
                    if isinstance(image, str) and failed is None:
                        failure = image  # what was decoded before it is still published
                        break
                    if isinstance(image, str):
                        failed[s.key] = image
                    else:
                        out.write(image.tobytes())
                        channels = 1 if image.ndim == 2 else image.shape[2]
                        added[s.key] = [s.size, s.mtime_ns, name, offset, channels]
                        offset += image.nbytes
                    bar.update(1)
                out.flush()
                os.fsync(out.fileno())
            if added:
                os.replace(tmp, self.folder / name)
                self._publish({**index, **added})
        except OSError as exc:  # loader errors are DataErrors: an OSError here is the store's
            raise CacheFolderError(
                f"{self.folder}: cannot write the image cache: {exc.strerror or exc}"
            ) from exc
        finally:
            tmp.unlink(missing_ok=True)
        if failure is not None:
            raise DataError(f"image cache {self.folder}: {failure}")

    def _publish(self, index: dict[str, list]) -> None:
        """Replace the index, then delete shards it no longer names (their files changed)."""
        atomic.write_json(self.folder / _INDEX, {"recipe": self.recipe, "files": index})
        live = {entry[2] for entry in index.values()}
        for shard in self.folder.glob("shard-*.u8"):
            if shard.name not in live:
                # A reader that mapped it keeps its pages (POSIX); a reader made before the
                # rebuild that opens it later fails and names the store (CachedImages).
                shard.unlink(missing_ok=True)
        for stale in self.folder.glob(".shard-*.tmp"):  # left by a builder that was killed
            stale.unlink(missing_ok=True)


def data_images(
    data: LabelledData,
    *,
    size: int,
    cache_dir: str | Path = DEFAULT_CACHE_DIR,
    workers: int = 0,
    progress: bool = True,
) -> CachedImages | None:
    """The store's reader of every file of ``data`` (``None`` when its images are in memory);
    every process of a DDP job may call it."""
    if data.files is None:
        return None
    store = ImageCache(cache_dir, size=size, frame=data.meta.get(FRAME_KEY))
    return store.ensure(
        data.files, workers=workers, progress=progress, desc=f"decode {data.name} once"
    )


def skip_undecodable(
    data: LabelledData,
    *,
    size: int,
    cache_dir: str | Path = DEFAULT_CACHE_DIR,
    workers: int = 0,
    progress: bool = True,
) -> LabelledData:
    """``data`` less the image files that cannot be decoded (the store's first pass, past the
    ones that fail), recorded in ``data.skipped``.

    Raises:
        CacheFolderError: the store needs images and its folder cannot be written.
    """
    if data.files is None:
        return data
    store = ImageCache(cache_dir, size=size, frame=data.meta.get(FRAME_KEY))
    stats = {i: _stat(f) for i, f in enumerate(data.files) if os.path.exists(f)}
    failed: dict[str, str] = {}
    desc = f"decode {data.name} once"
    store._add(list(stats.values()), failed, workers=workers, progress=progress, desc=desc)
    bad = {
        i: SkippedFile.of(f, i, failed[stats[i].key] if i in stats else "missing")
        for i, f in enumerate(data.files)
        if i not in stats or stats[i].key in failed
    }
    return without_unreadable(data, bad)


class CachedImages:
    """Read-only view of the images of some files in a store: ``reader[i]`` → uint8 array
    (shards memory-mapped on first use in each process; pickles small)."""

    def __init__(self, folder: Path, size: int, rows: list[tuple[str, int, int]]) -> None:
        self.folder, self.size = Path(folder), size
        self.shards = sorted({r[0] for r in rows})
        number = {name: k for k, name in enumerate(self.shards)}
        self.shard = np.asarray([number[r[0]] for r in rows], dtype=np.int32)
        self.offset = np.asarray([r[1] for r in rows], dtype=np.int64)
        self.channels = np.asarray([r[2] for r in rows], dtype=np.uint8)
        self._maps: dict[int, np.memmap] = {}
        self._pid = os.getpid()

    def __len__(self) -> int:
        return len(self.offset)

    def take(self, rows: np.ndarray) -> CachedImages:
        """The reader of rows ``rows`` (e.g. one split's part), sharing this one's store."""
        rows = np.asarray(rows, dtype=np.intp)
        out = copy.copy(self)  # with maps of its own (__getstate__)
        for name in ("shard", "offset", "channels"):
            setattr(out, name, getattr(self, name)[rows])
        return out

    def __getstate__(self) -> dict:
        state = self.__dict__.copy()
        state["_maps"] = {}
        return state

    def _map(self, k: int) -> np.memmap:
        if self._pid != os.getpid():  # a forked worker maps the shards again, on its own
            self._maps, self._pid = {}, os.getpid()
        if k not in self._maps:
            path = self.folder / self.shards[k]
            try:
                self._maps[k] = np.memmap(path, dtype=np.uint8, mode="r")
            except FileNotFoundError as exc:
                raise DataError(
                    f"{path}: shard of the image cache is gone (rebuilt by another run "
                    "since this reader was made); make the reader again with ensure()"
                ) from exc
        return self._maps[k]

    def __getitem__(self, i: int) -> np.ndarray:
        """uint8 (S, S) grey or (S, S, 3) RGB, a copy (the map is never handed out)."""
        c = int(self.channels[i])
        n = self.size * self.size * c
        start = int(self.offset[i])
        flat = self._map(int(self.shard[i]))[start : start + n]
        shape = (self.size, self.size) if c == 1 else (self.size, self.size, c)
        return np.array(flat).reshape(shape)


class ResizedImageDataset(Dataset):
    """``(image (3, S, S), y, subconcept)`` items from a store or, without one, decoded now.

    Images are float32 in [0, 1], ImageNet-normalised when ``normalize``; ``as_uint8`` returns
    the uint8 (3, S, S) tensor instead (:func:`medeval.models.inputs.model_input` converts it).

    Args:
        files: (N,) image files.
        y, subconcept: (N,) integer targets and subconcept codes.
        size: the side of the square images.
        cache: a reader of ``files`` from :meth:`ImageCache.ensure`, or ``None`` to decode.
        frame: the DICOM frame, as for the loaders (used only without ``cache``).
        rows: (N,) the row numbers named in error messages (default ``0 .. N - 1``), e.g. the
            rows of the whole data set that a split's part holds.
    """

    def __init__(
        self,
        files,
        y: np.ndarray,
        subconcept: np.ndarray,
        *,
        size: int,
        cache: CachedImages | None = None,
        frame: int | None = None,
        normalize: bool = True,
        as_uint8: bool = False,
        rows: np.ndarray | None = None,
    ) -> None:
        self.files = np.asarray(files, dtype=object)
        self.rows = np.arange(len(self.files)) if rows is None else np.asarray(rows)
        self.y = np.asarray(y, dtype=np.int64)
        self.subconcept = np.asarray(subconcept, dtype=np.int64)
        if not len(self.files) == len(self.y) == len(self.subconcept) == len(self.rows):
            raise ValueError("files, y, subconcept and rows must have one entry per row")
        if cache is not None and cache.size != size:
            raise ValueError(f"the cache holds {cache.size} px images, not {size} px")
        if cache is not None and len(cache) != len(self.files):
            raise ValueError("the cache reader must hold one image per file, in order")
        self.size, self.cache, self.frame = size, cache, frame
        self.as_uint8 = as_uint8
        self._lut = pixel_table(normalize).numpy()  # numpy's gather: no per-item torch kernels

    def __len__(self) -> int:
        return len(self.y)

    def image(self, i: int) -> np.ndarray:
        """The uint8 pixels of row ``i``."""
        if self.cache is not None:
            return self.cache[i]
        try:
            return prepare_image(self.files[i], size=self.size, frame=self.frame)
        except DataError as exc:
            raise DataError(f"row {self.rows[i]}: {exc}") from exc

    def __getitem__(self, i: int) -> tuple[torch.Tensor, int, int]:
        u8 = self.image(i)
        if self.as_uint8:
            planes = np.broadcast_to(u8, (3, *u8.shape)) if u8.ndim == 2 else u8.transpose(2, 0, 1)
            image = torch.from_numpy(np.ascontiguousarray(planes))
        elif u8.ndim == 2:
            image = torch.from_numpy(self._lut[:, u8])  # (3, S, S): one look-up per channel
        else:
            image = torch.from_numpy(np.stack([self._lut[c][u8[..., c]] for c in range(3)]))
        return image, int(self.y[i]), int(self.subconcept[i])
