"""What content-bound gallery fingerprints cost (docs/hardening.md, "Content-bound gallery fingerprints"): a
gallery of ``--items`` items (default 2,400) with the views an ingest stores for a ``--dim``-d model
(``engine.retrieval.encoding.views.gallery_views``: one per text level and the image view) plus two 512-d appearance
views, each item with a crop; prints seconds for

* digesting every item from ``items.jsonl`` and the stored vectors (what ``verify``, a report's check through
  ``Gallery.fingerprint(from_files=True)`` and a rebuild of a gallery without digests do),
* the digests an add of ``--add`` items computes (only the new items; median of ``--runs`` adds),
* the content check of ``verify`` alone, and a whole ``verify``.

Not run by the tests. Usage: ``.venv/bin/python bench/gallery_content.py [--items 2400] [--dim 256]
[--add 100] [--runs 5]``
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from engine.index import Gallery, content
from engine.index.verify import Problem, _check_content
from engine.retrieval.encoding.views import gallery_views


def unit(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def records(gallery: Gallery, start: int, stop: int) -> list[dict]:
    out = []
    for k in range(start, stop):
        path, digest = gallery.put_crop(f"crop-{k}".encode() * 64, ".png")
        out.append({"id": f"cam{k % 4}/f{k:06d}", "source": "/footage/walk.mp4", "frame": k, "time": k / 25,
                    "camera": f"cam{k % 4}", "box": [10.0 + k % 50, 20.0, 48.0, 128.0], "track": k // 10,
                    "crop": path, "crop_sha256": digest})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", type=int, default=2400)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--add", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    views = dict(gallery_views(args.dim), appearance=512, **{"appearance:grey": 512})
    with tempfile.TemporaryDirectory() as folder:
        gallery = Gallery.create(Path(folder) / "g", views, "bench")
        gallery.add(records(gallery, 0, args.items), {v: unit(rng, args.items, d) for v, d in views.items()})
        stored_bytes = sum(2 * d for d in views.values())
        print(f"{args.items:,} items, {len(views)} views ({stored_bytes:,} bytes of float16 vectors per item)")

        started = time.perf_counter()
        parts = gallery.computed_parts()
        every = time.perf_counter() - started
        print(f"digest every item from the stored files: {every:.3f} s ({every / args.items * 1e6:.0f} µs per item)")

        started = time.perf_counter()
        content.chain(parts, content.row_width(views))
        print(f"chain over the stored digests: {time.perf_counter() - started:.4f} s")

        adds = []
        next_id = args.items
        for _ in range(args.runs):
            new = records(gallery, next_id, next_id + args.add)
            lines = [(gallery_item_json(r) + "\n").encode() for r in new]
            blocks = {v: unit(rng, args.add, d).astype(np.float16) for v, d in views.items()}
            started = time.perf_counter()
            content.parts_of(lines, blocks)
            adds.append(time.perf_counter() - started)
            next_id += args.add
        print(f"digests of an add of {args.add} items: {statistics.median(adds) * 1e3:.1f} ms (median of "
              f"{args.runs})")

        started = time.perf_counter()
        assert _check_content(gallery, Problem) == []
        print(f"verify's content check: {time.perf_counter() - started:.3f} s")
        started = time.perf_counter()
        assert gallery.verify() == []
        print(f"whole verify (crops, vectors, indexes, content): {time.perf_counter() - started:.3f} s")


def gallery_item_json(record: dict) -> str:
    from engine.index.items import as_item

    return as_item(record).to_json()


if __name__ == "__main__":
    main()
