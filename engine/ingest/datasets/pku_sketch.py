"""PKU-Sketch layout: ``sketch/ID.EXT`` (one drawing per person) and ``photo/ID_CAM.EXT`` or
``photo/ID_CAM_ANYTHING.EXT`` (that person's photos, camera ``CAM``), ``EXT`` any still-image extension
(``engine.kernel.images.IMAGE_EXTENSIONS``); other files (``Thumbs.db``) are ignored.

IDs are strings (``007`` and ``7`` are two people); the index gives each an integer ``identity`` in sorted order
and keeps the string as ``extra["id"]``. A photo belongs to the sketch whose ID is the longest one its name
starts with followed by ``_``; a photo of an ID without a sketch is a distractor (in the gallery, never
relevant; counted in ``notes["photos_without_sketch"]``). Sketches are split ``query`` (modality ``sketch``),
photos ``gallery`` (``rgb``).

Errors: a missing root, ``sketch`` or ``photo`` folder (``DatasetNotFoundError``); a sketch without a photo, a
photo name without ``_CAM``, a file or folder that resolves outside the dataset folder (a link) and, with
``check_images``, a file that does not decode as an image (``DatasetFormatError`` naming the file).

Protocol (``pku_sketch_protocol``): every sketch against every photo, relevant = the sketch's person's photos.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from engine.ingest.datasets.records import (
    DatasetFormatError,
    DatasetIndex,
    ReidProtocol,
    Sample,
    require_dir,
)
from engine.kernel.images import IMAGE_EXTENSIONS, ImageInputError, read_image
from engine.kernel.paths import PathEscapeError, contained

FOLDERS: dict[str, str] = {"query": "sketch", "gallery": "photo"}
NAME = "pku-sketch"


def _images(root: Path, folder: str) -> list[Path]:
    """The image files of ``root/folder`` (sorted), each checked to resolve inside ``root``."""
    directory = require_dir(root / folder, f"{NAME} folder {folder!r}")
    try:
        contained(root, folder, "folder")
    except PathEscapeError as exc:
        raise DatasetFormatError(directory, None, None, f"resolves to {exc.resolved}, outside the dataset folder "
                                                        f"{exc.root}") from None
    files = []
    for path in sorted(directory.iterdir()):
        if path.suffix.lower() not in IMAGE_EXTENSIONS:
            continue
        try:
            contained(root, Path(folder) / path.name, "image")
        except PathEscapeError as exc:
            raise DatasetFormatError(path, None, None, f"resolves to {exc.resolved}, outside the dataset folder "
                                                       f"{exc.root}") from None
        files.append(path)
    if not files:
        raise DatasetFormatError(directory, None, None, f"holds no image ({', '.join(sorted(IMAGE_EXTENSIONS))})")
    return files


def _check_image(path: Path) -> None:
    try:
        read_image(path)
    except ImageInputError as exc:
        raise DatasetFormatError(path, None, None, f"not a readable image: {exc.reason}") from None


def _owner(stem: str, ids: list[str]) -> tuple[str, str]:
    """(ID, camera) of a photo name ``ID_CAM[_…]``: the longest sketch ID it starts with, else its first part."""
    for sketch_id in sorted(ids, key=len, reverse=True):
        if stem.startswith(sketch_id + "_"):
            camera = stem[len(sketch_id) + 1:].split("_", 1)[0]
            if camera:
                return sketch_id, camera
    person, sep, rest = stem.partition("_")
    camera = rest.split("_", 1)[0]
    if not person or not sep or not camera:
        raise ValueError(f"{stem!r} is not ID_CAM or ID_CAM_… (a person id and a camera, joined by '_')")
    return person, camera


def read_pku_sketch(root: Path, *, check_images: bool = True) -> DatasetIndex:
    """Read the two folders (see the module docstring)."""
    root = Path(root)
    require_dir(root, f"{NAME} root")
    sketches = _images(root, FOLDERS["query"])
    photos = _images(root, FOLDERS["gallery"])
    by_id: dict[str, Path] = {}
    for path in sketches:
        if path.stem in by_id:
            raise DatasetFormatError(path, None, "filename", f"a second sketch of person {path.stem!r} (the first is "
                                                             f"{by_id[path.stem].name})")
        by_id[path.stem] = path
    owned: list[tuple[Path, str, str]] = []
    for path in photos:
        try:
            person, camera = _owner(path.stem, list(by_id))
        except ValueError as exc:
            raise DatasetFormatError(path.parent, path.name, "filename", str(exc)) from None
        owned.append((path, person, camera))
    with_photos = {person for _, person, _ in owned}
    lonely = sorted(set(by_id) - with_photos)
    if lonely:
        raise DatasetFormatError(by_id[lonely[0]], None, None, f"the sketch of person {lonely[0]!r} has no photo "
                                                              f"({FOLDERS['gallery']}/{lonely[0]}_CAM….EXT)"
                                 + (f"; {len(lonely) - 1} more sketches have none" if len(lonely) > 1 else ""))
    number = {person: k for k, person in enumerate(sorted(set(by_id) | with_photos))}
    if check_images:
        for path in [*sketches, *photos]:
            _check_image(path)
    samples = [Sample(image=path, identity=number[person], split="query", camera="sketch", modality="sketch",
                      extra={"id": person}) for person, path in sorted(by_id.items())]
    samples += [Sample(image=path, identity=number[person], split="gallery", camera=f"cam{camera}", modality="rgb",
                       extra={"id": person, "distractor": person not in by_id}) for path, person, camera in owned]
    return DatasetIndex(NAME, root, tuple(samples),
                        {"photos_without_sketch": sum(person not in by_id for _, person, _ in owned)})


def pku_sketch_protocol(index: DatasetIndex) -> ReidProtocol:
    """Every sketch (query) against every photo (gallery); positives: the same person's photos."""
    query, gallery = index.split("query").samples, index.split("gallery").samples
    q_ids = np.array([s.identity for s in query])[:, None]
    g_ids = np.array([s.identity for s in gallery])[None, :]
    valid = np.ones((len(query), len(gallery)), dtype=bool)
    return ReidProtocol(tuple(query), tuple(gallery), valid, q_ids == g_ids)
