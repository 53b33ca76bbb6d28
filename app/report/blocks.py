"""The building blocks of the report's markup (``app.report.markup``): the ``Flavor`` that tells the browser file
from the PDF, escaping of every value from the case (hidden controls made visible), and the tables, images and
small print every section is made of. Only markup that Qt's rich-text engine and browsers both lay out."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass

from app.report.images import ReportImage

THUMBNAIL_BOX = (150, 150)
QUERY_IMAGE_BOX = (200, 180)
HASH_WIDTH = 192  # a SHA-256 in two lines of 32 monospace characters


@dataclass(frozen=True)
class Flavor:
    """``image_src(image, name)`` → the ``src`` of an ``img``; ``breakable(text)`` → escaped text that may
    wrap after '/' and similar; ``hash_html(hex)`` → a SHA-256 as it should show; ``page_width`` in points;
    ``progress(done, total, message)`` hears each distribution plot drawn (and may raise to stop)."""

    image_src: Callable[[ReportImage, str], str]
    breakable: Callable[[str], str]
    hash_html: Callable[[str], str]
    page_width: int
    progress: Callable[[int, int, str], None] | None = None


#: characters that would reorder or hide text (bidirectional controls, NUL and other C0/C1 controls but tab
#: and newline): shown as visible escapes, so "gnp.exe" with a right-to-left override reads as it is stored
_HIDDEN = re.compile("[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e"
                     "\u2066-\u2069]")


def visible(text: str) -> str:
    """``text`` with every reordering or invisible control character written as ``<U+XXXX>``."""
    return _HIDDEN.sub(lambda m: f"<U+{ord(m.group()):04X}>", text)


def esc(value: object) -> str:
    """HTML-escaped text with hidden controls made visible (``visible``)."""
    return html.escape(visible("" if value is None else str(value)), quote=True)


def image_tag(flavor: Flavor, image: ReportImage, name: str, box: tuple[float, float], alt: str) -> str:
    width, height = image.fit(*box) if image.scale == 1 else (image.width // image.scale,
                                                                 image.height // image.scale)
    return (f'<img src="{flavor.image_src(image, name)}" width="{width}" height="{height}" alt="{esc(alt)}">')


def pairs_table(pairs: list[tuple[str, str]], label_width: int = 150) -> str:
    """A two-column table of label → value (values already HTML)."""
    body = "".join(f'<tr><td class="label" width="{label_width}" valign="top"><b>{esc(label)}</b></td>'
                   f'<td valign="top">{value}</td></tr>' for label, value in pairs)
    return f'<table class="pairs" cellspacing="0" cellpadding="3" width="100%">{body}</table>'


def _width(points: int | None) -> str:
    return f' width="{points}"' if points else ""


def table(head: list[tuple[str, int | None]], rows: list[list[str]], css: str = "grid") -> str:
    """A table with a header row; ``head`` is (title, width in points or None); cells are HTML."""
    cells = "".join(f'<th align="left"{_width(w)}>{esc(title)}</th>' for title, w in head)
    body = "".join("<tr>" + "".join(f'<td valign="top">{cell}</td>' for cell in row) + "</tr>" for row in rows)
    return (f'<table class="{css}" cellspacing="0" cellpadding="3" border="1" width="100%">'
            f"<thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>")


def small(value: str) -> str:
    """Small print (``value`` already HTML)."""
    return f'<span class="small">{value}</span>'


def tiles(cells: list[str], per_row: int, width: int) -> str:
    """``cells`` (HTML) laid out ``per_row`` to a row across ``width`` points."""
    rows = []
    for start in range(0, len(cells), per_row):
        chunk = cells[start:start + per_row] + ["&nbsp;"] * (per_row - len(cells[start:start + per_row]))
        rows.append("<tr>" + "".join(f'<td valign="top" width="{width // per_row}">{c}</td>' for c in chunk)
                    + "</tr>")
    return f'<table class="tiles" cellspacing="6" cellpadding="4" width="100%">{"".join(rows)}</table>'
