"""The report as one self-contained HTML file: the shared body (``app.report.markup``) with its images as
``data:`` URIs and a stylesheet for screen and print. Opens in any browser, offline."""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import replace

from app.report.content import ReportContent
from app.report.images import ReportImage
from app.report.markup import Flavor, body, esc

PAGE_WIDTH = 900

STYLE = """
:root { color-scheme: light; }
body { font-family: "DejaVu Sans", "Segoe UI", Helvetica, Arial, sans-serif; font-size: 14px; color: #23272e;
       background: #f3f4f6; margin: 0; }
main { max-width: 900px; margin: 24px auto; background: #fff; padding: 28px 36px; border: 1px solid #d8dce2; }
h1 { font-size: 26px; margin: 2px 0 14px; }
h2 { font-size: 19px; margin: 28px 0 8px; padding-bottom: 3px; border-bottom: 2px solid #4a7fc1; }
h3 { font-size: 15px; margin: 20px 0 6px; color: #2d4f7c; }
.kicker { text-transform: uppercase; letter-spacing: .08em; color: #6b7380; font-size: 12px; margin: 0; }
table { border-collapse: collapse; }
table.grid td, table.grid th { border: 1px solid #d3d8df; }
table.grid th { background: #eef1f5; font-weight: 600; }
table.grid tbody tr:nth-child(even) td { background: #fafbfc; }
table.pairs td { border-bottom: 1px solid #eceef1; }
td.label { color: #4b525c; }
table.tiles td { border: 1px solid #e1e4e8; text-align: left; font-size: 12px; }
table.tiles img { display: block; margin-bottom: 4px; background: #f4f5f7; }
.small { font-size: 11px; color: #5d6570; }
.hash { font-family: "DejaVu Sans Mono", Consolas, monospace; font-size: 11px; word-break: break-all; }
.path { overflow-wrap: anywhere; }
.ok { color: #217a3c; font-weight: 600; }
.bad { color: #b3261e; font-weight: 600; }
.relevant { color: #e8702a; font-weight: 600; }
.notice { background: #fff6e0; border: 1px solid #e6c36a; padding: 8px 10px; }
ul.warnings li { color: #8a1c14; }
p.plot img { max-width: 100%; height: auto; }
@media print { body { background: #fff; } main { border: 0; margin: 0; max-width: none; padding: 0; }
               h2, h3 { break-after: avoid; } tr, img { break-inside: avoid; } }
"""


def _data_uri(image: ReportImage, _name: str) -> str:
    return "data:image/png;base64," + base64.b64encode(image.png).decode("ascii")


def _breakable(value: str) -> str:
    return f'<span class="path">{esc(value)}</span>'


def _hash(value: str) -> str:
    return f'<code class="hash">{esc(value)}</code>'


BROWSER = Flavor(image_src=_data_uri, breakable=_breakable, hash_html=_hash, page_width=PAGE_WIDTH)


def render_html(content: ReportContent, progress: Callable[[int, int, str], None] | None = None) -> str:
    """The whole HTML document (needs a QGuiApplication for the plots: ``app.report.qt``); ``progress`` hears
    each plot drawn (``Flavor``)."""
    flavor = BROWSER if progress is None else replace(BROWSER, progress=progress)
    title = f"Case report — {content.case.title}"
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="generator" content="Lineup">\n<title>{esc(title)}</title>\n<style>{STYLE}</style>\n'
            f"</head>\n<body>\n<main>\n{body(content, flavor)}\n</main>\n</body>\n</html>\n")
