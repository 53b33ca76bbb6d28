"""The report's sections on the search steps (``app.report.markup``): the whole tree of steps, the current branch
in detail with each step's score distribution, and what ranked the footage steps."""

from __future__ import annotations

from app.provenance import source_label, sources_text
from app.report import text
from app.report.blocks import Flavor, esc, image_tag, pairs_table, small, table
from app.report.content import ChainStep, ReportContent
from app.report.plots import render_distribution
from engine.kernel.ontology import key_label, value_label
from engine.kernel.witness_prior import UnknownConditionError, load_prior
from engine.retrieval.encoding.views import BIOMETRICS_VIEW


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


def _state_of(step: ChainStep) -> str:
    """Where a step stands in the tree, in words (HTML)."""
    if step.undone:
        return f'<span class="bad">undone</span> {esc(text.moment(step.undone_at).removesuffix(" UTC"))}'
    if step.head:
        return '<span class="ok">current branch · head</span>'
    if step.active:
        return '<span class="ok">current branch</span>'
    return "other branch"


def question_text(question) -> str:
    """A step's witness question in words: "Was the top red or blue? (0.81 bits) — answered “red”", the viewing
    condition its ranking assumed ("ranked for a witness who saw the person at night"; not said by records made
    before it was kept) and the keys the witness did not know ("" without a question)."""
    if not question:
        return ""
    parts = []
    if question.get("key"):
        asked = f"{question['question']} ({float(question.get('gain') or 0):.2f} bits)"
        answer = question.get("answer")
        parts.append(f"{asked} — answered “{value_label(question['key'], answer)}”" if answer is not None
                     else f"{asked} — not answered (the description was edited instead)")
        if question.get("condition"):
            parts.append(f"ranked for a witness who saw the person {witness_label(question['condition'])}")
    unknown = question.get("unknown") or []
    if unknown:
        parts.append("the witness did not know: " + ", ".join(key_label(k) for k in unknown))
    return "; ".join(parts)


def witness_label(condition: str) -> str:
    """A viewing condition's label ("at night"); the name itself when the witness prior no longer has it."""
    try:
        return load_prior().label(condition)
    except UnknownConditionError:
        return condition


def _query_cell(step: ChainStep) -> str:
    said = esc(step.summary)  # it names the sketch, IR image or example item; a text query is named here
    if step.query_kind == "text":
        said = f"<b>text</b>: {said}"
    return said + ("" if not step.view else small(f"<br>view {esc(step.view)}"))


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
            branch += small(f"<br>from {'the start' if step.branch_of == '0' else esc(step.branch_of)}")
        recorded = esc(text.moment(step.created_at).removesuffix(" UTC"))
        rows.append([branch, _query_cell(step), esc(step.level or "—"),
                     esc(text.keep_rule(step.keep_rule, step.keep_value, step.k)),
                     esc(text.filters(step.filters)),
                     esc(text.candidates(step.candidates_before, step.filtered_out, step.candidates_after,
                                         step.whole_gallery)),
                     small(recorded + "<br>" + _state_of(step))])
    parts.append(table([("Step", 48), ("Query", None), ("Level", 40), ("Keep rule", 92), ("Filters", 86),
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
            ("Candidates", esc(text.candidates(step.candidates_before, step.filtered_out, step.candidates_after,
                                               step.whole_gallery))),
            ("Keep rule", esc(text.keep_rule(step.keep_rule, step.keep_value, step.k))),
            ("Filters", esc(text.filters(step.filters))),
            ("Searched view", esc(text.searched_view(step.view, step.scenario))),
            ("Ranked by", esc(_ranked_by(content, step))),
            *([("Witness question", esc(question_text(step.question)))] if step.question else []),
            ("Recorded", f"{esc(text.moment(step.created_at))} ({step.seconds:.2f} s)"),
        ]
        title = f"Step {esc(step.label)} · {esc(text.modalities(step.query_kind))}"
        if step.level:
            title += f" · level {esc(step.level)}"
        parts.append(f'<h3>{title} · {step.candidates_before:,} → {step.candidates_after:,}</h3>')
        parts.append(pairs_table(pairs, 120))
        plot = render_distribution(step.histogram, step.cut_score)
        if plot is None:
            parts.append("<p><i>No candidate was ranked in this step, so there is no score distribution.</i></p>")
        else:
            shown = image_tag(flavor, plot, f"plot-{step.step_id}", (0, 0), "score distribution")
            parts.append(f'<p class="plot">{shown}<br>{small(_step_caption(step))}</p>')
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
