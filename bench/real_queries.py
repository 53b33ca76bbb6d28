"""Real footage, real descriptions: does the described person's crop rank first? Similarity only, attributes
only, and the hybrid ranking.

For each clip of the folder ``LINEUP_FOOTAGE_DIR`` names (© Intel Corporation and contributors,
intel-iot-devkit/sample-videos, CC BY 4.0) that has hand-labelled people in ``tests/data/footage/people.json``:

1. ingest it into a temporary gallery (``engine.ingest.ingest`` with its default detector and options, or
   ``--detector``; the checkpoint's encoder); each item records its frame, box and track;
2. compute its items' attribute evidence (``engine.retrieval.evidence.items.refresh_evidence``: pixels with the source
   frame for colour constancy, and the checkpoint's attribute heads);
3. for every labelled person, run their ``description`` as one search step over the clip's items and check
   whether the first item is theirs: its frame is one of their labelled frames and IoU(item box, their box)
   ≥ 0.5 — at an unlabelled frame, against their box interpolated linearly between the labelled frames
   around it when those are at most 30 frames apart —, or its frame has no (interpolated) label and it belongs
   to the same track as such an item.

A second part takes the detector's boxes out: per clip a gallery of one crop per hand-labelled box of
people.json (evidence through the ingest hook ``add_evidence``, with the frame as the scene and the silhouette
cut from the foreground ingest's detector has at that frame), the same queries, and an item is theirs when its
box is theirs. It measures the ranking alone on real crops.

Labelled frames: the ``boxes`` of people.json, plus the denser per-frame boxes of ``tests/data/footage/
boxes.json`` (same person ids) when that file is present (``--no-dense`` leaves them out). People with no
item of theirs in the gallery (the detector or tracker missed them, or no kept crop matched) count as failures
and are listed; ``mAP`` is the mean average precision of the person's items over the whole ranking (people
with crops). Rankings: ``similarity`` (w = 0), ``attributes`` (agreement only: w = 10⁴, similarity breaks
ties), ``hybrid`` (w from the checkpoint, or ``--weights``), each with evidence from pixels, the model heads
or both. Descriptions are encoded as the search encodes them: blended with their rewrite in the generator's
words at the checkpoint's text rewrite weight (``--text-rewrite`` overrides it).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/real_queries.py --checkpoint C [--weights 0.3] [--keep DIR]
        [--text-rewrite W] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from engine.index import Gallery  # noqa: E402
from engine.kernel.atomic import atomic_write_text  # noqa: E402
from engine.perception.attributes.pretrained import AttributeNetwork  # noqa: E402
from engine.retrieval.encoding.text_rewrite import checkpoint_rewrite_weight  # noqa: E402
from engine.retrieval.evidence.items import refresh_evidence  # noqa: E402
from engine.retrieval.evidence.ranking import DomainWeights, checkpoint_attribute_weight  # noqa: E402
from engine.retrieval.metrics.retrieval import evaluate_retrieval  # noqa: E402
from engine.retrieval.models.discovery import default_checkpoint  # noqa: E402
from engine.retrieval.search import SearchSession, StepQuery  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benches beside this one
from footage_folder import footage_folder  # noqa: E402

PEOPLE = ROOT / "tests" / "data" / "footage" / "people.json"
PARTS: tuple[str, ...] = ("detector", "labelled")
DENSE = ROOT / "tests" / "data" / "footage" / "boxes.json"
ATTRIBUTES_ONLY = 1e4
MIN_IOU = 0.5
MAX_GAP = 30  # frames: a person's box between two labelled frames at most this far apart is interpolated
SOURCE_SETS: dict[str, tuple[str, ...]] = {
    "pixels": ("pixels",), "model": ("model",), "both": ("pixels", "model"), "pretrained": ("pretrained",),
    "real": ("pixels", "objects", "pretrained"), "all": ("pixels", "model", "objects", "pretrained")}


def iou(a, b) -> float:
    ax, ay, aw, ah = a
    bx, by, bw, bh = b
    w = max(0.0, min(ax + aw, bx + bw) - max(ax, bx))
    h = max(0.0, min(ay + ah, by + bh) - max(ay, by))
    inter = w * h
    union = aw * ah + bw * bh - inter
    return inter / union if union > 0 else 0.0


def labelled_boxes(clip: str, person: str, people: dict, dense: dict | None) -> dict[int, list]:
    """frame → box of one person (people.json first, then boxes.json's frames it does not cover)."""
    out = {int(b["frame"]): b["box"] for b in people["clips"][clip][person]["boxes"]}
    if dense is not None and clip in dense.get("clips", {}):
        for frame, boxes in dense["clips"][clip]["frames"].items():
            for entry in boxes:
                if entry.get("person") == person and not entry.get("ignore") and int(frame) not in out:
                    out[int(frame)] = entry["box"]
    return out


def box_at(frame: int, boxes: dict[int, list]) -> list | None:
    """The person's box at ``frame``: labelled there, else linearly interpolated between the labelled frames
    just before and just after when they are at most :data:`MAX_GAP` frames apart, else None."""
    if frame in boxes:
        return boxes[frame]
    before = max((f for f in boxes if f < frame), default=None)
    after = min((f for f in boxes if f > frame), default=None)
    if before is None or after is None or after - before > MAX_GAP:
        return None
    t = (frame - before) / (after - before)
    return [(1 - t) * a + t * b for a, b in zip(boxes[before], boxes[after], strict=True)]


def their_items(items: list, boxes: dict[int, list]) -> set[str]:
    """Ids of the items that are the person's (see the module docstring)."""
    located = {item.id: box_at(item.frame, boxes) for item in items if item.frame is not None}
    matched = {item.id for item in items if located.get(item.id) is not None and item.box is not None
               and iou(item.box, located[item.id]) >= MIN_IOU}
    tracks = {item.track for item in items if item.id in matched and item.track is not None}
    return matched | {item.id for item in items if located.get(item.id) is None and item.track in tracks}


def first_item(session: SearchSession, text: str, theirs: set[str]) -> tuple[str, float, float]:
    """(first item, its score, average precision of the person's items) of a one-step query."""
    step = session.step(StepQuery(text=text, k=1))
    rows, scores = step.ranked()
    ids = step.item_ids
    relevant = np.asarray([ids[int(r)] in theirs for r in range(len(ids))])
    report = evaluate_retrieval(np.zeros((1, len(ids))), relevant[None, :], order=rows[None, :])
    return ids[int(rows[0])], float(scores[0]), float(report.ap[0])


def modes(weights: list[float]) -> list[tuple[str, str, float]]:
    out = [("similarity", "-", 0.0)]
    out += [("attributes", name, ATTRIBUTES_ONLY) for name in SOURCE_SETS]
    out += [("hybrid", name, w) for w in weights for name in SOURCE_SETS]
    return out


def first_items(gallery: Gallery, query_encoder, description: str, theirs: set[str],
                rankings: list[tuple[str, str, float]]) -> dict[str, dict]:
    """For each ranking: the first item of a one-step query and whether it is the person's."""
    out = {}
    for kind, sources, weight in rankings:
        session = SearchSession(gallery, query_encoder, attribute_weight=weight,
                                attribute_sources=SOURCE_SETS.get(sources, ("pixels",)))
        item_id, score, ap = first_item(session, description, theirs)
        out[f"{kind}:{sources}:{weight:g}"] = {"item": item_id, "score": round(score, 4), "theirs": item_id in theirs,
                                               "ap": None if np.isnan(ap) else round(ap, 4)}
    return out


def summary(rows: list[dict], clips: dict, rankings: list[tuple[str, str, float]]) -> dict:
    total = len(rows)
    with_crops = [r for r in rows if r["their_items"]]
    rates = {}
    for kind, sources, weight in rankings:
        key = f"{kind}:{sources}:{weight:g}"
        hits = sum(r["first"].get(key, {}).get("theirs", False) for r in rows)
        aps = [r["first"][key]["ap"] for r in with_crops if r["first"].get(key, {}).get("ap") is not None]
        rates[key] = {"ranking": kind, "sources": sources, "weight": weight, "rank1_hits": hits,
                      "mAP_with_crops": round(float(np.mean(aps)), 4) if aps else None,
                      "rank1_rate": round(hits / total, 4) if total else None,
                      "rank1_rate_with_crops": round(hits / len(with_crops), 4) if with_crops else None}
    chance = sum(r["their_items"] / max(1, clips[r["clip"]]["items"]) for r in rows) / total if total else None
    return {"people": total, "people_with_crops": len(with_crops),
            "missed_people": [f"{r['clip']}:{r['person']}" for r in rows if not r["their_items"]],
            "chance_rank1_rate": None if chance is None else round(chance, 4), "clips": clips, "rates": rates,
            "people_rows": rows}


def detector_galleries(model, checkpoint: Path, people: dict, dense: dict | None, folder: Path, stride: int,
                       detector: str | None, rankings: list, text_rewrite: float = 0.0) -> dict:
    """Each clip ingested with the detector; a person's items matched by frame, IoU and track."""
    from engine.ingest import IngestOptions, ModelEncoder, ingest, make_detector
    from engine.retrieval.encoding.model_encoder import ModelQueryEncoder

    encoder, query_encoder = ModelEncoder(model), ModelQueryEncoder(model, text_rewrite=text_rewrite)
    network = AttributeNetwork()
    rows, clips, footage = [], {}, footage_folder()
    for clip, labelled in people["clips"].items():
        started = time.perf_counter()
        gallery_dir = folder / Path(clip).stem
        report = ingest(footage / clip, gallery_dir, encoder, None if detector is None else make_detector(detector),
                        options=IngestOptions(stride=stride), weights=DomainWeights.of_checkpoint(checkpoint))
        gallery = Gallery.open(gallery_dir)
        counts = refresh_evidence(gallery, model, network=network)
        items = list(gallery.iter_items())
        clips[clip] = {"items": len(items), "tracks": len({i.track for i in items if i.track is not None}),
                       "ingest_seconds": round(report.seconds, 1), "evidence": counts,
                       "seconds": round(time.perf_counter() - started, 1)}
        for person, record in labelled.items():
            theirs = their_items(items, labelled_boxes(clip, person, people, dense))
            rows.append({"clip": clip, "person": person, "description": record["description"],
                         "their_items": len(theirs),
                         "first": first_items(gallery, query_encoder, record["description"], theirs, rankings)
                         if items else {}})
    return summary(rows, clips, rankings)


def build_labelled_galleries(model, folder: Path, weight: float = 1.0) -> list[tuple[str, Gallery, list, list]]:
    """Per clip (clip, gallery, items, samples): one crop per hand-labelled box of people.json (no detector
    boxes), evidence through the ingest hook (``add_evidence``, the frame as the scene, ingest's foreground
    silhouette, the pretrained attribute network); each records the footage domain, so searches use the footage
    reliabilities."""
    from engine.index import GalleryItem
    from engine.ingest import ModelEncoder
    from engine.lab.evaluation.attribute_accuracy import footage_samples
    from engine.retrieval.encoding.resolution import level_of_height
    from engine.retrieval.evidence.items import add_evidence

    encoder = ModelEncoder(model)
    network = AttributeNetwork()
    by_clip: dict[str, list] = {}
    footage = footage_folder()
    for sample in footage_samples(PEOPLE, footage, masks="ingest"):
        by_clip.setdefault(sample.clip, []).append(sample)
    built = []
    for clip, samples in by_clip.items():
        target = folder / f"labelled-{Path(clip).stem}"
        if target.exists():  # made by an earlier run with --keep: made again from the labels
            shutil.rmtree(target)
        gallery = Gallery.create(target, encoder.views, encoder.fingerprint)
        items = [GalleryItem(id=f"{s.person}-{s.frame_index}", source=str(footage / clip), frame=s.frame_index,
                             box=tuple(float(v) for v in s.box), modality="rgb",
                             resolution=level_of_height(s.crop.shape[0])) for s in samples]
        crops = [s.crop for s in samples]
        gallery.add(items, encoder(crops, ["rgb"] * len(items), [i.resolution for i in items]))
        add_evidence(gallery, items, crops, [s.mask for s in samples], [s.frame for s in samples], model=model,
                     model_fingerprint=encoder.fingerprint, network=network)
        gallery.record_ranking("footage", weight, "bench/real_queries.py")
        built.append((clip, gallery, items, samples))
    return built


def query_labelled_galleries(built: list, query_encoder, rankings: list) -> dict:
    """Every labelled person's description as one step on their clip's labelled-crop gallery."""
    people = json.loads(PEOPLE.read_text(encoding="utf-8"))
    rows, clips = [], {}
    for clip, gallery, items, samples in built:
        clips[clip] = {"items": len(items), "tracks": 0}
        for person, record in people["clips"][clip].items():
            theirs = {i.id for i, s in zip(items, samples, strict=True) if s.person == person}
            rows.append({"clip": clip, "person": person, "description": record["description"],
                         "their_items": len(theirs),
                         "first": first_items(gallery, query_encoder, record["description"], theirs, rankings)})
    return summary(rows, clips, rankings)


def labelled_galleries(model, folder: Path, rankings: list, text_rewrite: float = 0.0) -> dict:
    """Each clip's gallery = one crop per hand-labelled box (``build_labelled_galleries``), the same queries:
    the ranking alone, on real crops."""
    from engine.retrieval.encoding.model_encoder import ModelQueryEncoder

    built = build_labelled_galleries(model, folder)
    return query_labelled_galleries(built, ModelQueryEncoder(model, text_rewrite=text_rewrite), rankings)


def run(checkpoint: Path, weights: list[float] | None, folder: Path, dense_boxes: bool, stride: int,
        detector: str | None, parts: tuple[str, ...] = PARTS, text_rewrite: float | None = None) -> dict:
    from engine.retrieval.models import load

    model = load(checkpoint, device="cpu")
    rankings = modes(weights or [checkpoint_attribute_weight(checkpoint)])
    rewrite = checkpoint_rewrite_weight(checkpoint) if text_rewrite is None else text_rewrite
    people = json.loads(PEOPLE.read_text(encoding="utf-8"))
    dense = json.loads(DENSE.read_text(encoding="utf-8")) if dense_boxes and DENSE.is_file() else None
    report = {"checkpoint": str(checkpoint), "detector": detector or "ingest default", "stride": stride,
              "dense_boxes": dense is not None, "text_rewrite": rewrite}
    if "detector" in parts:
        report["detector_galleries"] = detector_galleries(model, checkpoint, people, dense, folder, stride, detector,
                                                          rankings, rewrite)
    if "labelled" in parts:
        report["labelled_crop_galleries"] = labelled_galleries(model, folder, rankings, rewrite)
    return report


def table(part: dict, title: str) -> list[str]:
    lines = [f"{title}: {part['people']} labelled people, {part['people_with_crops']} with a crop in the gallery; "
             f"chance rank-1 {part['chance_rank1_rate']:.3f}",
             f"{'ranking':<12}{'sources':<8}{'w':>8}{'hits':>6}{'rate':>8}{'rate (with crops)':>19}"
             f"{'mAP (with crops)':>18}"]
    for row in part["rates"].values():
        lines.append(f"{row['ranking']:<12}{row['sources']:<8}{row['weight']:>8g}{row['rank1_hits']:>6}"
                     f"{row['rank1_rate']:>8.3f}{row['rank1_rate_with_crops'] or 0:>19.3f}"
                     f"{row['mAP_with_crops'] or 0:>18.3f}")
    if part["missed_people"]:
        lines.append("no crop in the gallery: " + ", ".join(part["missed_people"]))
    for clip, info in part["clips"].items():
        lines.append(f"  {clip}: {info['items']} items" + (f" in {info['tracks']} tracks, {info['seconds']} s"
                                                          if info["tracks"] else ""))
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", type=Path, help="checkpoint folder (default: the shipped one)")
    parser.add_argument("--weights", help="comma-separated hybrid w values (default: the checkpoint's)")
    parser.add_argument("--stride", type=int, default=1, help="ingest every STRIDE-th frame (default 1)")
    parser.add_argument("--detector", help="person detector: hog, fused or an .onnx path (default: ingest's own "
                                           "default, the fused detector for videos)")
    parser.add_argument("--no-dense", action="store_true", help="match only people.json's boxes, not boxes.json")
    parser.add_argument("--keep", type=Path, help="keep the clips' galleries in this folder")
    parser.add_argument("--parts", default=",".join(PARTS),
                        help="which galleries: detector (ingest), labelled (one crop per labelled box), or both")
    parser.add_argument("--text-rewrite", type=float,
                        help="weight 0–1 of each description's rewrite in the generator's words (default: the "
                             "checkpoint's)")
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args(argv)
    parts = tuple(p.strip() for p in args.parts.split(",") if p.strip())
    if not parts or set(parts) - set(PARTS):
        parser.error(f"--parts takes a comma-separated choice of {list(PARTS)}, got {args.parts!r}")
    checkpoint = args.checkpoint or default_checkpoint()
    weights = [float(w) for w in args.weights.split(",")] if args.weights else None
    if args.text_rewrite is not None and not 0 <= args.text_rewrite <= 1:
        parser.error(f"--text-rewrite takes a weight from 0 to 1, got {args.text_rewrite}")
    if args.keep is not None:
        args.keep.mkdir(parents=True, exist_ok=True)
        report = run(checkpoint, weights, args.keep, not args.no_dense, args.stride, args.detector, parts,
                     args.text_rewrite)
    else:
        with tempfile.TemporaryDirectory(prefix="real-queries-") as folder:
            report = run(checkpoint, weights, Path(folder), not args.no_dense, args.stride, args.detector, parts,
                         args.text_rewrite)
    print(json.dumps(report))
    lines = []
    if "detector_galleries" in report:
        lines += [*table(report["detector_galleries"], f"detector ({report['detector']}) galleries"), ""]
    if "labelled_crop_galleries" in report:
        lines += table(report["labelled_crop_galleries"], "labelled-crop galleries (no detector)")
    print("\n".join(lines))
    if args.json:
        atomic_write_text(args.json, json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
