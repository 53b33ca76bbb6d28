"""Synthetic-world render speed on this machine.

Single-core throughput (crops/s) of ``render_sample`` for RGB HR (the goal is ≥ 300), per modality and per
resolution level, over random people, cameras and views; with ``--full`` also the wall time of building a
2,000 × 10 world with all cores (the goal is under 2 minutes on 2 cores), written to a temporary folder.

    .venv/bin/python bench/render.py [--samples 600] [--full] [--workers N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import cv2
import numpy as np

from engine.lab.world.build import build_world
from engine.lab.world.cameras import IR_CAMERAS, RGB_CAMERAS
from engine.lab.world.identities import random_attributes
from engine.lab.world.render import VIEWS, render_sample


def throughput(modality: str, resolution: str, samples: int, seed: int = 0) -> float:
    """Crops per second of ``render_sample`` on one core (people and their looks drawn per call)."""
    rng = np.random.default_rng(seed)
    people = [random_attributes(rng) for _ in range(64)]
    cameras = {"rgb": RGB_CAMERAS, "ir": IR_CAMERAS, "sketch": ("sketch",)}[modality]
    for cam in cameras:                     # scenes are drawn once per process: keep that out of the timing
        render_sample(people[0], modality, resolution, "front", cam, rng)
    start = time.perf_counter()
    for i in range(samples):
        render_sample(people[i % len(people)], modality, resolution, VIEWS[i % 3], cameras[i % len(cameras)], rng)
    return samples / (time.perf_counter() - start)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--samples", type=int, default=600, help="renders per measurement")
    ap.add_argument("--full", action="store_true", help="also build a 2,000 × 10 world with all cores")
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--json", type=Path, help="write the figures as JSON")
    args = ap.parse_args()
    cv2.setNumThreads(1)
    report: dict = {"cores": os.cpu_count(), "single_core_crops_per_s": {}}
    print(f"single core, {args.samples} renders each (crops/s):")
    for modality, resolution in (("rgb", "HR"), ("rgb", "mild"), ("rgb", "mid"), ("rgb", "ultra"), ("ir", "HR"),
                                 ("sketch", "HR")):
        rate = throughput(modality, resolution, args.samples)
        report["single_core_crops_per_s"][f"{modality}/{resolution}"] = round(rate, 1)
        print(f"  {modality:<6} {resolution:<5} {rate:8.1f}")
    if args.full:
        folder = Path(tempfile.mkdtemp(prefix="lineup-bench-world-"))
        try:
            start = time.perf_counter()
            build_world(folder / "world", identities=2000, images_per_identity=10, seed=0, workers=args.workers)
            wall = time.perf_counter() - start
            size = sum(p.stat().st_size for p in (folder / "world").rglob("*") if p.is_file())
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        report["full_world"] = {"identities": 2000, "images_per_identity": 10, "workers": args.workers,
                                "wall_s": round(wall, 1), "images_per_s": round(20000 / wall, 1),
                                "size_mb": round(size / 1e6, 1)}
        print(f"2,000 × 10 world with {args.workers} workers: {wall:.1f} s ({20000 / wall:.0f} images/s, "
              f"{size / 1e6:.0f} MB)")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
