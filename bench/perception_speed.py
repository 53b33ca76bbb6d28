"""What the shipped person networks cost, as ratios measured in one run (docs/pretrained-models.md, "Speed").

1. **Ingest of a real clip** (``--clip``, default one of the real clips, © Intel Corporation and
   contributors, intel-iot-devkit/sample-videos, CC BY 4.0): the default detector alone over every frame
   (``lineup detect``'s path), then a full ingest with the shipped checkpoint, the appearance networks
   (``appearance`` and ``appearance:grey`` views) and the attribute network, during which the time spent
   inside those networks is summed. Goal: the extra networks cost at most 0.5× the detector's time. A second
   ingest without them (``appearance="none"``, no attribute network) gives the end-to-end difference too.
2. **A crop folder**: every labelled box of ``tests/data/footage/people.json`` written as a crop, ingested in
   crops mode with everything on: items per second, and the share spent in the shipped networks.
3. **Find-similar at N items** (``--items``): a gallery of N random unit vectors in the 256-d ``appearance``
   view; the first find-similar step over the whole gallery against a raw FAISS scan of the same vectors
   (minimum over ``--repeats``).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/perception_speed.py [--clip NAME] [--items 100000] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import cv2  # noqa: E402
import faiss  # noqa: E402
import numpy as np  # noqa: E402

from engine.index import Gallery  # noqa: E402
from engine.ingest import IngestOptions, ModelEncoder, ingest  # noqa: E402
from engine.ingest.detect import detect_frames  # noqa: E402
from engine.perception.appearance.shipped import ShippedAppearanceNetwork  # noqa: E402
from engine.perception.attributes.pretrained import AttributeNetwork  # noqa: E402
from engine.retrieval.models.discovery import load_model  # noqa: E402
from engine.retrieval.search import SearchSession, StepQuery  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benches beside this one
from footage_folder import footage_folder  # noqa: E402

PEOPLE = ROOT / "tests" / "data" / "footage" / "people.json"
GOAL = 0.5
BATCH = 20_000


class Clock:
    """Seconds spent inside the shipped networks, summed over every call."""

    def __init__(self) -> None:
        self.seconds = 0.0

    @contextmanager
    def patched(self):
        originals = {(ShippedAppearanceNetwork, "encode"): ShippedAppearanceNetwork.encode,
                     (AttributeNetwork, "read"): AttributeNetwork.read}
        clock = self

        def timed(function):
            def run(*args, **kwargs):
                started = time.perf_counter()
                try:
                    return function(*args, **kwargs)
                finally:
                    clock.seconds += time.perf_counter() - started
            return run

        for (owner, name), function in originals.items():
            setattr(owner, name, timed(function))
        try:
            yield self
        finally:
            for (owner, name), function in originals.items():
                setattr(owner, name, function)


def clip_ingest(clip: Path, model, folder: Path) -> dict:
    from engine.perception.detection.factory import make_detector

    detector = make_detector("auto")
    started = time.perf_counter()
    frames = sum(1 for _ in detect_frames(clip, detector, 1))
    detect_seconds = time.perf_counter() - started
    clock = Clock()
    with clock.patched():
        started = time.perf_counter()
        full = ingest(clip, folder / "full", ModelEncoder(model))
        full_seconds = time.perf_counter() - started
    started = time.perf_counter()
    ingest(clip, folder / "plain", ModelEncoder(model), options=IngestOptions(appearance="none",
                                                                             pretrained_attributes=False))
    plain_seconds = time.perf_counter() - started
    items = full.totals()["items_added"]
    return {"clip": clip.name, "frames": frames, "items": items, "detector_seconds": round(detect_seconds, 2),
            "networks_seconds": round(clock.seconds, 2),
            "networks_over_detector": round(clock.seconds / detect_seconds, 3),
            "ingest_seconds_with": round(full_seconds, 2), "ingest_seconds_without": round(plain_seconds, 2),
            "views": sorted(Gallery.open(folder / "full").views)}


def crop_folder(model, folder: Path) -> dict:
    from engine.lab.evaluation.attribute_accuracy import footage_samples

    crops = folder / "crops"
    crops.mkdir()
    for n, sample in enumerate(footage_samples(PEOPLE, footage_folder())):
        cv2.imwrite(str(crops / f"{n:04d}.png"), sample.crop)
    clock = Clock()
    with clock.patched():
        started = time.perf_counter()
        report = ingest(crops, folder / "crop-gallery", ModelEncoder(model), options=IngestOptions(crops=True))
        seconds = time.perf_counter() - started
    items = report.totals()["items_added"]
    return {"items": items, "seconds": round(seconds, 2), "items_per_second": round(items / seconds, 1),
            "networks_share": round(clock.seconds / seconds, 3)}


def find_similar(folder: Path, count: int, repeats: int, rng: np.random.Generator) -> dict:
    gallery = Gallery.create(folder / "big", {"appearance": 256}, "bench")
    for first in range(0, count, BATCH):
        m = min(BATCH, count - first)
        vectors = rng.standard_normal((m, 256), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        gallery.add([{"id": f"i{k}", "source": "bench"} for k in range(first, first + m)], {"appearance": vectors})
    gallery = Gallery.open(gallery.root)
    matrix = np.ascontiguousarray(gallery.matrix("appearance"), dtype=np.float32)
    flat = faiss.IndexFlatIP(256)
    flat.add(matrix)
    steps, raw = [], []
    for _ in range(repeats):
        row = int(rng.integers(count))
        session = SearchSession(gallery)
        started = time.perf_counter()
        step = session.step(StepQuery(example=gallery.ids[row], rho=0.5))
        steps.append(time.perf_counter() - started)
        started = time.perf_counter()
        flat.search(matrix[row : row + 1], 100)
        raw.append(time.perf_counter() - started)
    return {"items": count, "view": step.view, "step_ms": round(1000 * min(steps), 2),
            "raw_faiss_ms": round(1000 * min(raw), 2), "ratio": round(min(steps) / min(raw), 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clip", default="face-demographics-walking-and-pause.gif",
                        help="a clip of LINEUP_FOOTAGE_DIR")
    parser.add_argument("--items", type=int, default=100_000, help="gallery size for find-similar")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    clip = footage_folder() / args.clip
    if not clip.is_file():
        parser.error(f"clip {clip} is absent")
    model = load_model(None, device="cpu")
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory(prefix="perception-speed-") as folder:
        report = {"clip": clip_ingest(clip, model, Path(folder)),
                  "crop_folder": crop_folder(model, Path(folder)),
                  "find_similar": find_similar(Path(folder), args.items, args.repeats, rng)}
    clip, crops, similar = report["clip"], report["crop_folder"], report["find_similar"]
    print(f"ingest {clip['clip']}: {clip['frames']} frames, {clip['items']} items; detector alone "
          f"{clip['detector_seconds']} s, shipped networks {clip['networks_seconds']} s → "
          f"{clip['networks_over_detector']}× the detector (goal ≤ {GOAL}); whole ingest "
          f"{clip['ingest_seconds_with']} s with them, {clip['ingest_seconds_without']} s without")
    print(f"crop folder: {crops['items']} crops in {crops['seconds']} s = {crops['items_per_second']} items/s, "
          f"{crops['networks_share']:.0%} of it in the shipped networks")
    print(f"find similar at {similar['items']} items ({similar['view']}): {similar['step_ms']} ms a step, raw FAISS "
          f"scan {similar['raw_faiss_ms']} ms, ratio {similar['ratio']}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
