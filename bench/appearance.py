"""Find-similar on real crops: the appearance network (the ``appearance`` and ``appearance:grey`` views: the
shipped one crop folders get by default, or ``--appearance`` a user's ONNX file) against the checkpoint's own
views and against "clothes may have changed" (``biometrics``: the appearance cosine mixed with the heads'
biometric likeness, ``engine.retrieval.search.outfit_change``; and that likeness alone), on the hand-labelled
people of the real clips. Nobody changes clothes in these clips: the ``biometrics`` rows say what the option
costs when the clothes stayed the same, and how much identity the heads' biometric reading alone carries.

For each real clip in ``LINEUP_FOOTAGE_DIR`` (© Intel Corporation and contributors, intel-iot-devkit/sample-videos,
CC BY 4.0) with labelled people, one crop per labelled box (``tests/data/footage/boxes.json``, plus the
reference boxes of ``people.json`` at frames boxes.json does not label) is cut from the decoded frame and
written to ``CLIP/PERSON_fFRAME.png``; the folder is ingested in crops mode (``IngestOptions(crops=True)``, the
API of ``lineup ingest DIR --crops``) into a temporary gallery with the checkpoint and the appearance
network. Then every crop is the example once: the other crops of the same clip are ranked by cosine
in one view, the query excluded; relevant = the same person's other crops. Only the same clip is searched,
because the clips' person ids are per clip (two clips may show one person under two ids); clips with a single
labelled person are left out (every ranking would be perfect). Consecutive labelled frames are near-duplicates,
so a second protocol also leaves out the same person's crops fewer than 15 frames from the query (queries
left with no relevant crop are not counted). Rank-1 and mAP per view, the ranking being the
one a find-similar step computes (``engine.retrieval.metrics.retrieval`` over the stored vectors; one find-similar step
through ``SearchSession`` reports the view routing picks: ``appearance``).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/appearance.py [--appearance MODEL.onnx] [--checkpoint C]
        [--norm imagenet] [--keep DIR]
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

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from engine.index import Gallery  # noqa: E402
from engine.ingest import IngestOptions, ModelEncoder, ingest  # noqa: E402
from engine.ingest.appearance import WithAppearance  # noqa: E402
from engine.perception.appearance import AppearanceNetwork, parse_normalisation  # noqa: E402
from engine.retrieval.encoding.views import BIOMETRICS_VIEW  # noqa: E402
from engine.retrieval.evidence.ranking import evidence_for  # noqa: E402
from engine.retrieval.metrics.retrieval import evaluate_retrieval  # noqa: E402
from engine.retrieval.models.discovery import default_checkpoint, load_model  # noqa: E402
from engine.retrieval.search import SearchSession, StepQuery  # noqa: E402
from engine.retrieval.search.outfit_change import BiometricTerm, similarity_view  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benches beside this one
from footage_folder import footage_folder  # noqa: E402

LABELS = ROOT / "tests" / "data" / "footage"
LIKENESS_ALONE = "biometric likeness alone"
GAP = 15  # frames: the second table leaves out the same person's crops closer than this to the query


def labelled_boxes() -> dict[str, dict[tuple[int, str], list[float]]]:
    """clip → {(frame, person): box}: boxes.json's boxes (not ignored), then people.json's at other frames."""
    dense = json.loads((LABELS / "boxes.json").read_text(encoding="utf-8"))["clips"]
    people = json.loads((LABELS / "people.json").read_text(encoding="utf-8"))["clips"]
    out: dict[str, dict[tuple[int, str], list[float]]] = {}
    for clip, entry in dense.items():
        for frame, boxes in entry["frames"].items():
            for box in boxes:
                if box.get("person") and not box.get("ignore"):
                    out.setdefault(clip, {})[(int(frame), box["person"])] = box["box"]
    for clip, persons in people.items():
        for person, entry in persons.items():
            for labelled in entry["boxes"]:
                out.setdefault(clip, {}).setdefault((int(labelled["frame"]), person), labelled["box"])
    return out


def write_crops(folder: Path) -> dict[str, int]:
    """Cut every labelled box of every clip with at least two people; returns crops per clip."""
    counts, footage = {}, footage_folder()
    for clip, boxes in sorted(labelled_boxes().items()):
        if len({person for _, person in boxes}) < 2 or not (footage / clip).is_file():
            continue
        wanted: dict[int, list] = {}
        for (frame, person), box in boxes.items():
            wanted.setdefault(frame, []).append((person, box))
        target = folder / Path(clip).stem
        target.mkdir(parents=True)
        capture = cv2.VideoCapture(str(footage / clip))
        index, written = 0, 0
        while wanted and index <= max(wanted):
            ok, image = capture.read()
            if not ok:
                break
            for person, (x, y, w, h) in wanted.get(index, []):
                x0, y0 = max(0, int(round(x))), max(0, int(round(y)))
                crop = image[y0 : int(round(y + h)), x0 : int(round(x + w))]
                cv2.imwrite(str(target / f"{person}_f{index:04d}.png"), crop)
                written += 1
            index += 1
        capture.release()
        counts[Path(clip).stem] = written
    return counts


def similarity(gallery: Gallery, view: str) -> np.ndarray:
    """N×N find-similar scores: cosine in a stored view; for ``biometrics`` the outfit-change step's score
    (``engine.retrieval.search.outfit_change``) of every item with each item as the example; for ``LIKENESS_ALONE`` its
    biometric likeness part only."""
    if view not in (BIOMETRICS_VIEW, LIKENESS_ALONE):
        vectors = gallery.vectors(view)
        return vectors @ vectors.T
    evidence, rows = evidence_for(gallery), np.arange(len(gallery))
    vectors = gallery.vectors(similarity_view(gallery.views))
    cosine = vectors @ vectors.T
    terms = [BiometricTerm.of_gallery(gallery, evidence, item_id) for item_id in gallery.ids]
    if view == LIKENESS_ALONE:
        return np.stack([term.likeness(rows) for term in terms])
    return np.stack([term.scores(rows, cosine[i]) for i, term in enumerate(terms)])


def scores(gallery: Gallery, view: str, gap: int = 0) -> dict:
    """Rank-1 and mAP of find-similar in ``view``: each crop against the other crops of its clip; with ``gap``,
    the same person's crops fewer than ``gap`` frames from the query are left out (near-duplicates)."""
    names = [gallery.item(row).source.rsplit("/", 1)[-1] for row in range(len(gallery))]
    persons = np.asarray([n.split("_")[0] for n in names])
    frames = np.asarray([int(n.rsplit("_f", 1)[1].split(".")[0]) for n in names])
    clips = np.asarray(gallery.columns.camera)
    others = ~np.eye(len(gallery), dtype=bool)
    same_clip = (clips[:, None] == clips[None, :]) & others
    relevant = same_clip & (persons[:, None] == persons[None, :])
    near = relevant & (np.abs(frames[:, None] - frames[None, :]) < gap)
    same_clip &= ~near
    relevant &= ~near
    report = evaluate_retrieval(similarity(gallery, view), relevant, valid=same_clip)
    counted = report.evaluated
    chance = float(np.mean(relevant.sum(axis=1)[counted] / same_clip.sum(axis=1)[counted]))
    return {"rank1": report.recall_at(1), "mAP": report.mean_ap, "queries": int(counted.sum()),
            "chance_rank1": chance}


def run(appearance: Path | None, checkpoint: Path | None, norm: str, folder: Path) -> dict:
    counts = write_crops(folder / "crops")
    model = load_model(checkpoint, device="cpu")
    network = None if appearance is None else AppearanceNetwork(appearance, parse_normalisation(norm))
    encoder = ModelEncoder(model) if network is None else WithAppearance(ModelEncoder(model), network)
    started = time.perf_counter()
    ingest(folder / "crops", folder / "gallery", encoder, options=IngestOptions(crops=True))
    seconds = time.perf_counter() - started
    gallery = Gallery.open(folder / "gallery")
    views = [v for v in ("appearance", "appearance:grey") if v in gallery.views]
    views += [v for v in gallery.views if v.startswith("reid:")]
    views += ["rgb", BIOMETRICS_VIEW, LIKENESS_ALONE]
    session = SearchSession(gallery)
    routed = session.step(StepQuery(example=gallery.ids[0], k=1)).view
    return {"crops": counts, "items": len(gallery), "ingest_seconds": round(seconds, 1), "routed_view": routed,
            "views": {view: scores(gallery, view) for view in views},
            "views_frames_apart": {view: scores(gallery, view, GAP) for view in views},
            "appearance_model": {k: v for k, v in (gallery.view_model("appearance") or {}).items() if k != "file"}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--appearance", type=Path, default=None,
                        help="an ONNX re-identification network (default: the shipped one ingest picks for crops)")
    parser.add_argument("--checkpoint", type=Path, default=None, help="default: the shipped checkpoint")
    parser.add_argument("--norm", default="imagenet", help="the network's input normalisation")
    parser.add_argument("--keep", type=Path, default=None, help="keep the crops and the gallery in this folder")
    parser.add_argument("--json", type=Path, default=None, help="also write the results here")
    args = parser.parse_args(argv)
    folder = args.keep or Path(tempfile.mkdtemp(prefix="lineup-appearance-"))
    if args.keep is not None and args.keep.exists() and any(args.keep.iterdir()):
        parser.error(f"--keep {args.keep} must be absent or empty")
    try:
        result = run(args.appearance, args.checkpoint, args.norm, folder)
    finally:
        if args.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    result["checkpoint"] = str(args.checkpoint or default_checkpoint().relative_to(ROOT))
    print(f"crops per clip: {result['crops']} ({result['items']} items, ingest {result['ingest_seconds']} s); "
          f"find-similar routes to {result['routed_view']!r}")
    first = next(iter(result["views"]))
    print(f"chance rank-1 (a random order): {result['views'][first]['chance_rank1']:.3f}, "
          f"≥ {GAP} frames apart {result['views_frames_apart'][first]['chance_rank1']:.3f}")
    print(f"| view | rank-1 | mAP | queries | rank-1, ≥ {GAP} frames apart | mAP, ≥ {GAP} frames apart | queries |")
    print("|---|---|---|---|---|---|---|")
    for view, row in result["views"].items():
        far = result["views_frames_apart"][view]
        print(f"| {view} | {row['rank1']:.3f} | {row['mAP']:.3f} | {row['queries']} | {far['rank1']:.3f} | "
              f"{far['mAP']:.3f} | {far['queries']} |")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
