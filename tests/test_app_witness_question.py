"""The next question to ask the witness in the main window (app/views/witness_question.py,
app/state/witness_questions.py): shown under the query box after a step, an answer appends its sentence and runs
the step (which records the question and the answer), "don't know" hides the key on the branch, and the window
still fits a 1366×768 screen."""

from __future__ import annotations

import re

import pytest
from test_app_main_window import clipped_widgets, settle

from app.main_window import CheckpointModels, MainWindow
from app.state import AppState, suggestion_sentence
from app.state.witness_questions import question_sentence

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


@pytest.fixture
def window(qtbot, tmp_path, tiny_gallery):
    gallery_dir, models = tiny_gallery
    state = AppState()
    assert state.open_store(tmp_path / "cases.db", actor="tester")
    window = MainWindow(state, models)
    qtbot.addWidget(window)
    with qtbot.waitSignal(state.gallery_changed, timeout=WAIT):
        assert window.open_gallery(gallery_dir) is not None
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
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
                             "answer": value}
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
    assert window.query_panel.search_button.isVisibleTo(window)
