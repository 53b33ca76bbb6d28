"""What an ingest did, per source and in total (JSON-serialisable through ``to_dict``)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

COUNTS: tuple[str, ...] = ("frames", "detections", "small", "tracks", "items_added", "items_present")


@dataclass
class SourceReport:
    """One source. ``status``: ``ingested``, ``done before`` (a done marker exists) or ``skipped`` (``reason``).

    ``frames``: frames (or images) read; ``detections``: boxes the detector returned; ``small``: of those, boxes
    below the minimum height (dropped); ``tracks``: confirmed tracks; ``items_added``: new gallery items;
    ``items_present``: items already in the gallery (a resumed ingest)."""

    path: str
    kind: str
    camera: str | None = None
    status: str = "ingested"
    reason: str | None = None
    frames: int = 0
    detections: int = 0
    small: int = 0
    tracks: int = 0
    items_added: int = 0
    items_present: int = 0
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def items_kept(self) -> int:
        return self.items_added + self.items_present


@dataclass
class IngestSummary:
    gallery: str
    sources: list[SourceReport] = field(default_factory=list)
    skipped_files: list[tuple[str, str]] = field(default_factory=list)  # (path, reason) inside readable sources
    seconds: float = 0.0
    repairs: list[str] = field(default_factory=list)  # what an interrupted earlier ingest left and this one finished
    version: int | None = None  # the gallery version the ingest left (``engine.index.versions``)

    def totals(self) -> dict[str, int]:
        out = {name: sum(getattr(s, name) for s in self.sources) for name in COUNTS}
        out["sources_read"] = sum(s.status == "ingested" for s in self.sources)
        out["sources_done_before"] = sum(s.status == "done before" for s in self.sources)
        out["sources_skipped"] = sum(s.status == "skipped" for s in self.sources)
        out["files_skipped"] = len(self.skipped_files)
        out["items_kept"] = out["items_added"] + out["items_present"]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "gallery": self.gallery,
            "seconds": round(self.seconds, 3),
            "totals": self.totals(),
            "sources": [dict(asdict(s), items_kept=s.items_kept, seconds=round(s.seconds, 3)) for s in self.sources],
            "skipped_files": [{"path": p, "reason": r} for p, r in self.skipped_files],
            "repairs": list(self.repairs),
            "version": self.version,
        }

    def lines(self) -> list[str]:
        """A plain-text rendering for the command line."""
        t = self.totals()
        version = "" if self.version is None else f", now version {self.version}"
        out = [f"gallery {self.gallery}: {t['items_added']} items added, {t['items_present']} already there "
               f"({self.seconds:.1f} s{version})",
               f"sources: {t['sources_read']} read, {t['sources_done_before']} done before, "
               f"{t['sources_skipped']} skipped; frames {t['frames']}, detections {t['detections']} "
               f"({t['small']} too small), tracks {t['tracks']}, items kept {t['items_kept']}"]
        for s in self.sources:
            if s.status == "skipped":
                out.append(f"  skipped  {s.path}: {s.reason}")
                continue
            rate = f", {s.frames / s.seconds:.1f} frames/s" if s.seconds > 0 and s.status == "ingested" else ""
            out.append(f"  {s.status:<11} {s.kind:<6} {s.path} [{s.camera or '-'}]: frames {s.frames}, detections "
                       f"{s.detections}, tracks {s.tracks}, items {s.items_kept} ({s.items_added} new){rate}")
            out.extend(f"      note: {note}" for note in s.notes)
        out.extend(f"  skipped file {path}: {reason}" for path, reason in self.skipped_files)
        out.extend(f"  repaired: {repair}" for repair in self.repairs)
        return out
