"""The report's body as HTML, from a ``ReportContent``: one template for both outputs.

Only markup that Qt's rich-text engine and browsers both lay out is used (headings, paragraphs, tables with
``cellpadding``/``width``, ``img`` with explicit sizes, inline ``span`` styles, class names for browsers'
CSS). What differs between the two is a ``Flavor``: how an image is referenced (a data URI in the browser
file, a registered resource in the PDF), how long paths and hashes may wrap, and how wide the page is.
Every value from the case is escaped.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from dataclasses import dataclass

from app.provenance import is_shipped, licence_line, network_name, source_label, sources_text
from app.report import signing, text
from app.report.blur import FACE, FACE_AND_HEAD, HEAD, METHODS
from app.report.content import ChainStep, GalleryInfo, MarkedResult, ReportContent
from app.report.images import ReportImage
from app.report.plots import render_distribution
from engine.kernel.ontology import key_label, value_label
from engine.perception.pretrained.registry import ATTRIBUTE_NETWORK, FACE_NETWORK
from engine.retrieval.encoding.views import BIOMETRICS_VIEW

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


def _img(flavor: Flavor, image: ReportImage, name: str, box: tuple[float, float], alt: str) -> str:
    width, height = image.fit(*box) if image.scale == 1 else (image.width // image.scale,
                                                                 image.height // image.scale)
    return (f'<img src="{flavor.image_src(image, name)}" width="{width}" height="{height}" alt="{esc(alt)}">')


def _rows(pairs: list[tuple[str, str]], label_width: int = 150) -> str:
    """A two-column table of label → value (values already HTML)."""
    body = "".join(f'<tr><td class="label" width="{label_width}" valign="top"><b>{esc(label)}</b></td>'
                   f'<td valign="top">{value}</td></tr>' for label, value in pairs)
    return f'<table class="pairs" cellspacing="0" cellpadding="3" width="100%">{body}</table>'


def _width(points: int | None) -> str:
    return f' width="{points}"' if points else ""


def _table(head: list[tuple[str, int | None]], rows: list[list[str]], css: str = "grid") -> str:
    """A table with a header row; ``head`` is (title, width in points or None); cells are HTML."""
    cells = "".join(f'<th align="left"{_width(w)}>{esc(title)}</th>' for title, w in head)
    body = "".join("<tr>" + "".join(f'<td valign="top">{cell}</td>' for cell in row) + "</tr>" for row in rows)
    return (f'<table class="{css}" cellspacing="0" cellpadding="3" border="1" width="100%">'
            f"<thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>")


def _small(value: str) -> str:
    return f'<span class="small">{value}</span>'


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
    parts = ['<p class="kicker">Lineup · case report</p>', f"<h1>{esc(case.title)}</h1>", _rows(pairs)]
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
            + _rows(pairs)
            + _small("<code>lineup report verify</code> checks this report's signature with the key above, its "
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
             + _small(f"added {esc(text.moment(g.added_at))}; "
                                                                   + esc(_version(g))
                                                                   + f"model {esc(g.model_fingerprint)}"
                                                                   + esc(_gallery_networks(g))),
             f"{g.item_count:,}", states.get(g.state, esc(g.state)), flavor.hash_html(g.fingerprint)]
            for g in content.galleries]
    return "<h2>Galleries searched</h2>" + _table(
        [("#", 24), ("Folder", None), ("Items", 56), ("Now", 70), ("Fingerprint (SHA-256)", HASH_WIDTH)], rows)


def _step_caption(step: ChainStep) -> str:
    histogram = step.histogram
    parts = []
    if step.cut_score is not None:
        where = "threshold" if step.keep_rule == "threshold" else "lowest kept score"
        parts.append(f"Kept <b>{step.candidates_after:,}</b> of {int(histogram.get('count') or 0):,} ranked "
                     f"candidates; cut at <b>{step.cut_score:.4f}</b> ({where})")
    if histogram.get("mean") is not None:
        parts.append(f"scores {histogram['low']:.4f} … {histogram['high']:.4f}, mean {histogram['mean']:.4f}, "
                     f"s.d. {histogram['std']:.4f}")
    relevant = histogram.get("relevant")
    if relevant is not None:
        parts.append(f'ground truth: <span class="relevant">{sum(relevant):,} relevant</span> candidates')
    return "; ".join(parts) + "."


def _ranked_by(content: ReportContent, step: ChainStep) -> str:
    info = next((g for g in content.galleries if g.id == step.gallery_id), None)
    return text.ranked_by(step.network, step.view, "" if info is None else info.model_fingerprint,
                          step.network_problem, changed=info is not None and info.state == "changed")


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


def _state_of(step: ChainStep) -> str:
    """Where a step stands in the tree, in words (HTML)."""
    if step.undone:
        return f'<span class="bad">undone</span> {esc(text.moment(step.undone_at).removesuffix(" UTC"))}'
    if step.head:
        return '<span class="ok">current branch · head</span>'
    if step.active:
        return '<span class="ok">current branch</span>'
    return "other branch"


def _query_cell(step: ChainStep) -> str:
    said = esc(step.summary)  # it names the sketch, IR image or example item; a text query is named here
    if step.query_kind == "text":
        said = f"<b>text</b>: {said}"
    return said + ("" if not step.view else _small(f"<br>view {esc(step.view)}"))


def tree_overview(content: ReportContent) -> str:
    """One sentence on the tree: steps, branches, undone steps and the current branch."""
    steps = content.steps
    branches = len({step.label.lstrip("0123456789") for step in steps})
    undone = sum(1 for step in steps if step.undone)
    path = " → ".join(step.label for step in content.chain) or "the start (no step)"
    return (f"<p>{len(steps):,} search step(s) on {branches:,} line(s) of steps (the first line and "
            f"{branches - 1:,} branch(es)); {undone:,} undone. Current branch: <b>{esc(path)}</b>. Steps are "
            "labelled as in the app's timeline: the number is the step's place along its line, the letter the "
            "branch (in the order branches were made); a branch (↳) is listed right under the step it continues "
            "from.</p>")


def step_tree(content: ReportContent, flavor: Flavor) -> str:
    """Every step of every branch, undone ones included, as one compact table."""
    parts = ["<h2>Search steps: the whole tree</h2>"]
    if not content.steps:
        parts.append("<p>No search step was recorded.</p>")
        return "\n".join(parts)
    parts.append(tree_overview(content))
    rows = []
    for step in content.steps:
        branch = ("↳ " if step.branch_of is not None else "") + f"<b>{esc(step.label)}</b>"
        if step.branch_of is not None:
            branch += _small(f"<br>from {'the start' if step.branch_of == '0' else esc(step.branch_of)}")
        recorded = esc(text.moment(step.created_at).removesuffix(" UTC"))
        rows.append([branch, _query_cell(step), esc(step.level or "—"),
                     esc(text.keep_rule(step.keep_rule, step.keep_value, step.k)),
                     esc(text.filters(step.filters)),
                     esc(text.candidates(step.candidates_before, step.filtered_out, step.candidates_after)),
                     _small(recorded + "<br>" + _state_of(step))])
    parts.append(_table([("Step", 48), ("Query", None), ("Level", 40), ("Keep rule", 92), ("Filters", 86),
                         ("Candidates", 78), ("Recorded (UTC) · state", 110)], rows, css="grid tree"))
    return "\n".join(parts)


def chain(content: ReportContent, flavor: Flavor) -> str:
    parts = ["<h2>Current branch in detail</h2>"]
    if not content.chain:
        parts.append("<p>No search step on the current branch.</p>")
    for done, step in enumerate(content.chain):
        if flavor.progress is not None:
            flavor.progress(done, len(content.chain), f"Drawing the scores of step {step.label} "
                                                      f"({done + 1} of {len(content.chain)})")
        query = esc(step.query_text) if step.query_text else "—"
        pairs = [("Query", f"<b>{query}</b>"), ("Modalities", esc(text.modalities(step.query_kind)))]
        if step.example_item:
            pairs.append(("Example item", esc(step.example_item)))
        if step.sketch_sha256 or step.ir_sha256:
            inputs = [f"{kind} {flavor.hash_html(sha)}" for kind, sha in (("sketch", step.sketch_sha256),
                                                                          ("IR", step.ir_sha256)) if sha]
            pairs.append(("Query images", "<br>".join(inputs)))
        pairs += [
            ("Level used", esc(text.level(step.level, step.level_source, step.level_overridden))),
            ("Candidates", esc(text.candidates(step.candidates_before, step.filtered_out, step.candidates_after))),
            ("Keep rule", esc(text.keep_rule(step.keep_rule, step.keep_value, step.k))),
            ("Filters", esc(text.filters(step.filters))),
            ("Searched view", esc(text.searched_view(step.view, step.scenario))),
            ("Ranked by", esc(_ranked_by(content, step))),
            ("Recorded", f"{esc(text.moment(step.created_at))} ({step.seconds:.2f} s)"),
        ]
        title = f"Step {esc(step.label)} · {esc(text.modalities(step.query_kind))}"
        if step.level:
            title += f" · level {esc(step.level)}"
        parts.append(f'<h3>{title} · {step.candidates_before:,} → {step.candidates_after:,}</h3>')
        parts.append(_rows(pairs, 120))
        plot = render_distribution(step.histogram, step.cut_score)
        if plot is None:
            parts.append("<p><i>No candidate was ranked in this step, so there is no score distribution.</i></p>")
        else:
            parts.append(f'<p class="plot">{_img(flavor, plot, f"plot-{step.step_id}", (0, 0), "score distribution")}'
                         f"<br>{_small(_step_caption(step))}</p>")
    if content.steps_off_chain:
        parts.append(f"<p>{content.steps_off_chain:,} further step(s) lie on other branches or were undone: each is "
                     "listed with its query, level, keep rule, filters, counts and time in the table above.</p>")
    return "\n".join(parts)


def _percent(value: float | None) -> str:
    return "—" if value is None else f"{100 * value:.0f} %"


def _measure(measure) -> str:
    """One source's measured reading of a key on footage, in words."""
    name = source_label(measure.source)
    if measure.accuracy is None:
        return f"{name}: not measured on footage (trusted as it says)"
    said = (f"{name}: right on {_percent(measure.accuracy)} of {measure.n:,} labelled footage crops "
            f"(always guessing the commonest value: {_percent(measure.majority)})")
    if measure.r <= 0:
        return said + "; not trusted on footage (r = 0: ignored by the ranking)"
    if measure.r < 1:
        return said + f"; trusted to r = {measure.r:.2f} of its confidence"
    return said + "; trusted as it says (r = 1)"


def _ranking_rows(step: ChainStep, ranking, content: ReportContent) -> str:
    what = [f"similarity from {esc(_ranked_by(content, step))}"]
    if ranking.attributes:
        weight = "w" if ranking.weight is None else f"w = {ranking.weight:g}"
        origin = f" ({esc(ranking.weight_origin)})" if ranking.weight_origin else ""
        what.append(f"plus {weight}{origin} × the agreement of the attributes the text states with "
                    + (esc(sources_text(ranking.sources)) if ranking.sources else "no evidence source (none holds "
                                                                                   "these attributes)"))
    elif step.query_text:
        what.append("the text states no attribute the evidence sources read, so no evidence source took part")
    if ranking.likeness:
        what.append("plus the likeness of the checkpoint's heads' reading of the biometrics")
    elif step.view == BIOMETRICS_VIEW:
        what.append("the biometric likeness found no reading by the checkpoint's heads in this gallery, so no "
                    "evidence source took part")
    if not ranking.attributes and step.view != BIOMETRICS_VIEW and not step.query_text:
        what.append("no attribute evidence source took part")
    lines = []
    for entry in (*ranking.attributes, *ranking.likeness):
        stated = key_label(entry.key) + ("" if entry.value is None else f": {value_label(entry.key, entry.value)}")
        measures = "; ".join(_measure(m) for m in entry.measures) or "no source holds evidence for it"
        lines.append(f"<li><b>{esc(stated)}</b> — {esc(measures)}</li>")
    listed = f'<ul class="sources">{"".join(lines)}</ul>' if lines else ""
    return "; ".join(what) + "." + listed


def ranking_sources(content: ReportContent, flavor: Flavor) -> str:
    """For each step on a footage gallery: what ranked it and how far each evidence source measured on footage."""
    if not content.rankings:
        return ""
    parts = ["<h2>What ranked the footage steps</h2>"]
    measured = content.calibration
    if measured is not None and measured.crops:
        parts.append(f"<p>Each evidence source's reliability was measured on {measured.crops:,} hand-labelled crops "
                     f"of {measured.people or 0:,} real people (the footage calibration shipped with Lineup). "
                     "A source's confidence is multiplied by its reliability r before the sources are pooled: "
                     "r = 1 trusts it as it says, r = 0 ignores it. With so few people these figures are coarse. "
                     "The weight w and the stated attributes are as the gallery and the query parser give them "
                     "at the time of this report.</p>")
    else:
        parts.append("<p>No footage calibration ships with this installation: every source is trusted as it "
                     "says (r = 1).</p>")
    for step in content.steps:
        ranking = content.rankings.get(step.step_id)
        if ranking is None:
            continue
        state = " (undone)" if step.undone else ("" if step.active else " (other branch)")
        said = f"<p><b>Step {esc(step.label)}</b>{esc(state)} · {esc(step.summary)}. "
        if ranking.trust is not None:
            said += esc(ranking.trust.sentence)
            if ranking.trust.warning:
                said += f' <span class="bad">{esc(ranking.trust.warning)}</span>'
        parts.append(f"{said}<br>In detail: {_ranking_rows(step, ranking, content)}</p>")
    return "\n".join(parts)


def _grid(cells: list[str], per_row: int, width: int) -> str:
    rows = []
    for start in range(0, len(cells), per_row):
        chunk = cells[start:start + per_row] + ["&nbsp;"] * (per_row - len(cells[start:start + per_row]))
        rows.append("<tr>" + "".join(f'<td valign="top" width="{width // per_row}">{c}</td>' for c in chunk)
                    + "</tr>")
    return f'<table class="tiles" cellspacing="6" cellpadding="4" width="100%">{"".join(rows)}</table>'


def query_images(content: ReportContent, flavor: Flavor) -> str:
    if not content.query_images:
        return "<h2>Query images</h2><p>No sketch or IR image was used.</p>"
    cells = []
    for image in content.query_images:
        shown = (_img(flavor, image.image, f"query-{image.evidence_id}", QUERY_IMAGE_BOX, image.kind)
                 if image.image is not None else '<span class="bad">file missing or unreadable</span>')
        used = (("step " if len(image.steps) == 1 else "steps ") + ", ".join(image.steps)) if image.steps \
            else "no step"
        state = "" if image.intact else '<br><span class="bad">does not match its SHA-256</span>'
        original = f"<br>from {flavor.breakable(content.shown(image.original_path))}" if image.original_path else \
            "<br>drawn in the app"
        cells.append(f"{shown}<br><b>{esc(text.modality_name(image.kind))}</b> · {esc(used)}"
                     f"{_small(original)}{state}")
    return "<h2>Query images</h2>" + _grid(cells, 3, flavor.page_width)


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
                shown = _img(flavor, result.thumbnail, f"crop-{result.gallery_id}-{result.item_id}", THUMBNAIL_BOX,
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
                        f'<td valign="top">{_rows(pairs, 90)}</td></tr>')
        parts.append(f'<table class="tiles" cellspacing="4" cellpadding="4" width="100%">{"".join(rows)}</table>')
    parts.append(rejected(content, flavor))
    return "\n".join(parts)


def rejected(content: ReportContent, flavor: Flavor) -> str:
    if not content.rejected:
        return "<h3>Rejected results (0)</h3><p>No result was rejected.</p>"
    rows = [[flavor.breakable(r.item_id), _small(_footage(r, flavor, content)), esc(_where_marked(r)),
             esc(_examiner(r)) + "<br>" + _small(esc(text.moment(r.marked_at))), esc(r.note or "")]
            for r in content.rejected]
    return f"<h3>Rejected results ({len(content.rejected):,})</h3>" + _table(
        [("Item", 90), ("Footage", 150), ("Rejected at", None), ("By · when", 100), ("Note", 80)], rows)


def notes(content: ReportContent, flavor: Flavor) -> str:
    if not content.notes:
        return "<h2>Notes</h2><p>No notes.</p>"
    rows = [[esc(text.moment(n.at)) + ("" if n.edited_at is None
                                       else "<br>" + _small(f"edited {esc(text.moment(n.edited_at))}")),
             esc(n.about), esc(n.text).replace("\n", "<br>")] for n in content.notes]
    intro = ("<p>Each note as it reads now; an edited note gives the time of its last edit, and the audit trail "
             "keeps every earlier text.</p>" if any(n.edited_at for n in content.notes) else "")
    return "<h2>Notes</h2>" + intro + _table([("Time", 130), ("About", 110), ("Note", None)], rows)


def evidence(content: ReportContent, flavor: Flavor) -> str:
    rows = [[esc(e.kind), esc(e.label) + "<br>" + _small(flavor.breakable(content.shown(e.path))),
             flavor.hash_html(e.sha256)]
            for e in content.evidence]
    intro = ("<p>SHA-256 of every file the report rests on (a gallery by the fingerprint of its items and "
             "model). <code>lineup report verify</code> checks them again.</p>")
    return "<h2>Evidence</h2>" + intro + (_table([("Kind", 70), ("What · where", None), ("SHA-256", HASH_WIDTH)], rows)
                                          if rows else "<p>None.</p>")


def audit(content: ReportContent, flavor: Flavor) -> str:
    rows = [[str(line.seq), _small(esc(line.at.replace("T", " ").removesuffix("+00:00"))), esc(line.actor),
             esc(line.action), esc(line.summary), flavor.hash_html(line.hash)] for line in content.audit]
    return "<h2>Audit trail</h2>" + _table(
        [("#", 26), ("Time (UTC)", 92), ("Actor", 62), ("Action", 72), ("What", None), ("Entry hash", HASH_WIDTH)],
        rows, css="grid audit")


SECTIONS = (header, declaration, galleries, step_tree, chain, ranking_sources, query_images, confirmed, notes,
            evidence, audit)


def body(content: ReportContent, flavor: Flavor) -> str:
    """Every section of the report, in order, as HTML."""
    return "\n".join(section(content, flavor) for section in SECTIONS)
