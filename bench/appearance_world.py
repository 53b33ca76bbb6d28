"""Which view should find-similar search on a built world: the checkpoint's ``rgb`` view or a shipped
re-identification network? Measured in one run on a world's RGB full-resolution images (docs/pretrained-models.md,
"Appearance"; the reason ``--appearance auto`` gives built worlds no ``appearance`` view).

Every image is a query once; relevant = the same identity in the same outfit seen by another camera (the
query's own camera left out), and, second, the same identity in another outfit (the same outfit left out).
Rank-1 and mAP per view: the checkpoint's ``rgb`` vectors (as ingest stores them) and each shipped network.

    lineup world build --out W --identities 200 --images-per-identity 8 --seed 777
    HF_HUB_OFFLINE=1 .venv/bin/python bench/appearance_world.py --world W [--checkpoint C] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from engine.ingest import ModelEncoder  # noqa: E402
from engine.ingest.datasets.world import manifest_path, read_manifest  # noqa: E402
from engine.perception.appearance import ShippedAppearanceNetwork  # noqa: E402
from engine.perception.pretrained.registry import APPEARANCE_PRESETS  # noqa: E402
from engine.retrieval.models.discovery import load_model  # noqa: E402

BATCH = 64


def score(vectors: np.ndarray, identity: np.ndarray, outfit: np.ndarray, camera: np.ndarray,
          same_outfit: bool) -> tuple[float, float, int]:
    """(rank-1, mAP, queries) of find-similar under one relevance rule (see the module docstring)."""
    vectors = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    similarity = vectors @ vectors.T
    hits, precisions = [], []
    for q in range(len(vectors)):
        keep = np.ones(len(vectors), bool)
        keep[q] = False
        keep &= camera != camera[q]
        same = identity == identity[q]
        if same_outfit:
            relevant = same & (outfit == outfit[q])
        else:
            relevant = same & (outfit != outfit[q])
            keep &= ~(same & (outfit == outfit[q]))
        relevant &= keep
        if not relevant.any():
            continue
        ranked = relevant[keep][np.argsort(-similarity[q][keep], kind="stable")]
        hits.append(bool(ranked[0]))
        found = np.cumsum(ranked)
        precisions.append(float((found[ranked] / (np.flatnonzero(ranked) + 1)).mean()))
    return float(np.mean(hits)), float(np.mean(precisions)), len(hits)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--world", type=Path, required=True, help="a built world folder")
    parser.add_argument("--checkpoint", type=Path, help="default: the shipped checkpoint")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    manifest = manifest_path(args.world)
    records = [r for _, r in read_manifest(manifest) if r["modality"] == "rgb" and r["resolution"] == "HR"]
    crops = [cv2.imread(str(manifest.parent / r["image"])) for r in records]
    identity = np.asarray([r["identity"] for r in records])
    outfit = np.asarray([r["outfit"] for r in records])
    camera = np.asarray([r["camera"] for r in records])
    encoder = ModelEncoder(load_model(args.checkpoint, device="cpu"), reid_scenarios=())
    rgb = np.concatenate([encoder(crops[s : s + BATCH], ["rgb"] * len(crops[s : s + BATCH]),
                                  ["HR"] * len(crops[s : s + BATCH]))["rgb"] for s in range(0, len(crops), BATCH)])
    views = {"rgb (checkpoint)": rgb}
    for preset in APPEARANCE_PRESETS:
        network = ShippedAppearanceNetwork(preset)
        views[f"{preset} ({network.model.name})"] = network.encode(crops)
    report = {"world": str(args.world), "images": len(records), "views": {}}
    print(f"{len(records)} RGB full-resolution images of {len(set(identity.tolist()))} identities")
    for name, vectors in views.items():
        same = score(vectors, identity, outfit, camera, True)
        other = score(vectors, identity, outfit, camera, False)
        report["views"][name] = {"same_outfit": {"rank1": same[0], "mAP": same[1], "queries": same[2]},
                                 "other_outfit": {"rank1": other[0], "mAP": other[1], "queries": other[2]}}
        print(f"{name:<48} same outfit, other camera R@1 {same[0]:.3f} mAP {same[1]:.3f} | other outfit R@1 "
              f"{other[0]:.3f} mAP {other[1]:.3f} ({same[2]} queries)")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
