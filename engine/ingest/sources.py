"""What SOURCE holds, and the frames of each source.

``discover(path)`` sorts a path into sources:

- a video file (any container OpenCV's FFmpeg back end reads, animated GIFs included): one source; camera and
  start time from ``<video>.json``, else the file name (``cam01_20240506T101500.mp4``), else camera = file
  stem and the footage clock (time 0 at the first frame);
- a folder of images: one sequence per camera, in time order (name order where times are unknown); camera
  and time per image from the folder's sidecar, else the file name, else camera = folder name, no time;
- a built world (a folder with ``manifest.jsonl``): one source whose images are items as they are;
- a folder: searched recursively for all of the above (worlds are not searched inside; folders holding a
  gallery are left alone). Files that are none of these are listed as skipped.

A source's ``key`` is the SHA-256 that identifies its content (the video file, the sequence's files, the
world manifest); done markers and item ids build on it.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from engine.ingest.errors import IngestError, SourceSkipped
from engine.ingest.timing import SIDECAR_NAMES, Stamp, read_image_sidecar, read_video_sidecar, stamp_from_name
from engine.kernel.hashing import sha256_file
from engine.kernel.images import IMAGE_EXTENSIONS, MAX_PIXELS_VARIABLE, ImageInputError, max_pixels_limit, read_image

VIDEO_EXTENSIONS = frozenset({".mp4", ".avi", ".mov", ".mkv", ".webm", ".m4v", ".mpg", ".mpeg", ".wmv", ".flv",
                              ".ts", ".3gp", ".gif", ".mjpeg", ".mjpg"})
WORLD_MANIFEST = "manifest.jsonl"
NOT_REGULAR = "not a regular file or folder (a named pipe, a device or a broken or looping link)"
GALLERY_MARKER = "gallery.json"
SkipFn = Callable[[str, str], None]


@dataclass(frozen=True)
class Frame:
    """One decoded frame (BGR uint8) with its position, time and the file it came from; ``size`` is the file's
    own (width, height) when ``image`` was shrunk while decoding (a crop folder's large images), else None."""

    index: int
    time: float | None
    image: np.ndarray
    file: Path
    file_sha256: str
    size: tuple[int, int] | None = None


def _natural_key(name: str) -> list:
    return [int(part) if part.isdigit() else part.lower() for part in re.split(r"(\d+)", name)]


@dataclass
class VideoSource:
    path: Path
    camera: str
    start: float | None  # seconds of frame 0; None = footage clock
    kind: str = "video"
    _sha: str | None = field(default=None, repr=False)

    @property
    def key(self) -> str:
        if self._sha is None:
            try:
                self._sha = sha256_file(self.path)
            except OSError as exc:
                raise SourceSkipped(str(self.path), f"cannot be read: {exc.strerror or exc}") from None
        return self._sha

    def expected_frames(self, stride: int) -> int:
        capture = cv2.VideoCapture(str(self.path))
        try:
            count = int(capture.get(cv2.CAP_PROP_FRAME_COUNT)) if capture.isOpened() else 0
        finally:
            capture.release()
        return max(0, math.ceil(count / stride))

    def frames(self, stride: int, notes: list[str], on_skip: SkipFn) -> Iterator[Frame]:
        """Every ``stride``-th decoded frame; a short read (truncated file) is noted in ``notes``."""
        capture = cv2.VideoCapture(str(self.path))
        if not capture.isOpened():
            capture.release()
            raise SourceSkipped(str(self.path), "OpenCV cannot open it as a video (corrupt or unsupported format)")
        try:
            pixels = int(capture.get(cv2.CAP_PROP_FRAME_WIDTH)) * int(capture.get(cv2.CAP_PROP_FRAME_HEIGHT))
            if pixels > max_pixels_limit():
                raise SourceSkipped(str(self.path), f"its frames declare {pixels:,} pixels, over the limit of "
                                                    f"{max_pixels_limit():,} ({MAX_PIXELS_VARIABLE})")
            fps = capture.get(cv2.CAP_PROP_FPS)
            announced = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
            has_clock = math.isfinite(fps) and fps > 0
            if not has_clock:
                notes.append("the video states no frame rate: items have no time")
            origin = 0.0 if self.start is None else self.start
            index = 0
            while True:
                if index % stride == 0:
                    ok, image = capture.read()
                    if not ok or image is None:
                        break
                    time = origin + index / fps if has_clock else None
                    yield Frame(index, time, image, self.path, self.key)
                elif not capture.grab():
                    break
                index += 1
        finally:
            capture.release()
        if index == 0:
            raise SourceSkipped(str(self.path), "no frame could be decoded (empty, truncated or corrupt)")
        if announced > 0 and index < announced:
            notes.append(f"decoded {index} of the {announced} frames the file announces (truncated or damaged?)")


@dataclass
class ImageSequence:
    folder: Path
    camera: str
    files: list[tuple[Path, Stamp]]
    kind: str = "images"
    _hashes: dict[Path, str] | None = field(default=None, repr=False)
    _unreadable: list[tuple[str, str]] = field(default_factory=list, repr=False)

    @property
    def path(self) -> Path:
        return self.folder

    def hashes(self) -> dict[Path, str]:
        """SHA-256 of every readable file (computed once; unreadable files are kept for ``frames`` to report)."""
        if self._hashes is None:
            self._hashes, self._unreadable = {}, []
            for path, _ in self.files:
                try:
                    self._hashes[path] = sha256_file(path)
                except OSError as exc:
                    self._unreadable.append((str(path), f"cannot be read: {exc.strerror or exc}"))
        return self._hashes

    @property
    def key(self) -> str:
        hashes = self.hashes()
        if not hashes:
            raise SourceSkipped(str(self.folder), f"none of the {len(self.files)} images of camera {self.camera!r} "
                                                  "can be read")
        digest = hashlib.sha256()
        for path, _ in self.files:
            if path in hashes:
                digest.update(f"{path.name}\0{hashes[path]}\n".encode())
        return digest.hexdigest()

    def expected_frames(self, stride: int) -> int:
        return math.ceil(len(self.files) / stride)

    def _decode(self, index: int, stamp: Stamp, path: Path, sha256: str) -> Frame:
        return Frame(index, stamp.time, read_image(path), path, sha256)

    def frames(self, stride: int, notes: list[str], on_skip: SkipFn) -> Iterator[Frame]:
        hashes = self.hashes()
        for path, reason in self._unreadable:
            on_skip(path, reason)
        decoded = 0
        for index, (path, stamp) in enumerate(self.files):
            if index % stride or path not in hashes:
                continue
            try:
                frame = self._decode(index, stamp, path, hashes[path])
            except ImageInputError as exc:
                on_skip(str(path), exc.reason)
                continue
            decoded += 1
            yield frame
            frame = None  # not held while the next image decodes
        if decoded == 0:
            raise SourceSkipped(str(self.folder), f"none of the images of camera {self.camera!r} could be decoded")


@dataclass
class WorldSource:
    root: Path
    kind: str = "world"
    _sha: str | None = field(default=None, repr=False)

    @property
    def path(self) -> Path:
        return self.root

    @property
    def key(self) -> str:
        if self._sha is None:
            try:
                self._sha = sha256_file(self.root / WORLD_MANIFEST)
            except OSError as exc:
                raise SourceSkipped(str(self.root), f"its manifest cannot be read: {exc.strerror or exc}") from None
        return self._sha

    def samples(self):
        """The world's samples (``engine.ingest.datasets.world``); a broken manifest skips the whole world."""
        from engine.ingest.datasets.records import DatasetFormatError
        from engine.ingest.datasets.world import read_world

        try:
            return read_world(self.root, check_images=False).samples
        except (DatasetFormatError, OSError) as exc:
            raise SourceSkipped(str(self.root), f"not a readable world: {exc}") from None

    def expected_frames(self, stride: int) -> int:
        try:
            with open(self.root / WORLD_MANIFEST, "rb") as fh:
                return sum(1 for line in fh if line.strip())
        except OSError:
            return 0


Source = VideoSource | ImageSequence | WorldSource


@dataclass
class Discovery:
    sources: list[Source]
    skipped: list[tuple[str, str]]  # (path, reason) of files that are no source


def _video(path: Path, camera: str | None, start: float | None) -> VideoSource:
    stamp = read_video_sidecar(path)
    if stamp.camera is None and stamp.time is None:
        stamp = stamp_from_name(path)
    return VideoSource(path, camera or stamp.camera or path.stem, start if start is not None else stamp.time)


def _sequences(folder: Path, images: list[Path], camera: str | None) -> list[ImageSequence]:
    sidecar = read_image_sidecar(folder) or {}
    groups: dict[str, list[tuple[Path, Stamp]]] = {}
    for path in images:
        stamp = sidecar.get(path.name) or stamp_from_name(path)
        name = camera or stamp.camera or folder.name or "camera"
        groups.setdefault(name, []).append((path, Stamp(name, stamp.time)))
    out = []
    for name in sorted(groups):
        files = groups[name]
        files.sort(key=lambda f: (f[1].time is None, f[1].time or 0.0, _natural_key(f[0].name)))
        out.append(ImageSequence(folder, name, files))
    return out


def image_sequence(image: str | Path) -> ImageSequence:
    """The sequence of ``image``'s folder that holds it, in the order ingest reads it (time, then name); an
    ``IngestError`` when the file is not an image or its folder cannot be listed."""
    path = Path(image)
    if path.suffix.lower() not in IMAGE_EXTENSIONS:
        raise IngestError(f"{path} is not an image file ({', '.join(sorted(IMAGE_EXTENSIONS))})")
    try:
        images = [entry for entry in path.parent.iterdir()
                  if entry.suffix.lower() in IMAGE_EXTENSIONS and entry.is_file()]
    except OSError as exc:
        raise IngestError(f"folder {path.parent} cannot be listed: {exc.strerror or exc}") from None
    for sequence in _sequences(path.parent, images, None):
        if any(file == path for file, _ in sequence.files):
            return sequence
    raise IngestError(f"image {path} does not exist on this computer")


def folders_under(root: Path) -> Iterator[tuple[Path, list[str], list[str]]]:
    """``(folder, its file names in natural order, its subfolders)`` for every folder under ``root``, top-down;
    hidden folders and folders holding a gallery are left out. Clearing the subfolder list skips them."""
    for folder, subfolders, files in os.walk(root):
        here = Path(folder)
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        if (here / GALLERY_MARKER).is_file():
            subfolders[:] = []
            continue
        yield here, sorted(files, key=_natural_key), subfolders


def discover(path: str | Path, camera: str | None = None, start: float | None = None) -> Discovery:
    """Sources under ``path`` (see the module docstring); ``camera``/``start`` override what files say."""
    root = Path(path)
    if not root.exists():
        if root.is_symlink():
            raise IngestError(f"source {root} is a broken or looping link")
        raise IngestError(f"source {root} does not exist")
    if not root.is_file() and not root.is_dir():
        raise IngestError(f"source {root} is {NOT_REGULAR}")
    if root.is_file():
        suffix = root.suffix.lower()
        if root.name == WORLD_MANIFEST:
            return Discovery([WorldSource(root.parent)], [])
        if suffix in VIDEO_EXTENSIONS:
            return Discovery([_video(root, camera, start)], [])
        if suffix in IMAGE_EXTENSIONS:
            return Discovery(_sequences(root.parent, [root], camera), [])
        raise IngestError(f"source {root} is neither a video, an image nor a world manifest (extension {suffix!r})")
    sources: list[Source] = []
    skipped: list[tuple[str, str]] = []
    for here, names, subfolders in folders_under(root):
        if (here / WORLD_MANIFEST).is_file():
            sources.append(WorldSource(here))
            subfolders[:] = []
            continue
        images = []
        for name in names:
            file = here / name
            suffix = file.suffix.lower()
            video_sidecar = suffix == ".json" and Path(name[: -len(".json")]).suffix.lower() in VIDEO_EXTENSIONS
            if name.startswith(".") or name in SIDECAR_NAMES or video_sidecar:
                continue
            if not file.is_file():  # reading a pipe blocks, a device never ends
                skipped.append((str(file), NOT_REGULAR))
                continue
            if suffix in VIDEO_EXTENSIONS:
                sources.append(_video(file, camera, start))
            elif suffix in IMAGE_EXTENSIONS:
                images.append(file)
            else:
                skipped.append((str(file), f"not an image, video or world manifest (extension {suffix or 'none'})"))
        sources.extend(_sequences(here, images, camera))
    if not sources:
        raise IngestError(f"source folder {root} holds no images, videos or built world")
    return Discovery(sources, skipped)
