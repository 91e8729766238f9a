"""The data-source registry: every loader and the options it takes, declared once.

The command-line tools (``tasks``, ``embed``, ``train``, ``benchmark``) build their loader flags
from this table, ``--help`` lists them with the sources that use them, and a flag given for a
source that does not take it is an error rather than silently dropped. A training config names
the same options under ``data.options`` by their loader keyword. Adding an option to a loader
is one line here. Only the standard library is imported, so ``--help`` stays fast.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = ["SOURCES", "Option", "Source", "check_options", "get_source", "options_for_flags"]


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
    """

    flag: str
    help: str
    type: type = str
    choices: tuple[str, ...] | None = None
    keyword: str | None = None
    convert: Callable[[Any], Any] = field(default=_identity, compare=False)

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
    """A data source: its name, what it holds and the options its loader takes."""

    name: str
    help: str
    kind: str  # "tabular", "image" or "text"
    options: tuple[Option, ...] = ()

    def option(self, key: str) -> Option | None:
        return next((o for o in self.options if o.key == key), None)


# Options shared by several loaders: one flag, one meaning.
LABEL = Option("label-column", "column with the multiclass label")
GROUP = Option("group-column", "patient / group id column (rows of a group stay together)")
TEXT = Option("text-column", "column with the text")
ID = Option("id-column", "row id column")
IMAGES = Option("images", "image folder when not next to the metadata")
REQUIRE = Option("require-images", "fail when image files are absent", type=bool)
VERIFY = Option("verify", "decode every image now; the first unreadable file is an error", bool)
SKIP = Option(
    "skip-unreadable", "leave out unreadable or missing image files and list them", type=bool
)
PARTS = Option(
    "parts",
    "pre-made train/val/test parts: merge them or respect them",
    choices=("merge", "respect"),
)

IMAGE_SET = (IMAGES, REQUIRE, VERIFY, SKIP)

SOURCES: dict[str, Source] = {
    s.name: s
    for s in (
        Source("keel", "KEEL .dat files (a file, or a folder of several)", "tabular"),
        Source("pmlb", "PMLB data sets cached as <name>/<name>.tsv.gz", "tabular"),
        Source(
            "csv", "a table (.csv, .tsv, .parquet): features + label", "tabular", (LABEL, GROUP, ID)
        ),
        Source(
            "nih",
            "NIH ChestX-ray14 (metadata CSV + images)",
            "image",
            (IMAGES, REQUIRE, VERIFY, SKIP),
        ),
        Source(
            "ham10000",
            "HAM10000 dermoscopy (metadata + images)",
            "image",
            (IMAGES, REQUIRE, VERIFY, SKIP),
        ),
        Source(
            "folder",
            "an image folder per class",
            "image",
            (Option("parts", PARTS.help, choices=PARTS.choices, keyword="splits"), VERIFY, SKIP),
        ),
        Source(
            "dicom",
            "DICOM files with a labels CSV",
            "image",
            (
                Option("csv", "labels CSV of the DICOM files (default: the one CSV in the folder)"),
                Option("file-column", "file column of the labels CSV"),
                LABEL,
                Option("group-column", GROUP.help, keyword="patient_column"),
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
            (
                Option(
                    "parts",
                    PARTS.help,
                    choices=PARTS.choices,
                    keyword="respect_splits",
                    convert=lambda v: v == "respect" if isinstance(v, str) else bool(v),
                ),
            ),
        ),
        Source(
            "mmhs150k",
            "MMHS150K tweets (MMHS150K_GT.json)",
            "text",
            (
                Option(
                    "tie",
                    "three-way annotator ties: drop them or keep the first",
                    choices=("drop", "first"),
                ),
            ),
        ),
        Source("text", "a text table: text + label", "text", (TEXT, LABEL, GROUP)),
        Source(
            "synthetic",
            "built-in synthetic chest-radiograph phantoms (not real images)",
            "image",
            (
                Option("n-normal", "phantoms of the largest class", type=int),
                Option("phantom-size", "phantom side in pixels", type=int, keyword="size"),
                Option("phantom-seed", "seed of the phantom generator", type=int, keyword="seed"),
            ),
        ),
    )
}


def get_source(name: str) -> Source:
    """The registered source ``name``; ``ValueError`` naming the known ones otherwise."""
    if name not in SOURCES:
        raise ValueError(f"unknown source {name!r}; choose from {', '.join(SOURCES)}")
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
        ValueError: a flag the source does not take, naming the sources that do.
    """
    src = get_source(source)
    by_flag = {o.flag: o for o in src.options}
    out = {}
    for flag, value in given.items():
        if value is None:
            continue
        if flag not in by_flag:
            takers = [s.name for s in SOURCES.values() if any(o.flag == flag for o in s.options)]
            raise ValueError(
                f"--{flag} does not apply to source {source!r} (it applies to: {', '.join(takers)})"
            )
        opt = by_flag[flag]
        out[opt.key] = opt.convert(value)
    return out


def check_options(source: str, options: Mapping[str, Any], *, where: str = "options") -> None:
    """Check loader keywords given directly (a config's ``data.options``).

    Raises:
        ValueError: an unknown keyword or a value of the wrong type or choice, naming
            ``where.<key>``.
    """
    src = get_source(source)
    for key, value in options.items():
        opt = src.option(key)
        if opt is None:
            known = ", ".join(o.key for o in src.options) or "none"
            raise ValueError(
                f"{where}.{key}: source {source!r} takes no option {key!r} (known: {known})"
            )
        if value is None:
            continue
        if opt.choices is not None and opt.convert is _identity and value not in opt.choices:
            raise ValueError(
                f"{where}.{key}: expected one of {', '.join(opt.choices)}, got {value!r}"
            )
        ok = {
            bool: isinstance(value, bool),
            int: isinstance(value, int) and not isinstance(value, bool),
            str: isinstance(value, str),
        }[opt.type] or (opt.convert is not _identity)
        if not ok:
            raise ValueError(f"{where}.{key}: expected {opt.type.__name__}, got {value!r}")
