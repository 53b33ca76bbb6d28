"""``detect_frames(source, detector)``: the person boxes (and carried objects) of every frame of footage, without
building a gallery (``lineup detect``).

Sources are found as ingest finds them (``engine.ingest.sources.discover``: videos, animated GIFs, image
folders, a folder of them; built worlds hold no footage and are refused). Each sequence is read in decoding
order; a stateful detector is ``reset`` and warmed up on its first frames as in ingest. One record per decoded
frame, nobody found or not::

    {"frame": i, "file": name or None, "time": t or None,
     "boxes": [{"box": [x, y, w, h], "score": s}], "objects": [{"box": [...], "score": s, "kind": k}]}

``frame`` is the frame's 0-based index in its video (every ``stride``-th is read) or its position in the image
sequence; ``file`` is the image's file name for image folders, and the video's name when SOURCE holds several
sources, else None; ``time`` is seconds on the footage clock (``engine.ingest.timing``) when known. Boxes are in
frame pixels, rounded to 0.1 px; scores to 0.001.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import closing
from pathlib import Path
from typing import Any

from engine.ingest.errors import IngestError, SourceSkipped
from engine.ingest.sources import WorldSource, discover
from engine.kernel.progress import ProgressFn, no_progress
from engine.perception.detection.detectors import Detections, PersonDetector

WarnFn = Callable[[str, str], None]


def _box(values) -> list[float]:
    return [round(float(v), 1) for v in values]


def frame_record(index: int, file: str | None, time: float | None, found: Detections) -> dict[str, Any]:
    """One frame's record (module docstring) from its detections."""
    objects = found.objects
    return {"frame": int(index), "file": file, "time": None if time is None else round(float(time), 3),
            "boxes": [{"box": _box(box), "score": round(float(score), 3)}
                      for box, score in zip(found.boxes, found.scores, strict=True)],
            "objects": [] if objects is None else [
                {"box": _box(box), "score": round(float(score), 3), "kind": kind}
                for box, score, kind in zip(objects.boxes, objects.scores, objects.kinds, strict=True)]}


def detect_frames(source: str | Path, detector: PersonDetector, stride: int = 1, progress: ProgressFn = no_progress,
                  on_warning: WarnFn | None = None) -> Iterator[dict[str, Any]]:
    """Frame records (module docstring) of every ``stride``-th frame of ``source``, in decoding order;
    ``progress(done, total)`` after each frame; files that cannot be read and
    truncated videos go to ``on_warning(path, message)``."""
    if stride < 1:
        raise IngestError(f"frame stride must be at least 1, got {stride}")
    found = discover(source)
    skip = on_warning or (lambda path, message: None)
    for path, reason in found.skipped:
        skip(path, reason)
    worlds = [s for s in found.sources if isinstance(s, WorldSource)]
    if worlds:
        raise IngestError(f"{worlds[0].path} is a built world, not footage: nothing to detect in (use lineup ingest)")
    several = len(found.sources) > 1
    total = sum(s.expected_frames(stride) for s in found.sources)
    done = 0
    progress(0, total)
    for sequence in found.sources:
        notes: list[str] = []
        detector.reset()
        warm_up = getattr(detector, "warm_up", None)
        images = sequence.kind == "images"
        try:
            if warm_up is not None:
                with closing(sequence.frames(stride, [], lambda path, reason: None)) as ahead:
                    warm_up(frame.image for frame in ahead)
            for frame in sequence.frames(stride, notes, skip):
                name = frame.file.name if images or several else None
                yield frame_record(frame.index, name, frame.time, detector.detect(frame.image))
                done += 1
                total = max(total, done)
                progress(done, total)
        except SourceSkipped as exc:
            skip(exc.path, exc.reason)
        for note in notes:
            skip(str(sequence.path), note)
