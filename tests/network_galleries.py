"""A footage-like gallery whose ``appearance`` view a re-identification network made (the shipped one's
fingerprint, or a user's ONNX file's), with attribute evidence from chosen sources, for the tests that check
the app and its reports name the networks behind a ranking."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from report_cases import person_crop

from engine.index import Gallery
from engine.index import evidence_table as store
from engine.kernel.ontology import ONTOLOGY
from engine.perception.pretrained.registry import shipped

N_ITEMS = 8


def shipped_fingerprint(preset: str = "balanced") -> dict:
    """What ``engine.perception.appearance.shipped`` records for a shipped re-identification network (without
    loading it)."""
    model = shipped(preset)
    return {"kind": "openvino", "name": model.name, "precision": model.precision, "version": model.version,
            "file": model.name, "file_sha256": model.bin_sha256, "normalisation": "in-graph",
            "input_size": [256, 128], "dim": 4, "trained_on": model.trained_on}


def onnx_fingerprint(path: str = "/models/station-reid.onnx") -> dict:
    return {"kind": "onnx", "file": path, "file_sha256": "ab" * 32, "normalisation": {}, "input_size": [256, 128],
            "dim": 4}


def colour(value: str, p: float, c: float) -> dict:
    values = ONTOLOGY.attributes["top_color"]
    rest = (1 - p) / (len(values) - 1)
    return {"version": 1, "probabilities": {"top_color": {v: p if v == value else rest for v in values}},
            "confidence": {"top_color": c}}


def footage_gallery(root: Path, network: dict | None, sources: tuple[str, ...] = ("pixels", "pretrained")) -> Gallery:
    """``N_ITEMS`` crops with an ``rgb`` (checkpoint) and an ``appearance`` view (``network``; None: no
    appearance view), item i0 the most like i1; evidence of a red top for i0 from each of ``sources``."""
    views = {"rgb": 4, "appearance": 4} if network is not None else {"rgb": 4}
    gallery = Gallery.create(root, views, "ckpt", view_models={"appearance": network} if network else None)
    rng = np.random.default_rng(3)
    vectors = rng.standard_normal((N_ITEMS, 4)).astype(np.float32)
    vectors[1] = vectors[0] + 0.05
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    items = []
    for k in range(N_ITEMS):
        ok, data = cv2.imencode(".png", person_crop(k))
        assert ok
        relative, _ = gallery.put_crop(data.tobytes(), ".png")
        items.append({"id": f"i{k}", "source": "platform.mp4", "frame": 10 * k, "time": 2.0 * k, "camera": "c1",
                      "crop": relative})
    gallery.add(items, {view: vectors for view in views})
    if sources:
        store.append(gallery.root, ["i0", "i1"], [{s: colour("red", 0.9, 0.9) for s in sources},
                                                  {s: colour("green", 0.8, 0.9) for s in sources}])
    return gallery
