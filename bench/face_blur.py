"""Face redaction on real footage: how much of each hand-labelled face the report's blur covers when it blurs the
person crop the face belongs to, per method, and how much it blurs outside faces.

Clips: ``--footage`` or ``LINEUP_FOOTAGE_DIR`` (intel-iot-devkit/sample-videos, © Intel Corporation and contributors,
CC BY 4.0);
labels: ``tests/data/footage/faces.json`` (a face box and the person box it is cut from; see the README there).
Each labelled person box is cut from its frame and blurred by each method:

- ``network``: what reports do (``app.report.blur.blur_faces``): face-detection-retail-0005 in the head window,
  then the whole crop; the head region when it finds nothing (or nothing near the top).
- ``network, faces only``: the same faces, without the head region.
- ``haar, faces only`` / ``haar → hog → band``: OpenCV's Haar frontal-face cascade on the crop enlarged to 256
  rows, top half only, faces grown by 15 % (the former first step); and the former chain behind it: the head of
  the most confident HOG person box, else the former band (top 18 % × centre 70 %).
- ``hog head only``: the head of the HOG person box (top 28 % × centre 60 %), nothing when HOG finds nobody.
- ``fallback only``: the head region reports blur when the network finds nothing
  (``app.report.blur.head_region``), and ``former band only``: top 18 % × centre 70 %.

Per method: ``found`` (crops where the detector found something), ``covered`` (labelled faces with at least
``--cover`` (0.8) of their box blurred; ``all of the face``: all of it), ``over-blur`` (blurred pixels outside
every labelled face box in the crop, over all blurred pixels, pooled) and milliseconds per crop (the mean of
``--repeats`` runs, detection and blur, after one warm-up run; the network at OpenVINO's own thread count unless
``--threads``). ``--scale 0.5`` shrinks every frame (and its labels) first: people half as tall, faces 6–30 px.

    .venv/bin/python bench/face_blur.py [--footage DIR] [--labels FILE] [--cover 0.8] [--repeats 5]
        [--scale 1.0] [--threads N] [--verbose] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

import cv2
import numpy as np

from app.report import blur
from engine.kernel.atomic import atomic_write_text
from engine.perception.detection.faces import FaceDetector

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benches beside this one
from footage_folder import footage_folder  # noqa: E402

LABELS = ROOT / "tests" / "data" / "footage" / "faces.json"
COVER = 0.8

Box = tuple[int, int, int, int]


class LabelledFace(NamedTuple):
    clip: str
    frame: int
    person: str
    face: Box  # frame pixels
    crop: Box  # frame pixels: the person box the face belongs to


def load_faces(path: Path = LABELS) -> list[LabelledFace]:
    """The labelled faces of ``faces.json``, in file order."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    faces = []
    for clip, frames in data["clips"].items():
        for frame, rows in frames.items():
            for row in rows:
                faces.append(LabelledFace(clip, int(frame), str(row["person"]), tuple(row["face"]),
                                          tuple(row["crop"])))
    return faces


def read_frames(path: Path, wanted: set[int]) -> dict[int, np.ndarray]:
    """The frames of a clip whose ``cv2.VideoCapture`` indices are in ``wanted``."""
    capture = cv2.VideoCapture(str(path))
    if not capture.isOpened():
        raise SystemExit(f"OpenCV cannot open {path}")
    frames, index = {}, 0
    try:
        while index <= max(wanted):
            ok, image = capture.read()
            if not ok:
                break
            if index in wanted:
                frames[index] = image
            index += 1
    finally:
        capture.release()
    missing = sorted(wanted - set(frames))
    if missing:
        raise SystemExit(f"{path} has no frames {missing}")
    return frames


def scaled(box: Box, scale: float) -> Box:
    """A frame-pixel box in a frame resized by ``scale`` (corners rounded outwards)."""
    x0, y0 = math.floor(box[0] * scale), math.floor(box[1] * scale)
    x1, y1 = math.ceil((box[0] + box[2]) * scale), math.ceil((box[1] + box[3]) * scale)
    return x0, y0, x1 - x0, y1 - y0


def cut(frame: np.ndarray, box: Box) -> np.ndarray:
    x, y, w, h = box
    return frame[max(0, y):y + h, max(0, x):x + w].copy()


def in_crop(face: Box, crop: Box) -> Box:
    """A frame-pixel face box in the pixels of the crop cut at ``crop`` (clipped to it)."""
    x0, y0 = max(face[0] - crop[0], 0), max(face[1] - crop[1], 0)
    x1, y1 = min(face[0] + face[2] - crop[0], crop[2]), min(face[1] + face[3] - crop[1], crop[3])
    return x0, y0, max(0, x1 - x0), max(0, y1 - y0)


def mask_of(regions: list[Box] | tuple[Box, ...], height: int, width: int) -> np.ndarray:
    mask = np.zeros((height, width), bool)
    for x, y, w, h in regions:
        mask[max(0, y):y + h, max(0, x):x + w] = True
    return mask


def coverage(regions: list[Box] | tuple[Box, ...], face: Box, height: int, width: int) -> float:
    """The share of ``face`` (crop pixels) that ``regions`` cover."""
    x, y, w, h = face
    if w <= 0 or h <= 0:
        return 0.0
    return float(mask_of(regions, height, width)[y:y + h, x:x + w].mean())


# The former steps (Haar cascade, HOG person box), kept here as the baselines they were measured as.
_FORMER_LOCK = threading.Lock()


@lru_cache(maxsize=1)
def _cascade() -> cv2.CascadeClassifier:
    cascade = cv2.CascadeClassifier(str(Path(cv2.data.haarcascades) / "haarcascade_frontalface_default.xml"))
    if cascade.empty():
        raise SystemExit("OpenCV's Haar face cascade cannot be loaded")
    return cascade


@lru_cache(maxsize=1)
def _hog() -> cv2.HOGDescriptor:
    hog = cv2.HOGDescriptor()
    hog.setSVMDetector(cv2.HOGDescriptor_getDefaultPeopleDetector())
    return hog


def haar_faces(crop: np.ndarray) -> list[Box]:
    """The former first step: Haar faces on the crop enlarged to 256 rows, centre in the top half, grown 15 %."""
    height, width = crop.shape[:2]
    scale = max(1.0, 256 / height)
    grey = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    if scale > 1.0:
        grey = cv2.resize(grey, (max(1, round(width * scale)), round(height * scale)), interpolation=cv2.INTER_CUBIC)
    with _FORMER_LOCK:
        found = _cascade().detectMultiScale(cv2.equalizeHist(grey), scaleFactor=1.1, minNeighbors=5,
                                            minSize=(24, 24))
    faces = []
    for x, y, w, h in (found if len(found) else ()):
        box = (int(x / scale), int(y / scale), max(1, math.ceil(w / scale)), max(1, math.ceil(h / scale)))
        if box[1] + box[3] / 2 <= 0.5 * height:
            faces.append(blur.grow(box, height, width, 0.15))
    return faces


def hog_head(crop: np.ndarray) -> list[Box]:
    """The former second step: the head (top 28 % × centre 60 %) of the most confident HOG person box."""
    height, width = crop.shape[:2]
    scale = max(1.0, 160 / height)
    work = crop
    if scale > 1.0:
        work = cv2.resize(crop, (max(1, round(width * scale)), round(height * scale)), interpolation=cv2.INTER_CUBIC)
    pad = 32
    work = cv2.copyMakeBorder(work, pad, pad, pad, pad, cv2.BORDER_REPLICATE)
    with _FORMER_LOCK:
        boxes, weights = _hog().detectMultiScale(work, winStride=(4, 4), padding=(8, 8), scale=1.05)
    if len(boxes) == 0:
        return []
    x, y, w, h = (float(v) for v in boxes[int(np.argmax(np.asarray(weights).reshape(-1)))])
    x0, y0 = max(0.0, (x - pad) / scale), max(0.0, (y - pad) / scale)
    x1, y1 = min(float(width), (x - pad + w) / scale), min(float(height), (y - pad + h) / scale)
    if x1 - x0 < 2 or y1 - y0 < 2:
        return []
    px, py, pw, ph = round(x0), round(y0), round(x1 - x0), round(y1 - y0)
    box_w = max(1, round(pw * 0.60))
    hx0, hy0 = max(0, px + (pw - box_w) // 2), max(0, py)
    hx1, hy1 = min(width, hx0 + box_w), min(height, hy0 + max(1, math.ceil(ph * 0.28)))
    return [(hx0, hy0, max(1, hx1 - hx0), max(1, hy1 - hy0))]


def former_band(height: int, width: int) -> Box:
    box_w = max(1, round(width * 0.70))
    return (width - box_w) // 2, 0, box_w, max(1, math.ceil(height * 0.18))


def methods(detector: FaceDetector) -> dict[str, Callable[[np.ndarray], tuple[list[Box], bool]]]:
    """Each method: crop → (regions blurred, whether its detector found something)."""

    def network(crop):
        result = blur.blur_faces(crop, detector=detector)
        return list(result.regions), bool(result.faces)

    def network_faces(crop):
        height, width = crop.shape[:2]
        faces = blur.detect_faces(crop, detector)
        return [blur.grow(face.box, height, width) for face in faces], bool(faces)

    def haar(crop):
        faces = haar_faces(crop)
        return faces, bool(faces)

    def former_chain(crop):
        faces = haar_faces(crop)
        if faces:
            return faces, True
        head = hog_head(crop)
        return (head, True) if head else ([former_band(*crop.shape[:2])], False)

    def hog(crop):
        head = hog_head(crop)
        return head, bool(head)

    return {
        "network": network,
        "network, faces only": network_faces,
        "haar, faces only": haar,
        "haar → hog → band (former)": former_chain,
        "hog head only": hog,
        "fallback only": lambda crop: ([blur.head_region(*crop.shape[:2])], False),
        "former band only": lambda crop: ([former_band(*crop.shape[:2])], False),
    }


def measure(args: argparse.Namespace) -> dict:
    labelled = [face._replace(face=scaled(face.face, args.scale), crop=scaled(face.crop, args.scale))
                for face in load_faces(args.labels)]
    frames: dict[tuple[str, int], np.ndarray] = {}
    for clip in sorted({face.clip for face in labelled}):
        path = args.footage / clip
        if not path.is_file():
            raise SystemExit(f"clip {path} is missing (is the footage folder {args.footage} right?)")
        wanted = {face.frame for face in labelled if face.clip == clip}
        for index, image in read_frames(path, wanted).items():
            if args.scale != 1.0:
                size = (round(image.shape[1] * args.scale), round(image.shape[0] * args.scale))
                image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
            frames[(clip, index)] = image
    detector = FaceDetector(threads=args.threads)
    results: dict = {"labels": str(args.labels), "faces": len(labelled), "cover": args.cover, "scale": args.scale,
                     "repeats": args.repeats, "threads": args.threads, "cpus": os.cpu_count(), "methods": {}}
    for name, method in methods(detector).items():
        covered = whole = found = blurred = outside = 0
        seconds = 0.0
        rows = []
        for face in labelled:
            crop = cut(frames[(face.clip, face.frame)], face.crop)
            height, width = crop.shape[:2]
            method(crop)  # warm-up
            start = time.perf_counter()
            for _ in range(args.repeats):
                regions, hit = method(crop)
            seconds += (time.perf_counter() - start) / args.repeats
            own = in_crop(face.face, face.crop)
            share = coverage(regions, own, height, width)
            others = [in_crop(other.face, face.crop) for other in labelled
                      if (other.clip, other.frame) == (face.clip, face.frame)]
            mask = mask_of(regions, height, width)
            faces_mask = mask_of([box for box in others if box[2] > 0 and box[3] > 0], height, width)
            blurred += int(mask.sum())
            outside += int((mask & ~faces_mask).sum())
            covered += share >= args.cover
            whole += share >= 1.0
            found += hit
            rows.append({"clip": face.clip, "frame": face.frame, "person": face.person, "covered": round(share, 3),
                         "found": hit, "regions": [list(map(int, r)) for r in regions]})
        count = len(labelled)
        results["methods"][name] = {"found": found, "covered": covered, "whole": whole, "crops": count,
                                    "over_blur": outside / blurred if blurred else 0.0,
                                    "ms_per_crop": 1000 * seconds / count, "rows": rows}
    return results


def table(results: dict) -> str:
    n = results["faces"]
    lines = [f"{n} labelled faces, frames scaled by {results['scale']}, covered = at least {results['cover']:.0%} of "
             "the face box blurred",
             "", "| method | found | covered | all of the face | over-blur | ms / crop |", "|---|---|---|---|---|---|"]
    for name, r in results["methods"].items():
        lines.append(f"| {name} | {r['found']}/{n} | {r['covered']}/{n} ({r['covered'] / n:.0%}) | {r['whole']}/{n} | "
                     f"{r['over_blur']:.0%} | {r['ms_per_crop']:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--footage", type=Path, help="folder holding the clips (default: LINEUP_FOOTAGE_DIR)")
    parser.add_argument("--labels", type=Path, default=LABELS, help="hand-labelled faces (faces.json)")
    parser.add_argument("--cover", type=float, default=COVER, help="share of a face box that counts as covered")
    parser.add_argument("--scale", type=float, default=1.0, help="resize every frame and its labels by this first")
    parser.add_argument("--repeats", type=int, default=5, help="timed runs per crop and method")
    parser.add_argument("--threads", type=int, default=None, help="OpenVINO threads (default: its own choice)")
    parser.add_argument("--verbose", action="store_true", help="print each face's coverage per method")
    parser.add_argument("--json", type=Path, default=None, help="write the full results here")
    args = parser.parse_args(argv)
    args.footage = footage_folder(args.footage)
    results = measure(args)
    if args.verbose:
        for name, r in results["methods"].items():
            print(name)
            for row in r["rows"]:
                print(f"  {row['clip']} frame {row['frame']} {row['person']}: {row['covered']:.2f}"
                      f"{' found' if row['found'] else ''} {row['regions']}")
    print(table(results))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(args.json, json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
