"""Synthetic footage (walking figures in a video) and fake detector and encoder, for the ingest tests."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from engine.lab.world.identities import make_identity
from engine.lab.world.render import render_sample
from engine.perception.detection.detectors import Detections

FPS = 10
FRAME_W, FRAME_H = 640, 300
PERSON_H, PERSON_W = 256, 128
BACKGROUND = 110

START = "20240506T101530"


def walkers(frames: int = 16) -> tuple[list[np.ndarray], list[list[tuple[int, int, int, int]]]]:
    """Frames (BGR) with two rendered people walking right, and their true boxes (x, y, w, h) per frame."""
    rng = np.random.default_rng(7)
    people = [cv2.cvtColor(render_sample(make_identity(0, i, 1).outfits[0], "rgb", "HR", "front", "cam02", rng),
                           cv2.COLOR_RGB2BGR) for i in (1, 2)]
    images, truth = [], []
    for t in range(frames):
        image = np.full((FRAME_H, FRAME_W, 3), BACKGROUND, np.uint8)
        boxes = []
        for k, person in enumerate(people):
            x, y = 10 + 10 * t + 320 * k, 20 + 12 * k
            if x + PERSON_W > FRAME_W:
                continue
            image[y : y + PERSON_H, x : x + PERSON_W] = person
            boxes.append((x, y, PERSON_W, PERSON_H))
        images.append(image)
        truth.append(boxes)
    return images, truth


def write_video(path: Path, images: list[np.ndarray], codec: str = "MJPG") -> Path:
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*codec), FPS, (FRAME_W, FRAME_H))
    assert writer.isOpened(), f"OpenCV cannot write {path}"
    for image in images:
        writer.write(image)
    writer.release()
    return path


class ForegroundDetector:
    """Test double: boxes of whatever differs from the plain background (exact boxes of the pasted people)."""

    name = "foreground"

    def settings(self):
        return {"name": self.name}

    def reset(self):
        self.calls = 0

    def detect(self, frame):
        self.calls += 1
        mask = (np.abs(frame.astype(np.int16) - BACKGROUND).max(axis=2) > 30).astype(np.uint8)
        mask = cv2.morphologyEx(mask, cv2.MORPH_CLOSE, np.ones((9, 9), np.uint8))
        count, _, stats, _ = cv2.connectedComponentsWithStats(mask)
        boxes = [stats[i, :4] for i in range(1, count) if stats[i, 4] > 2000]
        return Detections(np.array(boxes, np.float32).reshape(-1, 4), np.ones(len(boxes), np.float32))


class FakeEncoder:
    """Test double of the model: unit vectors from crop statistics; counts the crops it encodes."""

    def __init__(self, fingerprint: str = "fake-model-1", fail_after: int | None = None) -> None:
        self.views = {"rgb": 6, "reid:AD-LT": 6}
        self.fingerprint = fingerprint
        self.encoded = 0
        self.calls = 0
        self.fail_after = fail_after

    def __call__(self, crops, modalities, resolutions):
        if self.fail_after is not None and self.calls >= self.fail_after:
            raise RuntimeError("encoder stopped (simulated crash)")
        self.calls += 1
        self.encoded += len(crops)
        rows = np.array([[*c.reshape(-1, 3).mean(0), c.std(), c.shape[0], c.shape[1]] for c in crops], np.float32)
        rows = rows / np.linalg.norm(rows, axis=1, keepdims=True)
        return {"rgb": rows, "reid:AD-LT": rows[:, ::-1].copy()}
