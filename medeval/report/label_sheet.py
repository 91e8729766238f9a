"""``to_label.html``: the rows to label as a sheet of thumbnails, each with its id, its class by
name and the subconcepts its class may hold, in the order of ``to_label.csv`` (one file, images
embedded, each a link to its image file at full size). Blind by default: no model probability
beside an image, the candidates in the training order; ``show_scores`` shows the subconcept
model's posteriors, most likely first."""

from __future__ import annotations

import base64
import html
import io
import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from medeval.io.labels import GIVE_LABELS, UNSURE
from medeval.report.html import Section, render

#: Thumbnails' longest side, in pixels.
THUMBNAIL = 192

_CSS = (
    ".sheet{display:grid;grid-template-columns:repeat(auto-fill,minmax(210px,1fr));gap:12px}"
    ".card{border:1px solid #ccd;border-radius:6px;padding:8px;font-size:13px}"
    ".card img{display:block;max-width:100%;margin:0 auto 6px}"
    ".id{font-weight:600;word-break:break-all}.cand{color:#445}"
    ".missing{height:120px;display:flex;align-items:center;justify-content:center;color:#a33}"
)
_SCORE = re.compile(r"\s*\([^()]*\)\s*$")  # " (0.42)" after a candidate's name


def thumbnail(path: str | Path) -> str | None:
    """A base64 JPEG data URI of the image at ``path``, or ``None`` where it cannot be read."""
    from PIL import Image, UnidentifiedImageError

    try:
        with Image.open(path) as im:
            im = im.convert("RGB")
            im.thumbnail((THUMBNAIL, THUMBNAIL))
            buf = io.BytesIO()
            im.save(buf, format="JPEG", quality=85)
    except (OSError, UnidentifiedImageError):
        return None
    return "data:image/jpeg;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def task_class_names(path: str | Path | None) -> dict[int, str] | None:
    """The class names of a training run's ``task.json`` (``path``): ``{0: "negative", 1:
    "positive"}`` for the user's own task, ``{0: "majority", 1: "minority"}`` for the paper's;
    ``None`` without a readable file."""
    if path is None:
        return None
    try:
        record = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(record, dict):
        return None
    user = isinstance(record.get("description"), dict) and "task" in record["description"]
    return {0: "negative", 1: "positive"} if user else {0: "majority", 1: "minority"}


def _class_text(c: int, class_names: Mapping[int, str] | None) -> str:
    name = (class_names or {}).get(c)
    return f"{name} (class {c})" if name else f"class {c}"


def _candidates(
    row: pd.Series, subconcepts: Mapping[int, Sequence[str]] | None, show_scores: bool
) -> str:
    """The candidates of a row: as ``to_label.csv`` has them (with the posteriors, most likely
    first) with ``show_scores``, else only the names, in the training order of its class."""
    text = str(row["candidates"])
    if show_scores:
        return text
    own = (subconcepts or {}).get(int(row["class"]))
    if own:
        return " · ".join(own)
    return " · ".join(sorted(_SCORE.sub("", p).strip() for p in text.split(";") if p.strip()))


def _card(
    row: pd.Series,
    uri: str | None,
    class_names: Mapping[int, str] | None,
    subconcepts: Mapping[int, Sequence[str]] | None,
    show_scores: bool,
) -> str:
    ident = html.escape(str(row["id"]))
    href = html.escape(Path(str(row["image"])).resolve().as_uri(), quote=True)
    img = (
        f'<img src="{uri}" alt="{ident}">'
        if uri
        else f'<div class="missing">cannot read {html.escape(str(row["image"]))}</div>'
    )
    return (
        f'<div class="card"><a href="{href}" target="_blank" title="open the image at full '
        f'size">{img}</a><div class="id">{ident}</div>'
        f"<div>{html.escape(_class_text(int(row['class']), class_names))} · batch "
        f"{int(row['batch'])}</div>"
        f'<div class="cand">{html.escape(_candidates(row, subconcepts, show_scores))}</div></div>'
    )


def label_sheet(
    frame: pd.DataFrame,
    *,
    title: str = "Test images to label",
    class_names: Mapping[int, str] | None = None,
    subconcepts: Mapping[int, Sequence[str]] | None = None,
    show_scores: bool = False,
    thumbnails: Sequence[str | None] | None = None,
) -> str:
    """The sheet of ``to_label.csv``'s rows (``frame``, with an ``image`` column).

    Args:
        class_names: ``{class: name}`` (:func:`task_class_names`); else ``class 0`` / ``class 1``.
        subconcepts: ``{class: its subconcepts in the training order}``, the blind candidates;
            without it the names of ``candidates``, sorted.
        show_scores: show the subconcept model's posteriors beside each image.
        thumbnails: each row's data URI (``None`` where unreadable); default: read here.
    """
    if thumbnails is None:
        thumbnails = [thumbnail(p) for p in frame["image"]]
    intro = Section("How to label")
    shown = (
        "the candidates below are the subconcepts of its class, most likely first, with the "
        "subconcept model's posterior"
        if show_scores
        else "the candidates below are the subconcepts of its class; the model's scores are "
        "hidden so that they do not lead the eye, and --show-scores shows them"
    )
    intro.text(
        f"{len(frame)} test images, chosen where a label decides most. Give each its "
        f"subconcept in the column 'subconcept' of to_label.csv ({shown}); click an image to "
        f"open it at full size. Write {UNSURE!r} where you cannot tell: the row then counts as "
        "unlabelled. Label every row: a batch labelled only in part biases the estimate. Then, "
        f"for python -m medeval.evaluate and the next python -m medeval.label, {GIVE_LABELS}."
    )
    cards = Section("Images")
    cards.blocks.append(
        f"<style>{_CSS}</style><div class='sheet'>"
        + "".join(
            _card(r, uri, class_names, subconcepts, show_scores)
            for (_, r), uri in zip(frame.iterrows(), thumbnails, strict=True)
        )
        + "</div>"
    )
    return render(title, [intro, cards])


def sheet_file(frame: pd.DataFrame, **options: Any) -> tuple[str | None, list[str]]:
    """``to_label.html``'s text and the lines to print about it: ``(None, [why not])`` where no
    sheet can be written (the predictions name no images, or none of them can be read), else
    the sheet and a line where some images cannot be read. ``options``: :func:`label_sheet`'s."""
    if "image" not in frame.columns:
        return None, [
            "no to_label.html: the predictions name no images (no column image, path, "
            "image_path or file)"
        ]
    if frame.empty:
        return None, ["no to_label.html: no rows to label"]
    uris = [thumbnail(p) for p in frame["image"]]
    bad = [str(p) for p, u in zip(frame["image"], uris, strict=True) if u is None]
    if len(bad) == len(frame):
        return None, [
            f"no to_label.html: none of the {len(frame)} images can be read (first: {bad[0]})"
        ]
    lines = (
        [f"to_label.html: {len(bad)} of {len(frame)} images cannot be read (first: {bad[0]})"]
        if bad
        else []
    )
    return label_sheet(frame, thumbnails=uris, **options), lines
