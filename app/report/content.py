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

from app.case_tree import query_summary
from app.provenance import evidence_sources, view_network
from app.report.errors import ReportError
from app.report.galleries import GalleryLookup
from app.report.images import ReportImage, report_image
from app.report.ranking_sources import Calibration, StepRanking, calibration, footage_rankings
from app.report.sightings import ConfirmedItem, ReportSighting, report_sightings
from app.report.text import audit_summary
from app.report.tree import tree_rows
from app.store import CaseStore
from app.store.state import CaseState, CaseSummary, MarkState, StepState
from engine.kernel.hashing import sha256_file
from engine.kernel.resources import resource_path
from engine.kernel.step_schema import StepRecord, step_values

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
    version: int | None = None  # the gallery version the case searched (None: not recorded)
    #: the ranking settings the gallery records now (``Gallery.ranking``: domain, attribute_weight, origin)
    ranking: Mapping[str, Any] | None = None


@dataclass(frozen=True, kw_only=True)
class ChainStep(StepRecord):
    """One step of the case's step tree: its fields (``engine.kernel.step_schema``) and where the report places it.
    ``label`` is the app timeline's ("3", "3a": ``app.case_tree.step_labels``), ``number`` the step's
    depth + 1 (its place along its branch), ``lane`` how many branches in it lies, ``branch_of`` the label of the
    step a branch's first step continues from ("0": the start). ``active``: on the current branch (from the start
    to the head); ``head``: the step the next search continues from; ``undone_at``: when it was undone.
    ``cut_score`` is where the distribution plot draws the cut: the threshold of a threshold rule, else the
    lowest kept score. ``network``: the fingerprint of the network whose vectors the searched view holds, read
    from the gallery at export (``app.provenance.view_network``; None: the checkpoint's model);
    ``network_problem`` says why it is not known (the gallery cannot be opened). ``question``: the witness question
    the app suggested before the step and the answer clicked (``app.store.state.StepInput.question``)."""

    number: int
    step_id: int
    label: str = ""
    seq: int = 0
    lane: int = 0
    branch_of: str | None = None
    active: bool = True
    head: bool = False
    undone_at: datetime | None = None
    summary: str = ""  # the query in one line, as the timeline shows it
    gallery_id: int
    histogram: dict[str, Any]
    cut_score: float | None
    sketch_sha256: str | None
    ir_sha256: str | None
    created_at: datetime
    network: Mapping[str, Any] | None = None
    network_problem: str = ""
    question: Mapping[str, Any] | None = None  # the witness question before the step and its answer (StepState)

    @property
    def undone(self) -> bool:
        return self.undone_at is not None


@dataclass(frozen=True)
class QueryImage:
    """A sketch or IR still kept with the case. ``steps``: the labels of the steps that used it (on any
    branch, undone or not). ``image`` is None when the file is missing or unreadable;
    ``intact`` says whether the stored file still has its recorded SHA-256."""

    evidence_id: int
    kind: str
    steps: tuple[str, ...]
    sha256: str
    stored_path: str
    original_path: str | None
    image: ReportImage | None
    intact: bool


@dataclass(frozen=True)
class MarkedResult:
    """A confirmed or rejected item as the examiner marked it. ``step_id``/``step_label``/``step_query``: the
    step on screen when it was marked; ``score`` and ``rank`` (1 = best, of ``kept`` items): the item's there,
    as recorded with the mark (None when not recorded: marks made before they were kept, outside a step, or of
    an item that step did not keep; never taken from another step). ``examiner``: who marked it (the mark's
    record, else its audit entry: ``examiner_from_audit``), ``marked_at`` when. ``source``, ``frame``,
    ``camera``, ``time``: the item's footage file, frame, camera and capture time as its gallery records them.
    A confirmed item carries its crop file, SHA-256 and thumbnail; a rejected one none."""

    state: str
    gallery_id: int
    item_id: str
    camera: str | None
    time: float | None
    source: str | None
    frame: int | None
    note: str | None
    marked_at: datetime
    step_id: int | None
    step_label: str | None
    step_query: str | None
    step_undone: bool
    score: float | None
    rank: int | None
    kept: int | None
    examiner: str | None
    examiner_from_audit: bool
    crop_path: str | None = None
    crop_sha256: str | None = None
    thumbnail: ReportImage | None = None

    @property
    def recorded(self) -> bool:
        """Whether the mark records the step it was made at."""
        return self.step_id is not None


@dataclass(frozen=True)
class NoteLine:
    at: datetime
    text: str
    about: str
    edited_at: datetime | None = None


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
    steps: tuple[ChainStep, ...]  # every step of the tree, in the timeline's order
    query_images: tuple[QueryImage, ...]
    confirmed: tuple[MarkedResult, ...]
    rejected: tuple[MarkedResult, ...]
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
    exported_by: str = ""  # the OS user who made the report ("" unless the examiner asked: ``show_paths``)
    #: paths and the OS user are printed in full only when the examiner asks; otherwise a path inside the case
    #: folder (the database's folder) reads relative to it and one outside it by its last two parts
    show_paths: bool = False
    signing_fingerprint: str = ""  # set by the exporter: the key that signs the manifest
    #: step id → what ranked it, for steps on footage galleries (``app.report.ranking_sources``)
    rankings: Mapping[int, StepRanking] = field(default_factory=dict)
    calibration: Calibration | None = None  # where the footage reliabilities were measured
    #: the confirmed items as sightings, in time order (``app.report.sightings``)
    sightings: tuple[ReportSighting, ...] = ()

    @property
    def case_dir(self) -> Path:
        """The case folder: the folder of the case database (its evidence folder lies beside it)."""
        return Path(self.db_path).parent

    def shown(self, path: str | Path | None) -> str:
        """``path`` as the report prints it (see ``show_paths``)."""
        if path is None:
            return "—"
        if self.show_paths:
            return str(path)
        return display_path(path, self.case_dir)

    @property
    def chain(self) -> tuple[ChainStep, ...]:
        """The current branch, first step → head."""
        return tuple(step for step in self.steps if step.active)

    @property
    def steps_off_chain(self) -> int:
        return len(self.steps) - len(self.chain)

    @property
    def rejected_count(self) -> int:
        return len(self.rejected)

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


def _tree(state: CaseState, paths: Mapping[int, str], galleries: GalleryLookup) -> list[ChainStep]:
    """Every step, in the timeline's order (``app.report.tree``), with its label and place."""
    out = []
    for row in tree_rows(state):
        step = row.step
        path = paths.get(step.gallery_id)
        gallery = None if path is None else galleries.gallery(path)
        problem = "" if gallery is not None else f"gallery {path} cannot be opened: {galleries.problem(path or '')}"
        out.append(ChainStep(
            **step_values(step, ChainStep), number=step.depth + 1, step_id=step.id, label=row.label, seq=step.seq,
            lane=row.lane, branch_of=row.branch_of, active=row.active and not step.undone, head=row.head,
            undone_at=step.undone_at, summary=query_summary(step, limit=80), gallery_id=step.gallery_id,
            histogram=dict(step.histogram), cut_score=_cut_score(step),
            sketch_sha256=None if step.sketch is None else step.sketch.sha256,
            ir_sha256=None if step.ir is None else step.ir.sha256, created_at=step.created_at,
            network=view_network(gallery, step.view), network_problem=problem, question=step.question))
    return out


def _query_images(state: CaseState, labels: Mapping[int, str], warnings: list[str]) -> list[QueryImage]:
    images = []
    for evidence in state.evidence:
        kinds, used = set(), []
        for step in state.steps:
            for kind, ref in (("sketch", step.sketch), ("ir", step.ir)):
                if ref is not None and ref.id == evidence.id:
                    kinds.add(kind)
                    if labels[step.id] not in used:
                        used.append(labels[step.id])
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
        images.append(QueryImage(evidence.id, kind, tuple(used), evidence.sha256, str(path),
                                 evidence.original_path, image, intact))
    return images


def _audit_examiners(trail) -> dict[tuple[int, str], str]:
    """(gallery id, item id) → the actor of the newest audit entry that marked it."""
    out: dict[tuple[int, str], str] = {}
    for entry in trail:
        if entry.action == "mark" and isinstance(entry.payload, Mapping):
            try:
                out[(int(entry.payload["gallery"]), str(entry.payload["item"]))] = entry.actor
            except (KeyError, TypeError, ValueError):
                continue
    return out


def _marked(mark: MarkState, state: CaseState, steps: Mapping[int, ChainStep], galleries: GalleryLookup,
            examiners: Mapping[tuple[int, str], str], blur_faces: bool, warnings: list[str]) -> MarkedResult:
    paths = {g.id: g.path for g in state.galleries}
    step = None if mark.step_id is None else steps.get(mark.step_id)
    examiner, from_audit = mark.actor, False
    if not examiner:
        examiner = examiners.get((mark.gallery_id, mark.item_id))
        from_audit = examiner is not None
    item, why = galleries.item(paths[mark.gallery_id], mark.item_id)
    camera = time = source = frame = crop = crop_sha = thumbnail = None
    confirmed = mark.state == "confirmed"
    if item is None:
        warnings.append(f"{mark.state} item {mark.item_id}: {why}")
    else:
        camera, time, source, frame = item.camera, item.time, item.source, item.frame
    if item is not None and confirmed:
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
    return MarkedResult(
        state=mark.state, gallery_id=mark.gallery_id, item_id=mark.item_id, camera=camera, time=time,
        source=source, frame=frame, note=mark.note, marked_at=mark.at, step_id=mark.step_id,
        step_label=None if step is None else step.label, step_query=None if step is None else step.summary,
        step_undone=step is not None and step.undone, score=mark.score, rank=mark.rank,
        kept=None if step is None else step.candidates_after, examiner=examiner or None,
        examiner_from_audit=from_audit, crop_path=crop, crop_sha256=crop_sha, thumbnail=thumbnail)


def _note_about(note, labels: Mapping[int, str]) -> str:
    if note.item_id is not None:
        return f"item {note.item_id}"
    if note.step_id is not None:
        return f"step {labels.get(note.step_id, note.step_id)}"
    return "case"


def no_progress(_done: int, _total: int, _message: str) -> None:
    """A ``Progress`` that ignores what it hears."""


def collect_content(store: CaseStore, case_id: int, *, blur_faces: bool = False,
                    exported_at: datetime | None = None, progress: Progress | None = None,
                    show_paths: bool = False) -> ReportContent:
    """Everything the report of case ``case_id`` shows, read from ``store`` and the case's galleries
    (``show_paths``: print full paths and the OS user; see ``ReportContent.show_paths``).
    ``progress(done, total, message)`` hears each confirmed result's thumbnail (the slow part when faces are
    blurred: a face detector runs on each) and may raise to stop."""
    progress = progress or no_progress
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
                                         use.item_count, use.added_at, status, problem, networks, sources,
                                         use.version, None if opened is None else opened.ranking))

    paths = {use.id: use.path for use in state.galleries}
    progress(0, 0, f"Laying out {len(state.steps):,} steps")
    steps = _tree(state, paths, galleries)
    by_id = {step.step_id: step for step in steps}
    labels = {step.step_id: step.label for step in steps}
    query_images = _query_images(state, labels, warnings)
    rankings, problems = footage_rankings(steps, paths, {g.id: g.ranking for g in gallery_infos})
    warnings += problems
    examiners = _audit_examiners(trail)
    confirmed = []
    total = len(state.confirmed)
    doing = "Blurring faces in" if blur_faces else "Copying"
    for done, mark in enumerate(state.confirmed):
        progress(done, total, f"{doing} thumbnail {done + 1} of {total}")
        confirmed.append(_marked(mark, state, by_id, galleries, examiners, blur_faces, warnings))
    rejected = [_marked(mark, state, by_id, galleries, examiners, False, warnings) for mark in state.rejected]
    sightings = report_sightings(ConfirmedItem(r.gallery_id, item, r.score, r.thumbnail) for r in confirmed
                                 if (item := galleries.item(paths[r.gallery_id], r.item_id)[0]) is not None)

    evidence = [EvidenceEntry(image.kind, f"evidence #{image.evidence_id}"
                              + (f", step {', '.join(image.steps)}" if image.steps else ", no step"),
                              image.stored_path, image.sha256) for image in query_images]
    evidence += [EvidenceEntry("crop", f"item {result.item_id}", result.crop_path, result.crop_sha256)
                 for result in confirmed if result.crop_path is not None]
    evidence += [EvidenceEntry("gallery", f"gallery {info.id} fingerprint", info.path, info.fingerprint)
                 for info in gallery_infos]
    notes = tuple(NoteLine(n.at, n.text, _note_about(n, labels), n.edited_at) for n in state.notes)
    audit = tuple(AuditLine(e.seq, e.at, e.actor, e.action, audit_summary(e.action, e.payload, labels), e.hash)
                  for e in trail)
    return ReportContent(
        db_path=str(store.path), exported_at=exported_at or datetime.now(UTC), blur_faces=bool(blur_faces),
        case=state.case, galleries=tuple(gallery_infos), steps=tuple(steps), query_images=tuple(query_images),
        confirmed=tuple(confirmed), rejected=tuple(rejected), notes=notes, evidence=tuple(evidence), audit=audit,
        audit_first_hash=trail[0].hash, chain_problems=tuple(check.problems), warnings=tuple(warnings),
        records=records, software=software_version(), examiner=trail[0].actor or _os_user(),
        exported_by=_os_user() if show_paths else "", show_paths=show_paths, rankings=rankings,
        calibration=calibration() if rankings else None, sightings=sightings)


def relative_to_case(path: str | Path, case_dir: Path) -> str | None:
    """``path`` relative to the case folder (POSIX separators), or None when it lies outside it."""
    try:
        return Path(path).absolute().relative_to(case_dir.absolute()).as_posix()
    except ValueError:
        return None


def display_path(path: str | Path, case_dir: Path) -> str:
    """A path without the examiner's folders: relative to the case folder, else ``…/parent/name``."""
    inside = relative_to_case(path, case_dir)
    if inside is not None:
        return inside
    parts = Path(path).parts
    return "…/" + "/".join(parts[-2:]) if len(parts) > 2 else str(path)


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
