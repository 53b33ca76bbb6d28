"""Person detection on real footage: the default YOLOX-Nano against Yolo-Fastest (``fast``), the fused detector
(background subtraction + HOG) and HOG alone, scored on hand-labelled frames; their speed; and a synthetic check
of YOLOX's tiling on a large frame of small people.

Clips: the real clips in ``shared/data/footage`` (intel-iot-devkit/sample-videos, © Intel Corporation and
contributors, CC BY 4.0), labels: ``tests/data/footage/boxes.json`` (see its README).

1. Accuracy. Per labelled clip and detector: the stateless ones (yolox, fast, hog) run on the labelled frames;
   the fused one is ``reset``, warmed up on the clip's first frames and run on every frame in order up to the
   last labelled one (as ingest does). Boxes are scored with ``engine.ingest.box_labels.score_frame`` (greedy
   pairing at IoU ≥ 0.5, ``ignore`` labels count for nothing): precision and recall per clip and pooled.
   Goals: pooled P ≥ 0.95 and R ≥ 0.95, every clip R ≥ 0.8.
2. Speed: frames per second of ``detect`` calls alone (no decoding) on the labelled frames at the clips' own
   size, and on the same frames resized to 1280×720 (YOLOX with tiles ``auto`` and ``off``). Threads: OpenCV's
   default unless ``OMP_NUM_THREADS`` / ``--threads`` says otherwise (the goal, ≥ 10 fps at 1280×720, is for
   two cores at default threads).
3. Tiling (``--tiling``): every labelled frame of the clips shrunk by ``--shrink`` (0.5: people ~70–90 px tall) and
   pasted 4 × 4 times on a mid-grey 1920×1080 canvas, each paste with its labels moved along; YOLOX recall and
   precision with tiles ``auto`` and ``off``.

    .venv/bin/python bench/detection.py [--footage DIR] [--labels FILE] [--clips a.gif,b.gif]
        [--detectors yolox,fast,fused,hog] [--no-speed] [--tiling] [--shrink 0.3] [--threads N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from engine.detection.factory import make_detector
from engine.ingest.box_labels import LabelledBox, LabelledClip, Tally, load_box_labels, score_frame

ROOT = Path(__file__).resolve().parents[1]
FOOTAGE = ROOT.parent / "shared" / "data" / "footage"
LABELS = ROOT / "tests" / "data" / "footage" / "boxes.json"
DETECTORS = ("yolox", "fast", "fused", "hog")
SPEED_SIZE = (1280, 720)
CANVAS = (1920, 1080)
PASTES = 4  # per side of the tiling canvas
GOAL_POOLED, GOAL_CLIP = 0.95, 0.8


def read_frames(path: Path, upto: int) -> list[np.ndarray]:
    """Frames 0..upto of a clip in ``cv2.VideoCapture`` order."""
    capture = cv2.VideoCapture(str(path))
    if not capture.isOpened():
        raise SystemExit(f"OpenCV cannot open {path}")
    frames = []
    try:
        while len(frames) <= upto:
            ok, image = capture.read()
            if not ok:
                break
            frames.append(image)
    finally:
        capture.release()
    return frames


def run(name: str, frames: list[np.ndarray], clip: LabelledClip) -> dict:
    """Tally of one detector on one clip's labelled frames, and its fps there."""
    detector = make_detector(name)
    detector.reset()
    stateful = hasattr(detector, "warm_up") and name == "fused"
    if stateful:
        detector.warm_up(frames)
    tally, seconds, calls = Tally(), 0.0, 0
    for index, image in enumerate(frames):
        if not stateful and index not in clip.frames:
            continue
        started = time.perf_counter()
        found = detector.detect(image)
        seconds += time.perf_counter() - started
        calls += 1
        if index in clip.frames:
            tally.add(score_frame(found.boxes, clip.frames[index]))
    return {"frames": calls, "fps": calls / seconds if seconds else None, **tally.to_dict()}


def speed(name: str, frames: list[np.ndarray], **options) -> float:
    """Frames per second of ``detect`` alone over ``frames`` (after one untimed call)."""
    detector = make_detector(name, **options)
    detector.reset()
    detector.detect(frames[0])
    started = time.perf_counter()
    for image in frames:
        detector.detect(image)
    return len(frames) / (time.perf_counter() - started)


def canvas_scene(frames: list[np.ndarray], labels: list[list[LabelledBox]], shrink: float,
                 seed: int) -> tuple[np.ndarray, list[LabelledBox]]:
    """One 1920×1080 canvas of ``PASTES``² shrunk labelled frames (picked at random), with their moved labels."""
    rng = np.random.default_rng(seed)
    canvas = np.full((CANVAS[1], CANVAS[0], 3), 120, np.uint8)
    cell_w, cell_h = CANVAS[0] // PASTES, CANVAS[1] // PASTES
    moved: list[LabelledBox] = []
    for row in range(PASTES):
        for column in range(PASTES):
            pick = int(rng.integers(len(frames)))
            image = cv2.resize(frames[pick], None, fx=shrink, fy=shrink, interpolation=cv2.INTER_AREA)
            h, w = image.shape[:2]
            if h > cell_h or w > cell_w:
                raise SystemExit(f"--shrink {shrink} makes pastes of {w}×{h}, larger than a {cell_w}×{cell_h} cell")
            x0 = column * cell_w + int(rng.integers(cell_w - w + 1))
            y0 = row * cell_h + int(rng.integers(cell_h - h + 1))
            canvas[y0 : y0 + h, x0 : x0 + w] = image
            for label in labels[pick]:
                x, y, bw, bh = label.box
                moved.append(LabelledBox((x0 + x * shrink, y0 + y * shrink, bw * shrink, bh * shrink),
                                         label.person, label.partial, label.ignore))
    return canvas, moved


def tiling(labelled: list[tuple[np.ndarray, list[LabelledBox]]], shrink: float, scenes: int) -> dict:
    """YOLOX with tiles auto and off on ``scenes`` synthetic canvases."""
    frames = [image for image, _ in labelled]
    labels = [boxes for _, boxes in labelled]
    built = [canvas_scene(frames, labels, shrink, seed) for seed in range(scenes)]
    heights = [b.box[3] for _, boxes in built for b in boxes if not b.ignore]
    out: dict = {"shrink": shrink, "scenes": scenes, "canvas": list(CANVAS),
                 "people": len(heights), "person_height_px": [float(np.min(heights)), float(np.median(heights)),
                                                              float(np.max(heights))]}
    for tiles in ("auto", "off"):
        detector = make_detector("yolox", tiles=tiles)
        tally, seconds = Tally(), 0.0
        for canvas, boxes in built:
            started = time.perf_counter()
            found = detector.detect(canvas)
            seconds += time.perf_counter() - started
            tally.add(score_frame(found.boxes, boxes))
        out[tiles] = {"passes": len(detector.regions(*CANVAS)), "fps": scenes / seconds, **tally.to_dict()}
    return out


def measure(args: argparse.Namespace) -> dict:
    clips = load_box_labels(args.labels)
    names = [n.strip() for n in args.clips.split(",") if n.strip()] if args.clips else list(clips)
    detectors = [d.strip() for d in args.detectors.split(",") if d.strip()]
    unknown = [n for n in names if n not in clips]
    if unknown:
        raise SystemExit(f"no labels for {unknown}; labelled clips: {sorted(clips)}")
    results: dict = {"footage": str(args.footage), "labels": str(args.labels), "detectors": detectors,
                     "settings": {d: make_detector(d).settings() for d in detectors}, "clips": {},
                     "threads": cv2.getNumThreads()}
    labelled: list[tuple[np.ndarray, list[LabelledBox]]] = []
    small: list[np.ndarray] = []
    for name in names:
        path = args.footage / name
        if not path.is_file():
            raise SystemExit(f"clip {path} is missing (is the footage folder {args.footage} right?)")
        clip = clips[name]
        frames = read_frames(path, max(clip.frames))
        missing = sorted(set(clip.frames) - set(range(len(frames))))
        if missing:
            raise SystemExit(f"{name}: labelled frames {missing[:5]} lie beyond the {len(frames)} frames decoded")
        print(f"{name}: {len(clip.frames)} labelled frames", file=sys.stderr, flush=True)
        labelled.extend((frames[i], boxes) for i, boxes in clip.frames.items())
        small.extend(frames[i] for i in clip.frames)
        results["clips"][name] = {"size": list(clip.size), "labelled_frames": len(clip.frames),
                                  "people": sum(1 for boxes in clip.frames.values() for b in boxes if not b.ignore),
                                  **{d: run(d, frames, clip) for d in detectors}}
    results["overall"] = {}
    for d in detectors:
        total = Tally()
        for entry in results["clips"].values():
            total.add(Tally(entry[d]["hits"], entry[d]["false_positives"], entry[d]["misses"]))
        results["overall"][d] = total.to_dict()
    if args.speed:
        print("speed at 1280x720", file=sys.stderr, flush=True)
        large = [cv2.resize(image, SPEED_SIZE, interpolation=cv2.INTER_LINEAR) for image in small[:: args.every]]
        own = small[:: args.every]
        results["speed"] = {"frames": len(own), "own_size": {d: speed(d, own) for d in detectors},
                            "1280x720": {d: speed(d, large) for d in detectors}}
        results["speed"]["1280x720"]["yolox tiles off"] = speed("yolox", large, tiles="off")
        results["speed"]["1280x720"]["yolox tiles off + foreground"] = speed("yolox", large, tiles="off",
                                                                            foreground=True)
        results["speed"]["yolox_passes_1280x720"] = len(make_detector("yolox").regions(*SPEED_SIZE))
    if args.tiling:
        print("tiling check", file=sys.stderr, flush=True)
        results["tiling"] = tiling(labelled, args.shrink, args.scenes)
    return results


def table(results: dict) -> str:
    detectors = results["detectors"]
    head = " | ".join(f"{d} P / R" for d in detectors)
    lines = [f"| clip | frames | people | {head} |", "|---|---|---|" + "---|" * len(detectors)]
    for name, entry in results["clips"].items():
        cells = " | ".join(f"{entry[d]['precision']:.2f} / {entry[d]['recall']:.2f}" for d in detectors)
        lines.append(f"| {name} | {entry['labelled_frames']} | {entry['people']} | {cells} |")
    total = results["overall"]
    cells = " | ".join(f"**{total[d]['precision']:.2f} / {total[d]['recall']:.2f}**" for d in detectors)
    lines.append(f"| all (pooled) | | | {cells} |")
    if "yolox" in detectors:
        clip_ok = all(e["yolox"]["recall"] >= GOAL_CLIP for e in results["clips"].values())
        pooled_ok = total["yolox"]["precision"] >= GOAL_POOLED and total["yolox"]["recall"] >= GOAL_POOLED
        lines.append(f"\ngoal yolox pooled P, R ≥ {GOAL_POOLED}: {'met' if pooled_ok else 'not met'}; "
                     f"every clip R ≥ {GOAL_CLIP}: {'met' if clip_ok else 'not met'}")
    if "speed" in results:
        s = results["speed"]
        lines += ["", f"detect fps ({s['frames']} frames, OpenCV threads {results['threads']}):", "",
                  "| detector | clips' own size | 1280×720 |", "|---|---|---|"]
        for d in detectors:
            lines.append(f"| {d} | {s['own_size'][d]:.1f} | {s['1280x720'][d]:.1f} |")
        lines.append(f"| yolox tiles off | | {s['1280x720']['yolox tiles off']:.1f} |")
        lines.append(f"| yolox tiles off + background foreground | | "
                     f"{s['1280x720']['yolox tiles off + foreground']:.1f} |")
        lines.append(f"\n(yolox tiles auto runs {s['yolox_passes_1280x720']} passes on a 1280×720 frame)")
    if "tiling" in results:
        t = results["tiling"]
        low, mid, high = t["person_height_px"]
        lines += ["", f"tiling check: {t['scenes']} canvases {t['canvas'][0]}×{t['canvas'][1]}, {t['people']} people "
                  f"{low:.0f}–{high:.0f} px tall (median {mid:.0f})", "",
                  "| yolox tiles | passes | P | R | fps |", "|---|---|---|---|---|"]
        for tiles in ("auto", "off"):
            r = t[tiles]
            lines.append(f"| {tiles} | {r['passes']} | {r['precision']:.2f} | {r['recall']:.2f} | {r['fps']:.1f} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--footage", type=Path, default=FOOTAGE, help="folder holding the clips")
    parser.add_argument("--labels", type=Path, default=LABELS, help="hand labels (boxes.json)")
    parser.add_argument("--clips", default=None, help="comma-separated clip names (default: every labelled clip)")
    parser.add_argument("--detectors", default=",".join(DETECTORS), help="comma-separated detector names")
    parser.add_argument("--no-speed", dest="speed", action="store_false", help="skip the speed runs")
    parser.add_argument("--every", type=int, default=2, help="speed runs use every N-th labelled frame")
    parser.add_argument("--tiling", action="store_true", help="run the synthetic tiling check")
    parser.add_argument("--shrink", type=float, default=0.5, help="tiling check: size of each pasted frame")
    parser.add_argument("--scenes", type=int, default=8, help="tiling check: canvases")
    parser.add_argument("--threads", type=int, default=None, help="OpenCV threads (default: OpenCV's choice)")
    parser.add_argument("--json", type=Path, default=None, help="write the full results here")
    args = parser.parse_args(argv)
    if args.threads is not None:
        cv2.setNumThreads(args.threads)
    results = measure(args)
    print(table(results))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        temporary = args.json.with_name(args.json.name + ".tmp")
        temporary.write_text(json.dumps(results, indent=1), encoding="utf-8")
        os.replace(temporary, args.json)


if __name__ == "__main__":
    main()
