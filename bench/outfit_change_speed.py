"""The cost of "clothes may have changed" against plain find-similar, measured in one run.

For galleries of N random unit vectors (the default model's dimension, ``rgb`` view) whose items all carry
model evidence (random head probabilities on the biometric keys, as ingest stores them), the first step of a
find-similar search over the whole gallery is timed with and without ``outfit_changed`` (the evidence gather
and likeness over every candidate), interleaved, minimum over the repetitions; the ratio is printed. Steps
run in a worker in the app, so what matters is that the ratio stays small as N grows. Not run by the tests.

    .venv/bin/python bench/outfit_change_speed.py [--sizes 10000 100000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.index import Gallery  # noqa: E402
from engine.index import evidence_table as store  # noqa: E402
from engine.kernel.ontology import BIOMETRIC_KEYS, ONTOLOGY  # noqa: E402
from engine.kernel.resources import resource_path  # noqa: E402
from engine.retrieval.search import SearchSession, StepQuery  # noqa: E402

BATCH = 20_000


def readings(rng: np.random.Generator, count: int) -> list[dict]:
    """``count`` model-evidence records with random probabilities on every biometric key."""
    out = []
    for _ in range(count):
        probabilities, confidence = {}, {}
        for key in BIOMETRIC_KEYS:
            values = ONTOLOGY.attributes[key]
            p = rng.dirichlet(np.ones(len(values)))
            probabilities[key] = dict(zip(values, p.tolist(), strict=True))
            confidence[key] = 0.5
        out.append({"model": {"version": 1, "probabilities": probabilities, "confidence": confidence}})
    return out


def build(folder: Path, n: int, dim: int, rng: np.random.Generator) -> Gallery:
    gallery = Gallery.create(folder, {"rgb": dim}, "bench")
    for first in range(0, n, BATCH):
        m = min(BATCH, n - first)
        ids = [f"i{k}" for k in range(first, first + m)]
        vectors = rng.standard_normal((m, dim), dtype=np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        gallery.add([{"id": i, "source": "bench"} for i in ids], {"rgb": vectors})
        store.append(gallery.root, ids, readings(rng, m), model_fingerprint="bench")
    return Gallery.open(gallery.root)


def measure(gallery: Gallery, repeats: int, rng: np.random.Generator) -> dict:
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(repeats):
        example = gallery.ids[int(rng.integers(len(gallery)))]
        for changed in (False, True):
            session = SearchSession(gallery)
            start = time.perf_counter()
            session.step(StepQuery(example=example, outfit_changed=changed, rho=0.5))
            times[changed].append(time.perf_counter() - start)
    plain, changed = min(times[False]), min(times[True])
    return {"items": len(gallery), "plain_ms": round(1000 * plain, 2), "outfit_change_ms": round(1000 * changed, 2),
            "ratio": round(changed / plain, 2), "plain_median_ms": round(1000 * statistics.median(times[False]), 2),
            "outfit_change_median_ms": round(1000 * statistics.median(times[True]), 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    if args.repeats < 1 or any(size < 2 for size in args.sizes):
        parser.error("--repeats must be ≥ 1 and every size ≥ 2")
    dim = int(json.loads(resource_path("configs", "default.json").read_text())["embed_dim"])
    rng = np.random.default_rng(0)
    rows = []
    with tempfile.TemporaryDirectory(prefix="lineup-outfit-speed-") as folder:
        for size in args.sizes:
            started = time.perf_counter()
            gallery = build(Path(folder) / f"g{size}", size, dim, rng)
            built = time.perf_counter() - started
            row = measure(gallery, args.repeats, rng)
            rows.append(row)
            print(f"{size:>9,} items (built in {built:.0f} s): find similar {row['plain_ms']} ms, clothes may have "
                  f"changed {row['outfit_change_ms']} ms, ratio {row['ratio']} (medians {row['plain_median_ms']} / "
                  f"{row['outfit_change_median_ms']} ms)", flush=True)
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
