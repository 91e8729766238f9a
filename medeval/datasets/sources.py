"""The data-source registry: each source declared once, with its loader (imported on first use)
and options; every tool, :func:`medeval.datasets.load` and a config read it (docs/tasks.md)."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from numbers import Integral
from pathlib import Path
from typing import Any

from medeval._validation import Interval, accepts, describe
from medeval.errors import UserError
from medeval.options import SEED

__all__ = [
    "SOURCES",
    "Option",
    "Source",
    "all_options",
    "check_options",
    "get_source",
    "options_for_flags",
    "register_source",
]


def _identity(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Option:
    """One loader option.

    Attributes:
        flag: command-line flag without dashes (``label-column`` → ``--label-column``).
        help: what it does.
        type: ``str``, ``int`` or ``bool`` (``--x`` / ``--no-x``).
        choices: allowed values, if any.
        keyword: the loader's keyword argument (default: ``flag`` with ``_`` for ``-``).
        convert: from the flag's value to the loader's (e.g. ``"respect"`` → ``True``).
        allowed: the allowed values, declared as in :mod:`medeval._validation` (the flag's type
            and a config's ``data.options`` are checked against them).
    """

    flag: str
    help: str
    type: type = str
    choices: tuple[str, ...] | None = None
    keyword: str | None = None
    convert: Callable[[Any], Any] = field(default=_identity, compare=False)
    allowed: tuple[Any, ...] = ()

    @property
    def key(self) -> str:
        """The loader keyword (also the key under ``data.options`` in a config)."""
        return self.keyword or self.flag.replace("-", "_")

    @property
    def dest(self) -> str:
        """The argparse attribute name."""
        return "opt_" + self.flag.replace("-", "_")


@dataclass(frozen=True)
class Source:
    """A data source: its name, what it holds, its loader and the options the loader takes.

    Attributes:
        name: the ``--source`` / ``data.source`` name.
        help: one line for ``--help``.
        kind: ``"tabular"``, ``"image"`` or ``"text"``.
        loader: the loader, or ``"module:function"`` naming it (imported on first use, so the
            command-line tools list every source without importing any loader). It is called
            as ``loader(path, name=name, **options)``; without ``takes_name``, as
            ``loader(path, **options)``.
        options: the loader options (flags and ``data.options`` keys).
        names: ``"module:function"`` (or a callable) listing the data sets under a path, for
            ``--name all``; default: the one data set named after the path.
        takes_name: the loader takes ``name=`` (a data set inside a folder of several).
        takes_path: the loader reads files; without it ``path`` is ignored (built-in data).
        settings: a section of a training config's ``data`` whose keys are defaults of the
            loader's options (``data.synthetic``).
        synthetic: the data are generated, not real.
    """

    name: str
    help: str
    kind: str  # "tabular", "image" or "text"
    loader: str | Callable[..., Any]
    options: tuple[Option, ...] = ()
    names: str | Callable[[Path], list[str]] | None = None
    takes_name: bool = True
    takes_path: bool = True
    settings: str | None = None
    synthetic: bool = False

    def load_function(self) -> Callable[..., Any]:
        """The loader (importing its module on first use)."""
        return _resolve(self.loader)

    def dataset_names(self, path: Path) -> list[str]:
        """Every data set under ``path`` (what ``--name all`` iterates over)."""
        if self.names is None:
            return [path.name.split(".")[0]]
        return _resolve(self.names)(path)

    def config_options(self, data_cfg: Mapping[str, Any]) -> dict[str, Any]:
        """Loader keywords of a config's ``data`` section: ``data.<settings>`` refined by
        ``data.options``."""
        options = dict(data_cfg.get("options") or {})
        if self.settings is None:
            return options
        return {**(data_cfg.get(self.settings) or {}), **options}


def _resolve(ref: str | Callable[..., Any]) -> Callable[..., Any]:
    if callable(ref):
        return ref
    module, _, function = ref.partition(":")
    return getattr(importlib.import_module(module), function)


# Options shared by several loaders: one flag, one meaning.
LABEL = Option("label-column", "column with the multiclass label")
#: The synthetic phantoms' normal class and side: the rules of ``--n-normal`` /
#: ``--phantom-size`` and of a config's ``data.synthetic.n_normal`` / ``size`` alike.
PHANTOM_NORMALS = Interval(Integral, 144, None, desc="an int >= 144 (the rarest finding keeps > 8)")
PHANTOM_SIZE = Interval(Integral, 8, None)
GROUP = Option("group-column", "patient / group id column (rows of a group stay together)")
TEXT = Option("text-column", "column with the text")
ID = Option("id-column", "row id column")
IMAGES = Option("images", "image folder when not next to the metadata table")
REQUIRE = Option("require-images", "fail when image files are absent", type=bool)
VERIFY = Option(
    "verify",
    "check every image before any work (a header check; DICOM: a decode) and name every "
    "unreadable one in one error (default; --no-verify: a bad file fails when first read)",
    bool,
)
SKIP = Option(
    "skip-unreadable",
    "leave out unreadable, missing or oversized (decompression-bomb) image files and list them",
    type=bool,
)
PARTS = Option(
    "parts",
    "pre-made train/val/test parts: merge them or respect them",
    choices=("merge", "respect"),
)

IMAGE_SET = (IMAGES, REQUIRE, VERIFY, SKIP)


def _respect(value: Any) -> bool:
    return value == "respect" if isinstance(value, str) else bool(value)


#: Every registered source by name, in declaration order (``--help`` lists them so).
SOURCES: dict[str, Source] = {}


def register_source(source: Source) -> Source:
    """Add ``source`` to the registry: every tool, ``load`` and training config then know it.

    Raises:
        ValueError: a source of that name is registered already.
    """
    if source.name in SOURCES:
        raise ValueError(f"source {source.name!r} is registered already")
    SOURCES[source.name] = source
    return source


_D = "medeval.datasets."

for _source in (
    Source(
        "keel",
        "KEEL .dat files (a file, or a folder of several)",
        "tabular",
        _D + "keel:load_keel",
        names=_D + "keel:dataset_names",
    ),
    Source(
        "pmlb",
        "PMLB data sets cached as <name>/<name>.tsv.gz",
        "tabular",
        _D + "pmlb:load_cached",
        names=_D + "pmlb:pmlb_cached_names",
    ),
    Source(
        "csv",
        "a table (.csv, .tsv, .parquet): features + label",
        "tabular",
        _D + "tables:load_table",
        (LABEL, GROUP, ID),
    ),
    Source(
        "nih",
        "NIH ChestX-ray14 (metadata CSV + images)",
        "image",
        _D + "nih:load_nih",
        IMAGE_SET,
        takes_name=False,
    ),
    Source(
        "ham10000",
        "HAM10000 dermoscopy (metadata + images)",
        "image",
        _D + "ham10000:load_ham10000",
        IMAGE_SET,
        takes_name=False,
    ),
    Source(
        "folder",
        "an image folder per class",
        "image",
        _D + "folder:load_image_folder",
        (replace(PARTS, keyword="splits"), VERIFY, SKIP),
    ),
    Source(
        "images",
        "a table of image files (.csv, .tsv, .parquet): image + label [+ group] columns",
        "image",
        _D + "imagetable:load_image_table",
        (
            IMAGES,
            Option(
                "image-column",
                "image table's column naming each file: a name with or without suffix, or a "
                "path relative to --images",
            ),
            LABEL,
            GROUP,
            VERIFY,
            SKIP,
        ),
    ),
    Source(
        "dicom",
        "DICOM files with a labels CSV",
        "image",
        _D + "dicom:load_dicom",
        (
            Option("csv", "labels CSV of the DICOM files (default: the one CSV in the folder)"),
            Option("file-column", "file column of the labels CSV"),
            LABEL,
            replace(GROUP, keyword="patient_column"),
            Option(
                "frame",
                "frame read from multi-frame files (-1 = last); without it such a file is "
                "rejected at load time, naming it",
                type=int,
            ),
            VERIFY,
            SKIP,
        ),
    ),
    Source(
        "medmnist",
        "MedMNIST .npz files",
        "image",
        _D + "medmnist:load_medmnist",
        (replace(PARTS, keyword="respect_splits", convert=_respect),),
        names=_D + "medmnist:dataset_names",
    ),
    Source(
        "mmhs150k",
        "MMHS150K tweets (MMHS150K_GT.json)",
        "text",
        _D + "mmhs150k:load_mmhs150k",
        (
            Option(
                "tie",
                "three-way annotator ties: drop them or keep the first",
                choices=("drop", "first"),
            ),
        ),
        takes_name=False,
    ),
    Source(
        "text",
        "a text table: text + label",
        "text",
        _D + "tables:load_text_csv",
        (TEXT, LABEL, GROUP),
    ),
    Source(
        "synthetic",
        "built-in synthetic chest-radiograph phantoms (not real images)",
        "image",
        _D + "synthetic:load_synthetic",
        (
            Option(
                "n-normal", "phantoms of the largest class", type=int, allowed=(PHANTOM_NORMALS,)
            ),
            Option(
                "phantom-size",
                "phantom side in pixels",
                type=int,
                keyword="size",
                allowed=(PHANTOM_SIZE,),
            ),
            Option(
                "phantom-seed",
                "seed of the phantom generator",
                type=int,
                keyword="seed",
                allowed=(SEED,),  # the one rule of every seed a user gives
            ),
        ),
        takes_name=False,
        takes_path=False,
        settings="synthetic",
        synthetic=True,
    ),
):
    register_source(_source)
del _source


def get_source(name: str) -> Source:
    """The registered source ``name``; a ``UserError`` naming the known ones otherwise."""
    if name not in SOURCES:
        raise UserError(f"unknown source {name!r}; choose from {', '.join(SOURCES)}")
    return SOURCES[name]


def all_options(sources: Iterable[str] | None = None) -> dict[str, tuple[Option, list[str]]]:
    """Flag → (its first declaration, the sources that take it), over ``sources``."""
    out: dict[str, tuple[Option, list[str]]] = {}
    for name in sources if sources is not None else SOURCES:
        for opt in SOURCES[name].options:
            out.setdefault(opt.flag, (opt, []))[1].append(name)
    return out


def options_for_flags(source: str, given: Mapping[str, Any]) -> dict[str, Any]:
    """Loader keywords from flag values (``{flag: value}``, ``None`` = not given).

    Raises:
        UserError: a flag the source does not take, naming the sources that do.
    """
    src = get_source(source)
    by_flag = {o.flag: o for o in src.options}
    out = {}
    for flag, value in given.items():
        if value is None:
            continue
        if flag not in by_flag:
            takers = [s.name for s in SOURCES.values() if any(o.flag == flag for o in s.options)]
            raise UserError(
                f"--{flag} does not apply to source {source!r} (it applies to: {', '.join(takers)})"
            )
        opt = by_flag[flag]
        out[opt.key] = opt.convert(value)
    return out


def check_options(source: str, options: Mapping[str, Any], *, where: str = "options") -> None:
    """Check loader keywords given directly (a config's ``data.options``).

    Raises:
        UserError: an unknown keyword or a value of the wrong type, choice or range, naming
            ``where.<key>``.
    """
    src = get_source(source)
    by_key = {o.key: o for o in src.options}
    for key, value in options.items():
        opt = by_key.get(key)
        if opt is None:
            known = ", ".join(o.key for o in src.options) or "none"
            raise UserError(
                f"{where}.{key}: source {source!r} takes no option {key!r} (known: {known})"
            )
        if value is None:
            continue
        if opt.choices is not None and opt.convert is _identity and value not in opt.choices:
            raise UserError(
                f"{where}.{key}: expected one of {', '.join(opt.choices)}, got {value!r}"
            )
        ok = {
            bool: isinstance(value, bool),
            int: isinstance(value, int) and not isinstance(value, bool),
            str: isinstance(value, str),
        }[opt.type] or (opt.convert is not _identity)
        if not ok:
            raise UserError(f"{where}.{key}: expected {opt.type.__name__}, got {value!r}")
        if opt.allowed and not accepts(list(opt.allowed), value):
            raise UserError(f"{where}.{key}: must be {describe(list(opt.allowed))}, got {value!r}")
