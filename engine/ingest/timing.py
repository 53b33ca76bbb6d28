"""Camera names and times of source files: sidecar files, file names, command-line overrides.

Times are seconds: POSIX time (UTC) when the wall clock is known, else the footage clock (seconds since the
first frame of the video); accepted spellings are those of ``engine.kernel.timefmt``.

File names ``<camera>_<time>[_anything].<ext>`` give both, with ``<time>`` compact, ISO with ``-`` for ``:``
(``2024-05-06T10-15-30``) or 10-digit POSIX seconds (``cam01_1715000000.jpg``).

Sidecars: ``sidecar.csv`` (header ``file,camera,time``; camera and time columns optional) or ``sidecar.json``
(a list of ``{"file", "camera", "time"}`` objects, or ``{file: {"camera", "time"}}``) in an image folder
describe its images; ``<video>.json`` beside a video (``{"camera": ..., "start": ...}``) describes the video.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.ingest.errors import IngestError
from engine.kernel import jsonio
from engine.kernel.timefmt import TimeInputError
from engine.kernel.timefmt import parse_time as read_time

SIDECAR_NAMES: tuple[str, ...] = ("sidecar.csv", "sidecar.json")
_NAME_TIME = r"\d{8}T\d{6}(?:\.\d+)?|\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}(?:\.\d+)?|\d{10}(?:\.\d+)?"
_NAME = re.compile(rf"^(?P<camera>[A-Za-z0-9-]+)_(?P<time>{_NAME_TIME})(?:_.*)?$")
_DASHED_CLOCK = re.compile(r"^(\d{4}-\d{2}-\d{2}T\d{2})-(\d{2})-(\d{2}(?:\.\d+)?)$")


@dataclass(frozen=True)
class Stamp:
    """What is known about one file: camera name and time in seconds (either may be None)."""

    camera: str | None = None
    time: float | None = None


def parse_time(value: Any, where: str) -> float:
    """Seconds from a number or a time string (``engine.kernel.timefmt.parse_time``); a bad one is an
    ``IngestError``."""
    try:
        return read_time(value, where)
    except TimeInputError as exc:
        raise IngestError(str(exc)) from None


def stamp_from_name(path: Path) -> Stamp:
    """Camera and time from a file name ``<camera>_<time>…``; an empty ``Stamp`` when the name has neither."""
    match = _NAME.match(path.stem)
    if not match:
        return Stamp()
    raw = match.group("time")
    dashed = _DASHED_CLOCK.match(raw)
    if dashed:
        raw = f"{dashed.group(1)}:{dashed.group(2)}:{dashed.group(3)}"
    return Stamp(match.group("camera"), parse_time(raw, f"file name {path.name}"))


def _stamp(record: dict[str, Any], where: str) -> Stamp:
    """Camera and time of one sidecar record; empty or missing fields are unknown."""
    camera = record.get("camera")
    if camera == "":
        camera = None
    named = isinstance(camera, str | int) and not isinstance(camera, bool) and str(camera).strip()
    if camera is not None and not named:
        raise IngestError(f"{where}: camera must be a name, got {camera!r}")
    time = record.get("time")
    return Stamp(None if camera is None else str(camera).strip(),
                 None if time in (None, "") else parse_time(time, f"{where}: time"))


def read_image_sidecar(folder: Path) -> dict[str, Stamp] | None:
    """{file name: Stamp} from the folder's sidecar file, or None when it has none."""
    for name in SIDECAR_NAMES:
        path = folder / name
        if path.is_file():
            return _read_csv(path) if name.endswith(".csv") else _read_json(path)
    return None


def _read_csv(path: Path) -> dict[str, Stamp]:
    try:
        with open(path, newline="", encoding="utf-8-sig") as fh:
            rows = list(csv.DictReader(fh))
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise IngestError(f"sidecar {path} is unreadable: {exc}") from None
    if rows and "file" not in rows[0]:
        raise IngestError(f"sidecar {path} needs a 'file' column; it has {list(rows[0])}")
    out = {}
    for number, row in enumerate(rows, start=2):
        out[row["file"]] = _stamp(row, f"sidecar {path} line {number}")
    return out


def _read_json(path: Path) -> dict[str, Stamp]:
    try:
        data = jsonio.read(path)
    except (OSError, ValueError) as exc:
        raise IngestError(f"sidecar {path} is unreadable: {exc}") from None
    if isinstance(data, dict):
        entries = [dict(value, file=key) if isinstance(value, dict) else value for key, value in data.items()]
    elif isinstance(data, list):
        entries = data
    else:
        raise IngestError(f"sidecar {path} must hold a list or an object, got {type(data).__name__}")
    out = {}
    for number, entry in enumerate(entries):
        where = f"sidecar {path} entry {number}"
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
            raise IngestError(f"{where} must be an object with a 'file' name")
        out[entry["file"]] = _stamp(entry, where)
    return out


def read_video_sidecar(video: Path) -> Stamp:
    """Camera and start time from ``<video>.json`` (start under "start" or "time"); empty when absent."""
    path = video.with_name(video.name + ".json")
    if not path.is_file():
        return Stamp()
    try:
        data = jsonio.read(path)
    except (OSError, ValueError) as exc:
        raise IngestError(f"video sidecar {path} is unreadable: {exc}") from None
    if not isinstance(data, dict):
        raise IngestError(f"video sidecar {path} must hold an object with 'camera' and 'start'")
    return _stamp({"camera": data.get("camera"), "time": data.get("start", data.get("time"))}, f"video sidecar {path}")
