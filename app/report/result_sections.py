"""The report's sections on what the search found and rests on (``app.report.markup``): the query images, the
confirmed and rejected results, the notes, the evidence files and the audit trail."""

from __future__ import annotations

from app.report import text
from app.report.blocks import (
    HASH_WIDTH,
    QUERY_IMAGE_BOX,
    THUMBNAIL_BOX,
    Flavor,
    esc,
    image_tag,
    pairs_table,
    small,
    table,
    tiles,
)
from app.report.content import MarkedResult, ReportContent


def query_images(content: ReportContent, flavor: Flavor) -> str:
    if not content.query_images:
        return "<h2>Query images</h2><p>No sketch or IR image was used.</p>"
    cells = []
    for image in content.query_images:
        shown = (image_tag(flavor, image.image, f"query-{image.evidence_id}", QUERY_IMAGE_BOX, image.kind)
                 if image.image is not None else '<span class="bad">file missing or unreadable</span>')
        used = (("step " if len(image.steps) == 1 else "steps ") + ", ".join(image.steps)) if image.steps \
            else "no step"
        state = "" if image.intact else '<br><span class="bad">does not match its SHA-256</span>'
        original = f"<br>from {flavor.breakable(content.shown(image.original_path))}" if image.original_path else \
            "<br>drawn in the app"
        cells.append(f"{shown}<br><b>{esc(text.modality_name(image.kind))}</b> · {esc(used)}"
                     f"{small(original)}{state}")
    return "<h2>Query images</h2>" + tiles(cells, 3, flavor.page_width)


def _where_marked(result: MarkedResult) -> str:
    """The step, score and rank at which an item was marked, in words (never a score from another step)."""
    if not result.recorded:
        return ("step, score and rank not recorded (marked before Lineup kept them with a mark, or outside a "
                "search step)")
    said = f"step {result.step_label or '#' + str(result.step_id)}"
    if result.step_undone:
        said += " (since undone)"
    if result.step_query:
        said += f" ({result.step_query})"
    if result.score is None:
        return said + "; the step did not keep the item, so it has no score or rank there"
    rank = "not recorded" if result.rank is None else f"{result.rank:,}" + (
        f" of {result.kept:,} kept" if result.kept else "")
    return said + f"; score {text.score(result.score)}, rank {rank}"


def _examiner(result: MarkedResult) -> str:
    if not result.examiner:
        return "examiner not recorded"
    return result.examiner + (" (from the audit trail)" if result.examiner_from_audit else "")


def _footage(result: MarkedResult, flavor: Flavor, content: ReportContent) -> str:
    source = flavor.breakable(content.shown(result.source)) if result.source else "—"
    frame = "—" if result.frame is None else f"{result.frame:,}"
    return (f"{source}, frame {esc(frame)} · camera {esc(result.camera or '—')} · "
            f"{esc(text.item_time(result.time))}")


def confirmed(content: ReportContent, flavor: Flavor) -> str:
    parts = [f"<h2>Confirmed results ({len(content.confirmed):,})</h2>"]
    if not content.confirmed:
        parts.append("<p>No result was confirmed.</p>")
    else:
        rows = []
        for result in content.confirmed:
            if result.thumbnail is not None:
                shown = image_tag(flavor, result.thumbnail, f"crop-{result.gallery_id}-{result.item_id}", THUMBNAIL_BOX,
                             result.item_id)
            else:
                shown = '<span class="bad">no crop image</span>'
            pairs = [("Item", f"<b>{flavor.breakable(result.item_id)}</b>"),
                     ("Footage", _footage(result, flavor, content)),
                     ("Confirmed at", esc(_where_marked(result))),
                     ("Confirmed by", f"{esc(_examiner(result))}, {esc(text.moment(result.marked_at))}")]
            if result.note:
                pairs.append(("Note", f"<i>{esc(result.note)}</i>"))
            rows.append(f'<tr><td valign="top" width="{THUMBNAIL_BOX[0] + 8}">{shown}</td>'
                        f'<td valign="top">{pairs_table(pairs, 90)}</td></tr>')
        parts.append(f'<table class="tiles" cellspacing="4" cellpadding="4" width="100%">{"".join(rows)}</table>')
    parts.append(rejected(content, flavor))
    return "\n".join(parts)


def rejected(content: ReportContent, flavor: Flavor) -> str:
    if not content.rejected:
        return "<h3>Rejected results (0)</h3><p>No result was rejected.</p>"
    rows = [[flavor.breakable(r.item_id), small(_footage(r, flavor, content)), esc(_where_marked(r)),
             esc(_examiner(r)) + "<br>" + small(esc(text.moment(r.marked_at))), esc(r.note or "")]
            for r in content.rejected]
    return f"<h3>Rejected results ({len(content.rejected):,})</h3>" + table(
        [("Item", 90), ("Footage", 150), ("Rejected at", None), ("By · when", 100), ("Note", 80)], rows)


def notes(content: ReportContent, flavor: Flavor) -> str:
    if not content.notes:
        return "<h2>Notes</h2><p>No notes.</p>"
    rows = [[esc(text.moment(n.at)) + ("" if n.edited_at is None
                                       else "<br>" + small(f"edited {esc(text.moment(n.edited_at))}")),
             esc(n.about), esc(n.text).replace("\n", "<br>")] for n in content.notes]
    intro = ("<p>Each note as it reads now; an edited note gives the time of its last edit, and the audit trail "
             "keeps every earlier text.</p>" if any(n.edited_at for n in content.notes) else "")
    return "<h2>Notes</h2>" + intro + table([("Time", 130), ("About", 110), ("Note", None)], rows)


def evidence(content: ReportContent, flavor: Flavor) -> str:
    rows = [[esc(e.kind), esc(e.label) + "<br>" + small(flavor.breakable(content.shown(e.path))),
             flavor.hash_html(e.sha256)]
            for e in content.evidence]
    intro = ("<p>SHA-256 of every file the report rests on (a gallery by the fingerprint of its items and "
             "model). <code>lineup report verify</code> checks them again.</p>")
    return "<h2>Evidence</h2>" + intro + (table([("Kind", 70), ("What · where", None), ("SHA-256", HASH_WIDTH)], rows)
                                          if rows else "<p>None.</p>")


def audit(content: ReportContent, flavor: Flavor) -> str:
    rows = [[str(line.seq), small(esc(line.at.replace("T", " ").removesuffix("+00:00"))), esc(line.actor),
             esc(line.action), esc(line.summary), flavor.hash_html(line.hash)] for line in content.audit]
    return "<h2>Audit trail</h2>" + table(
        [("#", 26), ("Time (UTC)", 92), ("Actor", 62), ("Action", 72), ("What", None), ("Entry hash", HASH_WIDTH)],
        rows, css="grid audit")
