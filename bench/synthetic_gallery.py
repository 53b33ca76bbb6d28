"""Write a synthetic gallery of N items (``engine.index.synthetic.make_synthetic_gallery``) for scale benchmarks
and tests: clustered unit vectors per view, items with camera, time, track and identity, written chunk by chunk
through the gallery's writer. An existing synthetic gallery at OUT is grown to N items.

Usage: ``.venv/bin/python bench/synthetic_gallery.py --items N [--dim 192] [--views rgb] --out DIR``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from engine.index.errors import GalleryError  # noqa: E402
from engine.index.synthetic import make_synthetic_gallery  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, required=True, help="how many items the gallery holds")
    parser.add_argument("--dim", type=int, default=192, help="vector dimension of every view")
    parser.add_argument("--views", nargs="+", default=["rgb"], help="view names")
    parser.add_argument("--out", type=Path, required=True, help="gallery folder (created, or grown)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chunk", type=int, default=65_536, help="items written per chunk")
    parser.add_argument("--ivf-threshold", type=int, default=None, help="items past which the index is IVF")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] > 5 or done == total:
            last[0] = now
            print(f"{done}/{total} items, {now - started:.0f} s", flush=True)

    extra = {} if args.ivf_threshold is None else {"ivf_threshold": args.ivf_threshold}
    try:
        gallery = make_synthetic_gallery(args.out, args.items, dim=args.dim, views=args.views, seed=args.seed,
                                         chunk=args.chunk, progress=progress, **extra)
    except GalleryError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{args.out}: {len(gallery)} items, views {gallery.views}, "
          f"index {[gallery.index_spec(v).kind for v in gallery.views]}, {time.perf_counter() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
