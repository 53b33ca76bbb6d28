"""The report's body as HTML, from a ``ReportContent``: one template for both outputs.

Only markup that Qt's rich-text engine and browsers both lay out is used (headings, paragraphs, tables with
``cellpadding``/``width``, ``img`` with explicit sizes, inline ``span`` styles, class names for browsers'
CSS). What differs between the two is a ``Flavor``: how an image is referenced (a data URI in the browser
file, a registered resource in the PDF), how long paths and hashes may wrap, and how wide the page is.
Every value from the case is escaped.
"""

from __future__ import annotations

from app.report.blocks import Flavor, esc, visible
from app.report.case_sections import SCORE_STATEMENT, declaration, galleries, header
from app.report.content import ReportContent
from app.report.result_sections import audit, confirmed, evidence, notes, query_images
from app.report.sighting_sections import sightings
from app.report.step_sections import chain, ranking_sources, step_tree

__all__ = ["SCORE_STATEMENT", "SECTIONS", "Flavor", "body", "esc", "visible"]

SECTIONS = (header, declaration, galleries, step_tree, chain, ranking_sources, query_images, confirmed, sightings,
            notes, evidence, audit)


def body(content: ReportContent, flavor: Flavor) -> str:
    """Every section of the report, in order, as HTML."""
    return "\n".join(section(content, flavor) for section in SECTIONS)
