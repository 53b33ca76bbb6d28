"""The report's "Sightings" section (``app.report.markup``): where and when the confirmed person was seen — the
route across cameras, the timeline figure (``app.report.timeline_plot``) and one table row per sighting
(camera, start, end, duration, items, the best item's thumbnail, source file and frames)."""

from __future__ import annotations

from app.report import text
from app.report.blocks import Flavor, esc, image_tag, small, table
from app.report.content import ReportContent
from app.report.sightings import ReportSighting, sightings_route
from app.report.timeline_plot import render_timeline

SIGHTING_THUMBNAIL_BOX = (48, 72)


def duration(seconds: float | None) -> str:
    """``0 s``, ``12.5 s``, ``3 min 05 s``, ``2 h 04 min``; '—' unknown."""
    if seconds is None:
        return "—"
    if seconds < 60:
        return f"{seconds:.1f} s".replace(".0 s", " s")
    if seconds < 3600:
        return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"
    return f"{int(seconds // 3600)} h {int(seconds % 3600 // 60):02d} min"


def _frames(sighting: ReportSighting) -> str:
    first, last = sighting.frames
    if first is None:
        return "—"
    return f"{first:,}" if first == last else f"{first:,}–{last:,}"


def _source(sighting: ReportSighting, content: ReportContent, flavor: Flavor) -> str:
    sources = sighting.sources()
    if len(sources) == 1:
        path, items = next(iter(sources.items()))
        digest = items[0].source_sha256
        said = flavor.breakable(content.shown(path))
        return said + ("<br>" + small("SHA-256 " + esc(digest[:16]) + "…") if digest else "")
    return esc(f"{len(sources):,} files") + "<br>" + small(", ".join(flavor.breakable(content.shown(p))
                                                                   for p in list(sources)[:3])
                                                         + (", …" if len(sources) > 3 else ""))


def _row(sighting: ReportSighting, content: ReportContent, flavor: Flavor) -> list[str]:
    if sighting.thumbnail is not None:
        best = image_tag(flavor, sighting.thumbnail, f"sighting-{sighting.number}", SIGHTING_THUMBNAIL_BOX,
                         sighting.sighting.best)
    else:
        best = '<span class="bad">no crop</span>'
    items = f"{len(sighting.members):,}<br>" + small("best " + flavor.breakable(sighting.sighting.best))
    return [str(sighting.number), esc(sighting.camera or "—"), esc(text.item_time(sighting.start)),
            esc(text.item_time(sighting.end)), esc(duration(sighting.duration)), items, best,
            _source(sighting, content, flavor), esc(_frames(sighting))]


def sightings(content: ReportContent, flavor: Flavor) -> str:
    found = content.sightings
    parts = [f"<h2>Sightings ({len(found):,})</h2>"]
    if not found:
        parts.append("<p>No confirmed item, so no sighting.</p>")
        return "\n".join(parts)
    parts.append(f"<p><b>Route:</b> {esc(sightings_route(found) or '—')}. Confirmed items of one camera belong to one "
                 "sighting when they are one track or follow each other within seconds; sightings are numbered "
                 "in time order.</p>")
    figure = render_timeline(found)
    if figure is not None:
        shown = image_tag(flavor, figure, "sightings-timeline", (0, 0), "sightings timeline")
        untimed = sum(1 for s in found if s.start is None)
        note = f" {untimed:,} sighting(s) without a time are only in the table." if untimed else ""
        parts.append(f'<p class="plot">{shown}<br>'
                     + small(esc("One lane per camera; each mark runs from a sighting's first to its last item, "
                                 "numbered as in the table; the dashed line joins them in time order." + note))
                     + "</p>")
    rows = [_row(s, content, flavor) for s in found]
    parts.append(table([("#", 22), ("Camera", 56), ("Start", 88), ("End", 88), ("Duration", 64), ("Items", 70),
                        ("Best", 56), ("Source", None), ("Frames", 56)], rows, css="grid sightings"))
    return "\n".join(parts)
