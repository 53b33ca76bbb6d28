"""The worker side of an ingest spread over workers (``engine.ingest.cluster``, docs/scaling.md): a
``UnitWorker`` loads the networks once (checkpoint encoder, appearance network, detector, attribute network)
and turns work units (``engine.ingest.units``) into ``Shipment``s, one per batch: the items, their vectors per
view, their attribute evidence, and the bytes of their crops and silhouettes, which the gallery's one writer
commits. A unit ends with a ``UnitEnd`` (its report and, when it was read through, its done marker).

Nothing here writes to the gallery folder: a worker on another machine has none. The reading is the one of an
ingest in one process (``engine.ingest.reader.SourceReader``), so the items, ids and crops are the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from engine.index import GalleryItem
from engine.ingest.appearance import WithAppearance
from engine.ingest.encoder import Encoder
from engine.ingest.errors import IngestError
from engine.ingest.options import IngestOptions
from engine.ingest.reader import Batch, SourceReader
from engine.ingest.reader_files import HeldFiles
from engine.ingest.summary import IngestSummary, SourceReport
from engine.ingest.units import WorkUnit
from engine.perception.appearance.shipped import network_of_record
from engine.perception.appearance.views import APPEARANCE_GREY_VIEW, APPEARANCE_VIEW
from engine.perception.attributes.pretrained import AttributeNetwork
from engine.perception.detection.detectors import PersonDetector
from engine.retrieval.evidence.items import compute_evidence


@dataclass(frozen=True)
class EncoderPlan:
    """What the writer's encoder is, for a worker to build the same: its views, model fingerprint and the
    networks of its extra views (the appearance view the writer chose for the gallery)."""

    views: dict[str, int]
    fingerprint: str
    view_models: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def of(cls, encoder: Encoder) -> EncoderPlan:
        return cls(dict(encoder.views), encoder.fingerprint, dict(getattr(encoder, "view_models", None) or {}))

    def build(self, base: Encoder) -> Encoder:
        """``base`` (the encoder the worker's factory gives) with the appearance views of the plan; an
        ``IngestError`` when the result is not the writer's encoder."""
        encoder = base
        if APPEARANCE_VIEW in self.views:
            grey = APPEARANCE_GREY_VIEW in self.views
            if isinstance(base, WithAppearance):
                encoder = WithAppearance(base.encoder, base.network, grey=grey)
            else:
                network = network_of_record(self.view_models.get(APPEARANCE_VIEW))
                if network is None:
                    raise IngestError(f"the gallery's {APPEARANCE_VIEW!r} view was made by "
                                      f"{self.view_models.get(APPEARANCE_VIEW)}, which a worker cannot load by name")
                encoder = WithAppearance(base, network, grey=grey)
        elif isinstance(base, WithAppearance):
            encoder = base.encoder
        got = EncoderPlan.of(encoder)
        if got != self:
            raise IngestError(f"a worker's encoder (views {got.views}, model {got.fingerprint[:12]}) differs from the "
                              f"writer's (views {self.views}, model {self.fingerprint[:12]}): every worker needs the "
                              "same checkpoint and networks")
        return encoder


@dataclass
class Shipment:
    """One batch, ready to commit: items, vectors per view (row i for item i), evidence records (or None when
    attributes are off), crop bytes by relative name, silhouettes by item id, and frames read since the last
    message (progress)."""

    items: list[GalleryItem]
    vectors: dict[str, np.ndarray]
    evidence: list[dict[str, Any]] | None
    crops: dict[str, bytes]
    silhouettes: dict[str, np.ndarray]
    frames: int


@dataclass
class UnitEnd:
    """A unit read (or skipped, or done before): its report, its done marker when it was read through, the files
    skipped inside it and frames read since the last message."""

    report: SourceReport
    key: str | None
    marker: dict[str, Any] | None
    skipped_files: list[tuple[str, str]]
    frames: int


class SeenIds:
    """Item ids a reader skips: those in the gallery when the ingest started (sorted fixed-width bytes, shared by
    every worker) and those this reader gave already."""

    def __init__(self, present: np.ndarray) -> None:
        self.present = present
        self.added: set[str] = set()

    def __contains__(self, item_id: str) -> bool:
        if item_id in self.added:
            return True
        if not len(self.present):
            return False
        key = item_id.encode()
        at = int(np.searchsorted(self.present, key))
        return at < len(self.present) and self.present[at] == key

    def add(self, item_id: str) -> None:
        self.added.add(item_id)


def present_ids(ids: list[str]) -> np.ndarray:
    """The gallery's ids as ``SeenIds`` takes them."""
    return np.sort(np.asarray([i.encode() for i in ids], dtype=bytes)) if ids else np.zeros(0, dtype="S1")


class UnitWorker:
    """Reads work units into shipments with networks loaded once: ``make_encoder()`` gives the base encoder
    (``plan`` aligns it with the writer's), ``make_detector()`` the detector (None: the shipped defaults per kind
    of source, loaded on first use); ``pretrained``: items get the attribute network's evidence."""

    def __init__(self, make_encoder: Callable[[], Encoder], make_detector: Callable[[], PersonDetector] | None,
                 plan: EncoderPlan, options: IngestOptions, pretrained: bool) -> None:
        self.encoder = plan.build(make_encoder())
        self.detector = None if make_detector is None else make_detector()
        self.detectors: dict[str, PersonDetector] = {}
        self.options = options
        self.network = AttributeNetwork() if pretrained and options.attributes else None

    def read(self, unit: WorkUnit, present: np.ndarray, markers: Mapping[str, dict]) -> Iterator[Shipment | UnitEnd]:
        """The shipments of ``unit``, then its ``UnitEnd``; ``present``: ids to skip (``present_ids``);
        ``markers``: the gallery's done markers by key."""
        summary = IngestSummary("")
        files = HeldFiles(markers)
        read = [0]  # frames read so far (the reader reports its running count)

        def progress(done: int, total: int) -> None:
            read[0] = done

        reader = SourceReader([unit.source], files, SeenIds(present), self.detector, self.options, summary, progress,
                              detectors=self.detectors)
        before = 0
        for event in reader.events():
            done = read[0]
            if isinstance(event, Batch):
                crops, silhouettes = files.take(event.items)
                yield Shipment(event.items, dict(self._vectors(event)), self._evidence(event), crops, silhouettes,
                               done - before)
            else:
                yield UnitEnd(event.report, event.key, event.marker, list(summary.skipped_files), done - before)
                summary.skipped_files.clear()
            before = done

    def _vectors(self, batch: Batch) -> Mapping[str, np.ndarray]:
        return self.encoder(batch.crops, [i.modality or "rgb" for i in batch.items],
                            [i.resolution or "HR" for i in batch.items])

    def _evidence(self, batch: Batch) -> list[dict[str, Any]] | None:
        """The batch's attribute evidence as ``engine.retrieval.evidence.items.add_evidence`` computes it."""
        if not self.options.attributes:
            return None
        records = compute_evidence(batch.crops, batch.masks, batch.scenes, getattr(self.encoder, "model", None),
                                   modalities=[i.modality or "rgb" for i in batch.items],
                                   resolutions=[i.resolution or "HR" for i in batch.items], network=self.network)
        for i, record in enumerate(records):
            carried = None if batch.objects is None else batch.objects[i]
            if carried is not None:
                record["objects"] = carried.to_dict()
        return records
