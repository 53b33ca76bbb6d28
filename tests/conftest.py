import os
import sys

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")


@pytest.fixture(autouse=True, scope="session")
def _signing_key_outside_the_user_folder(tmp_path_factory):
    """Reports sign with a key made for the test session, never the user's own (``app.report.signing``)."""
    if "LINEUP_SIGNING_KEY" not in os.environ:
        os.environ["LINEUP_SIGNING_KEY"] = str(tmp_path_factory.mktemp("signing") / "report-signing-key.pem")
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
