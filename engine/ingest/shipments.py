"""The writer's side of an ingest spread over workers (``engine.ingest.cluster``, docs/scaling.md): the one
process holding the gallery's write lock commits the workers' shipments (``engine.ingest.remote``) unit by
unit, in the order of the units, as an ingest in one process commits its batches: crops and silhouettes first,
then the attribute evidence, then the items with their vectors (the gallery's commit point), and a unit's done
marker once all its batches are committed. A built world's shards are reported as the one world they are, and
the world's own marker is written with its last shard's.

Items already in the gallery are skipped before anything of theirs is written, so a unit read again (a worker
lost half way, a killed ingest run again) adds no duplicate.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.index import Gallery
from engine.index import evidence_table as evidence_store
from engine.index.crops import put_silhouette
from engine.ingest.errors import IngestError
from engine.ingest.markers import write_marker
from engine.ingest.remote import Shipment, UnitEnd
from engine.ingest.summary import COUNTS, IngestSummary, SourceReport
from engine.ingest.units import WorkUnit, WorldShard
from engine.kernel.pause_points import pause_point
from engine.kernel.progress import ProgressFn
from engine.kernel.timefmt import utc_stamp


@dataclass
class _World:
    """The shards of one world seen so far: their reports and the settings their markers record."""

    reports: list[SourceReport] = field(default_factory=list)
    settings: Any = None
    whole: bool = True  # every shard read through or done before


def merged_report(reports: list[SourceReport]) -> SourceReport:
    """One report for the shards of a world: counts added up, a skipped shard makes the world skipped, all shards
    done before make it done before."""
    first = reports[0]
    merged = SourceReport(first.path, first.kind, first.camera)
    for report in reports:
        for name in COUNTS:
            setattr(merged, name, getattr(merged, name) + getattr(report, name))
        merged.seconds += report.seconds
        for note in report.notes:
            _add_note(merged.notes, note)
    skipped = [r for r in reports if r.status == "skipped"]
    if skipped:
        merged.status, merged.reason = "skipped", skipped[0].reason
    elif all(r.status == "done before" for r in reports):
        merged.status = "done before"
    return merged


def _add_note(notes: list[str], note: str) -> None:
    """Add a shard's note to the world's: a note that says a count (``"3 sketches left out: …"``) adds its count
    to the same note of an earlier shard; others are kept once."""
    count, _, rest = note.partition(" ")
    for i, earlier in enumerate(notes):
        before, _, tail = earlier.partition(" ")
        if count.isdigit() and before.isdigit() and tail == rest:
            notes[i] = f"{int(before) + int(count)} {rest}"
            return
        if earlier == note:
            return
    notes.append(note)


class ShipmentWriter:
    """Commits shipments into ``store`` and reports into ``summary``; ``markers``: the done markers found when the
    ingest started (a world's settings when its shards were all done before); ``total``: frames expected."""

    def __init__(self, store: Gallery, summary: IngestSummary, fingerprint: str | None,
                 markers: dict[str, dict[str, Any]], progress: ProgressFn, total: int) -> None:
        self.store = store
        self.summary = summary
        self.fingerprint = fingerprint
        self.markers = markers
        self.progress = progress
        self.done, self.total = 0, total
        self.added: dict[int, set[str]] = {}  # per unit, the ids it added in this run (a unit read twice)
        self.present: dict[int, int] = {}  # per unit, items found in the gallery at commit
        self.worlds: dict[int, _World] = {}
        self.started = time.monotonic()

    def _tick(self, frames: int) -> None:
        self.done += frames
        self.total = max(self.total, self.done)
        self.progress(self.done, self.total)

    def commit(self, index: int, shipment: Shipment) -> None:
        """Commit one batch of unit ``index``: its new items' crops, silhouettes, evidence, then items and vectors."""
        root = self.store.root
        added = self.added.setdefault(index, set())
        fresh = []
        for row, item in enumerate(shipment.items):
            if item.id not in self.store:
                fresh.append(row)
            elif item.id not in added:
                self.present[index] = self.present.get(index, 0) + 1
        items = [shipment.items[row] for row in fresh]
        for item in items:
            if item.crop is not None:
                data = shipment.crops.get(item.crop)
                if data is None:
                    raise IngestError(f"a worker shipped item {item.id} without its crop {item.crop}")
                relative, _ = self.store.put_crop(data, "." + item.crop.rsplit(".", 1)[-1])
                if relative != item.crop:
                    raise IngestError(f"item {item.id}: its crop bytes are stored as {relative}, not {item.crop}")
            if item.id in shipment.silhouettes:
                put_silhouette(root, item.id, shipment.silhouettes[item.id])
        if shipment.evidence is not None and items:
            evidence_store.append(root, [item.id for item in items], [shipment.evidence[row] for row in fresh],
                                  model_fingerprint=self.fingerprint)
        pause_point("ingest:evidence-written")
        if items:
            picked = np.asarray(fresh, dtype=np.int64)
            vectors = {view: np.asarray(array)[picked] for view, array in shipment.vectors.items()}
            report = self.store.add(items, vectors)
            added.update(item.id for item in items)
            self.present[index] = self.present.get(index, 0) + report.skipped
        pause_point("ingest:batch-added")
        self._tick(shipment.frames)

    def end(self, index: int, unit: WorkUnit, end: UnitEnd) -> None:
        """Unit ``index`` is committed: its report counted, its done marker written (a world's with its last shard)."""
        self._tick(end.frames)
        report = end.report
        report.items_added += len(self.added.pop(index, ()))
        report.items_present += self.present.pop(index, 0)
        report.seconds = time.monotonic() - self.started
        self.started = time.monotonic()
        self.summary.skipped_files.extend(end.skipped_files)
        shard = unit.source if isinstance(unit.source, WorldShard) else None
        if end.marker is not None:
            end.marker["items"] = report.items_kept
            end.marker["finished"] = utc_stamp()
            if shard is not None:
                end.marker.update(world=shard.world_key, images=[shard.start, shard.stop])
            write_marker(self.store.root, end.key, end.marker)
        if shard is None:
            self.summary.sources.append(report)
            return
        world = self.worlds.setdefault(unit.origin, _World())
        world.reports.append(report)
        recorded = end.marker or self.markers.get(shard.key)
        if recorded is None or report.status == "skipped":
            world.whole = False
        elif world.settings is None:
            world.settings = recorded.get("settings")
        if unit.part == unit.parts - 1:
            self._world_done(shard, self.worlds.pop(unit.origin))

    def _world_done(self, shard: WorldShard, world: _World) -> None:
        merged = merged_report(world.reports)
        self.summary.sources.append(merged)
        if world.whole:
            write_marker(self.store.root, shard.world_key, {
                "key": shard.world_key, "kind": "world", "path": merged.path, "camera": None,
                "settings": world.settings, "frames": merged.frames, "detections": merged.detections,
                "tracks": merged.tracks, "items": merged.items_kept, "notes": merged.notes,
                "shards": len(world.reports), "finished": utc_stamp()})
