"""The next question to ask the witness in the main window (app/views/witness_question.py,
app/state/witness_questions.py, app/window/witness_display.py): shown under the query box after a step, an answer
appends its sentence and runs the step (which records the question, the viewing condition and the answer),
"don't know" hides the key on the branch, the "Seen:" combo re-ranks at once and stays with its case, a reopened
case shows its head step's question, an older step on view shows the questions after it (read-only), and the
window still fits a 1366×768 screen."""

from __future__ import annotations

import re
import time

import pytest
from test_app_main_window import clipped_widgets, settle

from app.main_window import CheckpointModels, MainWindow
from app.state import AppState, suggestion_sentence
from app.state.witness_questions import question_sentence
from engine.kernel.ontology import COLOR_KEYS
from engine.kernel.witness_prior import load_prior
from engine.retrieval.search.questions import questions_after

WAIT = 20_000


@pytest.fixture(scope="module")
def tiny_gallery(tmp_path_factory):
    import torch

    from engine.ingest import ModelEncoder, ingest
    from engine.lab.world.build import build_world
    from engine.retrieval.models import create, save

    torch.set_num_threads(1)
    root = tmp_path_factory.mktemp("witness-question")
    build_world(root / "world", identities=8, images_per_identity=4, seed=6)
    checkpoint = save(create("tiny", device="cpu"), root / "checkpoint")
    models = CheckpointModels(checkpoint)
    ingest(root / "world", root / "gallery", ModelEncoder(models.model()))
    return root / "gallery", models


def make_window(qtbot, db, tiny_gallery):
    gallery_dir, models = tiny_gallery
    state = AppState()
    assert state.open_store(db, actor="tester")
    window = MainWindow(state, models)
    qtbot.addWidget(window)
    with qtbot.waitSignal(state.gallery_changed, timeout=WAIT):
        assert window.open_gallery(gallery_dir) is not None
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    return window


@pytest.fixture
def window(qtbot, tmp_path, tiny_gallery):
    window = make_window(qtbot, tmp_path / "cases.db", tiny_gallery)
    window.new_case("Witness")
    yield window
    window.close()


def first_step(qtbot, window, text="a man"):
    window.query_panel.set_text(text)
    with qtbot.waitSignal(window.state.step_recorded, timeout=WAIT) as blocker:
        window.query_panel.search_action.trigger()
    qtbot.waitUntil(lambda: not window.state.busy, timeout=WAIT)
    return blocker.args[0]


def test_the_question_shows_under_the_query_box_with_its_shares(qtbot, window):
    bar = window.query_panel.question_bar
    assert not bar.isVisibleTo(window)  # no step, no question
    step_id = first_step(qtbot, window)
    state = window.state
    question = state.questions.current()
    assert question is not None and question["key"] != "gender"  # "a man" states the gender
    kept = state.step_state(step_id).candidates_after
    assert bar.isVisibleTo(window) and bar.key == question["key"]
    text = bar.sentence.text()
    assert text.startswith(question["question"]) and text.endswith(f"of the {kept} candidates")
    assert re.search(r" — \d+ %( / \d+ %)*", text)
    assert list(bar.answer_buttons) == list(question["values"])[:3]
    assert bar.dont_know_button is not None
    assert question_sentence({"question": "Was the top red or blue?", "values": {"red": 0.41, "blue": 0.32}},
                             210) == "Was the top red or blue? — 41 % / 32 % of the 210 candidates"


def test_clicking_an_answer_appends_its_sentence_and_runs_the_step(qtbot, window):
    first = first_step(qtbot, window)
    state, bar = window.state, window.query_panel.question_bar
    question = state.questions.current()
    value = next(iter(bar.answer_buttons))
    expected = suggestion_sentence(question["key"], value, {"gender": "male"})
    with qtbot.waitSignal(state.step_recorded, timeout=WAIT) as blocker:
        bar.answer_buttons[value].click()
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    step = state.step_state(blocker.args[0])
    assert step.parent_id == first
    assert step.query_text == f"a man. {expected}." and window.query_panel.text() == step.query_text
    assert step.question == {"key": question["key"], "question": question["question"], "gain": question["gain"],
                             "answer": value, "condition": "ordinary"}
    assert state.questions.current() is None or state.questions.current()["key"] != question["key"]
    # a step of the analyst's own while a question is shown records it unanswered
    shown = state.questions.current()
    if shown is not None:
        step_id = first_step(qtbot, window, "a man with a backpack")
        assert state.step_state(step_id).question["answer"] is None
        assert state.step_state(step_id).question["key"] == shown["key"]


def test_dont_know_hides_the_key_on_this_branch(qtbot, window):
    first = first_step(qtbot, window)
    state, bar = window.state, window.query_panel.question_bar
    asked = state.questions.current()["key"]
    bar.dont_know_button.click()
    assert asked not in {q["key"] for q in state.questions.ranked()}
    assert bar.key != asked
    second = first_step(qtbot, window, "a man with a backpack")
    assert asked in state.step_state(second).question["unknown"]
    assert asked not in {q["key"] for q in state.questions.ranked()}  # still hidden after the next step
    # another branch from the first step's parent knows nothing of it
    assert state.branch_from(None)
    third = first_step(qtbot, window, "a man")
    assert state.step_state(third).parent_id is None and third != first
    assert asked in {q["key"] for q in state.questions.ranked()}


def test_the_window_still_fits_a_laptop_screen_with_a_question(qtbot, window):
    window.resize(1366 - 16, 768 - 40)
    window.show()
    qtbot.waitExposed(window)
    first_step(qtbot, window)
    settle(qtbot, window)
    bar = window.query_panel.question_bar
    assert bar.isVisibleTo(window)
    assert clipped_widgets(window) == []
    # the question is scrolled into the query panel's view, not left under the chips and the granularity bar
    scroll = window.query_panel.body_scroll
    qtbot.waitUntil(lambda: not bar.visibleRegion().isEmpty())
    top = bar.mapTo(scroll.viewport(), bar.rect().topLeft()).y()
    assert top >= 0 and top + bar.sentence.height() <= scroll.viewport().height()
    # the "Seen:" combo sits beside the title, whole, within the panel's width
    assert bar.seen.isVisibleTo(window) and bar.seen.width() >= bar.seen.minimumSizeHint().width()
    right = bar.seen.mapTo(scroll.viewport(), bar.seen.rect().topRight()).x()
    assert right <= scroll.viewport().width()
    for name in ("far", "night"):  # the longest labels fit too
        choose(bar, name)
        settle(qtbot, window)
        assert bar.seen.width() >= bar.seen.minimumSizeHint().width()
    assert clipped_widgets(window) == []
    assert window.query_panel.search_button.isVisibleTo(window)


def choose(bar, name):
    """What the analyst does: pick a viewing condition in the bar's "Seen:" combo."""
    index = bar.seen.findData(name)
    assert index >= 0, name
    bar.seen.setCurrentIndex(index)
    bar.seen.activated.emit(index)


def test_the_seen_combo_reranks_at_once_and_stays_with_its_case(qtbot, window, tiny_gallery, tmp_path):
    first_step(qtbot, window)
    state, bar = window.state, window.query_panel.question_bar
    prior = load_prior()
    assert [bar.seen.itemData(i) for i in range(bar.seen.count())] == list(prior.choices)  # from the data
    assert [bar.seen.itemText(i) for i in range(bar.seen.count())] == [prior.label(c) for c in prior.choices]
    assert bar.seen.currentData() == "ordinary" and bar.seen.currentText() == "normally"
    ordinary = {q["key"]: q["gain"] for q in state.questions.ranked()}
    started = time.perf_counter()
    choose(bar, "night")
    assert time.perf_counter() - started < 0.05  # re-ranked on the UI thread from the kept rankings: no worker
    night = state.questions.ranked()
    expected = questions_after(state.session, condition="night", hidden=state.questions.hidden(), top=None)
    assert [(q["key"], q["gain"]) for q in night] == [(q["key"], q["gain"]) for q in expected]
    lowered = [q["key"] for q in night if q["key"] in prior.conditions["night"] and ordinary[q["key"]] > 0]
    assert lowered and all(q["gain"] <= ordinary[q["key"]] for q in night if q["key"] in lowered)
    assert any(q["gain"] < ordinary[q["key"]] for q in night if q["key"] in lowered)  # gains are rounded
    assert any(key in COLOR_KEYS for key in lowered)
    assert all(q["gain"] == ordinary[q["key"]] for q in night if q["key"] not in prior.conditions["night"])
    assert bar.key == night[0]["key"] and bar.sentence.text().startswith(night[0]["question"])
    case_id = state.case_id
    asked = state.questions.current()
    second = first_step(qtbot, window, "a man with a backpack")  # the next step is ranked under night too
    assert state.step_state(second).question == {"key": asked["key"], "question": asked["question"],
                                                 "gain": asked["gain"], "answer": None, "condition": "night"}
    assert bar.seen.currentData() == "night"
    assert window.new_case("Other")  # a new case starts with ordinary viewing
    assert bar.seen.currentData() == "ordinary" and state.questions.condition == "ordinary"
    window.close()

    again = make_window(qtbot, tmp_path / "cases.db", tiny_gallery)  # the database reopened
    try:
        assert again.open_case(case_id)
        assert again.state.questions.condition == "night"
        assert again.query_panel.question_bar.seen.currentData() == "night"
        qtbot.waitUntil(lambda: not again.state.busy, timeout=WAIT)
    finally:
        again.close()


def test_a_reopened_case_shows_its_head_steps_question(qtbot, window, tiny_gallery, tmp_path):
    first_step(qtbot, window)
    first_step(qtbot, window, "a man with a backpack")
    shown = window.state.questions.current()
    assert shown is not None
    case_id = window.state.case_id
    window.close()

    again = make_window(qtbot, tmp_path / "cases.db", tiny_gallery)
    try:
        bar = again.query_panel.question_bar
        assert again.open_case(case_id)  # the path is re-run in a worker, which ranks the head step's questions
        qtbot.waitUntil(lambda: not again.state.busy, timeout=WAIT)
        qtbot.waitUntil(lambda: bar.key is not None, timeout=WAIT)
        question = again.state.questions.current()
        assert (question["key"], question["gain"]) == (shown["key"], shown["gain"])
        assert bar.key == shown["key"] and bar.sentence.text().startswith(shown["question"])
        assert bar.answer_buttons and all(b.isEnabled() for b in bar.answer_buttons.values())
        assert bar.dont_know_button is not None and not bar.note.isVisibleTo(bar)
    finally:
        again.close()


def test_an_older_step_on_view_shows_the_questions_after_it(qtbot, window, tiny_gallery, tmp_path):
    first = first_step(qtbot, window)
    after_first = window.state.questions.current()
    second = first_step(qtbot, window, "a man with a backpack")
    case_id = window.state.case_id
    window.close()

    again = make_window(qtbot, tmp_path / "cases.db", tiny_gallery)  # only the head is ranked after a reopen
    try:
        state, bar, display = again.state, again.query_panel.question_bar, again.witness
        assert again.open_case(case_id)
        qtbot.waitUntil(lambda: not state.busy and bar.key is not None, timeout=WAIT)
        head_key = bar.key
        state.select_step(first)  # ranked in a worker: the first step's ranking is not kept yet
        assert display.ranking is not None
        state.select_step(second)  # back to the head: the worker is cancelled, the head's question shows
        assert display.ranking is None and bar.key == head_key
        state.select_step(first)
        qtbot.waitUntil(lambda: display.ranking is None and bar.key is not None and bar.note.text() != "",
                        timeout=WAIT)
        question = state.questions.current()
        assert (question["key"], question["gain"]) == (after_first["key"], after_first["gain"])
        assert bar.key == after_first["key"] and bar.sentence.text().startswith(after_first["question"])
        assert bar.note.isVisibleTo(bar) and "the next search continues from step 2" in bar.note.text()
        assert "Branch from step 1" in bar.note.text()
        assert bar.answer_buttons and not any(b.isEnabled() for b in bar.answer_buttons.values())
        assert bar.dont_know_button is None
        assert not state.questions.answer(question["key"], next(iter(bar.answer_buttons)))  # read-only
        assert state.questions.record_for_step() is None  # nothing shown after the head is recorded
        choose(bar, "far")  # re-ranks the older step's questions too
        far = questions_after(state.session, state.step_result(first), condition="far", top=None)
        assert [(q["key"], q["gain"]) for q in state.questions.ranked()] == [(q["key"], q["gain"]) for q in far]
        assert state.branch_from(first)  # the next search continues from it: its questions can be answered
        assert not bar.note.isVisibleTo(bar) and bar.dont_know_button is not None
        assert all(b.isEnabled() for b in bar.answer_buttons.values())
    finally:
        again.close()
