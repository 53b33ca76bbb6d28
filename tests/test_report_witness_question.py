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
