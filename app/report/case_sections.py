"""The report's sections on the case itself (``app.report.markup``): its header, the declaration with the
networks the report rests on, and the galleries searched."""

from __future__ import annotations

from app.provenance import is_shipped, licence_line, network_name, sources_text
from app.report import signing, text
from app.report.blocks import HASH_WIDTH, Flavor, esc, pairs_table, small, table
from app.report.blur import FACE, FACE_AND_HEAD, HEAD, METHODS
from app.report.content import GalleryInfo, ReportContent
from engine.perception.pretrained.registry import ATTRIBUTE_NETWORK, FACE_NETWORK


def blur_notice(content: ReportContent) -> str:
    """What the blurring did to the confirmed results' thumbnails, by ``app.report.blur`` method."""
    methods = [r.thumbnail.blurred for r in content.confirmed if r.thumbnail is not None]
    said = {FACE: "a face found by the face detector ({network})", FACE_AND_HEAD: "faces found low in the "
            "crop, and the head region as well", HEAD: "no face found: the estimated head region"}
    counts = [f"{methods.count(method):,} {said[method].format(network=FACE_NETWORK)}"
              for method in METHODS if methods.count(method)]
    how = f" ({'; '.join(counts)})" if counts else ""
    return (f'<p class="notice"><b>Faces in the thumbnails are blurred</b>{esc(how)}. Only the report\'s copies '
            "are blurred: the evidence files are unchanged, and the SHA-256 values below are those of the original "
            "files.</p>")


def header(content: ReportContent, flavor: Flavor) -> str:
    case = content.case
    head = content.audit_head
    if content.chain_ok:
        check = '<span class="ok">verified</span> — every entry\'s hash recomputed and the case\'s tables match'
    else:
        check = (f'<span class="bad">{len(content.chain_problems)} problem(s)</span>: '
                 + "; ".join(esc(p) for p in content.chain_problems[:8]))
    pairs = [
        ("Case", f"#{case.id} — {esc(case.title)}"),
        ("Status", esc(case.status)),
        ("Created", esc(text.moment(case.created_at))),
        ("Last change", esc(text.moment(case.updated_at))),
        ("Description", esc(case.description) if case.description.strip() else "—"),
        ("Case database", flavor.breakable(content.shown(content.db_path))),
        ("Report made", esc(text.moment(content.exported_at))),
        ("Audit trail", f"{len(content.audit):,} entries; newest #{head.seq}: {flavor.hash_html(head.hash)}"),
        ("Audit chain check", check),
    ]
    parts = ['<p class="kicker">Lineup · case report</p>', f"<h1>{esc(case.title)}</h1>", pairs_table(pairs)]
    if content.blur_faces:
        parts.append(blur_notice(content))
    if content.warnings:
        items = "".join(f"<li>{esc(w)}</li>" for w in content.warnings)
        parts.append(f'<h2>Warnings</h2><ul class="warnings">{items}</ul>')
    return "\n".join(parts)


SCORE_STATEMENT = ("A similarity score only ranks gallery images by how much they resemble the query; it is not an "
                   "identification of any person. Every result in this report is a candidate for a human "
                   "examiner to assess, and a confirmed mark records that examiner's judgement, not the software's.")


def declaration(content: ReportContent, flavor: Flavor) -> str:
    models = sorted({g.model_fingerprint for g in content.galleries})
    pairs = [
        ("Examiner", esc(content.examiner or "—") + (f" (report made by {esc(content.exported_by)})"
                                                     if content.exported_by and content.exported_by != content.examiner
                                                     else "")),
        ("Software", esc(content.software or "—")),
        ("Model fingerprints", "<br>".join(flavor.hash_html(m) for m in models) or "—"),
        ("Gallery fingerprints", "<br>".join(f"#{g.id} {flavor.hash_html(g.fingerprint)}"
                                             for g in content.galleries) or "—"),
        ("Signing key", ("Ed25519, fingerprint (SHA-256) "
                         + flavor.hash_html(signing.grouped(content.signing_fingerprint))
                         if content.signing_fingerprint else "not signed")),
        ("Times", "all times are in UTC (Coordinated Universal Time)"),
    ]
    return (f'<h2>Declaration</h2><p class="notice"><b>{esc(SCORE_STATEMENT)}</b></p>' + networks_notice(content)
            + pairs_table(pairs)
            + small("<code>lineup report verify</code> checks this report's signature with the key above, its "
                     "file, its evidence and its content against the case database."))


def _gallery_networks(info: GalleryInfo) -> str:
    """"; views by …; attribute evidence: …" for an openable gallery ("" for one that cannot be opened)."""
    if info.state == "unavailable":
        return ""
    parts = [f"{view} by {network_name(model)}" for view, model in info.networks.items()]
    made = f"; views {', '.join(parts)}" if parts else ""
    return f"{made}; attribute evidence: {sources_text(info.evidence_sources)}"


def _version(info: GalleryInfo) -> str:
    """"version 3 searched; footage gallery; " and the like (what the case and the gallery record)."""
    said = "version not recorded; " if info.version is None else f"version {info.version:,} searched; "
    if info.ranking and info.ranking.get("domain"):
        said += f"{info.ranking['domain']} gallery; "
    return said


def galleries(content: ReportContent, flavor: Flavor) -> str:
    if not content.galleries:
        return "<h2>Galleries searched</h2><p>None.</p>"
    states = {"unchanged": "unchanged", "changed": '<span class="bad">changed since</span>',
              "unavailable": '<span class="bad">cannot be opened</span>'}
    rows = [[str(g.id), flavor.breakable(content.shown(g.path)) + "<br>"
             + small(f"added {esc(text.moment(g.added_at))}; "
                                                                   + esc(_version(g))
                                                                   + f"model {esc(g.model_fingerprint)}"
                                                                   + esc(_gallery_networks(g))),
             f"{g.item_count:,}", states.get(g.state, esc(g.state)), flavor.hash_html(g.fingerprint)]
            for g in content.galleries]
    return "<h2>Galleries searched</h2>" + table(
        [("#", 24), ("Folder", None), ("Items", 56), ("Now", 70), ("Fingerprint (SHA-256)", HASH_WIDTH)], rows)


def _steps(labels: list[str]) -> str:
    return ("step " if len(labels) == 1 else "steps ") + ", ".join(labels)


def shipped_networks(content: ReportContent) -> dict[str, str]:
    """Shipped networks the report rests on → what for: those that ranked a step (of any branch), the attribute
    network when a text step searched a gallery holding its evidence, the face detector when it blurred a
    thumbnail."""
    ranked: dict[str, list[str]] = {}
    evidence: list[str] = []
    holds = {g.id: "pretrained" in (g.evidence_sources or ()) for g in content.galleries}
    for step in content.steps:
        if is_shipped(step.network):
            ranked.setdefault(str(step.network["name"]), []).append(step.label)
        if step.query_text and holds.get(step.gallery_id):
            evidence.append(step.label)
    said = {name: f"ranked {_steps(numbers)}" for name, numbers in ranked.items()}
    if evidence:
        said[ATTRIBUTE_NETWORK] = f"attribute evidence for {_steps(evidence)}"
    if any(r.thumbnail is not None and r.thumbnail.blurred for r in content.confirmed):
        said[FACE_NETWORK] = "face blurring"  # it ran on every blurred thumbnail, whatever it found
    return said


def networks_notice(content: ReportContent) -> str:
    """The licence of the shipped networks the report rests on ("" when it rests on none)."""
    used = shipped_networks(content)
    if not used:
        return ""
    line = licence_line(f"{name} ({what})" for name, what in used.items())
    return f'<p class="notice"><b>Pretrained networks.</b> {esc(line)}</p>'
