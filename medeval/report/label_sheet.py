"""``to_label.html``: the rows to label as a sheet of thumbnails, each with its id and the
subconcepts its class may hold, in the order of ``to_label.csv`` (one file, images embedded)."""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path

import pandas as pd

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


def _card(row: pd.Series) -> str:
    uri = thumbnail(row["image"])
    img = (
        f'<img src="{uri}" alt="{html.escape(str(row["id"]))}">'
        if uri
        else f'<div class="missing">cannot read {html.escape(str(row["image"]))}</div>'
    )
    return (
        f'<div class="card">{img}<div class="id">{html.escape(str(row["id"]))}</div>'
        f"<div>class {int(row['class'])} · batch {int(row['batch'])}</div>"
        f'<div class="cand">{html.escape(str(row["candidates"]))}</div></div>'
    )


def label_sheet(frame: pd.DataFrame, *, title: str = "Test images to label") -> str:
    """The sheet of ``to_label.csv``'s rows (``frame``, with an ``image`` column)."""
    intro = Section("How to label")
    intro.text(
        f"{len(frame)} test images, chosen where a label decides most. Give each its "
        "subconcept in the column 'subconcept' of to_label.csv (the candidates below are the "
        "subconcepts of its class, most likely first, with the subconcept model's posterior). "
        "Label every row: a batch labelled only in part biases the estimate. Then evaluate "
        "with --labels to_label.csv (appended to earlier batches' files)."
    )
    cards = Section("Images")
    cards.blocks.append(
        f"<style>{_CSS}</style><div class='sheet'>"
        + "".join(_card(r) for _, r in frame.iterrows())
        + "</div>"
    )
    return render(title, [intro, cards])
