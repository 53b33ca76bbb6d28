"""The report as a PDF: the shared body (``app.report.markup``) laid out by ``QTextDocument`` and painted page
by page onto a ``QPdfWriter`` (no browser, no print dialog).

The document is laid out in pages of the A4 text area, so no text line or image is cut at a page edge and a
long chain or trail simply takes more pages; table header rows repeat on each page. Each page gets a running
head (case and report) and a foot (audit head, page i of n). Images go in as ``QImage`` resources, which are
safe to use off the GUI thread (a data-URI image would become a ``QPixmap``, which is not).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from app.report import text
from app.report.content import ReportContent
from app.report.images import ReportImage
from app.report.markup import Flavor, body, esc
from app.report.qt import ensure_gui_application

KEEP_MIN = 110  # a heading moves to the next page unless this many points of its section fit below it
RESOLUTION = 96  # layout units are CSS-like points at 96 per inch; text and PNGs stay vector / full resolution
MARGIN_MM = (16.0, 20.0, 16.0, 18.0)  # left, top, right, bottom
PAGE_WIDTH = 680
ZWSP = "\u200b"

STYLE = """
body { font-family: 'DejaVu Sans'; font-size: 8.5pt; color: #23272e; }
h1 { font-size: 17pt; margin-top: 2px; margin-bottom: 8px; }
h2 { font-size: 12.5pt; color: #1f3f6a; margin-top: 16px; margin-bottom: 5px; }
h3 { font-size: 10pt; color: #2d4f7c; margin-top: 12px; margin-bottom: 3px; }
p { margin-top: 3px; margin-bottom: 3px; }
.kicker { font-size: 7.5pt; color: #6b7380; }
table.grid { border-collapse: collapse; border-style: solid; border-color: #c9ced6; }
table.pairs { border-collapse: collapse; }
table.tiles { border-collapse: collapse; border-style: solid; border-color: #dde1e6; }
th { background-color: #eef1f5; }
td.label { color: #4b525c; }
.small { font-size: 7pt; color: #5d6570; }
.hash { font-family: 'DejaVu Sans Mono'; font-size: 6.5pt; }
.ok { color: #217a3c; font-weight: bold; }
.bad { color: #b3261e; font-weight: bold; }
.relevant { color: #e8702a; font-weight: bold; }
.notice { background-color: #fff6e0; }
code { font-family: 'DejaVu Sans Mono'; }
"""


class _Resources:
    """Registers each image on the document as ``report-image:<n>`` (numbered, so that no item id has to
    survive URL parsing)."""

    def __init__(self, document) -> None:
        self._document = document
        self._count = 0

    def __call__(self, image: ReportImage, _name: str) -> str:
        from PySide6.QtCore import QUrl
        from PySide6.QtGui import QImage, QTextDocument

        self._count += 1
        url = f"report-image:{self._count}"
        picture = QImage.fromData(image.png, "PNG")
        self._document.addResource(QTextDocument.ResourceType.ImageResource, QUrl(url), picture)
        return url


def _breakable(value: str) -> str:
    """Escaped text that may wrap after path separators and underscores (a zero-width space after each)."""
    out = esc(value)
    for mark in ("/", "\\", "_", "-", "."):
        out = out.replace(mark, mark + ZWSP)
    return out


def _hash(value: str) -> str:
    half = len(value) // 2
    return f'<span class="hash">{esc(value[:half])}<br>{esc(value[half:])}</span>'


def _keep_sections_together(document, page_height: float) -> int:
    """Move headings (h2, h3) to the next page where their section would straddle a page edge yet fits on one
    page (a query step: heading, details and plot), or where too little of it fits below the heading. A
    section runs to the next heading; a heading followed at once by another joins that one's section.
    Returns how many page breaks were added."""
    from PySide6.QtGui import QTextCursor, QTextFormat

    layout = document.documentLayout()
    headings = []
    block = document.begin()
    while block.isValid():
        if block.blockFormat().headingLevel() in (2, 3):
            headings.append(block)
        block = block.next()
    added = 0
    for index, heading in enumerate(headings):
        rect = layout.blockBoundingRect(heading)
        top = rect.top()
        end = layout.documentSize().height()
        for following in headings[index + 1:]:
            follow_rect = layout.blockBoundingRect(following)
            end = follow_rect.top()
            if end - top > 2 * rect.height():
                break
            end = layout.documentSize().height()
        offset = top % page_height
        if offset < 1.0:
            continue
        straddles = top // page_height != (end - 1) // page_height and end - top <= page_height
        orphan = page_height - offset < min(KEEP_MIN, end - top)
        if straddles or orphan:
            style = heading.blockFormat()
            style.setPageBreakPolicy(QTextFormat.PageBreakFlag.PageBreak_AlwaysBefore)
            QTextCursor(heading).setBlockFormat(style)
            added += 1
    return added


def render_pdf(content: ReportContent, path: str | Path, *,
               progress: Callable[[int, int, str], None] | None = None) -> int:
    """Write the report to ``path`` as a PDF; returns the number of pages. ``progress(done, total, message)``
    hears each plot drawn, the layout and each page painted, and may raise to stop (the caller removes the
    partial file)."""
    ensure_gui_application()
    from PySide6.QtCore import QMarginsF, QPointF, QRectF, QSizeF, Qt
    from PySide6.QtGui import (
        QAbstractTextDocumentLayout,
        QColor,
        QFont,
        QPageLayout,
        QPageSize,
        QPainter,
        QPdfWriter,
        QPen,
        QTextDocument,
    )

    writer = QPdfWriter(str(path))
    writer.setResolution(RESOLUTION)
    writer.setPageLayout(QPageLayout(QPageSize(QPageSize.PageSizeId.A4), QPageLayout.Orientation.Portrait,
                                     QMarginsF(0, 0, 0, 0), QPageLayout.Unit.Millimeter))
    writer.setTitle(f"Case report — {content.case.title}")
    writer.setCreator("Lineup")
    per_mm = RESOLUTION / 25.4
    left, top, right, bottom = (m * per_mm for m in MARGIN_MM)
    page_w, page_h = writer.width(), writer.height()
    area = QSizeF(page_w - left - right, page_h - top - bottom)

    document = QTextDocument()
    document.documentLayout().setPaintDevice(writer)
    font = QFont("DejaVu Sans")
    font.setPointSizeF(8.5)
    document.setDefaultFont(font)
    document.setDefaultStyleSheet(STYLE)
    document.setDocumentMargin(0)
    flavor = Flavor(image_src=_Resources(document), breakable=_breakable, hash_html=_hash,
                    page_width=int(area.width()), progress=progress)
    markup = body(content, flavor)
    if progress is not None:
        progress(0, 0, "Laying out the PDF")
    document.setHtml(f"<body>{markup}</body>")
    document.setPageSize(area)
    _keep_sections_together(document, area.height())
    pages = document.pageCount()

    small = QFont("DejaVu Sans")
    small.setPointSizeF(7)
    grey, rule = QColor("#5d6570"), QColor("#c9ced6")
    head = content.audit_head
    running_head = f"Lineup case report · case #{content.case.id} — {content.case.title}"
    foot = f"Made {text.moment(content.exported_at)} · audit head #{head.seq} {head.hash[:16]}…"

    painter = QPainter()
    if not painter.begin(writer):
        raise OSError(f"cannot write the PDF {path}")
    try:
        for page in range(pages):
            if progress is not None:
                progress(page, pages, f"Writing PDF page {page + 1} of {pages}")
            if page:
                writer.newPage()
            painter.save()
            painter.translate(left, top - page * area.height())
            context = QAbstractTextDocumentLayout.PaintContext()
            context.clip = QRectF(0, page * area.height(), area.width(), area.height())
            painter.setClipRect(context.clip)
            document.documentLayout().draw(painter, context)
            painter.restore()

            painter.setFont(small)
            painter.setPen(QPen(rule, 0.6))
            painter.drawLine(QPointF(left, top - 8), QPointF(page_w - right, top - 8))
            painter.drawLine(QPointF(left, page_h - bottom + 8), QPointF(page_w - right, page_h - bottom + 8))
            painter.setPen(grey)
            head_box = QRectF(left, top - 24, area.width(), 14)
            painter.drawText(head_box, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter,
                             painter.fontMetrics().elidedText(running_head, Qt.TextElideMode.ElideRight,
                                                              int(area.width() * 0.8)))
            painter.drawText(head_box, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                             content.case.status)
            foot_box = QRectF(left, page_h - bottom + 10, area.width(), 14)
            painter.drawText(foot_box, Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignVCenter, foot)
            painter.drawText(foot_box, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter,
                             f"Page {page + 1} of {pages}")
    finally:
        painter.end()
    return pages
