"""The folder of the real clips the footage benches read (intel-iot-devkit/sample-videos, © Intel Corporation and
contributors, CC BY 4.0; not shipped with the repository): a bench's ``--footage DIR`` where it has one, else the
``LINEUP_FOOTAGE_DIR`` setting (README.md, "Where the real clips come from"). There is no default: unset, a
bench stops with a message naming both."""

from __future__ import annotations

import os
from pathlib import Path

SETTING = "LINEUP_FOOTAGE_DIR"


def footage_setting() -> Path | None:
    """The folder ``LINEUP_FOOTAGE_DIR`` names, or None when it is unset or empty."""
    value = os.environ.get(SETTING, "").strip()
    return Path(value) if value else None


def footage_folder(given: Path | None = None) -> Path:
    """``given`` (a bench's ``--footage``) or the setting's folder; ``SystemExit`` naming both when neither is a
    folder."""
    folder = given if given is not None else footage_setting()
    if folder is None:
        raise SystemExit(f"the real clips' folder is not set: give --footage DIR or set {SETTING}")
    if not folder.is_dir():
        raise SystemExit(f"footage folder {folder} not found (give --footage DIR or set {SETTING})")
    return folder
