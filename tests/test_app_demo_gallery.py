"""First launch of the demo (docs/architecture.md, "First launch"): the demo gallery shipped in resources/ is the one
the shipped checkpoint would build; a fresh user folder takes it (unpacked, sources relocated, verified) without
rendering or ingesting anything, and falls back to building the gallery when the shipped one is absent, for
another model or damaged; the window opens it under one progress dialog."""

from __future__ import annotations

import json
import shutil
import tarfile
import threading

import pytest

import app.demo_gallery as demo_gallery
from app.demo_gallery import (
    READY_MARKER,
    SHIPPED_INFO,
    ShippedGalleryError,
    ShippedInfo,
    build_shipped_gallery,
    demo_gallery_dir,
    demo_gallery_origin,
    install_shipped_gallery,
    prepare_demo_gallery,
    shipped_gallery_dir,
)
from app.launch import Splash, _time_left, open_or_create_case, start_demo
from app.main_window import CheckpointModels, MainWindow
from app.state import AppState
from app.workers import Job
from engine.index import Gallery
from engine.index.verify import verify_gallery
from engine.index.writer_lock import LOCK_FILES
from engine.lab.demo import DEMO_IDENTITIES, DEMO_IMAGES_PER_IDENTITY, DEMO_SEED, demo_world_dir

WAIT = 60_000
TINY = (6, 4)  # identities × images of the tests' shipped gallery


def null_job() -> Job:
    return Job(threading.Event(), lambda done, total, message: None)


def recording_job(messages: list[str]) -> Job:
    return Job(threading.Event(), lambda done, total, message: messages.append(message))


@pytest.fixture(scope="module")
def tiny_shipped(tiny_checkpoint, tmp_path_factory):
    """A shipped demo gallery built by ``build_shipped_gallery`` from the tiny checkpoint (a small world)."""
    out = tmp_path_factory.mktemp("shipped") / "demo_gallery"
    world = tmp_path_factory.mktemp("build") / "world"
    info = build_shipped_gallery(tiny_checkpoint, out, null_job(), identities=TINY[0], images_per_identity=TINY[1],
                                 world=world)
    assert not world.exists()
    return out, info


@pytest.fixture
def small_demo(monkeypatch):
    """The demo world's size as the tests' shipped gallery has it (the seed stays the demo's)."""
    monkeypatch.setattr(demo_gallery, "DEMO_IDENTITIES", TINY[0])
    monkeypatch.setattr(demo_gallery, "DEMO_IMAGES_PER_IDENTITY", TINY[1])


def test_the_shipped_gallery_is_the_shipped_checkpoints():
    """What ``make demo-gallery`` records: the shipped checkpoint's fingerprint, the demo world, every RGB and IR
    image as an item, the archive's size and hash, and no folder of the machine that built it."""
    from engine.retrieval.models import load
    from engine.retrieval.models.checkpoint import model_fingerprint
    from engine.retrieval.models.discovery import default_checkpoint

    folder = shipped_gallery_dir()
    info = ShippedInfo.read(folder)
    assert info.model_fingerprint == model_fingerprint(load(default_checkpoint(), device="cpu"))
    assert (info.seed, info.identities, info.images_per_identity) == (DEMO_SEED, DEMO_IDENTITIES,
                                                                      DEMO_IMAGES_PER_IDENTITY)
    archive = folder / info.archive
    assert archive.stat().st_size == info.archive_bytes < 40_000_000
    assert demo_gallery._sha256_file(archive) == info.archive_sha256
    with tarfile.open(archive, "r:gz") as tar:
        meta = json.load(tar.extractfile("gallery.json"))
        lines = tar.extractfile("items.jsonl").read().decode("utf-8").splitlines()
        records = [tar.extractfile(m).read().decode("utf-8") for m in tar.getmembers() if m.name.endswith(".json")]
    assert records
    assert meta["model_fingerprint"] == info.model_fingerprint and meta["count"] == info.items == len(lines)
    items = [json.loads(line) for line in lines]
    sketches = DEMO_IDENTITIES  # one sketch an identity is query material, not an item
    assert len(items) == DEMO_IDENTITIES * DEMO_IMAGES_PER_IDENTITY - sketches
    assert len({item["identity"] for item in items}) == DEMO_IDENTITIES
    assert all(item["crop_sha256"] == item["source_sha256"] for item in items)  # a world image is its crop
    assert not any(name in text for text in records + lines for name in ("/home/", "/root/", "demo-gallery-"))


def test_a_fresh_user_folder_takes_the_shipped_gallery(tiny_shipped, tiny_checkpoint, user_data, small_demo):
    shipped, info = tiny_shipped
    models = CheckpointModels(tiny_checkpoint)
    messages: list[str] = []
    gallery = prepare_demo_gallery(models, recording_job(messages), shipped=shipped)
    assert gallery == demo_gallery_dir(models.query_encoder().fingerprint)
    assert demo_gallery_origin(gallery) == "shipped"
    assert "Unpacking the shipped demo gallery" in messages and not any("Render" in m for m in messages)
    assert not demo_world_dir().exists()  # nothing rendered, nothing ingested
    opened = Gallery.open(gallery)
    assert len(opened) == info.items == TINY[0] * (TINY[1] - 1)
    assert verify_gallery(opened, check_crops=True) == []  # records, crops, vectors, evidence as built
    with tarfile.open(shipped / info.archive, "r:gz") as tar:
        assert (gallery / "items.jsonl").read_bytes() == tar.extractfile("items.jsonl").read()  # nothing rewritten
    item = opened.item(opened.ids[0])
    assert item.identity is not None and item.crop_sha256 == item.source_sha256
    assert not list(gallery.parent.glob(".*unpacking"))
    stamp = (gallery / READY_MARKER).stat().st_mtime_ns
    assert prepare_demo_gallery(models, null_job(), shipped=shipped) == gallery  # cached from now on
    assert (gallery / READY_MARKER).stat().st_mtime_ns == stamp


def _other_model(folder):
    path = folder / SHIPPED_INFO
    path.write_text(json.dumps(dict(json.loads(path.read_text()), model_fingerprint="f" * 64)))


def _damaged(folder):
    info = ShippedInfo.read(folder)
    data = bytearray((folder / info.archive).read_bytes())
    data[len(data) // 2] ^= 0xFF
    (folder / info.archive).write_bytes(bytes(data))


def _absent(folder):
    shutil.rmtree(folder)


@pytest.mark.parametrize(("spoil", "why"), [(_absent, "is absent"), (_other_model, "built by model ffff"),
                                             (_damaged, "missing or damaged")])
def test_the_demo_is_built_here_when_the_shipped_gallery_does_not_fit(tiny_shipped, tiny_checkpoint, user_data,
                                                                      small_demo, tmp_path, spoil, why):
    shipped = tmp_path / "demo_gallery"
    shutil.copytree(tiny_shipped[0], shipped)
    spoil(shipped)
    models = CheckpointModels(tiny_checkpoint)
    fingerprint = models.query_encoder().fingerprint
    with pytest.raises(ShippedGalleryError, match=why):
        install_shipped_gallery(fingerprint, demo_gallery_dir(fingerprint), null_job(), shipped)
    assert not demo_gallery_dir(fingerprint).parent.exists() or not any(demo_gallery_dir(fingerprint).parent.iterdir())
    messages: list[str] = []
    gallery = prepare_demo_gallery(models, recording_job(messages), shipped=shipped)
    assert demo_gallery_origin(gallery) == "built"
    assert any(why in m for m in messages) and "Ingesting the demo world (once)" in messages
    assert len(Gallery.open(gallery)) == TINY[0] * (TINY[1] - 1)


def test_the_shipped_demo_needs_the_demo_worlds_size(tiny_shipped, tiny_checkpoint, user_data):
    models = CheckpointModels(tiny_checkpoint)
    fingerprint = models.query_encoder().fingerprint
    with pytest.raises(ShippedGalleryError, match=f"not the demo world {DEMO_SEED}"):
        install_shipped_gallery(fingerprint, demo_gallery_dir(fingerprint), null_job(), tiny_shipped[0])


def test_first_launch_opens_the_shipped_demo_under_one_dialog(qtbot, tiny_shipped, tiny_checkpoint, user_data,
                                                               small_demo, monkeypatch):
    from PySide6.QtWidgets import QProgressDialog

    monkeypatch.setattr(demo_gallery, "shipped_gallery_dir", lambda: tiny_shipped[0])
    state = AppState()
    assert state.open_store(user_data / "cases.db")
    window = MainWindow(state, CheckpointModels(tiny_checkpoint))
    qtbot.addWidget(window)
    window.show()
    assert open_or_create_case(state, "Demo") is not None
    shown_at_open = []
    state.gallery_changed.connect(lambda _g: shown_at_open.append(
        [d.labelText() for d in window.findChildren(QProgressDialog) if d.isVisible()]))
    with qtbot.waitSignal(state.gallery_changed, timeout=WAIT):
        handle = start_demo(window, window.models)
        assert handle is not None
        dialogs = [d for d in window.findChildren(QProgressDialog) if d.isVisible()]
        assert len(dialogs) == 1  # shown at once, not after a delay
    assert shown_at_open and shown_at_open[0]  # the dialog stayed up until the gallery was in the window
    qtbot.waitUntil(lambda: not state.busy and not any(d.isVisible() for d in window.findChildren(QProgressDialog)),
                    timeout=WAIT)
    assert len(state.gallery) == tiny_shipped[1].items and "Case: Demo" in window.windowTitle()
    assert demo_gallery_origin(state.gallery.root) == "shipped" and not demo_world_dir().exists()
    window.close()


def test_the_splash_says_what_loads(qtbot):
    from PySide6.QtWidgets import QApplication

    splash = Splash(QApplication.instance())
    qtbot.addWidget(splash.screen)
    assert splash.screen.isVisible() and splash.screen.message() == "Starting…"
    splash.say("Loading the interface…")
    assert splash.screen.message() == "Loading the interface…"
    splash.screen.close()


def test_time_left_comes_from_the_rate_so_far():
    assert _time_left(0.0, 100, 1000, 10.0) == " · about 2 min left"
    assert _time_left(0.0, 500, 1000, 20.0) == " · about 20 s left"
    assert _time_left(0.0, 10, 1000, 1.0) == ""  # too early to say
    assert _time_left(0.0, 0, 0, 30.0) == ""  # nothing counted


def test_the_build_is_packed_the_same_way_every_time(tiny_shipped):
    shipped, info = tiny_shipped
    assert ShippedInfo.read(shipped) == info and info.items == TINY[0] * (TINY[1] - 1)
    with tarfile.open(shipped / info.archive, "r:gz") as tar:
        names = tar.getnames()
        members = tar.getmembers()
    assert "gallery.json" in names and not set(names) & LOCK_FILES and names == sorted(names)
    assert {m.mtime for m in members} == {0} and {m.uid for m in members} == {0}
    assert {m.mode for m in members if m.isfile()} == {0o600}
