"""Galleries beyond memory, measured in one run (docs/scaling.md).

For synthetic galleries of growing size (``engine.index.synthetic``; one view, dim 192, float16; the same folder
is grown from one size to the next, so the build times form a learning curve):

- build (or growth) time;
- opening time and the resident memory opening adds, in a fresh process, also as a ratio of the vectors' bytes
  (goals: ≤ 2 s at 1M items; ≤ 0.25 of the vectors);
- first-step latency of a find-similar step through ``SearchSession`` over a raw FAISS search of the gallery's
  own index with the same k and the same lists probed (the session's shortlist past the IVF threshold; up to it
  the session scores every item, and the raw search is the flat index's top-k) — goal ≤ 1.5×. Each is the
  least of ``--repeats`` runs over the same queries, session and raw interleaved;
- recall@100 of the step's best 100 against exact search (chunked brute force over the stored rows), for gallery
  rows as queries (find-similar) and for perturbed rows (off the gallery's manifold, as text queries lie) —
  goal ≥ 0.95.

Not run by the tests. Usage:
``.venv/bin/python bench/gallery_scale.py --sizes 1000000 2000000 5000000 10000000 --dir /tmp/scale-bench/g``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import faiss
import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.index import Gallery  # noqa: E402
from engine.index.indexes import RECALL_K, exact_top_k, probes_for, recall_at_k  # noqa: E402
from engine.index.synthetic import item_id, make_synthetic_gallery  # noqa: E402
from engine.retrieval.search import SearchSession, StepQuery  # noqa: E402
from engine.retrieval.search.shortlist import SHORTLIST  # noqa: E402

_OPEN_CHILD = """
import json, sys, time
def rss():
    out = {}
    for line in open('/proc/self/status'):
        key, _, value = line.partition(':')
        if key in ('VmRSS', 'RssAnon', 'RssFile'):
            out[key] = int(value.split()[0]) * 1024
    return out
sys.path.insert(0, sys.argv[2])
from engine.index import Gallery
before = rss()
started = time.perf_counter()
gallery = Gallery.open(sys.argv[1])
seconds = time.perf_counter() - started
after = rss()
vectors = sum(gallery.stored_vectors(view).nbytes for view in gallery.views)
print(json.dumps({"open_s": seconds, "rss": after["VmRSS"] - before["VmRSS"],
                  "anon": after["RssAnon"] - before["RssAnon"], "vectors": vectors}))
"""


def measure_open(path: Path) -> dict:
    out = subprocess.run([sys.executable, "-c", _OPEN_CHILD, str(path), str(ROOT)], check=True, capture_output=True,
                         text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure_steps(gallery: Gallery, queries: int, repeats: int, seed: int) -> dict:
    view = "rgb"
    rng = np.random.default_rng(seed)
    rows = np.sort(rng.choice(len(gallery), size=queries, replace=False))
    vectors = gallery.vectors(view, rows)
    index = gallery.faiss_index(view)
    k = SHORTLIST
    # the raw search returns k items as the session's does: an IVF index probes the lists that hold them
    params = faiss.SearchParametersIVF(nprobe=probes_for(index, k)) if isinstance(index, faiss.IndexIVF) else None
    session_s, raw_s, first_cold = [], [], None
    found = []
    for repeat in range(repeats):
        s_total = r_total = 0.0
        for i, row in enumerate(rows.tolist()):
            session = SearchSession(gallery)
            started = time.perf_counter()
            step = session.step(StepQuery(example=item_id(row)))
            took = time.perf_counter() - started
            if first_cold is None:
                first_cold = took
            s_total += took
            started = time.perf_counter()
            index.search(vectors[i : i + 1], k, params=params)
            r_total += time.perf_counter() - started
            if repeat == 0:
                order = np.lexsort((step.rows, -step.scores))[:RECALL_K]
                found.append(step.rows[order])
        session_s.append(s_total / len(rows))
        raw_s.append(r_total / len(rows))
    truth = exact_top_k(gallery.stored_vectors(view), vectors, RECALL_K)
    noisy = vectors + rng.standard_normal(vectors.shape).astype(np.float32) * (0.8 / np.sqrt(vectors.shape[1]))
    noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
    noisy_found = np.stack([gallery.search(view, q, RECALL_K)[0][:RECALL_K] for q in noisy])
    noisy_truth = exact_top_k(gallery.stored_vectors(view), noisy, RECALL_K)
    padded = np.stack([np.pad(f, (0, RECALL_K - f.size), constant_values=-1) for f in found])
    return {"kind": gallery.index_spec(view).kind, "k": k, "step_s": min(session_s), "raw_s": min(raw_s),
            "step_over_raw": min(session_s) / min(raw_s), "first_step_cold_s": first_cold,
            "recall_rows": recall_at_k(padded, truth), "recall_perturbed": recall_at_k(noisy_found, noisy_truth),
            "nprobe": gallery.index_spec(view).nprobe, "nlist": gallery.index_spec(view).nlist,
            "nprobe_for_k": None if params is None else int(params.nprobe)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 2_000_000, 5_000_000, 10_000_000])
    parser.add_argument("--dir", type=Path, required=True, help="gallery folder, grown from size to size")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    results = []
    for size in sorted(args.sizes):
        started = time.perf_counter()
        before = len(Gallery.open(args.dir)) if (args.dir / "gallery.json").exists() else 0
        make_synthetic_gallery(args.dir, size, seed=args.seed)
        built = time.perf_counter() - started
        opened = measure_open(args.dir)
        gallery = Gallery.open(args.dir)
        steps = measure_steps(gallery, args.queries, args.repeats, args.seed)
        row = {"items": size, "grown_from": before, "build_s": round(built, 1), "open_s": round(opened["open_s"], 3),
               "open_rss_mib": round(opened["rss"] / 2**20, 1),
               "open_rss_over_vectors": round(opened["rss"] / opened["vectors"], 4),
               "vectors_mib": round(opened["vectors"] / 2**20), **{k: (round(v, 4) if isinstance(v, float) else v)
                                                                    for k, v in steps.items()}}
        results.append(row)
        print(json.dumps(row), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
