"""Search speed and size, measured in one run.

For galleries of 10k, 100k and 1M clustered unit vectors of the default model's dimension:

- step latency (first step, whole gallery, ρ = 0.5) over a raw FAISS ``IndexFlatIP.search`` (k = 100) on the
  same vectors; goal ≤ 1.2×. The raw search is timed with FAISS's default OpenMP threads and with one thread,
  and the faster of the two is the baseline (on a busy machine an OpenMP team can cost more than the scan).
  Also over the gallery's own index searched directly (same rule);
- latency of step j+1 over step j for a four-step chain; goal near ρ;
- bytes per gallery item on disk (items, vectors, indexes, metadata; no crops) over the raw float32 vector bytes.

Every latency is the minimum over several repetitions (the least disturbed run on a shared machine), raw and
session runs interleaved; medians are printed beside. Not run by the tests.
Usage: ``.venv/bin/python bench/search.py [--sizes 10000 100000 1000000] [--repeats 7]``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import faiss
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.index import Gallery  # noqa: E402
from engine.kernel.resources import resource_path  # noqa: E402
from engine.retrieval.search import SearchSession, StepQuery  # noqa: E402

RHO = 0.5
STEPS = 4
CLUSTERS = 2000
_CHUNK = 100_000


def default_dim() -> int:
    return int(json.loads(resource_path("configs", "default.json").read_text())["embed_dim"])


def clustered(rng: np.random.Generator, n: int, dim: int, centres: np.ndarray) -> np.ndarray:
    out = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, _CHUNK):
        m = min(_CHUNK, n - start)
        block = centres[rng.integers(0, len(centres), m)] + 0.8 * rng.standard_normal((m, dim), dtype=np.float32)
        out[start : start + m] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


class VectorEncoder:
    """Fake query encoder: the text names a query vector by index."""

    fingerprint = "bench"

    def __init__(self, queries: np.ndarray) -> None:
        self.queries = queries

    def level_for(self, text: str) -> str:
        return "UC"

    attribute_weight = None  # the checkpoint states no attribute weight

    def level_and_source(self, text: str) -> tuple[str | None, str]:
        return self.level_for(text), "parser"

    def encode_text(self, text: str) -> np.ndarray:
        return self.queries[int(text)]

    def encode_fused(self, text, sketch, ir) -> np.ndarray:
        return self.queries[int(text)]


def timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def build(folder: Path, n: int, dim: int, rng: np.random.Generator, centres: np.ndarray) -> tuple[Gallery, float]:
    start = time.perf_counter()
    gallery = Gallery.create(folder, {"text:UC": dim}, "bench")
    for first in range(0, n, 250_000):
        m = min(250_000, n - first)
        items = [{"id": f"i{k}", "source": "bench", "camera": f"c{k % 8}", "time": float(k)}
                 for k in range(first, first + m)]
        gallery.add(items, {"text:UC": clustered(rng, m, dim, centres)}, batch_size=50_000)
    return gallery, time.perf_counter() - start


def measure(n: int, dim: int, repeats: int, rng: np.random.Generator, centres: np.ndarray, folder: Path) -> dict:
    gallery, build_s = build(folder / f"g{n}", n, dim, rng, centres)
    open_start = time.perf_counter()
    gallery = Gallery.open(gallery.root)
    open_s = time.perf_counter() - open_start
    vectors = gallery.matrix("text:UC")  # float32 decoded from the stored float16 rows (also warms the cache)
    raw = faiss.IndexFlatIP(dim)
    raw.add(vectors)
    own = gallery.faiss_index("text:UC")
    queries = clustered(rng, STEPS, dim, centres)
    encoder = VectorEncoder(queries)
    q0 = queries[:1]

    threads = faiss.omp_get_max_threads()
    raw_times, own_times, step_times = {threads: [], 1: []}, {threads: [], 1: []}, [[] for _ in range(STEPS)]
    counts = []
    for _ in range(repeats):
        session = SearchSession(gallery, encoder, rho=RHO)
        for j in range(STEPS):
            query = StepQuery(text=str(j))
            start = time.perf_counter()
            session.step(query)
            step_times[j].append(time.perf_counter() - start)
        counts = [s.candidates_before for s in session.steps]
        for t in (1, threads):
            faiss.omp_set_num_threads(t)
            raw_times[t].append(timed(lambda: raw.search(q0, 100)))
            own_times[t].append(timed(lambda: own.search(q0, 100)))
        faiss.omp_set_num_threads(threads)
    raw_s = min(min(t) for t in raw_times.values())
    own_s = min(min(t) for t in own_times.values())
    steps_s = [min(t) for t in step_times]
    info = gallery.info()
    stored = info["bytes_per_item_without_crops"]
    return {
        "items": n,
        "dim": dim,
        "build_s": round(build_s, 1),
        "open_s": round(open_s, 2),
        "raw_flat_ms": round(raw_s * 1e3, 2),
        "raw_flat_median_ms_by_threads": {t: round(statistics.median(v) * 1e3, 2) for t, v in raw_times.items()},
        "own_index_ms": round(own_s * 1e3, 2),
        "step_ms": [round(s * 1e3, 2) for s in steps_s],
        "step_median_ms": [round(statistics.median(t) * 1e3, 2) for t in step_times],
        "candidates": counts,
        "step1_over_raw_flat": round(steps_s[0] / raw_s, 3),
        "step1_over_own_index": round(steps_s[0] / own_s, 3),
        "next_over_previous": [round(b / a, 3) for a, b in zip(steps_s[:-1], steps_s[1:], strict=True)],
        "bytes_per_item": round(stored, 1),
        "bytes_over_raw_float32": round(stored / info["raw_float32_bytes_per_item"], 3),
        "bytes_over_raw_float16": round(stored / (info["raw_float32_bytes_per_item"] / 2), 3),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--dim", type=int, default=None, help="default: the default model's embed_dim")
    args = parser.parse_args(argv)
    dim = args.dim or default_dim()
    rng = np.random.default_rng(0)
    centres = rng.standard_normal((CLUSTERS, dim), dtype=np.float32) / np.sqrt(dim) * 2
    started = time.perf_counter()
    print(f"faiss {faiss.__version__}, {faiss.omp_get_max_threads()} threads, dim {dim}, rho {RHO}, "
          f"GPUs seen by faiss: {faiss.get_num_gpus()}")
    with tempfile.TemporaryDirectory(prefix="lineup-bench-") as tmp:
        for n in args.sizes:
            row = measure(n, dim, args.repeats, rng, centres, Path(tmp))
            print(json.dumps(row), flush=True)
    print(f"total {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
