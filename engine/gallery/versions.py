"""Gallery versions (docs/architecture.md, "Gallery versions"): items are only ever appended, so a version is the
first n items of the gallery, named by a number and identified by its fingerprint.

A version's fingerprint is SHA-256 over the model fingerprint, the views and the first n item ids in row order
(``fingerprint``): equal for the same items embedded by the same model, different after any add or remove. A
case records the fingerprint and the item count of the version it searched, so a gallery that has grown since
still answers for that version: its first n items (``find``).

``gallery.json`` lists the versions recorded so far (``"versions"``: {version, items, fingerprint, added_at,
sources}); an ingest records one when it starts (what was there before, when unrecorded) and one when it ends.
A gallery without the list (made before versions were recorded), or whose items outgrew the last recorded
version (items added outside an ingest, an ingest killed before its end), has one implied version more,
covering every item. Removing items rewrites the rows: every version past the first removed row is retired
(it can no longer be searched) and the new state is recorded.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.gallery.errors import GalleryCorruptError

VERSIONS_KEY = "versions"


@dataclass(frozen=True)
class GalleryVersion:
    """One version of a gallery: its number, how many items (the first ``items`` rows), its fingerprint, when
    it was made and from which sources. ``recorded``: False for the implied version (not yet in
    ``gallery.json``); ``retired``: why it can no longer be searched (None while it can)."""

    version: int  # 1, 2, …; 0: found by its first rows only (see ``find``)
    items: int
    fingerprint: str
    added_at: str | None
    sources: tuple[str, ...]
    recorded: bool = True
    retired: str | None = None

    def label(self) -> str:
        """ "gallery v2, 1,240 items" ("gallery, first 1,000 items" for a version 0: one found by its first
        rows only, in a gallery that grew before versions were recorded)."""
        if self.version == 0:
            return f"gallery, first {self.items:,} items"
        return f"gallery v{self.version}, {self.items:,} items"

    def to_dict(self) -> dict[str, Any]:
        out = {"version": self.version, "items": self.items, "fingerprint": self.fingerprint,
               "added_at": self.added_at, "sources": list(self.sources)}
        if self.retired is not None:
            out["retired"] = self.retired
        return out


def fingerprint(model_fingerprint: str, views: Mapping[str, int], ids: Iterable[str]) -> str:
    """SHA-256 over the model fingerprint, the views (name → dimension) and the item ids in row order."""
    head = json.dumps({"model": model_fingerprint, "views": dict(views)}, sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)
    digest = hashlib.sha256(head.encode("utf-8"))
    for item_id in ids:
        digest.update(b"\n" + item_id.encode("utf-8"))
    return digest.hexdigest()


def _views(meta: Mapping[str, Any]) -> dict[str, int]:
    return {name: entry["dim"] for name, entry in meta["views"].items()}


def meta_fingerprint(meta: Mapping[str, Any], ids: Sequence[str], items: int | None = None) -> str:
    """The fingerprint of the first ``items`` ids (all of them when None) under ``meta``'s model and views."""
    return fingerprint(meta["model_fingerprint"], _views(meta), ids if items is None else ids[:items])


def _entry(raw: Any, path_hint: str) -> GalleryVersion:
    try:
        version, items, digest = raw["version"], raw["items"], raw["fingerprint"]
        sources = tuple(str(s) for s in raw.get("sources") or ())
    except (TypeError, KeyError) as exc:
        raise GalleryCorruptError(f"{path_hint}: a version entry lacks {exc}") from None
    if not (isinstance(version, int) and isinstance(items, int) and isinstance(digest, str)) \
            or isinstance(version, bool) or isinstance(items, bool) or version < 1 or items < 0:
        raise GalleryCorruptError(f"{path_hint}: version entry {json.dumps(raw)[:80]} is not "
                                  "{version ≥ 1, items ≥ 0, fingerprint}")
    retired = raw.get("retired")
    return GalleryVersion(version, items, digest, raw.get("added_at"), sources,
                          retired=None if retired is None else str(retired))


def recorded(meta: Mapping[str, Any], path_hint: str = "gallery.json") -> list[GalleryVersion]:
    """The versions ``meta`` records, oldest first."""
    raw = meta.get(VERSIONS_KEY)
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise GalleryCorruptError(f"{path_hint}: field {VERSIONS_KEY!r} must be a list")
    return [_entry(entry, path_hint) for entry in raw]


def listed(meta: Mapping[str, Any], ids: Sequence[str]) -> tuple[GalleryVersion, ...]:
    """Every version: the recorded ones and, when the committed items are not the last recorded version, the
    implied one covering them all (always at least one version, the current one last)."""
    versions = recorded(meta)
    count = int(meta["count"])
    current = meta_fingerprint(meta, ids, count)
    if versions and versions[-1].fingerprint == current and versions[-1].items == count:
        return tuple(versions)
    number = versions[-1].version + 1 if versions else 1
    implied = GalleryVersion(number, count, current, meta.get("updated") or meta.get("created"), (),
                             recorded=False)
    return (*versions, implied)


def with_current(meta: dict[str, Any], ids: Sequence[str], sources: Sequence[str], at: str) -> dict[str, Any]:
    """``meta`` with its current items recorded as a version (unchanged when the last recorded version already
    is the current state; an empty gallery records none)."""
    versions = recorded(meta)
    count = int(meta["count"])
    current = meta_fingerprint(meta, ids, count)
    if count == 0 or (versions and versions[-1].fingerprint == current and versions[-1].items == count):
        return meta
    number = versions[-1].version + 1 if versions else 1
    entry = GalleryVersion(number, count, current, at, tuple(str(s) for s in sources))
    return dict(meta, **{VERSIONS_KEY: [v.to_dict() for v in versions] + [entry.to_dict()]})


def retire_after(meta: dict[str, Any], first_removed_row: int, why: str) -> dict[str, Any]:
    """``meta`` with every version holding row ``first_removed_row`` (or later rows) retired: its rows moved."""
    versions = [v if v.retired is not None or v.items <= first_removed_row
                else GalleryVersion(v.version, v.items, v.fingerprint, v.added_at, v.sources, retired=why)
                for v in recorded(meta)]
    return dict(meta, **{VERSIONS_KEY: [v.to_dict() for v in versions]}) if versions else meta


def find(meta: Mapping[str, Any], ids: Sequence[str], fingerprint_wanted: str,
         items: int | None = None, version: int | None = None) -> GalleryVersion | None:
    """The version a case recorded (its fingerprint, item count and, when known, its number), or None when the
    gallery no longer has it. A version recorded in the list matches by fingerprint; otherwise the first
    ``items`` rows are fingerprinted now (a version a case searched before the list existed, or an implied
    one the list has not caught up with)."""
    every = listed(meta, ids)
    for entry in every:
        if entry.fingerprint == fingerprint_wanted and entry.retired is None \
                and (version is None or entry.version == version or not entry.recorded):
            return entry
    count = int(meta["count"])
    if items is None or not 0 < items <= count or any(v.retired is not None and v.items == items
                                                      and v.fingerprint == fingerprint_wanted for v in every):
        return None
    if meta_fingerprint(meta, ids, items) != fingerprint_wanted:
        return None
    for entry in every:  # a recorded version of this size (its fingerprint predates a view added since)
        if entry.items == items and entry.retired is None:
            return GalleryVersion(entry.version, items, fingerprint_wanted, entry.added_at, entry.sources,
                                  entry.recorded)
    return GalleryVersion(0, items, fingerprint_wanted, None, (), recorded=False)
