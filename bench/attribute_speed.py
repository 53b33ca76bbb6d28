"""Speed of pixel-read attribute evidence against the default model's image encoding, per crop.

64 synthetic RGB HR crops (256×128, ``engine.lab.world.render.render_sample``, random people, cameras and views)
are read by ``extract_attributes`` without a mask (GrabCut) and with a given foreground mask (the GrabCut
silhouette computed beforehand, as a background model would hand it over), one crop at a time; the default
model (``engine.retrieval.models.create("default")``, random weights: only the cost matters) encodes the same 64 crops
as one batch at its input size. Both run on ``--threads`` CPU threads (default 1, a fair single-core
comparison). The goal is a ratio ≤ 0.5 (pixel evidence costs at most half of the encoding it accompanies).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/attribute_speed.py [--crops 64] [--repeats 3] [--threads 1]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import cv2  # noqa: E402
import numpy as np  # noqa: E402
import torch  # noqa: E402

from engine.kernel.atomic import atomic_write_text  # noqa: E402
from engine.lab.world.cameras import RGB_CAMERAS  # noqa: E402
from engine.lab.world.identities import random_attributes  # noqa: E402
from engine.lab.world.render import VIEWS, render_sample  # noqa: E402
from engine.perception.attributes import extract_attributes  # noqa: E402
from engine.perception.attributes.mask import grabcut_mask  # noqa: E402
from engine.retrieval.models import create  # noqa: E402


def crops(count: int, seed: int = 0) -> list[np.ndarray]:
    """``count`` BGR uint8 256×128 renders of random people."""
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        rgb = render_sample(random_attributes(rng), "rgb", "HR", VIEWS[i % 3], RGB_CAMERAS[i % len(RGB_CAMERAS)], rng)
        out.append(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))
    return out


def per_crop_ms(fn, items: list, repeats: int) -> float:
    """Median over ``repeats`` passes of the mean time per item (ms)."""
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        for item in items:
            fn(item)
        runs.append((time.perf_counter() - start) / len(items) * 1000.0)
    return statistics.median(runs)


def encode_ms(images: list[np.ndarray], repeats: int) -> float:
    """Median per-crop time (ms) of the default model's ``encode_images`` on the whole batch."""
    model = create("default", device="cpu").eval()
    batch = torch.from_numpy(np.stack([cv2.cvtColor(im, cv2.COLOR_BGR2RGB) for im in images])).permute(0, 3, 1, 2)
    prepared = model.prepare_images(batch.contiguous())
    model.encode_images(prepared)  # warm-up
    runs = []
    for _ in range(repeats):
        start = time.perf_counter()
        model.encode_images(prepared)
        runs.append((time.perf_counter() - start) / len(images) * 1000.0)
    return statistics.median(runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--crops", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    cv2.setNumThreads(args.threads)
    images = crops(args.crops)
    masks = [grabcut_mask(im).astype(np.uint8) * 255 for im in images]
    pairs = list(zip(images, masks, strict=True))
    extract_attributes(images[0])  # warm-up (lazy OpenCV initialisation)
    no_mask = per_crop_ms(extract_attributes, images, args.repeats)
    with_mask = per_crop_ms(lambda pair: extract_attributes(pair[0], mask=pair[1]), pairs, args.repeats)
    encode = encode_ms(images, args.repeats)
    result = {"crops": len(images), "threads": args.threads, "extract_no_mask_ms": no_mask,
              "extract_with_mask_ms": with_mask, "encode_images_ms": encode,
              "ratio_no_mask": no_mask / encode, "ratio_with_mask": with_mask / encode}
    print(f"{len(images)} crops 256×128, {args.threads} thread(s), per crop:")
    print(f"  extract_attributes, no mask (GrabCut): {no_mask:6.2f} ms   ratio to encoding {no_mask / encode:.2f}×")
    print(f"  extract_attributes, mask given:        {with_mask:6.2f} ms   ratio to encoding {with_mask / encode:.2f}×")
    print(f"  default model encode_images (batch):   {encode:6.2f} ms   (goal: ratio ≤ 0.5×)")
    if args.json:
        atomic_write_text(args.json, json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
