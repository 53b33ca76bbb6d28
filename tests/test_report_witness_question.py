"""A step's witness question in the case store and the report (app/store/checks.py, app/report/step_sections.py):
stored with the step and its audit entry, refused when malformed, and one line in the step's section."""

from __future__ import annotations

import html
import re

import pytest
from report_cases import chain_step, collect, make_gallery

from app.report.html import render_html
from app.report.step_sections import question_text
from app.store import CaseStore, StoreInputError
from app.store.from_engine import gallery_identity

pytestmark = pytest.mark.usefixtures("qapp")

ASKED = {"key": "top_color", "question": "Was the top red, blue or black?", "gain": 0.81, "answer": "red"}


def test_the_question_and_its_answer_are_stored_audited_and_reported(tmp_path):
    gallery = make_gallery(tmp_path / "gallery")
    db = tmp_path / "cases.sqlite"
    with CaseStore.open(db, actor="examiner") as store:
        case = store.create_case("Red top", "")
        gallery_id = store.add_gallery(case, **gallery_identity(gallery))
        first, kept = chain_step(gallery_id, list(gallery.ids), 12, 1, query_text="a man")
        store.record_step(case, first)
        second, kept = chain_step(gallery_id, kept, 6, 2, query_text="a man. The top is red.", question=ASKED)
        s2 = store.record_step(case, second)
        third, _ = chain_step(gallery_id, kept, 3, 3, query_text="a man. The top is red. He carries a bag.",
                              question={"key": "shoe_type", "question": "Was the footwear sneakers or boots?",
                                        "gain": 0.4, "answer": None, "unknown": ["hair_color"]})
        s3 = store.record_step(case, third)
        state = store.load_case(case)
        assert state.step(s2).question == ASKED and state.steps[0].question is None
        assert store.verify_chain(case).ok
        for bad, problem in (({"key": "shoe_colour", "question": "?"}, "ontology key"),
                             ({**ASKED, "answer": "teal"}, "not a value of top_color"),
                             ({**ASKED, "why": 1}, "may hold only"),
                             ({"unknown": "gender"}, "list of ontology keys")):
            step, _ = chain_step(gallery_id, kept, 3, 4, query_text="x", question=bad)
            with pytest.raises(StoreInputError, match=problem):
                store.record_step(case, step)
    content, _ = collect(type("Built", (), {"db": db, "case_id": case})())
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", render_html(content))).split())
    assert "Witness question Was the top red, blue or black? (0.81 bits) — answered “red”" in text
    assert ("Was the footwear sneakers or boots? (0.40 bits) — not answered (the description was edited instead); "
            "the witness did not know: hair colour") in text
    assert text.count("Witness question") == 2 and s3


def test_question_text_without_a_question_is_empty():
    assert question_text(None) == "" and question_text({"unknown": ["gender"]}) == "the witness did not know: gender"


def test_the_report_names_the_condition_the_questions_were_ranked_for(tmp_path):
    gallery = make_gallery(tmp_path / "gallery")
    db = tmp_path / "cases.sqlite"
    at_night = {**ASKED, "condition": "night"}
    with CaseStore.open(db, actor="examiner") as store:
        case = store.create_case("Seen at night", "")
        gallery_id = store.add_gallery(case, **gallery_identity(gallery))
        first, kept = chain_step(gallery_id, list(gallery.ids), 12, 1, query_text="a man")
        store.record_step(case, first)
        second, kept = chain_step(gallery_id, kept, 6, 2, query_text="a man. The top is red.", question=at_night)
        s2 = store.record_step(case, second)
        assert store.load_case(case).step(s2).question == at_night
        assert store.verify_chain(case).ok
        for bad in ({**ASKED, "condition": "dusk"}, {"unknown": ["gender"], "condition": "night"}):
            step, _ = chain_step(gallery_id, kept, 3, 3, query_text="x", question=bad)
            with pytest.raises(StoreInputError, match=r"question.condition must name .* one of \['ordinary', "
                                                      r"'night', 'far'\]"):
                store.record_step(case, step)
    content, _ = collect(type("Built", (), {"db": db, "case_id": case})())
    text = " ".join(html.unescape(re.sub(r"<[^>]+>", " ", render_html(content))).split())
    assert ("Witness question Was the top red, blue or black? (0.81 bits) — answered “red”; ranked for a witness "
            "who saw the person at night") in text
    assert question_text({**ASKED, "condition": "ordinary"}).endswith("ranked for a witness who saw the person "
                                                                     "normally")
    assert "ranked for" not in question_text(ASKED)  # a record made before the condition was kept says nothing


def test_a_saved_working_state_keeps_the_condition_and_an_unknown_one_is_reset(tmp_path):
    from app.state.working_state import WorkingState, read_working_state

    saved = WorkingState().with_witness_saw("far").to_json(None)
    assert saved["witness_saw"] == "far"
    state, _, problems = read_working_state(saved, tmp_path, 1)
    assert state.witness_saw == "far" and problems == []
    old, _, problems = read_working_state({"filters": {}}, tmp_path, 1)  # saved before the condition existed
    assert old.witness_saw == "ordinary" and problems == []
    reset, _, problems = read_working_state({**saved, "witness_saw": "dusk"}, tmp_path, 1)
    assert reset.witness_saw == "ordinary"
    assert problems == ["the witness's saved viewing condition was reset to ordinary viewing (unknown witness "
                        "condition 'dusk'; choose one of ordinary, night, far)"]
