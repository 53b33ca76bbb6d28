"""The report a court can follow (app/report/content.py, markup.py, tree.py, ranking_sources.py): the whole step
tree with the timeline's labels (undone steps with their time, the current branch marked), each confirmed item
with the step, score, rank, examiner and time it was confirmed at (or a plain "not recorded"), rejected items,
notes with their edit times, and what ranked each footage step with each source's reliability on footage."""

from __future__ import annotations

import html
import re

import pytest
from network_galleries import footage_gallery
from report_cases import chain_step, collect, many_steps_case, report_case, tree_case

from app.report import collect_content
from app.report.html import render_html
from app.report.tree import tree_rows
from app.state.timeline_rows import timeline_rows
from app.store import CaseStore
from app.store.from_engine import gallery_identity
from engine.retrieval.evidence.reliability import footage_calibration

pytestmark = pytest.mark.usefixtures("qapp")


def page(content) -> str:
    """The HTML report's text with tags removed and entities decoded."""
    return html.unescape(re.sub(r"<[^>]+>", " ", render_html(content)))


def squash(text: str) -> str:
    return " ".join(text.split())


def text_of(markup: str) -> str:
    return squash(html.unescape(re.sub(r"<[^>]+>", " ", markup)))


def tree_section(content) -> str:
    return render_html(content).split("<h2>Search steps: the whole tree</h2>", 1)[1].split("<h2>", 1)[0]


def tree_table(content) -> str:
    """The whole-tree section of the HTML report, as text."""
    return text_of(tree_section(content))


def tree_table_rows(content) -> dict[str, str]:
    """{step label: the text of its row} of the whole-tree table."""
    body = tree_section(content).split("<tbody>", 1)[1]
    return {re.search(r"<b>([^<]+)</b>", row).group(1): text_of(row) for row in body.split("<tr>")[1:]}


def test_the_tree_has_the_timelines_order_labels_and_lanes(tmp_path):
    tree = tree_case(tmp_path)
    with CaseStore.open(tree.built.db) as store:
        state = store.load_case(tree.built.case_id)
    timeline = [(r.step_id, r.label, r.lane, r.branch_of, r.active, r.head) for r in timeline_rows(state)[1:]]
    ours = [(r.step.id, r.label, r.lane, r.branch_of, r.active, r.head) for r in tree_rows(state)]
    assert ours == timeline
    assert [label for _, label, *_ in ours] == ["1", "2b", "2", "3a", "3"]


def test_the_report_lists_every_branch_with_undone_steps_and_the_current_branch(tmp_path):
    tree = tree_case(tmp_path)
    content, state = collect(tree.built)
    assert [s.label for s in content.steps] == ["1", "2b", "2", "3a", "3"]
    assert [s.label for s in content.chain] == ["1", "2", "3a"] and content.steps_off_chain == 2
    undone = next(s for s in content.steps if s.label == "3")
    assert undone.undone and undone.undone_at == state.step(undone.step_id).undone_at
    table = tree_table(content)
    assert "5 search step(s) on 3 line(s) of steps" in table and "1 undone" in table
    assert "Current branch: 1 → 2 → 3a" in table
    rows = tree_table_rows(content)
    assert list(rows) == ["1", "2b", "2", "3a", "3"]
    from app.report import text

    assert f"undone {text.moment(undone.undone_at).removesuffix(' UTC')}" in rows["3"]  # the column says UTC
    assert "current branch · head" in rows["3a"] and "cameras c1; time" in rows["3a"]
    assert rows["2b"].startswith("↳ 2b from 1 ") and "other branch" in rows["2b"]
    assert rows["3a"].startswith("↳ 3a from 2 ") and rows["2"].startswith("2 Sketch + “man in a grey hoodie")
    assert "keep scores ≥ 0.1000" in rows["2b"] and "Similar to c1/item" in rows["2b"]
    assert "IR image" in rows["3"] and "keep top ρ = 0.5" in rows["3"] and "cameras c0, c1, c2" in rows["3"]
    assert " C keep top k = 12" in rows["1"]  # the level column, then the keep rule
    detail = page(content).split("Current branch in detail", 1)[1]
    assert "Step 3a · text · level M" in detail and "Step 3 ·" not in detail.split("What ranked", 1)[0]
    assert "2 further step(s) lie on other branches or were undone" in detail


def test_each_confirmed_item_names_its_step_score_rank_examiner_and_time(tmp_path):
    tree = tree_case(tmp_path)
    content, state = collect(tree.built)
    from app.report import text

    by_id = {r.item_id: r for r in content.confirmed}
    at_3a = by_id[tree.confirmed_at_3a]
    step = state.step(next(s for s, label in tree.labels.items() if label == "3a"))
    rank = step.kept_ids.index(at_3a.item_id) + 1
    assert (at_3a.step_label, at_3a.rank, at_3a.examiner) == ("3a", rank, tree.second_examiner)
    at_3 = by_id[tree.built.confirmed[0]]
    assert at_3.step_label == "3" and at_3.step_undone
    said = squash(page(content))
    assert (f"Confirmed at step 3a (“grey hoodie, no backpack”); score {text.score(at_3a.score)}, rank {rank} of 4 "
            f"kept Confirmed by {tree.second_examiner}, {text.moment(at_3a.marked_at)}") in said
    assert f"Confirmed at step 3 (since undone) (IR image); score {text.score(at_3.score)}, rank {at_3.rank} of 3" \
        in said
    assert ("Confirmed at step, score and rank not recorded (marked before Lineup kept them with a mark, or "
            "outside a search step) Confirmed by examiner") in said
    assert "walk.mp4 , frame" in said  # the file name is a span that may wrap
    rejected = content.rejected[0]
    assert rejected.step_label == "3" and rejected.rank is not None and rejected.thumbnail is None
    assert f"Rejected results (1) Item Footage Rejected at By · when Note {rejected.item_id}" in said
    # the audit trail names the steps by their labels too
    assert any(line.action == "mark" and "at step 3a (#" in line.summary and "rank" in line.summary
               for line in content.audit)


def test_notes_show_their_time_and_when_they_were_edited(tmp_path):
    tree = tree_case(tmp_path)
    content, state = collect(tree.built)
    from app.report import text

    edited = next(n for n in content.notes if n.about == "case")
    stored = next(n for n in state.notes if n.step_id is None)
    assert edited.text == "Seen leaving by the north exit at 14:20." and edited.edited_at == stored.edited_at
    assert [n.about for n in content.notes] == ["case", "step 2"]
    said = squash(page(content))
    assert (f"{text.moment(edited.at)} edited {text.moment(edited.edited_at)} case Seen leaving by the north exit "
            "at 14:20.") in said
    assert any(line.action == "note.edit" and "edited: “Seen leaving" in line.summary for line in content.audit)


def test_a_tree_of_sixty_steps_is_listed_whole(tmp_path):
    built = many_steps_case(tmp_path, steps=60)
    content, state = collect(built)
    assert len(content.steps) == len(state.steps) == 60
    table = tree_table(content)
    assert "60 search step(s)" in table and "further steps" not in table
    rows = tree_table_rows(content)
    assert list(rows) == [step.label for step in content.steps] and len(set(rows)) == 60
    assert sum(1 for s in content.steps if s.undone) == sum(1 for s in state.steps if s.undone) > 5
    assert sum(1 for row in rows.values() if "undone 20" in row) == sum(1 for s in content.steps if s.undone)


def test_a_footage_step_says_which_sources_ranked_it_and_how_far_each_measured(tmp_path):
    gallery = footage_gallery(tmp_path / "footage", None, sources=("pixels", "pretrained"))
    gallery.record_ranking("footage", 1.0, "the checkpoint's footage weight")
    db = tmp_path / "cases.sqlite"
    with CaseStore.open(db, actor="examiner") as store:
        case = store.create_case("Red top")
        gallery_id = store.add_gallery(case, **gallery_identity(gallery))
        step, _ = chain_step(gallery_id, list(gallery.ids), 4, 1, query_text="a man in a red top", view="rgb")
        store.record_step(case, step)
        content = collect_content(store, case)
    ranking = content.rankings[content.steps[0].step_id]
    assert ranking.sources == ("pixels", "pretrained") and ranking.weight == 1.0
    stated = {entry.key: entry for entry in ranking.attributes}
    assert set(stated) == {"gender", "top_color"}
    _, calibration = footage_calibration()
    measured = calibration["reliability"]["pixels"]["top_color"]
    pixels = stated["top_color"].measures[0]
    assert (pixels.source, pixels.accuracy, pixels.n) == ("pixels", measured["accuracy"], measured["n"])
    said = squash(page(content)).split("What ranked the footage steps", 1)[1]
    assert f"measured on {calibration['measured_on']['crops']} hand-labelled crops" in said
    assert ("plus w = 1 (the checkpoint's footage weight) × the agreement of the attributes the text states with "
            "pixels, attribute network") in said
    assert (f"colour of the top: red — pixels: right on {100 * measured['accuracy']:.0f} % of {measured['n']} "
            "labelled footage crops") in said
    network = calibration["reliability"]["pretrained"]
    assert "top_color" not in network and "attribute network: not measured on footage (trusted as it says)" in said
    assert "gender: male — no source holds evidence for it" in said  # the gallery's evidence has no gender
    # the engine's plain statement of the step's trust (engine.retrieval.search.trust), as the results header words it
    assert ranking.trust.sentence.startswith("Ranked on real footage by similarity and the attribute evidence of "
                                             "the pixels and the attribute network.")
    assert ranking.trust.sentence in said


def test_a_world_case_has_no_footage_statement(tmp_path):
    built = report_case(tmp_path)
    content, _ = collect(built)
    assert content.rankings == {} and "What ranked the footage steps" not in page(content)


def test_a_find_similar_across_clothes_names_the_heads_biometric_readings_and_their_reliability(tmp_path):
    from engine.index import evidence_table
    from engine.kernel.ontology import ONTOLOGY

    gallery = footage_gallery(tmp_path / "footage", None, sources=())
    gallery.record_ranking("footage", 1.0, "the checkpoint's footage weight")
    genders = ONTOLOGY.attributes["gender"]
    reading = {"version": 1, "probabilities": {"gender": {v: 1 / len(genders) for v in genders}},
               "confidence": {"gender": 0.8}}
    evidence_table.append(gallery.root, ["i0"], [{"model": reading}])
    db = tmp_path / "cases.sqlite"
    with CaseStore.open(db, actor="examiner") as store:
        case = store.create_case("Changed clothes")
        gallery_id = store.add_gallery(case, **gallery_identity(gallery))
        step, _ = chain_step(gallery_id, list(gallery.ids), 3, 1, query_kind="example", example_item="i0",
                             view="biometrics")
        store.record_step(case, step)
        content = collect_content(store, case)
    ranking = content.rankings[content.steps[0].step_id]
    assert ranking.sources == ("model",) and [e.key for e in ranking.likeness] == ["gender"]
    measured = footage_calibration()[1]["reliability"]["model"]["gender"]
    said = squash(page(content)).split("What ranked the footage steps", 1)[1]
    assert "plus the likeness of the checkpoint's heads' reading of the biometrics" in said
    assert ranking.trust.sentence in said and "the model heads right" in ranking.trust.sentence
    assert (f"gender — model heads: right on {100 * measured['accuracy']:.0f} % of {measured['n']} labelled "
            "footage crops") in said
