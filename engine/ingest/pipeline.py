"""``ingest(source, gallery, encoder)``: sources → frames → detections → tracks → a few sharp crops per track →
vectors per view → gallery, in batches, with progress, resumable.

Two threads: a reader (``engine.ingest.reader``) decodes, detects, tracks, selects, writes crop files and
hands over batches of items (bounded queue); the caller's thread encodes each batch and appends it to the
gallery. So decoding and detection overlap with the model.

Each item records its source file and SHA-256, frame, time, camera, box (x, y, w, h in source pixels), track,
crop (content-addressed in the gallery) and crop SHA-256, resolution level from the crop height
(``engine.retrieval.encoding.resolution``) and modality; world items carry their identity and attributes as well. Each
batch's attribute evidence (pixels, the checkpoint's heads, and for footage and crops the shipped pretrained
attribute network, ``wants_attribute_network``) is computed and committed just before the batch itself
(``engine.retrieval.evidence.items.add_evidence``), so every committed item has its evidence: for
video, from the crop inside the detector's foreground silhouette (kept in the gallery, ``silhouettes/``, for
``gallery rebuild``) with a thumbnail of the frame for colour constancy. When the detector also finds carried
objects (``Detections.objects``), every observation of a track tallies the objects assigned to its box, and
the track's items get that tally as their ``"objects"`` evidence (``engine.perception.attributes.objects``).

Item ids are ``<first 16 hex of the file's SHA-256>-<16 hex of SHA-256(file sha, frame, track, box)>``:
reading a source again gives the same ids, so items already in the gallery are skipped before they are
encoded. A source's done marker (``engine.ingest.markers``) is written after its last batch is committed;
a killed ingest therefore leaves committed batches (the gallery's own commit point) and no marker for the
source it was in, and running it again finishes that source without duplicates.

An ingest holds the gallery's write lock (``engine.index.writer_lock``) for its whole run; a second writer
is refused. Before reading anything it finishes what an interrupted run left: indexes that lag behind the
committed vectors are written (``Gallery.catch_up``), and items without evidence (a gallery written before the
evidence came first) get it from their stored crops (``engine.retrieval.evidence.items.fill_missing_evidence``).
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from engine.index import Gallery, GalleryError
from engine.index.writer_lock import is_empty_folder, writing
from engine.ingest.appearance import appearance_choice, check_view_models, with_default_appearance
from engine.ingest.crops import (
    MIN_CROP_HEIGHT,
    MIN_CROP_WIDTH,
    discover_crops,
)
from engine.ingest.encoder import Encoder
from engine.ingest.errors import IngestError
from engine.ingest.markers import write_marker
from engine.ingest.options import IngestOptions
from engine.ingest.reader import Batch, SourceReader
from engine.ingest.sources import Discovery, discover
from engine.ingest.summary import IngestSummary
from engine.kernel.pause_points import pause_point
from engine.kernel.permissions import owner_only_umask
from engine.kernel.progress import ProgressFn, no_progress
from engine.kernel.timefmt import utc_stamp
from engine.perception.attributes.pretrained import AttributeNetwork
from engine.perception.detection.detectors import PersonDetector
from engine.retrieval.evidence.items import add_evidence, fill_missing_evidence, items_without_evidence
from engine.retrieval.evidence.ranking import DomainWeights


def open_gallery(root: str | Path, encoder: Encoder) -> Gallery:
    """The gallery at ``root`` (created for ``encoder``'s views when the folder is absent or empty), checked
    against the encoder's fingerprint and views."""
    root = Path(root)
    if is_empty_folder(root):
        return Gallery.create(root, encoder.views, encoder.fingerprint,
                              view_models=getattr(encoder, "view_models", None))
    gallery = Gallery.open(root, finish_changes=True)
    check_view_models(gallery, encoder)
    gallery.check_model(encoder.fingerprint, encoder.views)
    if set(gallery.views) != set(encoder.views):
        raise IngestError(f"gallery {root} holds views {sorted(gallery.views)}, the encoder gives "
                          f"{sorted(encoder.views)}; ingest into a new gallery folder")
    return gallery


_END = object()


def _in_background(events: Iterator, depth: int) -> Iterator:
    """Run the ``events`` generator in a daemon thread, ``depth`` events ahead; its errors re-raise here."""
    channel: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()

    def send(value) -> bool:
        while not stop.is_set():
            try:
                channel.put(value, timeout=0.1)
                return True
            except queue.Full:
                continue
        return False

    def run() -> None:
        try:
            for event in events:
                if not send(event):
                    return
            send(_END)
        except BaseException as exc:  # noqa: BLE001 - handed to the consuming thread, which re-raises it
            send(exc)

    reader = threading.Thread(target=run, name="lineup-ingest-reader", daemon=True)
    reader.start()
    try:
        while True:
            event = channel.get()
            if event is _END:
                return
            if isinstance(event, BaseException):
                raise event
            yield event
    finally:
        stop.set()
        reader.join(timeout=10)


def gallery_domain(source_kinds: set[str], recorded: str | None) -> str:
    """``world`` while every source ever ingested was a built world, else ``footage``."""
    return "world" if source_kinds <= {"world"} and recorded in (None, "world") else "footage"


@dataclass
class IngestRun:
    """What a way of reading the sources works with: the sources found, the gallery open under its write lock,
    the encoder (with its appearance view decided), the summary to fill, the attribute network loaded here (or
    None) and whether the items get that network's evidence at all (``pretrained``)."""

    found: Discovery
    store: Gallery
    encoder: Encoder
    summary: IngestSummary
    network: AttributeNetwork | None
    pretrained: bool


#: what an ingest reads: one path, or several (read in the order given, a source found twice read once)
SourcePaths = str | Path | Sequence[str | Path]


def source_list(source: SourcePaths) -> list[Path]:
    """The paths ``source`` names, in order."""
    return [Path(source)] if isinstance(source, str | Path) else [Path(path) for path in source]


def discover_sources(source: SourcePaths, options: IngestOptions) -> Discovery:
    """The sources under each of ``source``'s paths (crop folders with ``options.crops``), in the order given; a
    source two paths both hold is listed once."""
    paths = source_list(source)
    if not paths:
        raise IngestError("no source given: name a video, an image folder, a built world or a folder of them")
    found = Discovery([], [])
    seen: set[Path] = set()
    for path in paths:
        part = discover_crops(path, options.camera) if options.crops else \
            discover(path, options.camera, options.start)
        for item in part.sources:
            where = Path(item.path).resolve()
            if where not in seen:
                seen.add(where)
                found.sources.append(item)
        found.skipped.extend(part.skipped)
    return found


@owner_only_umask()
def ingest(source: SourcePaths, gallery: str | Path, encoder: Encoder, detector: PersonDetector | None = None,
           options: IngestOptions | None = None, progress: ProgressFn = no_progress,
           weights: DomainWeights | None = None) -> IngestSummary:
    """Ingest ``source`` (video, image folder, built world, or a folder of them; or several such paths) into the
    gallery folder ``gallery`` (created when absent) with ``encoder`` (``engine.ingest.encoder.ModelEncoder`` or any
    ``Encoder``); ``detector`` defaults to the shipped YOLOX-Nano (``engine.perception.detection.yolox``), with a
    background model for silhouettes on videos. ``options.crops``: ``source`` is a folder of person crops, one item per
    image, no detector (``engine.ingest.crops``). ``options.appearance`` picks the ``appearance`` view of a new
    gallery (``engine.ingest.appearance.with_default_appearance``: the shipped re-identification network for
    footage and crops under ``auto``). Unreadable sources and files are listed in the summary. With
    ``weights`` (the checkpoint's attribute weight per gallery domain) the gallery records its domain and that
    weight (``Gallery.record_ranking``), which its searches then use by default."""
    options = options or IngestOptions()

    def consume(run: IngestRun) -> None:
        _consume(run.found, run.store, run.encoder, detector, options, progress, run.summary, run.network)

    return run_ingest(source, gallery, encoder, options, consume, weights)


def run_ingest(source: SourcePaths, gallery: str | Path, encoder: Encoder, options: IngestOptions,
               consume: Callable[[IngestRun], None], weights: DomainWeights | None = None, *,
               network_here: bool = True) -> IngestSummary:
    """Everything of an ingest around ``consume``, which reads the sources into the gallery: finding the sources,
    the write lock, the gallery opened or created, the repairs of an interrupted run, the versions and the
    ranking recorded. ``network_here=False``: the attribute network is loaded in this process only when a repair
    needs it (the readers load their own, ``engine.ingest.cluster``)."""
    started = time.monotonic()
    found = discover_sources(source, options)
    with writing(gallery):
        kinds = {"crops"} if options.crops else {s.kind for s in found.sources}
        encoder = with_default_appearance(encoder, options.appearance, gallery, kinds)
        store = open_gallery(gallery, encoder)
        pretrained = wants_attribute_network(store, kinds, options)
        network = AttributeNetwork() if pretrained and (network_here or items_without_evidence(store)) else None
        summary = IngestSummary(str(store.root))
        summary.skipped_files.extend(found.skipped)
        _finish_interrupted(store, encoder, options, summary, network)
        store.record_version()  # what was there before (a gallery made before versions, a killed ingest's part)
        try:
            consume(IngestRun(found, store, encoder, summary, network if network_here else None, pretrained))
        except BaseException:
            with contextlib.suppress(GalleryError):  # the batches committed before the stop are a version too
                store.record_version([f"{path.resolve()} (stopped before its end)" for path in source_list(source)])
            raise
        if weights is not None:
            recorded = store.ranking
            domain = gallery_domain({s.kind for s in found.sources},
                                    None if recorded is None else recorded["domain"])
            store.record_ranking(domain, *weights.for_domain(domain), appearance=appearance_choice(store))
        summary.version = store.record_version([str(path.resolve()) for path in source_list(source)]).version
    summary.seconds = time.monotonic() - started
    if options.crops and not any(s.status == "done before" or s.items_kept for s in summary.sources):
        reasons = "; ".join(f"{path}: {reason}" for path, reason in summary.skipped_files[:3])
        named = ", ".join(str(path) for path in source_list(source))
        raise IngestError(f"crop folder {named} gave no person crop: no image could be decoded or none is at least "
                          f"{MIN_CROP_WIDTH}×{MIN_CROP_HEIGHT} px" + (f" ({reasons})" if reasons else ""))
    return summary


def wants_attribute_network(store: Gallery, kinds: set[str], options: IngestOptions) -> bool:
    """Whether this ingest's items get the pretrained attribute network's evidence (the ``pretrained`` source):
    when the gallery holds footage or crops (any source that is not a built world, now or before), not for
    rendered worlds, whose people the checkpoint's own heads were trained on; never when attributes are off."""
    if not options.attributes or not options.pretrained_attributes:
        return False
    recorded = store.ranking
    return gallery_domain(kinds, None if recorded is None else recorded["domain"]) == "footage"


def _finish_interrupted(store: Gallery, encoder: Encoder, options: IngestOptions, summary: IngestSummary,
                        network: AttributeNetwork | None = None) -> None:
    """Repair what an interrupted ingest left (see the module docstring); each repair is noted in the summary."""
    stale = store.catch_up()
    if stale:
        summary.repairs.append(f"wrote the indexes of views {stale}, which lagged behind the committed vectors")
    if options.attributes:
        filled = fill_missing_evidence(store, getattr(encoder, "model", None),
                                       model_fingerprint=getattr(encoder, "fingerprint", None), network=network)
        if filled:
            summary.repairs.append(f"computed the attribute evidence of {filled} items that had none, from their "
                                   f"stored crops (carried-objects evidence cannot be recovered)")


def _consume(found, store: Gallery, encoder: Encoder, detector: PersonDetector | None, options: IngestOptions,
             progress: ProgressFn, summary: IngestSummary, network: AttributeNetwork | None = None) -> None:
    """Encode and commit the reader's batches (evidence first, then items and vectors), and write each source's
    done marker once all its batches are committed."""
    reader = SourceReader(found.sources, store.root, set(store.ids), detector, options, summary, progress)
    source_started = time.monotonic()
    for event in _in_background(reader.events(), options.queue_depth):
        if isinstance(event, Batch):
            vectors = encoder(event.crops, [i.modality or "rgb" for i in event.items],
                              [i.resolution or "HR" for i in event.items])
            if options.attributes:  # before the items: a kill in between leaves evidence that the resumed run keeps
                add_evidence(store, event.items, event.crops, event.masks, event.scenes,
                             model=getattr(encoder, "model", None),
                             model_fingerprint=getattr(encoder, "fingerprint", None), objects=event.objects,
                             network=network)
                pause_point("ingest:evidence-written")
            added = store.add(event.items, vectors)
            pause_point("ingest:batch-added")
            event.report.items_added += added.added
            event.report.items_present += added.skipped
            continue
        if event.marker is not None:
            event.marker["items"] = event.report.items_kept
            event.marker["finished"] = utc_stamp()
            write_marker(store.root, event.key, event.marker)
        event.report.seconds = time.monotonic() - source_started
        source_started = time.monotonic()
        summary.sources.append(event.report)
