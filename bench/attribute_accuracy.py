"""Per-attribute accuracy of pixel-read attribute evidence (``engine.perception.attributes.extract_attributes``).

World mode: every RGB HR image of a synthetic world (``lineup world build --out /tmp/w --identities 100
--images-per-identity 4 --seed 5``), no mask and no scene given (the crop is a whole 256×128 render, so the
silhouette comes from GrabCut), top-1 against the manifest's ground-truth ``attributes``.

Real mode (``--real``): the hand-labelled people of ``tests/data/footage/people.json`` on the clips in the folder
``--footage`` or ``LINEUP_FOOTAGE_DIR`` names (© Intel Corporation and contributors, intel-iot-devkit/sample-videos,
CC BY 4.0): one crop per reference box, the frame as the scene; three columns by where the silhouette comes
from: GrabCut (no mask: single images), the foreground video ingest stores (the fused detector run over the clip
as ingest runs it), and a ``cv2.createBackgroundSubtractorMOG2`` model learned over the whole clip first (a best case).

Carried objects (``--detector SPEC``, any detector whose detections carry ``objects``, built by
``engine.ingest.make_detector(SPEC, **options)`` with ``--detector-option KEY=VALUE`` (JSON values)): the
``carrying_type`` evidence of the "objects" source (``engine.perception.attributes.objects``) scored against the labels
(``engine.lab.evaluation.carried_accuracy``): on the labelled people of ``--real`` (the reference boxes are the
people, the detector gives the objects), or per image and per outfit of a ``--world``. ``--skip-pixels``
leaves out the pixel tables.

The model's heads (``--model CHECKPOINT``, with ``--real``): the checkpoint's image attribute heads
(``engine.retrieval.evidence.model_heads.model_evidence``) on the same reference crops, scored the same way, beside the
majority baseline — how well a synthetic-trained model reads real clothing.

Held-out clips (``--clips NAME[,NAME]``, with ``--real``): only those clips' labelled boxes are scored, by every
table (pixels, model heads, carried objects). A model taught by the pixel reader on galleries ingested from
some clips (``training.teacher_data``, docs/training-notes.md "A teacher on real crops") is scored fairly on the
others only. The recommended split of the real clips (labelled boxes with a top / bottom colour):

    teacher (ingest into galleries)        one-by-one-person-detection.mp4          22 / 22
                                           face-demographics-walking-and-pause.gif  12 /  0
                                           together                                 34 / 22
    held out (score with --clips)          face-demographics-walking.gif             8 /  8
                                           people-detection.gif                      3 /  3
                                           store-aisle-detection.gif                13 / 13
                                           classroom.gif                            16 /  0
                                           together                                 40 / 24

No person appears in two clips. The long video gives the teacher most of its crops (1,394 frames against
23–67 per GIF); the four held-out GIFs hold 13 people, six of them with a labelled bottom colour.

    --clips face-demographics-walking.gif,people-detection.gif,store-aisle-detection.gif,classroom.gif

    .venv/bin/python bench/attribute_accuracy.py --world /tmp/w [--limit N] [--json out.json]
    .venv/bin/python bench/attribute_accuracy.py --real [--footage DIR] [--people FILE] [--json out.json]
    .venv/bin/python bench/attribute_accuracy.py --real --detector SPEC [--detector-option K=V ...] [--skip-pixels]
    .venv/bin/python bench/attribute_accuracy.py --real --model CHECKPOINT [--skip-pixels]
    .venv/bin/python bench/attribute_accuracy.py --real --model CHECKPOINT --clips NAME[,NAME] [--skip-pixels]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

import cv2

from engine.kernel.atomic import atomic_write_text
from engine.lab.evaluation.attribute_accuracy import (
    HEAD_SCORED,
    SCORED,
    Tally,
    footage_samples,
    labelled_clips,
    predicted_value,
    truth_value,
)
from engine.lab.evaluation.carried_accuracy import labelled_carrying, score_table, world_carrying
from engine.perception.attributes import extract_attributes

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benches beside this one
from footage_folder import footage_folder  # noqa: E402

DEFAULT_PEOPLE = REPO / "tests" / "data" / "footage" / "people.json"


def _fmt(value: float | None) -> str:
    return "   –  " if value is None else f"{100 * value:5.1f}%"


def _of_clips(clips: list[str] | None) -> str:
    return "" if clips is None else f" of {', '.join(clips)}"


def world_records(world: Path, limit: int | None) -> list[dict]:
    manifest = world / "manifest.jsonl"
    if not manifest.exists():
        raise SystemExit(f"no manifest at {manifest}; build a world first (lineup world build --out {world} ...)")
    with open(manifest, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    records = [r for r in records if r["modality"] == "rgb" and r["resolution"] == "HR"]
    return records[:limit] if limit else records


def run_world(world: Path, limit: int | None) -> dict:
    records = world_records(world, limit)
    tally, majority = Tally(), {k: Counter() for k in SCORED}
    confusion = {k: Counter() for k in ("top_color", "bottom_color", "hair_color")}
    start = time.perf_counter()
    for record in records:
        crop = cv2.imread(str(world / record["image"]), cv2.IMREAD_COLOR)
        evidence = extract_attributes(crop)
        attrs = record["attributes"]
        tally.add(attrs, evidence)
        for key in SCORED:
            truth = truth_value(attrs, key)
            if truth is not None:
                majority[key][truth] += 1
            if key in confusion and truth is not None:
                confusion[key][(truth, predicted_value(evidence, key))] += 1
    seconds = time.perf_counter() - start
    table = tally.table()
    for key, row in table.items():
        counts = majority[key]
        row["majority_baseline"] = max(counts.values()) / sum(counts.values()) if counts else None
    print(f"world {world}: {len(records)} RGB HR images, {1000 * seconds / max(1, len(records)):.1f} ms per crop")
    print(f"{'attribute':<15}{'n':>5}{'coverage':>10}{'accuracy':>10}{'majority':>10}")
    for key, row in table.items():
        print(f"{key:<15}{row['n']:>5}{_fmt(row['coverage']):>10}{_fmt(row['accuracy']):>10}"
              f"{_fmt(row['majority_baseline']):>10}")
    for key, counts in confusion.items():
        wrong = [(t, p, n) for (t, p), n in counts.most_common() if t != p][:6]
        print(f"  most frequent {key} errors (truth→predicted ×n): " + ", ".join(f"{t}→{p} ×{n}" for t, p, n in wrong))
    return {"mode": "world", "world": str(world), "images": len(records), "table": table}


MASK_COLUMNS = ("grabcut", "ingest", "mog2")  # no mask (GrabCut), ingest's detector foreground, whole-clip MOG2


def run_real(people: Path, footage: Path, clips: list[str] | None = None) -> dict:
    if not footage.is_dir():
        raise SystemExit(f"footage folder {footage} not found")
    tallies = {column: Tally() for column in MASK_COLUMNS}
    sources = {column: Counter() for column in MASK_COLUMNS}
    majority = {k: Counter() for k in SCORED}
    per_person: dict[str, dict[str, int]] = {}
    samples = 0
    pairs = zip(footage_samples(people, footage, masks="ingest", clips=clips),
                footage_samples(people, footage, masks="mog2", clips=clips), strict=True)
    for sample, with_mog2 in pairs:
        samples += 1
        evidence = {"grabcut": extract_attributes(sample.crop, scene_bgr=sample.frame),
                    "ingest": extract_attributes(sample.crop, mask=sample.mask, scene_bgr=sample.frame),
                    "mog2": extract_attributes(sample.crop, mask=with_mog2.mask, scene_bgr=sample.frame)}
        for column, found in evidence.items():
            sources[column][found.info["mask_source"]] += 1
            tallies[column].add(sample.attributes, found)
        name = f"{sample.clip}:{sample.person}"
        row = per_person.setdefault(name, {"boxes": 0})
        row["boxes"] += 1
        for key in SCORED:
            truth, guess = truth_value(sample.attributes, key), predicted_value(evidence["ingest"], key)
            if truth is not None:
                majority[key][truth] += 1
            if truth is not None and guess is not None:
                row[f"{key}_ok"] = row.get(f"{key}_ok", 0) + int(guess == truth)
    tables = {column: tally.table() for column, tally in tallies.items()}
    for key in tables["grabcut"]:
        counts = majority[key]
        baseline = max(counts.values()) / sum(counts.values()) if counts else None
        for table in tables.values():
            if key in table:
                table[key]["majority_baseline"] = baseline
    print(f"real footage {footage}: {samples} reference boxes{_of_clips(clips)}; silhouette sources: "
          + "; ".join(f"{c}: {dict(sources[c])}" for c in MASK_COLUMNS))
    print(f"{'attribute':<15}{'n':>5}" + "".join(f"{c:>10}" for c in MASK_COLUMNS) + f"{'majority':>10}")
    for key in SCORED:
        if key in tables["grabcut"]:
            print(f"{key:<15}{tables['grabcut'][key]['n']:>5}"
                  + "".join(f"{_fmt(tables[c].get(key, {}).get('accuracy')):>10}" for c in MASK_COLUMNS)
                  + f"{_fmt(tables['grabcut'][key]['majority_baseline']):>10}")
    return {"mode": "real", "clips": clips, "boxes": samples, **tables,
            "mask_sources": {c: dict(v) for c, v in sources.items()}, "per_person_ingest_masks": per_person}


def run_model_real(checkpoint: Path, people: Path, footage: Path, clips: list[str] | None = None) -> dict:
    """The checkpoint's image attribute heads on every reference crop, per scored attribute."""
    from engine.retrieval.evidence.model_heads import model_evidence
    from engine.retrieval.models.discovery import load_model

    if not footage.is_dir():
        raise SystemExit(f"footage folder {footage} not found")
    model = load_model(checkpoint, device="cpu")
    samples = list(footage_samples(people, footage, clips=clips))
    evidence = model_evidence(model, [sample.crop for sample in samples])
    tally, majority = Tally(keys=HEAD_SCORED), {k: Counter() for k in HEAD_SCORED}
    for sample, found in zip(samples, evidence, strict=True):
        tally.add(sample.attributes, found)
        for key in HEAD_SCORED:
            truth = truth_value(sample.attributes, key)
            if truth is not None:
                majority[key][truth] += 1
    table = tally.table()
    print(f"model heads of {checkpoint} on {len(samples)} real reference boxes" + _of_clips(clips))
    print(f"{'attribute':<15}{'n':>5}{'model':>10}{'majority':>10}")
    for key, row in table.items():
        counts = majority[key]
        row["majority_baseline"] = max(counts.values()) / sum(counts.values()) if counts else None
        print(f"{key:<15}{row['n']:>5}{_fmt(row['accuracy']):>10}{_fmt(row['majority_baseline']):>10}")
    return {"checkpoint": str(checkpoint), "clips": clips, "boxes": len(samples), "table": table}


def _print_carried(title: str, tables: dict[str, dict]) -> None:
    print(title)
    print(f"{'rows':<8}{'n':>5}{'coverage':>10}{'accuracy':>10}{'false alarm':>12}{'object recall':>15}")
    for name, row in tables.items():
        print(f"{name:<8}{row['n']:>5}{_fmt(row['coverage']):>10}{_fmt(row['accuracy']):>10}"
              f"{_fmt(row['false_alarm_rate']):>12}{_fmt(row['object_recall']):>15}   "
              f"({row['carrying']} carrying, {row['not_carrying']} not)")
        print("  truth->evidence ×n: " + ", ".join(f"{k} ×{v}" for k, v in row["confusion"].items()))


def run_carried(detector, people: Path | None = None, footage: Path | None = None, world: Path | None = None,
                limit: int | None = None, clips: list[str] | None = None) -> dict:
    """carrying_type from the detector's objects on the labelled real people or on a world."""
    start = time.perf_counter()
    if world is not None:
        groups = world_carrying(world, detector, limit)
    else:
        groups = {"person": labelled_carrying(people, footage, detector, clips)}
    tables = score_table(groups)
    where = f"world {world}" if world is not None else f"labelled people of {people.name}"
    _print_carried(f"carried objects ({detector.name}) on the {where}, {time.perf_counter() - start:.1f} s", tables)
    if world is None:
        for row in groups["person"]:
            print(f"  {row.name:<45} truth {row.truth:<9} evidence {row.predicted!s:<9} "
                  f"P(truth) {row.probability_of_truth} confidence {row.confidence} frames {row.frames} "
                  f"hits {row.hits}")
    return {"detector": detector.settings(), "tables": tables,
            "rows": {name: [r.to_dict() for r in rows] for name, rows in groups.items()}}


def _detector(spec: str, options: list[str]):
    from engine.ingest import DetectorError, make_detector

    parsed = {}
    for option in options:
        key, sep, value = option.partition("=")
        if not sep or not key:
            raise SystemExit(f"--detector-option must look like KEY=VALUE, got {option!r}")
        try:
            parsed[key] = json.loads(value)
        except ValueError:
            parsed[key] = value
    try:
        return make_detector(spec, **parsed)
    except DetectorError as exc:
        raise SystemExit(str(exc)) from None


def _clips(text: str, people: Path) -> list[str]:
    """``--clips NAME[,NAME]`` as a list, every name a clip ``people`` labels (else a message naming it)."""
    names = [name.strip() for name in text.split(",") if name.strip()]
    if not names:
        raise SystemExit("--clips needs at least one clip name (NAME[,NAME])")
    try:
        labelled_clips(people, names)
    except (OSError, ValueError) as exc:
        raise SystemExit(f"--clips: {exc}") from None
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--world", type=Path, help="a built synthetic world folder (world mode)")
    parser.add_argument("--limit", type=int, default=None, help="score only the first N RGB HR images")
    parser.add_argument("--real", action="store_true", help="score the hand-labelled real footage instead")
    parser.add_argument("--footage", type=Path, help="the real clips' folder (default: LINEUP_FOOTAGE_DIR)")
    parser.add_argument("--people", type=Path, default=DEFAULT_PEOPLE)
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--detector", help="score carried-objects evidence from this detector (make_detector spec)")
    parser.add_argument("--detector-option", action="append", default=[], metavar="KEY=VALUE",
                        help="an option of the detector's constructor (repeatable; JSON values)")
    parser.add_argument("--skip-pixels", action="store_true", help="leave out the pixel tables")
    parser.add_argument("--model", type=Path, help="with --real: also score this checkpoint's attribute heads")
    parser.add_argument("--clips", help="with --real: score only these clips' labelled boxes (NAME[,NAME])")
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    if not args.real and args.world is None:
        parser.error("give --world DIR or --real")
    result = {}
    if args.model is not None and not args.real:
        parser.error("--model scores the real footage: add --real")
    clips = _clips(args.clips, args.people) if args.clips is not None else None
    if clips is not None and not args.real:
        parser.error("--clips chooses labelled clips of the real footage: add --real")
    if not args.skip_pixels:
        result = run_real(args.people, footage_folder(args.footage), clips) if args.real else \
            run_world(args.world, args.limit)
    if args.model is not None:
        result["model_heads"] = run_model_real(args.model, args.people, footage_folder(args.footage), clips)
    if args.detector:
        detector = _detector(args.detector, args.detector_option)
        carried = run_carried(detector, args.people, footage_folder(args.footage), clips=clips) if args.real else \
            run_carried(detector, world=args.world, limit=args.limit)
        result["carried_objects"] = carried
    if args.json:
        atomic_write_text(args.json, json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
