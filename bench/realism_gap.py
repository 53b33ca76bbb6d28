"""How far world renders are from real camera crops in simple image statistics, before and after the realism
augmentation (``engine.lab.data.realism.RealismAugment``).

Three sets of crops, each resized to the model input size (``--size``, default 192×96, the shipped model's) the
way the training cache resizes (``engine.lab.train.data.resize_to_input``):

- real: every hand-labelled person box of ``tests/data/footage/boxes.json`` that is not ``ignore``, cut from
  the clips in ``--footage`` (© Intel Corporation and contributors, intel-iot-devkit/sample-videos, CC BY 4.0);
- world: the RGB day images of a world folder (``lineup world build --out W --identities 50
  --images-per-identity 4 --seed 5``);
- augmented: the same world crops through ``RealismAugment`` (``apply_p`` 1: every crop gets the chain; the
  training setting ``realism`` is that probability) with ``--seed``; ``--set FIELD=VALUE`` (JSON values,
  repeatable) overrides a field of the augmentation to try other ranges.

Per statistic of ``engine.lab.data.image_statistics``: mean and standard deviation of each set and the 1-D
Wasserstein distance of world and of augmented to real, in units of the real standard deviation; the last
line is the mean of those distances over the statistics and its ratio (augmented / world: below 1 = closer).

    .venv/bin/python bench/realism_gap.py --world W [--footage DIR] [--set noise_p=0.8] [--json OUT]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

import cv2
import numpy as np
import torch
from scipy.stats import wasserstein_distance

from engine.ingest.box_labels import load_box_labels
from engine.kernel.atomic import atomic_write_text
from engine.lab.data.image_statistics import STATISTICS, crop_statistics
from engine.lab.data.realism import RealismAugment, RealismConfigError
from engine.lab.evaluation.attribute_accuracy import read_frames
from engine.lab.train.data import resize_to_input

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benches beside this one
from footage_folder import footage_folder  # noqa: E402

DEFAULT_BOXES = REPO / "tests" / "data" / "footage" / "boxes.json"


def real_crops(boxes: Path, footage: Path, size: tuple[int, int]) -> list[np.ndarray]:
    """RGB crops of every labelled person box that is not ``ignore``, at ``size``."""
    if not footage.is_dir():
        raise SystemExit(f"footage folder {footage} not found (give --footage DIR)")
    crops = []
    for name, clip in load_box_labels(boxes).items():
        wanted = {index for index, labelled in clip.frames.items() if any(not b.ignore for b in labelled)}
        if not wanted:
            continue
        frames = read_frames(footage / name, wanted)
        for index in sorted(wanted):
            for labelled in clip.frames[index]:
                if labelled.ignore or index not in frames:
                    continue
                x, y, w, h = (int(round(v)) for v in labelled.box)
                crop = cv2.cvtColor(frames[index][y:y + h, x:x + w], cv2.COLOR_BGR2RGB)
                crops.append(resize_to_input(crop, size))
    return crops


def world_crops(world: Path, size: tuple[int, int]) -> list[np.ndarray]:
    manifest = world / "manifest.jsonl"
    if not manifest.is_file():
        raise SystemExit(f"no manifest at {manifest}; build a world first (lineup world build --out {world} ...)")
    with open(manifest, encoding="utf-8") as fh:
        records = [json.loads(line) for line in fh if line.strip()]
    crops = []
    for record in records:
        if record["modality"] == "rgb" and record["daytime"] == "day":
            image = cv2.imread(str(world / record["image"]), cv2.IMREAD_COLOR)
            if image is None:
                raise SystemExit(f"cannot read {world / record['image']}")
            crops.append(resize_to_input(cv2.cvtColor(image, cv2.COLOR_BGR2RGB), size))
    if not crops:
        raise SystemExit(f"{world} has no RGB day images")
    return crops


def augmented_crops(crops: list[np.ndarray], augment: RealismAugment, seed: int) -> list[np.ndarray]:
    batch = torch.from_numpy(np.stack(crops)).permute(0, 3, 1, 2).contiguous()
    out = augment(batch, torch.Generator().manual_seed(seed))
    return list(out.permute(0, 2, 3, 1).numpy())


def statistics_of(crops: list[np.ndarray]) -> dict[str, np.ndarray]:
    rows = [crop_statistics(crop) for crop in crops]
    return {name: np.array([row[name] for row in rows]) for name in STATISTICS}


def gap_table(real: dict[str, np.ndarray], world: dict[str, np.ndarray],
              augmented: dict[str, np.ndarray]) -> dict[str, dict[str, float]]:
    table = {}
    for name in STATISTICS:
        scale = max(float(real[name].std()), 1e-9)
        row = {}
        for label, values in (("real", real[name]), ("world", world[name]), ("augmented", augmented[name])):
            row[f"{label}_mean"], row[f"{label}_std"] = float(values.mean()), float(values.std())
        row["world_to_real"] = wasserstein_distance(world[name], real[name]) / scale
        row["augmented_to_real"] = wasserstein_distance(augmented[name], real[name]) / scale
        table[name] = row
    return table


def _overrides(pairs: list[str]) -> dict:
    fields = {f.name for f in dataclasses.fields(RealismAugment)}
    out = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or key not in fields:
            raise SystemExit(f"--set needs FIELD=VALUE with a field of RealismAugment ({sorted(fields)}), got {pair!r}")
        try:
            parsed = json.loads(value)
        except ValueError:
            raise SystemExit(f"--set {key}: {value!r} is not a JSON value") from None
        out[key] = tuple(parsed) if isinstance(parsed, list) else parsed
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--world", type=Path, required=True, help="a built world folder")
    parser.add_argument("--footage", type=Path, help="the real clips' folder (default: LINEUP_FOOTAGE_DIR)")
    parser.add_argument("--boxes", type=Path, default=DEFAULT_BOXES)
    parser.add_argument("--size", type=int, nargs=2, default=(192, 96), metavar=("H", "W"))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--set", action="append", default=[], metavar="FIELD=VALUE")
    parser.add_argument("--json", type=Path, help="also write the table here")
    args = parser.parse_args(argv)
    cv2.setNumThreads(1)
    torch.set_num_threads(1)
    size = (args.size[0], args.size[1])
    try:
        augment = RealismAugment(**_overrides(args.set))
    except RealismConfigError as exc:
        raise SystemExit(str(exc)) from None
    real = real_crops(args.boxes, footage_folder(args.footage), size)
    world = world_crops(args.world, size)
    table = gap_table(statistics_of(real), statistics_of(world), statistics_of(augmented_crops(world, augment,
                                                                                               args.seed)))
    print(f"{len(real)} real crops, {len(world)} world crops at {size[0]}×{size[1]}; distance = 1-D Wasserstein "
          "to real in real standard deviations")
    print(f"{'statistic':<15}{'real':>17}{'world':>17}{'augmented':>17}{'world→real':>12}{'aug→real':>10}")
    for name, row in table.items():
        cells = "".join(f"{row[f'{k}_mean']:>9.3f} ±{row[f'{k}_std']:<6.3f}" for k in ("real", "world", "augmented"))
        print(f"{name:<15}{cells}{row['world_to_real']:>12.2f}{row['augmented_to_real']:>10.2f}")
    before = float(np.mean([row["world_to_real"] for row in table.values()]))
    after = float(np.mean([row["augmented_to_real"] for row in table.values()]))
    print(f"{'mean distance':<15}{'':>51}{before:>12.2f}{after:>10.2f}   ratio augmented/world {after / before:.2f}")
    if args.json:
        result = {"real_crops": len(real), "world_crops": len(world), "size": list(size), "seed": args.seed,
                  "augment": {k: list(v) if isinstance(v, tuple) else v
                              for k, v in dataclasses.asdict(augment).items()},
                  "statistics": table, "mean_world_to_real": before, "mean_augmented_to_real": after,
                  "ratio": after / before}
        atomic_write_text(args.json, json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())
