"""IVF recall@100 against exact search on a real gallery's vectors, measured in one run.

For every text view ``text:<level>`` and the ``rgb`` view of a gallery ingested with a trained checkpoint, an IVF
index is built exactly as the gallery builds one beyond its size threshold (``engine.index.indexes.build``:
nlist ≈ 4√n, nprobe tuned on gallery rows to recall@100 ≥ 0.95). Recall@100 is then measured with two query
sets: (a) gallery rows (what the tuner sees) and (b) the real text queries of the world's granularity benchmark
at that level, encoded by the same checkpoint — the queries an analyst actually sends. Also printed: the
nprobe a text-query tuner would need, and the IVF/flat search-time ratio on this gallery size.

Usage: ``.venv/bin/python bench/ivf_recall.py --gallery G --checkpoint C --world W``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import faiss
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.index import Gallery  # noqa: E402
from engine.index.indexes import RECALL_K, build, exact_top_k, recall_at_k  # noqa: E402
from engine.kernel.ontology import LEVELS  # noqa: E402
from engine.lab.evaluation.sources import world_benchmark  # noqa: E402
from engine.retrieval.models import load  # noqa: E402


def text_queries(model, world: Path, level: str, batch: int = 128) -> np.ndarray:
    bench, _ = world_benchmark(world, "granularity")  # built in WORLD/benchmarks when absent
    texts = [q["text"] for q in bench["queries"] if q["level"] == level]
    out = []
    for start in range(0, len(texts), batch):
        vectors, _ = model.encode_text(texts[start : start + batch])
        out.append(vectors.cpu().numpy())
    return np.concatenate(out).astype(np.float32)


def search_seconds(index, queries: np.ndarray, k: int, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        index.search(queries, k)
        best = min(best, time.perf_counter() - started)
    return best


def tuned_for(index, queries: np.ndarray, truth: np.ndarray, k: int, target: float = 0.95) -> tuple[int, float]:
    ivf = faiss.extract_index_ivf(index)
    nprobe = 1
    while True:
        ivf.nprobe = nprobe
        recall = recall_at_k(index.search(queries, k)[1], truth)
        if recall >= target or nprobe >= ivf.nlist:
            return nprobe, recall
        nprobe = min(2 * nprobe, ivf.nlist)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gallery", type=Path, required=True)
    parser.add_argument("--checkpoint", type=Path, required=True)
    parser.add_argument("--world", type=Path, required=True, help="world whose granularity benchmark gives queries")
    args = parser.parse_args()
    gallery = Gallery.open(args.gallery)
    model = load(args.checkpoint, device="cpu")
    rows = []
    for level in LEVELS:
        view = f"text:{level}"
        if view not in gallery.views:
            continue
        vectors = gallery.vectors(view)
        k = min(RECALL_K, vectors.shape[0])
        index, spec = build(vectors, "ivf")
        queries = text_queries(model, args.world, level)
        truth = exact_top_k(vectors, queries, k)
        tuned_nprobe = faiss.extract_index_ivf(index).nprobe
        text_recall = recall_at_k(index.search(queries, k)[1], truth)
        flat, _ = build(vectors, "flat")
        ivf_time, flat_time = search_seconds(index, queries, k), search_seconds(flat, queries, k)
        need, reached = tuned_for(index, queries, truth, k)
        rows.append({"view": view, "items": int(vectors.shape[0]), "nlist": spec.nlist, "nprobe": tuned_nprobe,
                     "recall_gallery_rows": spec.recall_at_100, "text_queries": int(queries.shape[0]),
                     "recall_text_queries": round(text_recall, 4), "nprobe_for_text_0.95": need,
                     "recall_at_that_nprobe": round(reached, 4), "ivf_over_flat_time": round(ivf_time / flat_time, 3)})
        print(json.dumps(rows[-1]), flush=True)
    worst = min(r["recall_text_queries"] for r in rows)
    print(f"worst text-query recall@100 at the tuned nprobe: {worst:.4f} (goal ≥ 0.95)")


if __name__ == "__main__":
    main()
