"""What a case report says, collected as plain values from the case store and the galleries it used.

Qt-free: the renderers (``app.report.html``, ``app.report.pdf``) turn a ``ReportContent`` into a file. The
evidence list names every file the report rests on with its SHA-256 — each query image (sketch, IR) as the
case recorded it, each confirmed crop as its gallery recorded it at ingest (its file's hash when the gallery
has none) — and each gallery by the fingerprint the case recorded. Thumbnails are the report's own copies
(optionally face-blurred); the hashes are always those of the original files.
"""

from __future__ import annotations

import getpass
import importlib.metadata
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app.provenance import evidence_sources, view_network
from app.report.errors import ReportError
from app.report.galleries import GalleryLookup
from app.report.images import ReportImage, report_image
from app.report.text import audit_summary
from app.store import CaseStore
from app.store.state import CaseState, CaseSummary, StepState
from engine.hashing import sha256_file
from engine.resources import resource_path
from engine.step_schema import StepRecord, step_values

#: Written beside the resources at build time (``git rev-parse HEAD``); without it the report gives the version.
BUILD_COMMIT_FILE = "BUILD_COMMIT"
QUERY_IMAGE_SIDE = 240
THUMBNAIL_SIDE = 256
_READ_ATTEMPTS = 3
#: ``progress(done, total, message)`` of a report's making: ``total`` 0 when unknown; may raise to stop.
Progress = Callable[[int, int, str], None]


@dataclass(frozen=True)
class GalleryInfo:
    """A gallery the case searched. ``state``: "unchanged", "changed" (its fingerprint differs from the one
    the case recorded) or "unavailable" (cannot be opened: ``problem`` says why)."""

    id: int
    path: str
    fingerprint: str
    model_fingerprint: str
    item_count: int
    added_at: datetime
    state: str
    problem: str = ""
    #: view → the fingerprint of the network that made it (``Gallery.view_model``), as the gallery records it now
    networks: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: the attribute evidence sources it holds (``app.provenance.evidence_sources``; None: unreadable)
    evidence_sources: tuple[str, ...] | None = ()


@dataclass(frozen=True, kw_only=True)
class ChainStep(StepRecord):
    """One step of the active query chain: its fields (``engine.step_schema``) and where the report places it.
    ``number`` counts from 1 along the chain. ``cut_score`` is where the distribution plot draws the cut: the
    threshold of a threshold rule, else the lowest kept score. ``network``: the fingerprint of the network whose
    vectors the searched view holds, read from the gallery at export (``app.provenance.view_network``; None: the
    checkpoint's model); ``network_problem`` says why it is not known (the gallery cannot be opened)."""

    number: int
    step_id: int
    gallery_id: int
    histogram: dict[str, Any]
    cut_score: float | None
    sketch_sha256: str | None
    ir_sha256: str | None
    created_at: datetime
    network: Mapping[str, Any] | None = None
    network_problem: str = ""


@dataclass(frozen=True)
class QueryImage:
    """A sketch or IR still kept with the case. ``steps``: the chain numbers of the steps that used it (empty
    when only steps off the active chain did). ``image`` is None when the file is missing or unreadable;
    ``intact`` says whether the stored file still has its recorded SHA-256."""

    evidence_id: int
    kind: str
    steps: tuple[int, ...]
    sha256: str
    stored_path: str
    original_path: str | None
    image: ReportImage | None
    intact: bool


@dataclass(frozen=True)
class ConfirmedResult:
    """A confirmed item; ``score`` is its score at the last chain step that kept it (``score_step``)."""

    gallery_id: int
    item_id: str
    camera: str | None
    time: float | None
    score: float | None
    score_step: int | None
    note: str | None
    marked_at: datetime
    crop_path: str | None
    crop_sha256: str | None
    thumbnail: ReportImage | None


@dataclass(frozen=True)
class NoteLine:
    at: datetime
    text: str
    about: str


@dataclass(frozen=True)
class EvidenceEntry:
    """One piece of evidence: kind "sketch", "ir", "query image", "crop" (a confirmed item's crop file) or
    "gallery" (``path`` the folder, ``sha256`` the gallery fingerprint the case recorded)."""

    kind: str
    label: str
    path: str
    sha256: str


@dataclass(frozen=True)
class AuditLine:
    seq: int
    at: str
    actor: str
    action: str
    summary: str
    hash: str


@dataclass(frozen=True)
class ReportContent:
    db_path: str
    exported_at: datetime
    blur_faces: bool
    case: CaseSummary  # the case as read with the rest
    galleries: tuple[GalleryInfo, ...]
    chain: tuple[ChainStep, ...]
    steps_off_chain: int
    query_images: tuple[QueryImage, ...]
    confirmed: tuple[ConfirmedResult, ...]
    rejected_count: int
    notes: tuple[NoteLine, ...]
    evidence: tuple[EvidenceEntry, ...]
    audit: tuple[AuditLine, ...]
    audit_first_hash: str
    chain_problems: tuple[str, ...]
    warnings: tuple[str, ...]
    #: the case's steps, marks and notes as canonical records (``CaseStore.content_records``), read with the rest
    records: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    software: str = ""
    examiner: str = ""  # who created the case (its first audit entry), else the OS user
    exported_by: str = ""  # the OS user who made the report
    signing_fingerprint: str = ""  # set by the exporter: the key that signs the manifest

    @property
    def audit_head(self) -> AuditLine:
        return self.audit[-1]

    @property
    def chain_ok(self) -> bool:
        return not self.chain_problems


def _read_consistent(store: CaseStore, case_id: int):
    """The case, its trail and its check read so that they describe the same moment (an action landing
    between the reads makes the audit heads disagree; then they are read again)."""
    for _ in range(_READ_ATTEMPTS):
        state = store.load_case(case_id)
        trail = store.audit_trail(case_id)
        check = store.verify_chain(case_id)
        head, records = store.content_records(case_id)
        if not trail:
            raise ReportError(f"case {case_id} has no audit entries: its database was altered outside Lineup")
        if trail[-1].hash == state.audit_head == check.head_hash == head:
            return state, trail, check, records
    raise ReportError(f"case {case_id} kept changing while its report was collected; try again")


def _cut_score(step: StepState) -> float | None:
    if step.keep_rule == "threshold":
        return float(step.keep_value)
    return float(min(step.kept_scores)) if step.kept_scores else None


def _chain_step(number: int, step: StepState, paths: Mapping[int, str], galleries: GalleryLookup) -> ChainStep:
    path = paths.get(step.gallery_id)
    gallery = None if path is None else galleries.gallery(path)
    problem = "" if gallery is not None else f"gallery {path} cannot be opened: {galleries.problem(path or '')}"
    return ChainStep(
        **step_values(step, ChainStep), number=number, step_id=step.id, gallery_id=step.gallery_id,
        histogram=dict(step.histogram), cut_score=_cut_score(step),
        sketch_sha256=None if step.sketch is None else step.sketch.sha256,
        ir_sha256=None if step.ir is None else step.ir.sha256, created_at=step.created_at,
        network=view_network(gallery, step.view), network_problem=problem)


def _query_images(state: CaseState, numbers: dict[int, int], warnings: list[str]) -> list[QueryImage]:
    images = []
    for evidence in state.evidence:
        kinds, used = set(), set()
        for step in state.steps:
            for kind, ref in (("sketch", step.sketch), ("ir", step.ir)):
                if ref is not None and ref.id == evidence.id:
                    kinds.add(kind)
                    if step.id in numbers:
                        used.add(numbers[step.id])
        kind = kinds.pop() if len(kinds) == 1 else "query image"
        path = Path(evidence.stored_path)
        image, intact = None, False
        if not path.is_file():
            warnings.append(f"{kind} evidence file {path} is missing")
        else:
            intact = sha256_file(path) == evidence.sha256
            if not intact:
                warnings.append(f"{kind} evidence file {path} does not match its recorded SHA-256")
            try:
                image = report_image(path, max_side=QUERY_IMAGE_SIDE)
            except ReportError as exc:
                warnings.append(str(exc))
        images.append(QueryImage(evidence.id, kind, tuple(sorted(used)), evidence.sha256, str(path),
                                 evidence.original_path, image, intact))
    return images


def _confirmed(state: CaseState, chain: list[StepState], numbers: dict[int, int], galleries: GalleryLookup,
               blur_faces: bool, warnings: list[str], progress: Progress) -> list[ConfirmedResult]:
    paths = {g.id: g.path for g in state.galleries}
    kept = [(numbers[step.id], dict(zip(step.kept_ids, step.kept_scores, strict=True))) for step in chain]
    results = []
    total = len(state.confirmed)
    doing = "Blurring faces in" if blur_faces else "Copying"
    for done, mark in enumerate(state.confirmed):
        progress(done, total, f"{doing} thumbnail {done + 1} of {total}")
        score, score_step = None, None
        for number, scores in reversed(kept):
            if mark.item_id in scores:
                score, score_step = scores[mark.item_id], number
                break
        item, why = galleries.item(paths[mark.gallery_id], mark.item_id)
        camera = time = crop = crop_sha = thumbnail = None
        if item is None:
            warnings.append(f"confirmed item {mark.item_id}: {why}")
        else:
            camera, time = item.camera, item.time
            path = galleries.crop_file(paths[mark.gallery_id], item)
            if path is None:
                warnings.append(f"confirmed item {mark.item_id} has no crop image in its gallery")
            elif not path.is_file():
                warnings.append(f"confirmed item {mark.item_id}: crop file {path} is missing")
            else:
                crop, actual = str(path), sha256_file(path)
                crop_sha = item.crop_sha256 or actual
                if actual != crop_sha:
                    warnings.append(f"confirmed item {mark.item_id}: crop file {path} does not match the SHA-256 "
                                    f"its gallery recorded at ingest")
                try:
                    thumbnail = report_image(path, blur=blur_faces, max_side=THUMBNAIL_SIDE)
                except ReportError as exc:
                    warnings.append(str(exc))
        results.append(ConfirmedResult(mark.gallery_id, mark.item_id, camera, time, score, score_step, mark.note,
                                       mark.at, crop, crop_sha, thumbnail))
    return results


def _note_about(note, numbers: dict[int, int], seqs: dict[int, int]) -> str:
    if note.item_id is not None:
        return f"item {note.item_id}"
    if note.step_id is not None:
        if note.step_id in numbers:
            return f"step {numbers[note.step_id]}"
        return f"step #{seqs.get(note.step_id, note.step_id)} (off the active chain)"
    return "case"


def no_progress(_done: int, _total: int, _message: str) -> None:
    """A ``Progress`` that ignores what it hears."""


def collect_content(store: CaseStore, case_id: int, *, blur_faces: bool = False,
                    exported_at: datetime | None = None, progress: Progress | None = None) -> ReportContent:
    """Everything the report of case ``case_id`` shows, read from ``store`` and the case's galleries.
    ``progress(done, total, message)`` hears each confirmed result's thumbnail (the slow part when faces are
    blurred: a face detector runs on each) and may raise to stop."""
    state, trail, check, records = _read_consistent(store, case_id)
    warnings: list[str] = []
    galleries = GalleryLookup()
    gallery_infos = []
    for use in state.galleries:
        current = galleries.fingerprint(use.path)
        if current is None:
            status, problem = "unavailable", galleries.problem(use.path)
            warnings.append(f"gallery {use.path} cannot be opened: {problem}")
        elif current != use.gallery_fingerprint:
            status, problem = "changed", "its items differ from when the case used it"
            warnings.append(f"gallery {use.path} has changed since the case used it (fingerprint differs)")
        else:
            status, problem = "unchanged", ""
        opened = galleries.gallery(use.path)
        networks = {} if opened is None else {view: model for view in opened.views
                                              if (model := opened.view_model(view)) is not None}
        sources = evidence_sources(use.path) if opened is not None else None
        gallery_infos.append(GalleryInfo(use.id, use.path, use.gallery_fingerprint, use.model_fingerprint,
                                         use.item_count, use.added_at, status, problem, networks, sources))

    chain_states = list(state.active_steps)
    numbers = {step.id: number for number, step in enumerate(chain_states, start=1)}
    seqs = {step.id: step.seq for step in state.steps}
    paths = {use.id: use.path for use in state.galleries}
    chain = tuple(_chain_step(numbers[step.id], step, paths, galleries) for step in chain_states)
    query_images = _query_images(state, numbers, warnings)
    confirmed = _confirmed(state, chain_states, numbers, galleries, blur_faces, warnings, progress or no_progress)

    evidence = [EvidenceEntry(image.kind, f"evidence #{image.evidence_id}"
                              + (f", step {', '.join(map(str, image.steps))}" if image.steps else ", off the chain"),
                              image.stored_path, image.sha256) for image in query_images]
    evidence += [EvidenceEntry("crop", f"item {result.item_id}", result.crop_path, result.crop_sha256)
                 for result in confirmed if result.crop_path is not None]
    evidence += [EvidenceEntry("gallery", f"gallery {info.id} fingerprint", info.path, info.fingerprint)
                 for info in gallery_infos]
    notes = tuple(NoteLine(n.at, n.text, _note_about(n, numbers, seqs)) for n in state.notes)
    audit = tuple(AuditLine(e.seq, e.at, e.actor, e.action, audit_summary(e.action, e.payload), e.hash)
                  for e in trail)
    return ReportContent(
        db_path=str(store.path), exported_at=exported_at or datetime.now(UTC), blur_faces=bool(blur_faces),
        case=state.case,
        galleries=tuple(gallery_infos), chain=chain, steps_off_chain=len(state.steps) - len(chain),
        query_images=tuple(query_images), confirmed=tuple(confirmed), rejected_count=len(state.rejected),
        notes=notes, evidence=tuple(evidence), audit=audit, audit_first_hash=trail[0].hash,
        chain_problems=tuple(check.problems), warnings=tuple(warnings), records=records,
        software=software_version(), examiner=trail[0].actor or _os_user(), exported_by=_os_user())


def _os_user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def software_version() -> str:
    """``Lineup <version> (commit <sha>)``; the commit is the one recorded at build time, when there is one."""
    try:
        version = importlib.metadata.version("lineup")
    except importlib.metadata.PackageNotFoundError:
        version = "unknown version"
    try:
        commit = resource_path(BUILD_COMMIT_FILE).read_text(encoding="utf-8").strip()
    except (OSError, ValueError):
        commit = ""
    return f"Lineup {version}" + (f" (commit {commit[:40]})" if commit else " (no commit recorded in this build)")
