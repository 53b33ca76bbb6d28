"""A case whose confirmed items come from footage: frames of a short video (two sightings on one camera, one
tracked) and a still image of a second camera, for the evidence package tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from report_cases import chain_step, person_crop, png_file

from app.store import CaseStore
from app.store.from_engine import gallery_identity
from engine.index import Gallery
from engine.kernel.hashing import sha256_file

FPS = 10
FRAMES = 60
T0 = 1_715_000_000.0  # 2024-05-06 12:53:20 UTC
#: (item, camera, frame, seconds after T0, track): the video items of cam1; the still is cam2
VIDEO_ITEMS = (("v1", "cam1", 20, 2.0, 1), ("v2", "cam1", 31, 3.1, 1), ("v3", "cam1", 52, 5.2, None))
STILL_TIME = 40.0


def write_video(path: Path, frames: int = FRAMES) -> Path:
    """A short MPEG-4 video (``mp4v``) whose every frame looks different (its number written on it)."""
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), FPS, (96, 64))
    assert writer.isOpened()
    for index in range(frames):
        image = np.full((64, 96, 3), (index * 4) % 255, np.uint8)
        cv2.putText(image, str(index), (8, 44), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 255), 2)
        writer.write(image)
    writer.release()
    return path


@dataclass
class FootageCase:
    db: Path
    case_id: int
    gallery_root: Path
    video: Path
    still: Path


def footage_case(tmp_path: Path, video_ending: str = ".mp4") -> FootageCase:
    """The case; ``video_ending``: the video file's ending (another than .mp4 names a container nobody writes)."""
    footage = tmp_path / "footage"
    footage.mkdir()
    video = write_video(footage / "cam1.mp4")
    if video_ending != ".mp4":
        video = video.rename(video.with_suffix(video_ending))
    still = png_file(footage / "cam2_still.png", person_crop(7, 160, 80))
    gallery = Gallery.create(tmp_path / "gallery", {"rgb": 8}, "ckpt-package")
    items = []
    for k, (name, camera, frame, offset, track) in enumerate(VIDEO_ITEMS):
        ok, data = cv2.imencode(".png", person_crop(k))
        relative, crop_sha = gallery.put_crop(data.tobytes(), ".png")
        items.append({"id": name, "source": str(video), "frame": frame, "time": T0 + offset, "camera": camera,
                      "track": track, "source_sha256": sha256_file(video), "crop": relative, "crop_sha256": crop_sha,
                      "box": (10.0, 5.0, 30.0, 50.0)})
    ok, data = cv2.imencode(".png", person_crop(9))
    relative, crop_sha = gallery.put_crop(data.tobytes(), ".png")
    items.append({"id": "s1", "source": str(still), "time": T0 + STILL_TIME, "camera": "cam2",
                  "source_sha256": sha256_file(still), "crop": relative, "crop_sha256": crop_sha})
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((len(items), 8)).astype(np.float32)
    gallery.add(items, {"rgb": vectors / np.linalg.norm(vectors, axis=1, keepdims=True)})
    db = tmp_path / "cases.sqlite"
    with CaseStore.open(db, actor="examiner") as store:
        case = store.create_case("Red jacket across two cameras")
        gallery_id = store.add_gallery(case, **gallery_identity(gallery))
        step, kept = chain_step(gallery_id, list(gallery.ids), len(items), 1, query_text="red jacket")
        store.record_step(case, step)
        for item in kept:
            store.mark(case, gallery_id, item, "confirmed")
    return FootageCase(db, case, gallery.root, video, still)
