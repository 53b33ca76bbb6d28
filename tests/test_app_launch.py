"""Launching: the checkpoint is resolved with a clear message when absent, the demo gallery is prepared once
(world → ingest → ready marker) in the user data folder and opened in the window with a "Demo" case, and
``lineup app`` is a command of the CLI."""

from __future__ import annotations

import pytest

from app.demo_gallery import READY_MARKER, demo_case_db, demo_gallery_dir, demo_gallery_ready, prepare_demo_gallery
from app.launch import open_or_create_case, resolve_checkpoint, start_demo
from app.main_window import CheckpointModels, MainWindow
from app.state import AppState
from app.workers import Job
from engine.lab.demo import data_dir

WAIT = 30_000


class NullJob(Job):
    def __init__(self):
        import threading

        super().__init__(threading.Event(), lambda done, total, message: None)


def test_a_missing_checkpoint_says_how_to_give_one(tmp_path):
    path, why = resolve_checkpoint(tmp_path / "nope")
    assert path is None and "--checkpoint PATH" in why and "nope" in why
    path, why = resolve_checkpoint(tmp_path)
    assert path == tmp_path and why == ""


def test_user_data_paths_live_in_the_data_folder(user_data):
    assert demo_case_db().parent == user_data
    assert demo_gallery_dir("abcdef0123456789ffff").name == "gallery-abcdef0123456789"
    with pytest.raises(ValueError, match="fingerprint"):
        demo_gallery_dir("")


def test_the_demo_gallery_is_prepared_once(tiny_demo_world, tiny_checkpoint, tmp_path):
    models = CheckpointModels(tiny_checkpoint)
    gallery = prepare_demo_gallery(models, NullJob())
    assert demo_gallery_ready(gallery) and (gallery / READY_MARKER).is_file()
    assert gallery.parent.parent == data_dir()
    stamp = (gallery / READY_MARKER).stat().st_mtime_ns
    assert prepare_demo_gallery(models, NullJob()) == gallery
    assert (gallery / READY_MARKER).stat().st_mtime_ns == stamp


def test_first_launch_opens_the_demo_case_on_the_prepared_gallery(qtbot, tiny_demo_world, tiny_checkpoint):
    state = AppState()
    assert state.open_store(demo_case_db())
    window = MainWindow(state, CheckpointModels(tiny_checkpoint))
    qtbot.addWidget(window)
    case_id = open_or_create_case(state, "Demo")
    assert case_id is not None and open_or_create_case(state, "Demo") == case_id
    with qtbot.waitSignal(state.gallery_changed, timeout=WAIT):
        start_demo(window, window.models)
    qtbot.waitUntil(lambda: not state.busy, timeout=WAIT)
    assert len(state.gallery) == 24 and state.encoder is not None
    assert "Case: Demo" in window.windowTitle() and "24 items" in window.windowTitle()
    assert window.query_panel.search_action.isEnabled()
    assert window.banner.text() == ""
    window.close()


def test_lineup_app_is_a_cli_command():
    from typer.testing import CliRunner

    from lineup.cli import app

    result = CliRunner().invoke(app, ["app", "--help"])
    assert result.exit_code == 0
    for option in ("--db", "--gallery", "--checkpoint"):
        assert option in result.output


def test_the_checkpoint_encoders_are_made_once_and_shared_across_threads(tiny_checkpoint):
    import threading

    from engine.retrieval.models.checkpoint import model_fingerprint

    models = CheckpointModels(tiny_checkpoint)
    made = {}

    def make(name: str) -> None:
        made[name] = (models.ingest_encoder(), models.query_encoder())

    threads = [threading.Thread(target=make, args=(n,)) for n in "ab"]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert made["a"][0] is made["b"][0] is models.ingest_encoder()
    assert made["a"][1] is made["b"][1] is models.query_encoder()
    fingerprint = model_fingerprint(models.model())
    assert models.ingest_encoder().fingerprint == models.query_encoder().fingerprint == fingerprint
