import os
import sys

import pytest

from engine.lab.demo import DEMO_SEED, data_dir, demo_world_dir

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True, scope="session")
def _signing_key_outside_the_user_folder(tmp_path_factory):
    """Reports sign with a key made for the test session, never the user's own, and trust keys from a folder of
    the test session (``app.report.signing``)."""
    if "LINEUP_SIGNING_KEY" not in os.environ:
        os.environ["LINEUP_SIGNING_KEY"] = str(tmp_path_factory.mktemp("signing") / "report-signing-key.pem")
    if "LINEUP_TRUSTED_KEYS" not in os.environ:
        os.environ["LINEUP_TRUSTED_KEYS"] = str(tmp_path_factory.mktemp("trusted") / "trusted-keys")
    yield


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """One torch thread for every test (before its fixtures): tiny models run far faster so on a shared
    machine. Torch is only looked up, never imported here, so tests that do not use it do not pay for it;
    the check runs before each test, so a test that imports torch late or changes the count (the trainer
    sets its own) leaves the next one single-threaded again."""
    torch = sys.modules.get("torch")
    if torch is not None and torch.get_num_threads() != 1:
        torch.set_num_threads(1)


@pytest.fixture
def user_data(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert str(data_dir()).startswith(str(tmp_path))
    return data_dir()


@pytest.fixture(scope="module")
def tiny_checkpoint(tmp_path_factory):
    import torch

    from engine.retrieval.models import create, save

    torch.manual_seed(0)  # the same untrained weights in every run: rankings on it repeat
    return save(create("tiny", device="cpu"), tmp_path_factory.mktemp("launch") / "checkpoint")


@pytest.fixture
def tiny_demo_world(user_data):
    """A tiny world where the demo world is expected (same seed, 8 identities × 4 images)."""
    from engine.lab.world.build import build_world

    build_world(demo_world_dir(), identities=8, images_per_identity=4, seed=DEMO_SEED)
    return demo_world_dir()
