"""Ingest on Ray against one process, in one run (docs/scaling.md, "Ingest on Ray").

On one built world (read without detection: decode, hash, encode with the checkpoint, attribute evidence, commit)
it measures, in this order:

- ``plain``: ``engine.ingest.ingest`` in this process (``--workers 1``);
- ``ray-1`` and ``ray-2`` (``--workers``): ``engine.ingest.cluster.ingest_on_ray`` with a local Ray of 1 and 2
  workers, the world cut in shards of ``--shard`` images;
- ``writer``: the gallery writer alone (``engine.ingest.shipments.ShipmentWriter``) committing the plain run's
  items again (crops, evidence, items and vectors, in batches of ``--batch``) into a fresh gallery, then into a
  gallery already holding ``--writer-base`` items: the ceiling of any number of workers.

Each run goes into a fresh gallery. ``items/s`` is end to end (a Ray run includes starting Ray and loading the
networks in every worker); ``steady items/s`` is the rate sustained once started: the items committed after the
first commit over the time from it to the last. Ratios are against ``plain``. The machine's core count bounds
the 2-worker ratio: the writer and both workers share it.

    nice .venv/bin/python bench/ingest_ray.py [--identities 40] [--images 5] [--checkpoint DIR] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from dataclasses import replace
from functools import partial
from pathlib import Path

import numpy as np

from engine.index import Gallery
from engine.index import evidence_table as evidence_store
from engine.ingest import IngestOptions, ModelEncoder, ingest
from engine.ingest.cluster import ingest_on_ray
from engine.ingest.remote import Shipment
from engine.ingest.shipments import ShipmentWriter
from engine.ingest.summary import IngestSummary
from engine.lab.world.build import build_world
from engine.retrieval.models.discovery import load_model


def make_encoder(checkpoint: str | None) -> ModelEncoder:
    return ModelEncoder(load_model(None if checkpoint is None else Path(checkpoint), device="cpu"))


class Clock:
    """Notes when gallery commits happen (``Gallery.add`` timed for the bench): the first and the last."""

    def __init__(self) -> None:
        self.first = self.last = None
        self.before = 0  # items of the first commit (made before the span starts)

    def noted(self, items: int) -> None:
        now = time.perf_counter()
        if self.first is None:
            self.first, self.before = now, items
        self.last = now


CLOCK: list[Clock] = []
_add = Gallery.add


def _timed_add(self, *args, **kwargs):
    report = _add(self, *args, **kwargs)
    if CLOCK:
        CLOCK[-1].noted(len(args[0]))
    return report


Gallery.add = _timed_add  # the bench's own instrument: one timestamp per committed batch


def measured(name: str, run, items_of) -> dict:
    clock = Clock()
    CLOCK.append(clock)
    started = time.perf_counter()
    summary = run()
    seconds = time.perf_counter() - started
    CLOCK.pop()
    items = items_of(summary)
    span = clock.last - clock.first if clock.last else 0.0
    steady = (items - clock.before) / span if span > 0 else float("nan")
    row = {"run": name, "items": items, "seconds": round(seconds, 2), "items_per_s": round(items / seconds, 2),
           "steady_items_per_s": round(steady, 2)}
    print(json.dumps(row), flush=True)
    return row


def shipments_of(gallery: Gallery, batch: int, rename: str = "") -> list[Shipment]:
    """The gallery's items again as shipments (crop bytes, vectors, evidence records); ``rename`` changes the ids."""
    table = evidence_store.EvidenceTable.read(gallery.root)
    out = []
    for start in range(0, len(gallery), batch):
        rows = list(range(start, min(len(gallery), start + batch)))
        items = [gallery.item(row) for row in rows]
        crops = {item.crop: (gallery.root / item.crop).read_bytes() for item in items}
        evidence = [{source: e.to_dict() for source, e in table.record(table.row_of[item.id]).items()}
                    for item in items]
        if rename:
            items = [replace(item, id=item.id + rename) for item in items]
        vectors = {view: np.asarray(gallery.vectors(view)[rows], dtype=np.float32) for view in gallery.views}
        out.append(Shipment(items, vectors, evidence, crops, {}, len(rows)))
    return out


def writer_rate(source: Gallery, out: Path, batch: int, base: int) -> dict:
    """Items per second the writer commits into a gallery holding ``base`` items first."""
    from engine.index.writer_lock import writing

    root = out / f"writer-{base}"
    store = Gallery.create(root, source.views, source.model_fingerprint)
    with writing(root):
        filler = ShipmentWriter(store, IngestSummary(str(root)), source.model_fingerprint, {}, lambda d, t: None, 0)
        copies = 0
        while len(store) < base:  # the same items under other ids, to reach the size
            copies += 1
            for shipment in shipments_of(source, 512, f"-{copies}"):
                filler.commit(0, shipment)
        writer = ShipmentWriter(store, IngestSummary(str(root)), source.model_fingerprint, {}, lambda d, t: None, 0)
        shipments = shipments_of(source, batch)
        started = time.perf_counter()
        for shipment in shipments:
            writer.commit(1, shipment)
        seconds = time.perf_counter() - started
    items = sum(len(s.items) for s in shipments)
    row = {"run": f"writer (gallery of {base} first)", "items": items, "seconds": round(seconds, 2),
           "items_per_s": round(items / seconds, 2), "commits_per_s": round(len(shipments) / seconds, 2)}
    print(json.dumps(row), flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--identities", type=int, default=40)
    parser.add_argument("--images", type=int, default=5, help="images per identity (a quarter are sketches)")
    parser.add_argument("--checkpoint", default=None, help="checkpoint folder (default: the shipped one)")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--shard", type=int, default=64, help="images of the world per Ray work unit")
    parser.add_argument("--workers", default="1,2")
    parser.add_argument("--writer-base", type=int, default=10000)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    out = Path(tempfile.mkdtemp(prefix="bench-ingest-ray-"))
    try:
        world = out / "world"
        build_world(world, identities=args.identities, images_per_identity=args.images, seed=21, workers=1)
        options = IngestOptions(batch_size=args.batch)
        encoder = make_encoder(args.checkpoint)
        rows = [measured("plain", lambda: ingest(world, out / "plain", encoder, options=options),
                         lambda summary: summary.totals()["items_added"])]
        for count in (int(w) for w in args.workers.split(",")):
            rows.append(measured(f"ray-{count}", lambda count=count: ingest_on_ray(
                world, out / f"ray-{count}", partial(make_encoder, args.checkpoint), options=options, workers=count,
                world_shard=args.shard), lambda summary: summary.totals()["items_added"]))
        plain = Gallery.open(out / "plain")
        for row in rows[1:]:
            same = Gallery.open(out / row["run"]).ids == plain.ids
            row["same_items_in_order"] = same
            row["ratio"] = round(row["items_per_s"] / rows[0]["items_per_s"], 3)
            row["steady_ratio"] = round(row["steady_items_per_s"] / rows[0]["steady_items_per_s"], 3)
            print(f"{row['run']}: {row['ratio']}× plain end to end, {row['steady_ratio']}× steady; same items in "
                  f"the same order: {same}", flush=True)
        rows.append(writer_rate(plain, out, args.batch, 0))
        rows.append(writer_rate(plain, out, args.batch, args.writer_base))
        print(f"cores: {os.cpu_count()}")
        if args.json:
            args.json.write_text(json.dumps({"cores": os.cpu_count(), "rows": rows}, indent=1))
    finally:
        shutil.rmtree(out, ignore_errors=True)


if __name__ == "__main__":
    main()
