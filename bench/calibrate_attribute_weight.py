"""Calibrate the hybrid ranking's attribute weight for footage galleries on the hand-labelled real people, and
record it in a checkpoint's ``metadata.json`` (``attribute_weights.footage``; docs/real-footage.md).

Per real clip (``LINEUP_FOOTAGE_DIR``) a gallery of one crop per hand-labelled box of
``tests/data/footage/people.json`` (``real_queries.labelled_galleries``: no detector in the loop, so the weight
does not fit one detector's mistakes), every labelled person's description as one search step, evidence from
pixels and the model's heads, the descriptions encoded as the search encodes them (with the checkpoint's
text rewrite weight, ``engine.retrieval.encoding.text_rewrite``). For each w of the sweep: mean average precision of
the person's crops (their whole ranking) and rank-1 hits. The chosen w maximises mAP; ties go to the
smaller w. The weight for synthetic-world galleries is not measured here (``bench/hybrid_synthetic.py``
does): ``--write`` keeps the checkpoint's ``attribute_weight`` for ``world``.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/calibrate_attribute_weight.py [--checkpoint C]
        [--weights 0,0.25,0.5,1,2,4,8] [--write]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_queries import labelled_galleries  # noqa: E402

from engine.kernel.atomic import atomic_write_json  # noqa: E402
from engine.retrieval.encoding.text_rewrite import checkpoint_rewrite_weight  # noqa: E402
from engine.retrieval.evidence.ranking import DOMAIN_METADATA_KEY, checkpoint_attribute_weight  # noqa: E402
from engine.retrieval.models.discovery import default_checkpoint  # noqa: E402

SWEEP = (0.0, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0)
SOURCES = "both"


def sweep(checkpoint: Path, weights: list[float]) -> list[dict]:
    """mAP and rank-1 hits of the hybrid ranking (pixels + model evidence) at each weight."""
    from engine.retrieval.models import load

    model = load(checkpoint, device="cpu")
    rankings = [("hybrid", SOURCES, w) for w in weights]
    with tempfile.TemporaryDirectory(prefix="calibrate-") as folder:
        part = labelled_galleries(model, Path(folder), rankings, checkpoint_rewrite_weight(checkpoint))
    rows = []
    for w in weights:
        rate = part["rates"][f"hybrid:{SOURCES}:{w:g}"]
        rows.append({"weight": w, "mAP": rate["mAP_with_crops"], "rank1_hits": rate["rank1_hits"],
                     "people": part["people"]})
    return rows


def choose(rows: list[dict]) -> dict:
    """The row with the highest mAP (the smallest weight among equals)."""
    return max(rows, key=lambda r: (r["mAP"], -r["weight"]))


def record(checkpoint: Path, chosen: dict, rows: list[dict]) -> Path:
    path = checkpoint / "metadata.json"
    metadata = json.loads(path.read_text(encoding="utf-8"))
    weights = dict(metadata.get(DOMAIN_METADATA_KEY) or {})
    weights["footage"] = chosen["weight"]
    weights.setdefault("world", checkpoint_attribute_weight(checkpoint))
    metadata[DOMAIN_METADATA_KEY] = weights
    metadata["attribute_weight_calibration"] = {
        "footage": {"criterion": "mAP of the described person's crops, hybrid ranking with pixel and model "
                                 "evidence, one crop per hand-labelled box of the shared clips",
                    "command": "bench/calibrate_attribute_weight.py --write", "sweep": rows,
                    "measured": datetime.now(UTC).isoformat(timespec="seconds")},
        "world": {"criterion": "largest weight that lowers the unseen world's MG-Eval mAP for no evidence source",
                  "command": "bench/hybrid_synthetic.py"},
    }
    return atomic_write_json(path, metadata, indent=2)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--checkpoint", type=Path, help="checkpoint folder (default: the shipped one)")
    parser.add_argument("--weights", default=",".join(f"{w:g}" for w in SWEEP), help="comma-separated sweep")
    parser.add_argument("--write", action="store_true", help="record the chosen weight in the checkpoint")
    args = parser.parse_args(argv)
    try:
        weights = sorted({float(w) for w in args.weights.split(",") if w.strip()})
    except ValueError:
        parser.error(f"--weights must be numbers separated by commas, got {args.weights!r}")
    if not weights or min(weights) < 0:
        parser.error("--weights needs at least one weight, none negative")
    checkpoint = args.checkpoint or default_checkpoint()
    rows = sweep(checkpoint, weights)
    print(f"{'w':>6} {'mAP':>7} {'rank-1':>8}")
    for row in rows:
        print(f"{row['weight']:>6g} {row['mAP']:>7.3f} {row['rank1_hits']:>4} / {row['people']}")
    chosen = choose(rows)
    print(f"chosen w = {chosen['weight']:g} (mAP {chosen['mAP']:.3f})")
    if args.write:
        print(f"recorded in {record(checkpoint, chosen, rows)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
