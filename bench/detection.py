"""Person detection on real footage: HOG alone against the fused detector (background subtraction + HOG), scored
on hand-labelled frames.

Clips: the real clips in ``shared/data/footage`` (intel-iot-devkit/sample-videos, © Intel Corporation and
contributors, CC BY 4.0), labels: ``tests/data/footage/boxes.json`` (see its README). For each labelled clip:

- fused (``engine.ingest.motion.FusedDetector``, defaults): ``reset``, ``warm_up`` on the clip's first frames
  (a second read, as ingest does), then ``detect`` on every frame in order up to the last labelled one;
- HOG alone (``HogDetector`` defaults, what ingest used before): it keeps no state between frames, so it is
  run on the labelled frames only, which gives the very boxes a run over every frame would give.

Boxes are scored on the labelled frames (``engine.ingest.box_labels``: greedy pairing by IoU ≥ 0.5, ``ignore``
labels neither hits nor misses); precision and recall per clip and pooled over all clips. Frame rate: frames per
second of ``detect`` calls alone (decoding not counted; the fused warm-up is reported apart). Goal: recall ≥ 0.8
at precision ≥ 0.8 on face-demographics-walking.gif and store-aisle-detection.gif.

    .venv/bin/python bench/detection.py [--footage DIR] [--labels FILE] [--clips a.gif,b.gif] [--seeds 0,1,2]
                                        [--json out.json]

``--seeds``: the fused detector's KNN background model samples at random; several seeds show the spread (the
table gives their mean, the JSON each run).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from engine.ingest.box_labels import LabelledClip, Tally, load_box_labels, score_frame
from engine.ingest.detectors import HogDetector
from engine.ingest.motion import FusedDetector

ROOT = Path(__file__).resolve().parents[1]
FOOTAGE = ROOT.parent / "shared" / "data" / "footage"
LABELS = ROOT / "tests" / "data" / "footage" / "boxes.json"
GOAL_CLIPS = ("face-demographics-walking.gif", "store-aisle-detection.gif")
GOAL = 0.8


def read_frames(path: Path, upto: int):
    """Frames 0..upto of a clip in ``cv2.VideoCapture`` order (a generator: index, BGR image)."""
    capture = cv2.VideoCapture(str(path))
    if not capture.isOpened():
        raise SystemExit(f"OpenCV cannot open {path}")
    try:
        index = 0
        while index <= upto:
            ok, image = capture.read()
            if not ok:
                return
            yield index, image
            index += 1
    finally:
        capture.release()


def run_hog(path: Path, clip: LabelledClip) -> dict:
    detector = HogDetector()
    tally, seconds, seen = Tally(), 0.0, 0
    for index, image in read_frames(path, max(clip.frames)):
        if index not in clip.frames:
            continue
        started = time.perf_counter()
        found = detector.detect(image)
        seconds += time.perf_counter() - started
        seen += 1
        tally.add(score_frame(found.boxes, clip.frames[index]))
    return {"detector": detector.settings(), "frames": seen, "fps": seen / seconds if seconds else None,
            **tally.to_dict()}


def run_fused(path: Path, clip: LabelledClip, seed: int) -> dict:
    detector = FusedDetector(seed=seed)
    detector.reset()
    started = time.perf_counter()
    warmed = detector.warm_up(image for _, image in read_frames(path, detector.warmup_frames - 1))
    warm_seconds = time.perf_counter() - started
    tally, seconds, seen = Tally(), 0.0, 0
    for index, image in read_frames(path, max(clip.frames)):
        started = time.perf_counter()
        found = detector.detect(image)
        seconds += time.perf_counter() - started
        seen += 1
        if index in clip.frames:
            tally.add(score_frame(found.boxes, clip.frames[index]))
    missing = sorted(set(clip.frames) - set(range(seen)))
    if missing:
        raise SystemExit(f"{path.name}: labelled frames {missing[:5]} lie beyond the {seen} frames OpenCV decodes")
    return {"seed": seed, "frames": seen, "warmup_frames": warmed, "warmup_seconds": warm_seconds,
            "fps": seen / seconds if seconds else None, **tally.to_dict()}


def measure(footage: Path, labels: Path, names: list[str] | None, seeds: list[int]) -> dict:
    clips = load_box_labels(labels)
    names = names or list(clips)
    unknown = [n for n in names if n not in clips]
    if unknown:
        raise SystemExit(f"no labels for {unknown}; labelled clips: {sorted(clips)}")
    results: dict = {"footage": str(footage), "labels": str(labels), "seeds": seeds,
                     "fused_settings": FusedDetector().settings(), "clips": {}}
    for name in names:
        path = footage / name
        if not path.is_file():
            raise SystemExit(f"clip {path} is missing (is the footage folder {footage} right?)")
        clip = clips[name]
        print(f"{name}: {len(clip.frames)} labelled frames", file=sys.stderr, flush=True)
        results["clips"][name] = {"labelled_frames": len(clip.frames),
                                  "people": sum(1 for boxes in clip.frames.values() for b in boxes if not b.ignore),
                                  "hog": run_hog(path, clip),
                                  "fused": [run_fused(path, clip, seed) for seed in seeds]}
    results["overall"] = overall(results["clips"])
    return results


def overall(clips: dict) -> dict:
    """Pooled tallies of every clip: HOG, and the fused detector per seed."""
    hog = Tally()
    fused: dict[int, Tally] = {}
    for entry in clips.values():
        hog.add(Tally(entry["hog"]["hits"], entry["hog"]["false_positives"], entry["hog"]["misses"]))
        for run in entry["fused"]:
            fused.setdefault(run["seed"], Tally()).add(Tally(run["hits"], run["false_positives"], run["misses"]))
    return {"hog": hog.to_dict(), "fused": [{"seed": seed, **t.to_dict()} for seed, t in fused.items()]}


def mean(runs: list[dict], key: str) -> float:
    values = [r[key] for r in runs if r.get(key) is not None]
    return statistics.fmean(values) if values else float("nan")


def precision(tally: dict) -> str:
    """Precision with two decimals, or a dash when the detector found nothing at all."""
    return f"{tally['precision']:.2f}" if tally["hits"] + tally["false_positives"] else "–"


def table(results: dict) -> str:
    lines = ["| clip | frames | people | HOG P | HOG R | fused P | fused R | HOG fps | fused fps |",
             "|---|---|---|---|---|---|---|---|---|"]
    for name, entry in results["clips"].items():
        hog, fused = entry["hog"], entry["fused"]
        lines.append(f"| {name} | {entry['labelled_frames']} | {entry['people']} | {precision(hog)} | "
                     f"{hog['recall']:.2f} | {mean(fused, 'precision'):.2f} | {mean(fused, 'recall'):.2f} | "
                     f"{hog['fps']:.1f} | {mean(fused, 'fps'):.1f} |")
    total = results["overall"]
    lines.append(f"| all | | | {total['hog']['precision']:.2f} | {total['hog']['recall']:.2f} | "
                 f"{mean(total['fused'], 'precision'):.2f} | {mean(total['fused'], 'recall'):.2f} | | |")
    if len(results["seeds"]) > 1:
        lines.append(f"\nfused: mean over seeds {results['seeds']}; per seed in --json")
    for name in GOAL_CLIPS:
        if name in results["clips"]:
            runs = results["clips"][name]["fused"]
            met = mean(runs, "precision") >= GOAL and mean(runs, "recall") >= GOAL
            lines.append(f"goal (P ≥ {GOAL} and R ≥ {GOAL}) on {name}: {'met' if met else 'not met'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--footage", type=Path, default=FOOTAGE, help="folder holding the clips")
    parser.add_argument("--labels", type=Path, default=LABELS, help="hand labels (boxes.json)")
    parser.add_argument("--clips", default=None, help="comma-separated clip names (default: every labelled clip)")
    parser.add_argument("--seeds", default="0", help="comma-separated seeds of the fused detector's RNG")
    parser.add_argument("--json", type=Path, default=None, help="write the full results here")
    args = parser.parse_args(argv)
    try:
        seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    except ValueError:
        raise SystemExit(f"--seeds must be whole numbers separated by commas, got {args.seeds!r}") from None
    names = [n.strip() for n in args.clips.split(",") if n.strip()] if args.clips else None
    results = measure(args.footage, args.labels, names, seeds or [0])
    print(table(results))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        temporary = args.json.with_name(args.json.name + ".tmp")
        temporary.write_text(json.dumps(results, indent=1, default=_plain), encoding="utf-8")
        os.replace(temporary, args.json)


def _plain(value):
    if isinstance(value, np.generic):
        return value.item()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


if __name__ == "__main__":
    main()
