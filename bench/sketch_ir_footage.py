"""Sketch and IR queries on real crops, with synthetic proxies for the query images: the ``appearance:grey`` view
(the shipped re-identification network on grey crops, queried with the same network's vector of the grey query
image) against the checkpoint's ``rgb`` view (what sketch and IR steps searched before; worlds still do), and
against the colour ``appearance`` view for reference.

No real sketch or infrared data set is here, so the query images are made from the real crops, and are proxies
only, not witnesses' drawings or thermal footage:

- ``pencil``: a pencil-style drawing, the grey crop divided by its blurred negative (a colour-dodge "pencil
  sketch" filter: dark strokes at edges and shading on white);
- ``edges``: a line drawing, Canny edges of the grey crop, thickened, dark on white;
- ``ir``: an "IR-like" rendering, the grey crop with its contrast changed (stretched and inverted in part:
  warm skin bright, clothes darker), blurred and with sensor noise.

Crops: one per hand-labelled box of the real clips with at least two labelled people (``bench/appearance.py``:
``tests/data/footage/boxes.json`` plus ``people.json``'s reference boxes; © Intel Corporation and contributors,
intel-iot-devkit/sample-videos, CC BY 4.0), ingested in crops mode with the shipped checkpoint and the default
appearance network (``IngestOptions(crops=True)``: the ``appearance`` and ``appearance:grey`` views). Every crop
is the source of one query per proxy; the query ranks the other crops of its clip (person ids are per clip);
relevant = the same person's crops; the source crop and the same person's crops fewer than 15 frames from it are
left out (near-duplicates), queries left without a relevant crop are not counted. R@1 and mAP per proxy and
view (``engine.retrieval.metrics.retrieval``); chance R@1 is the mean share of relevant crops among the ranked ones. One
sketch step through ``SearchSession`` reports the view the routing picks and is checked against the table's
scores.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/sketch_ir_footage.py [--checkpoint C] [--keep DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import cv2  # noqa: E402
import numpy as np  # noqa: E402
from appearance import GAP, write_crops  # noqa: E402

from engine.index import Gallery  # noqa: E402
from engine.ingest import IngestOptions, ModelEncoder, ingest  # noqa: E402
from engine.perception.appearance.grey import encode_query, query_network  # noqa: E402
from engine.perception.appearance.views import APPEARANCE_GREY_VIEW, APPEARANCE_VIEW  # noqa: E402
from engine.retrieval.encoding.model_encoder import ModelQueryEncoder  # noqa: E402
from engine.retrieval.encoding.views import IMAGE_QUERY_VIEW  # noqa: E402
from engine.retrieval.metrics.retrieval import evaluate_retrieval  # noqa: E402
from engine.retrieval.models.discovery import default_checkpoint, load_model  # noqa: E402
from engine.retrieval.search import SearchSession, StepQuery  # noqa: E402

CHECKPOINT_ROW = f"checkpoint {IMAGE_QUERY_VIEW} (before; worlds)"
GREY_ROW = f"re-id {APPEARANCE_GREY_VIEW} (now)"
COLOUR_ROW = f"re-id {APPEARANCE_VIEW} (colour crops, for reference)"


def pencil(bgr: np.ndarray) -> np.ndarray:
    grey = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    blurred = cv2.GaussianBlur(255 - grey, (21, 21), 0)
    return cv2.divide(grey, 255 - blurred, scale=256)


def edges(bgr: np.ndarray) -> np.ndarray:
    grey = cv2.GaussianBlur(cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY), (3, 3), 0)
    lines = cv2.dilate(cv2.Canny(grey, 50, 130), np.ones((2, 2), np.uint8))
    return 255 - lines


def infrared(bgr: np.ndarray, seed: int) -> np.ndarray:
    grey = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY).astype(np.float32) / 255
    mixed = 0.55 * (1 - grey) + 0.45 * grey ** 0.5  # a thermal-like tone curve: dark clothes bright, not monotone
    stretched = np.clip((mixed - mixed.mean()) * 1.6 + 0.5, 0, 1) * 255
    blurred = cv2.GaussianBlur(stretched, (5, 5), 0)
    noisy = blurred + np.random.default_rng(seed).normal(0, 8, blurred.shape)
    return np.clip(noisy, 0, 255).astype(np.uint8)


PROXIES = {"pencil": lambda crop, seed: pencil(crop), "edges": lambda crop, seed: edges(crop), "ir": infrared}


def layout(gallery: Gallery) -> tuple[np.ndarray, np.ndarray]:
    """(valid, relevant) [N, N]: the other crops of the query's clip, minus the same person's within GAP frames."""
    names = [gallery.item(row).source.rsplit("/", 1)[-1] for row in range(len(gallery))]
    persons = np.asarray([n.split("_")[0] for n in names])
    frames = np.asarray([int(n.rsplit("_f", 1)[1].split(".")[0]) for n in names])
    clips = np.asarray(gallery.columns.camera)
    valid = (clips[:, None] == clips[None, :]) & ~np.eye(len(gallery), dtype=bool)
    relevant = valid & (persons[:, None] == persons[None, :])
    near = relevant & (np.abs(frames[:, None] - frames[None, :]) < GAP)
    return valid & ~near, relevant & ~near


def measured(similarity: np.ndarray, valid: np.ndarray, relevant: np.ndarray) -> dict:
    report = evaluate_retrieval(similarity, relevant, valid=valid)
    counted = report.evaluated
    chance = float(np.mean(relevant.sum(axis=1)[counted] / valid.sum(axis=1)[counted]))
    return {"R@1": report.recall_at(1), "mAP": report.mean_ap, "queries": int(counted.sum()), "chance_R@1": chance}


def run(checkpoint: Path | None, folder: Path) -> dict:
    counts = write_crops(folder / "crops")
    model = load_model(checkpoint, device="cpu")
    ingest(folder / "crops", folder / "gallery", ModelEncoder(model), options=IngestOptions(crops=True))
    gallery = Gallery.open(folder / "gallery")
    network = query_network(gallery.view_model(APPEARANCE_GREY_VIEW), APPEARANCE_GREY_VIEW)
    encoder = ModelQueryEncoder(model)
    crops = [cv2.imread(str(gallery.root / gallery.item(row).crop)) for row in range(len(gallery))]
    valid, relevant = layout(gallery)
    views = {GREY_ROW: gallery.vectors(APPEARANCE_GREY_VIEW).astype(np.float32),
             COLOUR_ROW: gallery.vectors(APPEARANCE_VIEW).astype(np.float32),
             CHECKPOINT_ROW: gallery.vectors(IMAGE_QUERY_VIEW).astype(np.float32)}
    table: dict[str, dict] = {}
    for proxy, make in PROXIES.items():
        images = [make(crop, row) for row, crop in enumerate(crops)]
        rgb = [cv2.cvtColor(image, cv2.COLOR_GRAY2RGB) for image in images]
        kind = "ir" if proxy == "ir" else "sketch"
        queries = {GREY_ROW: np.stack([encode_query(network, [image]) for image in rgb]),
                   COLOUR_ROW: np.stack([encode_query(network, [image]) for image in rgb]),
                   CHECKPOINT_ROW: np.stack([encoder.encode_fused(None, image if kind == "sketch" else None,
                                                                  image if kind == "ir" else None) for image in rgb])}
        table[proxy] = {row: measured(queries[row] @ views[row].T, valid, relevant) for row in views}
        if proxy == "pencil":
            step = SearchSession(gallery).step(StepQuery(sketch=rgb[0], k=len(gallery)))
            routed = step.view
            expected = (views[GREY_ROW] @ queries[GREY_ROW][0])[step.rows]
            assert np.allclose(step.scores, expected, atol=2e-3), "the session's sketch step scores differently"
    return {"crops": counts, "items": len(gallery), "routed_view": routed, "gap_frames": GAP, "table": table,
            "network": {k: v for k, v in network.fingerprint.items() if k != "file"}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", type=Path, default=None, help="default: the shipped checkpoint")
    parser.add_argument("--keep", type=Path, default=None, help="keep the crops and the gallery in this folder")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="lineup-sketch-ir-"))
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        parser.error(f"--keep {args.keep} must be absent or empty")
    try:
        result = run(args.checkpoint, folder)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    result["checkpoint"] = str(args.checkpoint or default_checkpoint().relative_to(ROOT))
    print(f"crops per clip: {result['crops']} ({result['items']} items); a sketch step routes to "
          f"{result['routed_view']!r}; network {result['network']['version']}")
    print("| proxy | ranked by | R@1 | mAP | queries | chance R@1 |")
    print("|---|---|---|---|---|---|")
    for proxy, rows in result["table"].items():
        for name, row in rows.items():
            print(f"| {proxy} | {name} | {row['R@1']:.3f} | {row['mAP']:.3f} | {row['queries']} | "
                  f"{row['chance_R@1']:.3f} |")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
