"""Calibrate λ of "find similar, clothes may have changed" on a synthetic world's any-time benchmark.

The option ranks by (cos + λ·likeness) / (1 + λ) (``engine.retrieval.search.outfit_change``). For each λ of the sweep
(∞: the biometric likeness alone) this prints, per time mode (DT, NT, AD), the metrics of
``engine.lab.evaluation.outfit_change`` on galleries holding both the same-clothes and the other-clothes sightings
of each query's person: mAP over both kinds, R@1, and how often the first sighting in other clothes ranks first
and within the first ten. The chosen λ maximises the mean mAP over the three time modes (the smaller λ among
equals). Calibrate on a world that is not the one the figures are reported on (docs/training-notes.md, "Find
similar across an outfit change", used seed 4242 and reports seed 777):

    lineup world build --out CAL --identities 500 --images-per-identity 10 --seed 4242
    lineup world benchmarks CAL
    HF_HUB_OFFLINE=1 .venv/bin/python bench/outfit_change_weight.py --world CAL [--checkpoint C]
        [--weights 0,1,2,4,8,16,inf] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from engine.lab.evaluation.attribute_reading import vectors_and_head_probabilities  # noqa: E402
from engine.lab.evaluation.outfit_change import TIME_MODES, anytime_outfit_change  # noqa: E402
from engine.lab.world.benchmarks import load_benchmark  # noqa: E402
from engine.retrieval.models.discovery import default_checkpoint, load_model  # noqa: E402

SWEEP = (0.0, 1.0, 2.0, 4.0, 8.0, 16.0, math.inf)
BATCH = 64


def weights_of(text: str) -> list[float]:
    try:
        values = [math.inf if part.strip() in ("inf", "∞") else float(part) for part in text.split(",")]
    except ValueError:
        raise SystemExit(f"--weights must be numbers separated by commas (inf allowed), got {text!r}") from None
    if not values or any(not v >= 0 for v in values):
        raise SystemExit(f"--weights must be ≥ 0, got {text!r}")
    return values


def readings(model, bench) -> tuple[np.ndarray, np.ndarray, int]:
    """(gallery embeddings, head probabilities, query count): query rows first, then gallery rows."""
    items = list(bench["query"]) + list(bench["gallery"])
    paths = [Path(bench["world"]) / item["image"] for item in items]
    vectors, probabilities = vectors_and_head_probabilities(model, paths, items, BATCH)
    return vectors, probabilities, len(bench["query"])


def sweep(vectors: np.ndarray, probabilities: np.ndarray, queries: int, bench, weights: list[float]) -> list[dict]:
    rows = []
    for weight in weights:
        if math.isinf(weight):  # the likeness alone: cosine zeroed, any finite weight then ranks by likeness
            report = anytime_outfit_change(bench, np.zeros_like(vectors[:queries]), vectors[queries:],
                                           probabilities[:queries], probabilities[queries:], 1.0)
        else:
            report = anytime_outfit_change(bench, vectors[:queries], vectors[queries:], probabilities[:queries],
                                           probabilities[queries:], weight)
        by = {mode: report["by"][mode]["outfit_change"] for mode in TIME_MODES}
        present = [by[m]["mAP"] for m in TIME_MODES if by[m]["mAP"] is not None]
        rows.append({"weight": weight, "mean_mAP": float(np.mean(present)) if present else None, "by": by})
    return rows


def _cell(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--world", type=Path, required=True, help="a built world with its benchmarks")
    parser.add_argument("--checkpoint", type=Path, default=None, help="default: the shipped checkpoint")
    parser.add_argument("--weights", default=",".join("inf" if math.isinf(w) else f"{w:g}" for w in SWEEP))
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    weights = weights_of(args.weights)
    try:
        bench = load_benchmark(args.world / "benchmarks", "anytime")
    except (OSError, ValueError) as exc:
        parser.error(f"--world {args.world}: no readable any-time benchmark ({exc}); run `lineup world benchmarks`")
    checkpoint = args.checkpoint or default_checkpoint()
    model = load_model(checkpoint, device="cpu").eval()
    started = time.perf_counter()
    vectors, probabilities, queries = readings(model, bench)
    print(f"{checkpoint} on {args.world}: {queries} queries, {len(vectors) - queries} gallery images, read in "
          f"{time.perf_counter() - started:.0f} s")
    rows = sweep(vectors, probabilities, queries, bench, weights)
    print("| λ | mean mAP | " + " | ".join(f"{m} mAP | {m} R@1 | {m} other R@1 | {m} other R@10" for m in TIME_MODES)
          + " |")
    print("|---" * (2 + 4 * len(TIME_MODES)) + "|")
    for row in rows:
        cells = []
        for mode in TIME_MODES:
            block = row["by"][mode]
            cells += [_cell(block[key]) for key in ("mAP", "R@1", "other_outfit_R@1", "other_outfit_R@10")]
        print(f"| {row['weight']:g} | {_cell(row['mean_mAP'])} | " + " | ".join(cells) + " |")
    scored = [row for row in rows if row["mean_mAP"] is not None]
    if not scored:
        raise SystemExit(f"{args.world}: no time mode of the any-time benchmark has a query")
    chosen = max(scored, key=lambda r: (r["mean_mAP"], -r["weight"]))
    print(f"chosen λ = {chosen['weight']:g} (mean mAP {chosen['mean_mAP']:.3f})")
    if args.json is not None:
        args.json.write_text(json.dumps({"checkpoint": str(checkpoint), "world": str(args.world), "rows": rows,
                                         "chosen": chosen["weight"]}, indent=1, default=str), encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
