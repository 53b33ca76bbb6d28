"""Person detection on real footage: the default YOLOX-Nano against Yolo-Fastest (``fast``), the fused detector
(background subtraction + HOG), HOG alone and the three shipped OpenVINO SSDs (``retail-0013``, ``adas-0002``,
``person-0200``), scored on hand-labelled frames; their speed; a synthetic check of tiling on a large frame of
small people; and a labelled synthetic crowd at 1080p.

A detector is named as ``make_detector`` knows it, optionally with options: ``NAME[:KEY=VALUE...]`` (e.g.
``retail-0013:tiles=off``, ``yolox:tiles=2x2:min_score=0.3``; numbers are read as numbers).

Clips: the real clips in ``--footage`` or ``LINEUP_FOOTAGE_DIR`` (intel-iot-devkit/sample-videos, © Intel
Corporation and contributors, CC BY 4.0), labels: ``tests/data/footage/boxes.json`` (see its README).

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
   pasted 4 × 4 times on a mid-grey 1920×1080 canvas, each paste with its labels moved along; recall and
   precision of ``--tiling-detectors`` (default YOLOX with tiles ``auto`` and ``off``).
4. Crowd (``--crowd``): ``--scenes`` 1920×1080 canvases, each ``--crowd-people`` people cut from the labelled
   boxes of the clips (whole people only, ``partial`` and ``ignore`` left out, with a margin of their own
   background), pasted at 60–300 px tall on a ground plane (the lower the feet, the taller: a crowd seen from
   above), mirrored at random, nearer people over farther ones, on an empty labelled frame of a clip blown up to
   1080p or a plain grey canvas (alternately). The paste boxes are the truth; a person more than half hidden by
   nearer pastes counts as ``ignore``, and pastes may hide at most ``CROWD_HIDDEN`` (0.35) of a farther box when
   placed. Precision and recall at IoU 0.5 and fps of ``--crowd-detectors``. Goal: R ≥ 0.6 at P ≥ 0.75.

    .venv/bin/python bench/detection.py [--footage DIR] [--labels FILE] [--clips a.gif,b.gif]
        [--detectors yolox,fast,...] [--no-speed] [--tiling] [--shrink 0.3] [--crowd] [--crowd-people 40]
        [--crowd-detectors yolox,yolox:tiles=off,...] [--scenes 8] [--threads N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from engine.ingest.box_labels import LabelledBox, LabelledClip, Tally, load_box_labels, score_frame
from engine.kernel.atomic import atomic_write_text
from engine.perception.detection.factory import make_detector
from engine.perception.detection.openvino_ssd import SSD_DETECTORS

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benches beside this one
from footage_folder import footage_folder  # noqa: E402

LABELS = ROOT / "tests" / "data" / "footage" / "boxes.json"
DETECTORS = ("yolox", "fast", "fused", "hog", *SSD_DETECTORS)
CROWD_DETECTORS = ("yolox", "yolox:tiles=off", *(f"{name}{tiles}" for name in SSD_DETECTORS
                                                 for tiles in ("", ":tiles=off")))
CROWD_HEIGHTS = (60, 300)  # px, the farthest and nearest pasted person
CROWD_HORIZON = 0.3  # of the canvas height: the feet of the farthest people
CROWD_HIDDEN = 0.35  # the most of a farther person's box a new paste may hide
CROWD_MARGIN = (0.15, 0.06)  # background kept around a cut person, of its width / height, each side
GOAL_CROWD_RECALL, GOAL_CROWD_PRECISION = 0.6, 0.75
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


def build(spec: str, **extra):
    """The detector named by ``NAME[:KEY=VALUE...]`` (module docstring), with ``extra`` options on top."""
    name, *pairs = spec.split(":")
    options: dict = {}
    for pair in pairs:
        key, _, value = pair.partition("=")
        if not key or not value:
            raise SystemExit(f"detector {spec!r}: options are KEY=VALUE, got {pair!r}")
        try:
            options[key] = int(value) if value.isdigit() else float(value)
        except ValueError:
            options[key] = value
    return make_detector(name, **{**options, **extra})


def run(name: str, frames: list[np.ndarray], clip: LabelledClip) -> dict:
    """Tally of one detector on one clip's labelled frames, and its fps there."""
    detector = build(name)
    detector.reset()
    stateful = hasattr(detector, "warm_up") and name.split(":")[0] == "fused"
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
    detector = build(name, **options)
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


def person_crops(labelled: list[tuple[np.ndarray, list[LabelledBox]]]) -> list[tuple[np.ndarray, tuple]]:
    """Every whole labelled person (not ``partial``, not ``ignore``) cut from its frame with a margin of its
    background (``CROWD_MARGIN``), and the person's box (x, y, w, h) inside the cut."""
    crops = []
    for frame, boxes in labelled:
        height, width = frame.shape[:2]
        for label in boxes:
            if label.partial or label.ignore:
                continue
            x, y, w, h = label.box
            x0, y0 = max(0, int(x - CROWD_MARGIN[0] * w)), max(0, int(y - CROWD_MARGIN[1] * h))
            x1 = min(width, int(np.ceil(x + w + CROWD_MARGIN[0] * w)))
            y1 = min(height, int(np.ceil(y + h + CROWD_MARGIN[1] * h)))
            crops.append((frame[y0:y1, x0:x1].copy(), (x - x0, y - y0, w, h)))
    return crops


def crowd_scene(crops: list[tuple[np.ndarray, tuple]], backgrounds: list[np.ndarray], people: int,
                seed: int) -> tuple[np.ndarray, list[LabelledBox]]:
    """One 1920×1080 crowd canvas and its labels (module docstring, item 4)."""
    rng = np.random.default_rng(seed)
    width, height = CANVAS
    if backgrounds and seed % 2 == 0:
        canvas = cv2.resize(backgrounds[(seed // 2) % len(backgrounds)], CANVAS, interpolation=cv2.INTER_LINEAR)
    else:
        canvas = np.full((height, width, 3), 120, np.uint8)
    low, high = CROWD_HEIGHTS
    placed: list[tuple[float, np.ndarray, tuple[int, int, int, int], tuple[float, float, float, float]]] = []
    for _ in range(people * 50):
        if len(placed) == people:
            break
        feet = rng.uniform(CROWD_HORIZON, 1.0) * height
        depth = (feet / height - CROWD_HORIZON) / (1 - CROWD_HORIZON)
        tall = float(np.clip((low + (high - low) * depth) * rng.uniform(0.85, 1.15), low, high))
        image, (px, py, pw, ph) = crops[int(rng.integers(len(crops)))]
        scale = tall / ph
        cw, ch = max(1, round(image.shape[1] * scale)), max(1, round(image.shape[0] * scale))
        left = rng.uniform(0, width - pw * scale)
        x0, y0 = round(left - px * scale), round(feet - (py + ph) * scale)
        mirror = bool(rng.random() < 0.5)
        inside = cw - (px + pw) * scale if mirror else px * scale
        box = (x0 + inside, y0 + py * scale, pw * scale, ph * scale)
        if box[1] < 0 or box[1] + box[3] > height or x0 < 0 or y0 < 0 or x0 + cw > width or y0 + ch > height:
            continue
        if any(_hidden(other, (x0, y0, cw, ch), box) for _, _, _, other in placed):
            continue
        resized = cv2.resize(image, (cw, ch), interpolation=cv2.INTER_AREA if scale < 1 else cv2.INTER_LINEAR)
        if mirror:
            resized = np.ascontiguousarray(resized[:, ::-1])
        placed.append((feet, resized, (x0, y0, cw, ch), box))
    placed.sort(key=lambda item: item[0])  # farther (feet higher up) first, nearer pasted over them
    covered = np.zeros((height, width), bool)
    hidden = []
    for _, _, (x0, y0, cw, ch), box in reversed(placed):  # nearest first: what lies in front of each paste
        x, y, w, h = (round(v) for v in box)
        hidden.append(float(covered[y : y + h, x : x + w].mean()) if w and h else 1.0)
        covered[y0 : y0 + ch, x0 : x0 + cw] = True
    hidden.reverse()
    labels = []
    for (_, image, (x0, y0, cw, ch), box), share in zip(placed, hidden, strict=True):
        canvas[y0 : y0 + ch, x0 : x0 + cw] = image
        labels.append(LabelledBox(box, f"p{len(labels) + 1}", partial=share > 0.1, ignore=share > 0.5))
    return canvas, labels


def _hidden(box: tuple, paste: tuple, new_box: tuple) -> bool:
    """Whether a new paste (x, y, w, h) and the person box in it would hide more than ``CROWD_HIDDEN`` of an
    earlier person ``box``, or the earlier box more than that of the new person (whichever lies in front)."""
    def share(a: tuple, b: tuple) -> float:
        dx = min(a[0] + a[2], b[0] + b[2]) - max(a[0], b[0])
        dy = min(a[1] + a[3], b[1] + b[3]) - max(a[1], b[1])
        return max(0.0, dx) * max(0.0, dy) / max(a[2] * a[3], 1e-6)

    return share(box, paste) > CROWD_HIDDEN or share(new_box, box) > CROWD_HIDDEN


def score_scenes(specs: list[str], built: list[tuple[np.ndarray, list[LabelledBox]]]) -> dict:
    """Tally, passes and fps of each detector spec over the built canvases. The detectors take turns on each
    canvas, so that a machine's changing load weighs on all of them alike."""
    detectors = {spec: build(spec) for spec in specs}
    tallies = {spec: Tally() for spec in specs}
    seconds = dict.fromkeys(specs, 0.0)
    for number, (canvas, boxes) in enumerate(built):
        print(f"  canvas {number + 1} of {len(built)}", file=sys.stderr, flush=True)
        for spec, detector in detectors.items():
            started = time.perf_counter()
            found = detector.detect(canvas)
            seconds[spec] += time.perf_counter() - started
            tallies[spec].add(score_frame(found.boxes, boxes))
    out: dict = {}
    for spec, detector in detectors.items():
        passes = len(detector.regions(*CANVAS)) if hasattr(detector, "regions") else 1
        out[spec] = {"passes": passes, "fps": len(built) / seconds[spec], **tallies[spec].to_dict()}
    return out


def _heights(built: list[tuple[np.ndarray, list[LabelledBox]]]) -> dict:
    heights = [b.box[3] for _, boxes in built for b in boxes if not b.ignore]
    return {"canvas": list(CANVAS), "scenes": len(built), "people": len(heights),
            "ignored": sum(1 for _, boxes in built for b in boxes if b.ignore),
            "person_height_px": [float(np.min(heights)), float(np.median(heights)), float(np.max(heights))]}


def tiling(labelled: list[tuple[np.ndarray, list[LabelledBox]]], shrink: float, scenes: int,
           specs: list[str]) -> dict:
    """The detectors ``specs`` (default: YOLOX with tiles auto and off) on ``scenes`` synthetic canvases."""
    frames = [image for image, _ in labelled]
    labels = [boxes for _, boxes in labelled]
    built = [canvas_scene(frames, labels, shrink, seed) for seed in range(scenes)]
    return {"shrink": shrink, **_heights(built), "detectors": score_scenes(specs, built)}


def crowd(labelled: list[tuple[np.ndarray, list[LabelledBox]]], people: int, scenes: int, specs: list[str]) -> dict:
    """The detectors ``specs`` on ``scenes`` labelled crowd canvases (module docstring, item 4)."""
    crops = person_crops(labelled)
    backgrounds = [image for image, boxes in labelled if not boxes]
    built = [crowd_scene(crops, backgrounds, people, seed) for seed in range(scenes)]
    return {"people_per_scene": people, "crops": len(crops), "backgrounds": len(backgrounds), **_heights(built),
            "detectors": score_scenes(specs, built)}


def measure(args: argparse.Namespace) -> dict:
    clips = load_box_labels(args.labels)
    names = [n.strip() for n in args.clips.split(",") if n.strip()] if args.clips else list(clips)
    detectors = _names(args.detectors)
    unknown = [n for n in names if n not in clips]
    if unknown:
        raise SystemExit(f"no labels for {unknown}; labelled clips: {sorted(clips)}")
    results: dict = {"footage": str(args.footage), "labels": str(args.labels), "detectors": detectors,
                     "settings": {d: build(d).settings() for d in detectors}, "clips": {},
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
        if "yolox" in detectors:
            results["speed"]["1280x720"]["yolox tiles off"] = speed("yolox", large, tiles="off")
            results["speed"]["1280x720"]["yolox tiles off + foreground"] = speed("yolox", large, tiles="off",
                                                                                foreground=True)
        built = {d: build(d) for d in detectors}
        results["speed"]["passes_1280x720"] = {d: len(b.regions(*SPEED_SIZE)) for d, b in built.items()
                                               if hasattr(b, "regions")}
    if args.tiling:
        print("tiling check", file=sys.stderr, flush=True)
        results["tiling"] = tiling(labelled, args.shrink, args.scenes, _names(args.tiling_detectors))
    if args.crowd:
        print("crowd check", file=sys.stderr, flush=True)
        results["crowd"] = crowd(labelled, args.crowd_people, args.scenes, _names(args.crowd_detectors))
    return results


def _names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


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
        if "yolox tiles off" in s["1280x720"]:
            lines.append(f"| yolox tiles off | | {s['1280x720']['yolox tiles off']:.1f} |")
            lines.append(f"| yolox tiles off + background foreground | | "
                         f"{s['1280x720']['yolox tiles off + foreground']:.1f} |")
        passes = ", ".join(f"{d} {n}" for d, n in s["passes_1280x720"].items())
        lines.append(f"\n(passes on a 1280×720 frame: {passes})")
    for key, title in (("tiling", "tiling check"), ("crowd", "crowd check")):
        if key in results:
            lines += ["", *scenes_table(results[key], title)]
    return "\n".join(lines)


def scenes_table(entry: dict, title: str) -> list[str]:
    low, mid, high = entry["person_height_px"]
    lines = [f"{title}: {entry['scenes']} canvases {entry['canvas'][0]}×{entry['canvas'][1]}, {entry['people']} "
             f"people {low:.0f}–{high:.0f} px tall (median {mid:.0f})"
             + (f", {entry['ignored']} more over half hidden (ignored)" if entry.get("ignored") else ""), "",
             "| detector | passes at 1080p | P | R | fps |", "|---|---|---|---|---|"]
    for spec, r in entry["detectors"].items():
        goal = ""
        if "people_per_scene" in entry and r["recall"] >= GOAL_CROWD_RECALL and \
                r["precision"] >= GOAL_CROWD_PRECISION:
            goal = " (goal met)"
        lines.append(f"| {spec}{goal} | {r['passes']} | {r['precision']:.2f} | {r['recall']:.2f} | {r['fps']:.2f} |")
    return lines


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--footage", type=Path, help="folder holding the clips (default: LINEUP_FOOTAGE_DIR)")
    parser.add_argument("--labels", type=Path, default=LABELS, help="hand labels (boxes.json)")
    parser.add_argument("--clips", default=None, help="comma-separated clip names (default: every labelled clip)")
    parser.add_argument("--detectors", default=",".join(DETECTORS), help="comma-separated detector names")
    parser.add_argument("--no-speed", dest="speed", action="store_false", help="skip the speed runs")
    parser.add_argument("--every", type=int, default=2, help="speed runs use every N-th labelled frame")
    parser.add_argument("--tiling", action="store_true", help="run the synthetic tiling check")
    parser.add_argument("--shrink", type=float, default=0.5, help="tiling check: size of each pasted frame")
    parser.add_argument("--tiling-detectors", default="yolox,yolox:tiles=off", help="tiling check: detectors")
    parser.add_argument("--scenes", type=int, default=8, help="tiling and crowd checks: canvases")
    parser.add_argument("--crowd", action="store_true", help="run the synthetic crowd check at 1080p")
    parser.add_argument("--crowd-people", type=int, default=40, help="crowd check: people per canvas")
    parser.add_argument("--crowd-detectors", default=",".join(CROWD_DETECTORS), help="crowd check: detectors")
    parser.add_argument("--threads", type=int, default=None, help="OpenCV threads (default: OpenCV's choice)")
    parser.add_argument("--json", type=Path, default=None, help="write the full results here")
    args = parser.parse_args(argv)
    args.footage = footage_folder(args.footage)
    if args.threads is not None:
        cv2.setNumThreads(args.threads)
    results = measure(args)
    print(table(results))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(args.json, json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
