"""Probe: can a colour reader learnt from rendered people read real clothing colours if it sees only colour
statistics? A logistic regression on a fixed colour histogram of the upper-body and lower-body bands of a crop
(CIE Lab, 6 × 6 × 6 bins, square-rooted, plus the band's Lab mean and spread), trained on a world's RGB crops
and scored on the hand-labelled real people of the real clips (one crop per reference box of
``tests/data/footage/people.json``; clips © Intel Corporation and contributors, intel-iot-devkit/sample-videos,
CC BY 4.0), beside the majority guess.

Rows: the training crops as rendered or through the realism chain (``engine.lab.data.realism.RealismAugment``),
each with and without a grey-world balance of the crop. The histogram is computed the same way on both sides,
so if the rendering gap were mostly in texture and shape, this reader would carry the synthetic labels to real
people better than the model's heads do (docs/training-notes.md, "Colour histograms
learnt on renders: no better than the heads on real crops").

    .venv/bin/python bench/colour_histogram_heads.py --world W [--images 4000] [--seed 0] [--json out.json]

W: a world folder (``lineup world build``), e.g. the training world of the default checkpoint.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import cv2
import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benches beside this one
from footage_folder import footage_folder  # noqa: E402

from engine.ingest.datasets import read_world  # noqa: E402
from engine.lab.data.realism import RealismAugment  # noqa: E402
from engine.lab.evaluation.attribute_accuracy import footage_samples  # noqa: E402

BANDS = {"top_color": (0.20, 0.50), "bottom_color": (0.52, 0.85)}  # rows, as fractions of the crop height
COLUMNS = (0.25, 0.75)
BINS = 6
SIZE = (64, 128)  # width, height the histogram is read at
CHROMA_RANGE = 48.0  # Lab a/b half-range covered by the bins, around the grey axis


def band_features(rgb: np.ndarray, rows: tuple[float, float], grey_world: bool) -> np.ndarray:
    """Square-rooted Lab histogram of one band of an RGB uint8 crop, plus the band's Lab mean and spread."""
    image = cv2.resize(rgb, SIZE, interpolation=cv2.INTER_AREA)
    if grey_world:
        pixels = image.astype(np.float32)
        means = pixels.reshape(-1, 3).mean(axis=0) + 1e-3
        image = np.clip(pixels * (means.mean() / means), 0, 255).astype(np.uint8)
    lab = cv2.cvtColor(image, cv2.COLOR_RGB2LAB).astype(np.float32)
    h, w = lab.shape[:2]
    band = lab[int(rows[0] * h):int(rows[1] * h), int(COLUMNS[0] * w):int(COLUMNS[1] * w)].reshape(-1, 3)
    light = np.clip((band[:, 0] / 256 * BINS).astype(int), 0, BINS - 1)
    a, b = ((np.clip(((band[:, i] - 128 + CHROMA_RANGE) / (2 * CHROMA_RANGE) * BINS).astype(int), 0, BINS - 1))
            for i in (1, 2))
    counts = np.bincount((light * BINS + a) * BINS + b, minlength=BINS ** 3).astype(np.float32)
    return np.concatenate([np.sqrt(counts / counts.sum()), band.mean(axis=0) / 255, band.std(axis=0) / 255])


def world_crops(world: Path, count: int, seed: int) -> tuple[torch.Tensor, list[dict]]:
    """``count`` random RGB HR crops of ``world`` as a uint8 batch [N, 3, 192, 96] (RGB), with their attributes."""
    samples = [s for s in read_world(world) if s.modality == "rgb" and s.extra["resolution"] == "HR"]
    np.random.default_rng(seed).shuffle(samples)
    samples = samples[:count]
    if not samples:
        raise ValueError("the world holds no RGB HR image")
    images = []
    for sample in samples:
        bgr = cv2.imread(str(sample.image))
        if bgr is None:
            raise ValueError(f"image {sample.image} cannot be decoded")
        images.append(cv2.resize(bgr[:, :, ::-1], (96, 192), interpolation=cv2.INTER_AREA))
    batch = torch.from_numpy(np.stack(images)).permute(0, 3, 1, 2).contiguous()
    return batch, [s.extra["attributes"] for s in samples]


def main(argv: list[str] | None = None) -> int:
    from sklearn.linear_model import LogisticRegression

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--world", type=Path, required=True, help="world folder to train on")
    parser.add_argument("--images", type=int, default=4000, help="training crops")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--people", type=Path, default=ROOT / "tests" / "data" / "footage" / "people.json")
    parser.add_argument("--footage", type=Path, help="the real clips' folder (default: LINEUP_FOOTAGE_DIR)")
    parser.add_argument("--json", type=Path, help="also write the table here")
    args = parser.parse_args(argv)
    try:
        rendered, attributes = world_crops(args.world, args.images, args.seed)
    except (OSError, ValueError) as exc:
        parser.error(f"--world {args.world}: {exc}")
    args.footage = footage_folder(args.footage)
    real = list(footage_samples(args.people, args.footage))
    print(f"{len(real)} real reference boxes; {len(attributes)} training crops of {args.world}")
    print(f"{'training crops':<16}{'grey world':<12}" + "".join(f"{k:>14}" for k in BANDS))
    table = []
    for realism in (False, True):
        batch = RealismAugment()(rendered, torch.Generator().manual_seed(args.seed)) if realism else rendered
        images = list(batch.permute(0, 2, 3, 1).numpy())
        for grey_world in (False, True):
            row = {"realism": realism, "grey_world": grey_world}
            for key, rows in BANDS.items():
                x = np.stack([band_features(im, rows, grey_world) for im in images])
                reader = LogisticRegression(max_iter=2000).fit(x, [a[key] for a in attributes])
                labelled = [s for s in real if key in s.attributes]
                xr = np.stack([band_features(np.ascontiguousarray(s.crop[:, :, ::-1]), rows, grey_world)
                               for s in labelled])
                hits = sum(p == s.attributes[key] for p, s in zip(reader.predict(xr), labelled, strict=True))
                row[key] = {"accuracy": hits / len(labelled), "n": len(labelled)}
            table.append(row)
            print(f"{'realism chain' if realism else 'as rendered':<16}{'yes' if grey_world else 'no':<12}"
                  + "".join(f"{row[k]['accuracy']:>14.3f}" for k in BANDS), flush=True)
    majority = {}
    for key in BANDS:
        values = Counter(s.attributes[key] for s in real if key in s.attributes)
        majority[key] = values.most_common(1)[0][1] / sum(values.values())
    print(f"{'majority guess':<28}" + "".join(f"{majority[k]:>14.3f}" for k in BANDS))
    if args.json:
        args.json.write_text(json.dumps({"rows": table, "majority": majority}, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
