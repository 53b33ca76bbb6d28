"""The real clips some tests read, found through a setting: ``LINEUP_FOOTAGE_DIR`` names the folder of the
shared clips (intel-iot-devkit/sample-videos, CC BY 4.0; not shipped). Unset, the folder checked out beside
the repository is used when present. A test that needs a clip skips, naming the folder, when it is absent."""

from __future__ import annotations

import os
from pathlib import Path

import cv2
import numpy as np
import pytest

FOOTAGE = Path(os.environ.get("LINEUP_FOOTAGE_DIR") or Path(__file__).parents[2] / "shared" / "data" / "footage")


def clip_path(name: str) -> Path:
    """The clip's path, or a skip naming the folder searched and the setting that moves it."""
    path = FOOTAGE / name
    if not path.is_file():
        pytest.skip(f"real footage {path} is absent (set LINEUP_FOOTAGE_DIR to the folder of the shared clips)")
    return path


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
