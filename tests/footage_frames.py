"""The real clips some tests read, found through a setting: ``LINEUP_FOOTAGE_DIR`` names the folder of the
real clips (intel-iot-devkit/sample-videos, CC BY 4.0; not shipped; README.md, "Where the real clips come from").
There is no default folder: unset, or without the clip, a test that needs a clip skips and says which setting to
give."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np
import pytest

SETTING = "LINEUP_FOOTAGE_DIR"
FOOTAGE: Path | None = Path(os.environ[SETTING]) if os.environ.get(SETTING, "").strip() else None
NO_FOOTAGE = (f"real footage: {SETTING} is not set" if FOOTAGE is None
              else f"real footage folder {FOOTAGE} ({SETTING}) is absent")


def has_footage() -> bool:
    """Whether the setting names a folder that exists."""
    return FOOTAGE is not None and FOOTAGE.is_dir()


def has_clip(name: str) -> bool:
    """Whether the clip ``name`` is in the setting's folder."""
    return FOOTAGE is not None and (FOOTAGE / name).is_file()


def clip_path(name: str) -> Path:
    """The clip's path, or a skip naming the setting (and the folder searched, when it is set)."""
    if not has_clip(name):
        where = f"{SETTING} is not set" if FOOTAGE is None else f"{FOOTAGE / name} is absent"
        pytest.skip(f"real footage: {where} (set {SETTING} to the folder of the real clips)")
    return FOOTAGE / name


def real_frame(name: str, index: int) -> np.ndarray:
    """Frame ``index`` (0-based, cv2.VideoCapture read order) of the clip ``name``."""
    capture = cv2.VideoCapture(str(clip_path(name)))
    try:
        for _ in range(index + 1):
            ok, image = capture.read()
            assert ok, f"{name} has no frame {index}"
    finally:
        capture.release()
    return image
