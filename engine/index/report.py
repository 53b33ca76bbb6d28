"""Readable text for ``lineup gallery info|verify|rebuild``: a gallery's ``info()`` and ``verify()`` results."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Any

from engine.index.store import Problem
from engine.index.verify import CONTENT_KINDS
from engine.kernel.timefmt import export_time


def _size(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.0f} {unit}" if unit == "B" else f"{count:.1f} {unit}"
        count /= 1024
    return f"{count:.1f} GiB"


def info_lines(info: dict[str, Any]) -> list[str]:
    """``Gallery.info()`` as lines: counts, views with their indexes, cameras, time range, bytes on disk."""
    lines = [f"gallery {info['path']}",
             f"  items: {info['count']}   identities: {info['identities']}   format {info['format']}",
             f"  model fingerprint: {info['model_fingerprint']}",
             "  views:"]
    for view, entry in info["views"].items():
        index = entry.get("index") or {}
        recall = index.get("recall_at_100")
        detail = f"{index.get('kind', '?')} index, {index.get('count', '?')} rows"
        if index.get("nlist"):
            detail += f", nlist {index['nlist']}, nprobe {index.get('nprobe', '?')}"
        if recall is not None:
            detail += f", recall@100 {recall:.3f}"
        lines.append(f"    {view:<12} {entry['dim']:>5}-d  {detail}")
        model = entry.get("model")
        if model:
            made_by = model.get("version") or model.get("file")
            trained = f", trained on {model['trained_on']}" if model.get("trained_on") else ""
            lines.append(f"    {'':<12} made by {made_by} (SHA-256 {str(model.get('file_sha256'))[:16]}…, "
                         f"input {model.get('input_size')}{trained})")
    cameras = info["cameras"]
    lines.append(f"  cameras ({len(cameras)}): {', '.join(cameras) if cameras else '-'}")
    span = info["time_range"]
    lines.append(f"  time: {export_time(span[0])} … {export_time(span[1])}" if span else "  time: unknown")
    sizes = info["bytes"]
    per_item = info["bytes_per_item_without_crops"]
    lines.append("  on disk: " + ", ".join(f"{name} {_size(value)}" for name, value in sizes.items()))
    if not math.isnan(per_item):
        lines.append(f"  per item without crops: {per_item:.0f} B (float32 vectors alone: "
                     f"{info['raw_float32_bytes_per_item']} B)")
    ranking = info.get("ranking")
    lines.append(f"  domain: {ranking['domain']}, attribute weight {ranking['attribute_weight']:g} "
                 f"({ranking['origin']})" if ranking else "  domain: not recorded (searches use the checkpoint's "
                 "attribute weight)")
    if ranking and ranking.get("appearance"):
        lines.append(f"  find similar: {ranking['appearance']}")
    lines.append(f"  created {info.get('created') or '-'}, updated {info.get('updated') or '-'}")
    lines.extend(version_lines(info.get("versions") or []))
    return lines


def version_lines(versions: Sequence[dict[str, Any]]) -> list[str]:
    """The gallery's versions (``engine.index.versions``), oldest first: number, items, when, sources."""
    if not versions:
        return []
    lines = [f"  versions ({len(versions)}):"]
    for entry in versions:
        sources = ", ".join(entry.get("sources") or []) or "-"
        state = " (not yet recorded: items added outside an ingest, or before versions were kept)" \
            if not entry.get("recorded", True) else ""
        if entry.get("retired"):
            state += f" (retired: {entry['retired']})"
        lines.append(f"    v{entry['version']:<3} {entry['items']:>9,} items  {entry.get('added_at') or '-'}  "
                     f"fingerprint {entry['fingerprint'][:12]}…  sources: {sources}{state}")
    return lines


def problem_lines(problems: Sequence[Problem], root: str) -> list[str]:
    """``Gallery.verify()`` as lines: a verdict, a count per kind, then every problem."""
    if not problems:
        return [f"gallery {root}: no problems found"]
    kinds = Counter(p.kind for p in problems)
    lines = [f"gallery {root}: {len(problems)} problem{'s' if len(problems) != 1 else ''} "
             f"({', '.join(f'{kind} {n}' for kind, n in kinds.items())})"]
    lines.extend(content_lines(problems))
    lines.extend(f"  {problem}" for problem in problems)
    if any(p.kind.startswith("index") or p.kind == "vectors_header" for p in problems):
        lines.append("index problems are repaired by `lineup gallery rebuild`")
    return lines


def _named(ids: Sequence[str]) -> str:
    shown = [repr(i) for i in ids[:10]]
    more = f" and {len(ids) - 10:,} more" if len(ids) > 10 else ""
    if len(shown) == 1:
        return f"item {shown[0]}"
    return f"items {', '.join(shown[:-1])} and {shown[-1]}{more}" if not more else f"items {', '.join(shown)}{more}"


def content_lines(problems: Sequence[Problem]) -> list[str]:
    """One line per kind of content change naming its items: "items 'i2' and 'i5': stored vectors differ from
    the content digests recorded when they were added; …" (``engine.index.verify``)."""
    lines = []
    for kind, (one, many) in CONTENT_KINDS.items():
        ids = list(dict.fromkeys(p.subject for p in problems if p.kind == kind))
        if ids:
            said = one if len(ids) == 1 else many
            lines.append(f"  {_named(ids)}: {said.split(' ', 1)[1]} from the content digest"
                         f"{'' if len(ids) == 1 else 's'} recorded when {'it was' if len(ids) == 1 else 'they were'} "
                         f"added; the gallery's fingerprint no longer matches what cases and reports recorded")
    return lines


def uncovered_line(root: str) -> str:
    """What ``lineup gallery verify`` says of a gallery without content digests."""
    return (f"gallery {root}: records no content digests (made before they were kept): its fingerprint covers "
            "item ids only, so a changed item record or stored vector goes unnoticed until `lineup gallery "
            "rebuild` records them")
