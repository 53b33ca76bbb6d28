"""Generators of bad inputs for ``bench/fuzz.py``: each one writes a damaged file or folder and returns the
command line that feeds it to ``lineup`` as a user would, with the words a clear error should contain.

Every generator is ``make(fixtures, rng, folder) -> Case``: ``fixtures`` holds the good material built once per
run (a tiny world, a gallery, checkpoints, a case database with a report), ``rng`` a ``random.Random`` seeded
from the run's seed and the case number (so a case can be rebuilt on its own), ``folder`` an empty folder for
the case's files. Generators are cheap: bytes are cut, patched or drawn at random, never rendered at size.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import random
import shutil
import sqlite3
import struct
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np


@dataclass
class Case:
    """One fuzz input: ``argv`` after ``lineup``; an error must name one of ``names`` (case-insensitive)."""

    entry: str
    kind: str
    argv: list[str]
    names: list[str]
    timeout: float = 120.0
    number: int = 0
    stdin: str | None = None
    max_rss: int | None = None  # bytes of peak memory over which the case is a crash (bench/fuzz.py's default)
    survivors: list[str] = field(default_factory=list)  # files the command must not move or delete
    forbidden: list[str] = field(default_factory=list)  # files that must not appear (a planted payload ran)


@dataclass
class Fixtures:
    """The good material every case starts from (built once by ``bench/fuzz.py``)."""

    root: Path
    world: Path
    gallery: Path
    checkpoint: Path  # a tiny-config checkpoint (fast to load), damaged per case
    db: Path
    report: Path
    video: Path
    person_jpeg: bytes = field(repr=False, default=b"")
    run: Path | None = None  # a resumable training run of the tiny config on ``world`` (None: not built)


# --------------------------------------------------------------------------------------------- bytes


def encoded(image: np.ndarray, suffix: str) -> bytes:
    ok, data = cv2.imencode(suffix, image)
    assert ok, suffix
    return data.tobytes()


def noise_image(rng: random.Random, height: int, width: int, channels: int = 3) -> np.ndarray:
    generator = np.random.default_rng(rng.randrange(2**32))
    shape = (height, width) if channels == 1 else (height, width, channels)
    return generator.integers(0, 256, shape, dtype=np.uint8)


def _png_chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def png_declaring(width: int, height: int, depth: int = 8, colour: int = 2) -> bytes:
    """A well-formed PNG header declaring ``width`` × ``height`` with a tiny IDAT (a decompression bomb shape)."""
    header = struct.pack(">IIBBBBB", width, height, depth, colour, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", zlib.compress(b"\x00" * 64))
            + _png_chunk(b"IEND", b""))


def jpeg_declaring(good_jpeg: bytes, width: int, height: int) -> bytes:
    """``good_jpeg`` with its frame header (SOF0/SOF2) patched to declare ``width`` × ``height``."""
    data = bytearray(good_jpeg)
    for marker in (b"\xff\xc0", b"\xff\xc2", b"\xff\xc1"):
        at = data.find(marker)
        if at >= 0:
            data[at + 5:at + 9] = struct.pack(">HH", height, width)
            return bytes(data)
    return bytes(data)


def bmp_declaring(width: int, height: int) -> bytes:
    """A BMP header declaring ``width`` × ``height`` (24-bit) followed by a few bytes of pixels."""
    pixels = b"\x00" * 64
    info = struct.pack("<IiiHHIIiiII", 40, width, height, 1, 24, 0, len(pixels), 2835, 2835, 0, 0)
    head = b"BM" + struct.pack("<IHHI", 14 + len(info) + len(pixels), 0, 0, 14 + len(info))
    return head + info + pixels


def gif_declaring(width: int, height: int) -> bytes:
    """A GIF whose logical screen and single frame declare ``width`` × ``height``."""
    screen = b"GIF89a" + struct.pack("<HHBBB", width, height, 0x80, 0, 0) + b"\x00\x00\x00\xff\xff\xff"
    frame = b"\x2c" + struct.pack("<HHHHB", 0, 0, width, height, 0) + b"\x02\x02\x44\x01\x00"
    return screen + frame + b"\x3b"


IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".bmp", ".gif", ".tif", ".webp")


def bad_image(fixtures: Fixtures, rng: random.Random) -> tuple[str, str, bytes]:
    """(kind, suffix, bytes) of one bad or awkward image file."""
    person = cv2.imdecode(np.frombuffer(fixtures.person_jpeg, np.uint8), cv2.IMREAD_COLOR)
    jpeg = fixtures.person_jpeg
    png = encoded(person, ".png")
    kind = rng.choice(["truncated-jpeg", "truncated-png", "wrong-magic", "huge-png", "huge-jpeg", "huge-bmp",
                       "huge-gif", "one-pixel", "empty", "grey", "alpha", "16-bit", "random-bytes", "tiny",
                       "thin", "text-as-image", "png-as-jpg", "flipped-bits"])
    if kind == "truncated-jpeg":
        return kind, ".jpg", jpeg[:rng.randrange(2, len(jpeg) - 2)]
    if kind == "truncated-png":
        return kind, ".png", png[:rng.randrange(8, len(png) - 12)]
    if kind == "wrong-magic":
        data = bytearray(rng.choice([jpeg, png]))
        data[0:4] = bytes(rng.randrange(256) for _ in range(4))
        return kind, rng.choice([".jpg", ".png"]), bytes(data)
    if kind == "huge-png":
        width, height = rng.choice([(60000, 60000), (30000, 30000), (1, 2**31 - 1), (2**31 - 1, 2**31 - 1),
                                    (12000, 9000), (100000, 2)])
        return kind, ".png", png_declaring(width, height, rng.choice([8, 16]), rng.choice([0, 2, 6]))
    if kind == "huge-jpeg":
        width, height = rng.choice([(65535, 65535), (65000, 40000), (1, 65535), (0, 0), (30000, 30000)])
        return kind, ".jpg", jpeg_declaring(jpeg, width, height)
    if kind == "huge-bmp":
        width, height = rng.choice([(60000, 60000), (-5, 100), (100, -2**31), (2**31 - 1, 1), (0, 0)])
        return kind, ".bmp", bmp_declaring(width, height)
    if kind == "huge-gif":
        width, height = rng.choice([(65535, 65535), (0, 0), (1, 65535), (40000, 3)])
        return kind, ".gif", gif_declaring(width, height)
    if kind == "one-pixel":
        return kind, rng.choice([".png", ".jpg", ".bmp"]), encoded(noise_image(rng, 1, 1), rng.choice([".png"]))
    if kind == "empty":
        return kind, rng.choice(IMAGE_SUFFIXES), b""
    if kind == "grey":
        return kind, rng.choice([".png", ".jpg"]), encoded(cv2.cvtColor(person, cv2.COLOR_BGR2GRAY), ".png")
    if kind == "alpha":
        rgba = cv2.cvtColor(person, cv2.COLOR_BGR2BGRA)
        rgba[..., 3] = rng.randrange(256)
        return kind, ".png", encoded(rgba, ".png")
    if kind == "16-bit":
        deep = person.astype(np.uint16) * 257
        if rng.random() < 0.5:
            deep = cv2.cvtColor(deep, cv2.COLOR_BGR2GRAY)
        return kind, ".png", encoded(deep, ".png")
    if kind == "random-bytes":
        return kind, rng.choice(IMAGE_SUFFIXES), rng.randbytes(rng.choice([1, 7, 100, 4096]))
    if kind == "tiny":
        height, width = rng.choice([(16, 32), (40, 200), (8, 16), (16, 8), (2, 2), (32, 16), (15, 7)])
        return kind, rng.choice([".png", ".jpg"]), encoded(noise_image(rng, height, width), ".png")
    if kind == "thin":
        height, width = rng.choice([(1, 3000), (3000, 1), (2, 4000), (5000, 3)])
        return kind, ".png", encoded(noise_image(rng, height, width, 1), ".png")
    if kind == "text-as-image":
        return kind, rng.choice(IMAGE_SUFFIXES), b"<html><body>not an image</body></html>\n"
    if kind == "png-as-jpg":
        return kind, ".jpg", png
    data = bytearray(rng.choice([jpeg, png]))
    for _ in range(rng.randrange(1, 20)):
        at = rng.randrange(len(data))
        data[at] ^= 1 << rng.randrange(8)
    return kind, rng.choice([".jpg", ".png"]), bytes(data)


def write(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def hostile_name(rng: random.Random, suffix: str) -> str:
    stem = rng.choice(["img", "frame 01", "ünïcødé", "emoji😀", "-dash", "a" * 120, "x'quote", "семь"])
    return f"{stem}{suffix}"


# --------------------------------------------------------------------------------------------- images


SPECIAL_FILES = ("fifo", "directory", "broken-symlink", "symlink-loop", "dev-zero")


def special_file(path: Path, kind: str) -> Path:
    """A path with an image suffix that is no regular file: a named pipe (reading it blocks), a folder, a dangling
    or looping symbolic link, or a link to ``/dev/zero`` (endless bytes)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    elif kind == "broken-symlink":
        path.symlink_to(path.parent / "nowhere.jpg")
    elif kind == "symlink-loop":
        path.symlink_to(path)
    else:
        path.symlink_to("/dev/zero")
    return path


def image_case(fixtures: Fixtures, rng: random.Random, folder: Path) -> Case:
    kind, suffix, data = bad_image(fixtures, rng)
    name = hostile_name(rng, suffix) if rng.random() < 0.3 else f"bad{suffix}"
    route = rng.choice(["ingest-folder", "ingest-folder", "ingest-crops", "ingest-file", "detect-file",
                        "detect-folder", "detect-hog", "search-sketch", "search-ir", "search-sketch-text"])
    source = folder / "source"
    if rng.random() < 0.08:
        kind = rng.choice(SPECIAL_FILES)
        bad = special_file(source / name, kind)
    else:
        bad = write(source / name, data)
    names = [name, "source", bad.stem[:40]]
    gallery = str(folder / "gallery")
    if route in ("ingest-folder", "ingest-crops", "detect-folder") and rng.random() < 0.6:
        write(source / "good.jpg", fixtures.person_jpeg)  # one good file beside: the folder must go on
    if route == "ingest-folder":
        return Case("ingest", f"image:{kind}", ["ingest", str(source), "--gallery", gallery], names)
    if route == "ingest-crops":
        return Case("ingest --crops", f"image:{kind}", ["ingest", str(source), "--crops", "--gallery", gallery],
                    names)
    if route == "ingest-file":
        return Case("ingest", f"image:{kind}", ["ingest", str(bad), "--gallery", gallery], names)
    if route == "detect-file":
        return Case("detect", f"image:{kind}", ["detect", str(bad), "--json"], names)
    if route == "detect-folder":
        return Case("detect", f"image:{kind}", ["detect", str(source)], names)
    if route == "detect-hog":
        return Case("detect --detector hog", f"image:{kind}", ["detect", str(bad), "--detector", "hog"], names)
    option = "--ir" if route == "search-ir" else "--sketch"
    argv = ["search", "--gallery", str(fixtures.gallery), option, str(bad), "--json"]
    if route == "search-sketch-text":
        argv += ["--text", "a man in a red jacket"]
    return Case(f"search {option}", f"{option[2:]}:{kind}", argv, names)


# --------------------------------------------------------------------------------------------- videos


def bad_video(fixtures: Fixtures, rng: random.Random, folder: Path) -> tuple[str, Path]:
    good = fixtures.video.read_bytes()
    kind = rng.choice(["truncated", "random-bytes", "zero-frames", "huge-frame", "header-only", "flipped-bits",
                       "empty", "gif-huge", "gif-truncated"])
    suffix = rng.choice([".avi", ".mp4", ".mkv", ".mov"])
    if kind == "truncated":
        return kind, write(folder / "clip.avi", good[:rng.randrange(16, len(good) - 16)])
    if kind == "random-bytes":
        return kind, write(folder / f"clip{suffix}", rng.randbytes(rng.choice([10, 1000, 50000])))
    if kind == "zero-frames":
        path = folder / "clip.avi"
        folder.mkdir(parents=True, exist_ok=True)
        writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10, (64, 48))
        writer.release()
        if not path.exists():
            path.write_bytes(good[:good.find(b"movi") + 4] if b"movi" in good else b"RIFF")
        return kind, path
    if kind == "huge-frame":
        data = bytearray(good)
        old = struct.pack("<II", 160, 120)
        new = struct.pack("<II", *rng.choice([(60000, 60000), (2**31 - 1, 2), (0, 0), (65535, 65535)]))
        at = data.find(old)
        while at >= 0:
            data[at:at + 8] = new
            at = data.find(old, at + 8)
        return kind, write(folder / "clip.avi", bytes(data))
    if kind == "header-only":
        return kind, write(folder / "clip.avi", good[:rng.choice([12, 64, 256, 2048])])
    if kind == "flipped-bits":
        data = bytearray(good)
        for _ in range(rng.randrange(5, 200)):
            at = rng.randrange(len(data))
            data[at] ^= 1 << rng.randrange(8)
        return kind, write(folder / "clip.avi", bytes(data))
    if kind == "empty":
        return kind, write(folder / f"clip{suffix}", b"")
    if kind == "gif-huge":
        return kind, write(folder / "clip.gif", gif_declaring(*rng.choice([(65535, 65535), (1, 65535), (0, 5)])))
    from PIL import Image

    frames = [Image.fromarray(noise_image(rng, 48, 64)) for _ in range(3)]
    buffer = io.BytesIO()
    frames[0].save(buffer, format="GIF", save_all=True, append_images=frames[1:])
    raw = buffer.getvalue()
    return kind, write(folder / "clip.gif", raw[:max(8, len(raw) // 2)])


def video_case(fixtures: Fixtures, rng: random.Random, folder: Path) -> Case:
    kind, path = bad_video(fixtures, rng, folder / "source")
    names = [path.name, "source"]
    route = rng.choice(["detect", "ingest", "ingest-folder"])
    if route == "detect":
        return Case("detect", f"video:{kind}", ["detect", str(path), "--stride", str(rng.choice([1, 5]))], names)
    target = str(path.parent if route == "ingest-folder" else path)
    return Case("ingest", f"video:{kind}", ["ingest", target, "--gallery", str(folder / "gallery"),
                                            "--stride", str(rng.choice([1, 3]))], names)


# --------------------------------------------------------------------------------------------- worlds


WRONG_VALUES = [None, True, -1, 0, 10**40, 1e308, -1e308, 3.5, "", "x" * 5000, "ünï😀", [], [1, 2], {}, {"a": 1},
                "../../etc/passwd", "/etc/passwd", "\u0000", "NaN"]


def wrong_value(rng: random.Random):
    return rng.choice(WRONG_VALUES)


def copy_world(fixtures: Fixtures, folder: Path) -> Path:
    world = folder / "world"
    shutil.copytree(fixtures.world, world, symlinks=True)
    return world


def damage_records(records: list[dict], rng: random.Random, path_field: str, folder: Path,
                   image_root: Path) -> str:
    """Damage one record of a list of JSON objects in place; returns what was done."""
    record = rng.choice(records)
    how = rng.choice(["wrong-type", "missing-field", "dotdot-path", "absolute-path", "symlink-escape",
                      "huge-number", "unicode", "not-an-object", "missing-image", "folder-as-image"])
    if how == "wrong-type":
        key = rng.choice(list(record))
        record[key] = wrong_value(rng)
        return f"{how}:{key}"
    if how == "missing-field":
        key = rng.choice(list(record))
        del record[key]
        return f"{how}:{key}"
    if how == "dotdot-path":
        secret = write(folder / "secret" / "x.jpg", b"\xff\xd8secret\xff\xd9")
        depth = len(image_root.relative_to(folder).parts) if image_root.is_relative_to(folder) else 3
        record[path_field] = "../" * depth + "secret/x.jpg" if secret.exists() else "../x.jpg"
        return how
    if how == "absolute-path":
        record[path_field] = rng.choice(["/etc/passwd", str(folder / "secret.jpg"), "/dev/zero", "/proc/self/mem"])
        return how
    if how == "symlink-escape":
        outside = write(folder / "outside" / "o.jpg", b"outside")
        link = image_root / "escape.jpg"
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.exists() and not link.is_symlink():
            link.symlink_to(outside)
        record[path_field] = str(link.relative_to(image_root))
        return how
    if how == "huge-number":
        key = rng.choice([k for k in record if k != path_field] or list(record))
        record[key] = rng.choice([10**30, -(10**30), 1e300, 2**63])
        return f"{how}:{key}"
    if how == "unicode":
        key = rng.choice(list(record))
        record[key] = rng.choice(["😀" * 50, "\u202eevil", "ä\u0301", "\ud7ff", "名前"])
        return f"{how}:{key}"
    if how == "not-an-object":
        records[records.index(record)] = wrong_value(rng)
        return how
    if how == "missing-image":
        record[path_field] = "nowhere/missing.jpg"
        return how
    record[path_field] = "."
    return how


def world_case(fixtures: Fixtures, rng: random.Random, folder: Path) -> Case:
    world = copy_world(fixtures, folder)
    manifest = world / "manifest.jsonl"
    lines = manifest.read_text(encoding="utf-8").splitlines()
    how = rng.choice(["records", "records", "records", "malformed-line", "empty", "binary", "huge-line",
                      "top-level-list", "manifest-is-folder", "no-manifest", "world-json", "special"])
    if how == "records":
        records = [json.loads(line) for line in lines]
        kind = damage_records(records, rng, "image", folder, world)
        manifest.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
    elif how == "malformed-line":
        at = rng.randrange(len(lines))
        lines[at] = lines[at][:rng.randrange(len(lines[at]))]
        manifest.write_text("\n".join(lines) + "\n", encoding="utf-8")
        kind = how
    elif how == "empty":
        manifest.write_bytes(b"")
        kind = how
    elif how == "binary":
        manifest.write_bytes(rng.randbytes(300) + b"\n\x00\xff")
        kind = how
    elif how == "huge-line":
        manifest.write_text(json.dumps({"id": "x" * 200_000, "image": "y"}) + "\n" + "\n".join(lines) + "\n")
        kind = how
    elif how == "top-level-list":
        manifest.write_text("[1, 2, 3]\n\"text\"\n" + "\n".join(lines) + "\n")
        kind = how
    elif how == "manifest-is-folder":
        manifest.unlink()
        manifest.mkdir()
        kind = how
    elif how == "no-manifest":
        manifest.unlink()
        kind = how
    elif how == "special":
        manifest.unlink()
        kind = f"manifest-{rng.choice(SPECIAL_FILES)}"
        special_file(manifest, kind.removeprefix("manifest-"))
    else:
        (world / "world.json").write_text(rng.choice(["{", "[]", "null", json.dumps({"identities": "x"})]))
        kind = how
    names = ["manifest.jsonl", "world", str(world)]
    route = rng.choice(["ingest", "ingest", "benchmarks", "export", "eval"])
    if route == "ingest":
        argv = ["ingest", str(world), "--gallery", str(folder / "gallery")]
    elif route == "benchmarks":
        argv = ["world", "benchmarks", str(world), "--out", str(folder / "benchmarks")]
    elif route == "export":
        argv = ["world", "export", str(world), "--out", str(folder / "export.json")]
    else:
        argv = ["eval", "--world", str(world), "--protocol", rng.choice(["mg-separate", "modes", "cross-res"]),
                "--json", "--device", "cpu"]
    return Case(argv[0] if argv[0] != "world" else f"world {argv[1]}", f"world:{kind}", argv, names)


# --------------------------------------------------------------------------------------------- datasets

TEXT_LAYOUTS = {"cuhk-pedes": ("reid_raw.json", "file_path", ("train", "val", "test")),
                "icfg-pedes": ("ICFG-PEDES.json", "file_path", ("train", "test", "test")),
                "rstpreid": ("data_captions.json", "img_path", ("train", "val", "test"))}


def text_dataset(fixtures: Fixtures, root: Path, layout: str) -> tuple[list[dict], Path]:
    annotation, path_field, splits = TEXT_LAYOUTS[layout]
    images = root / "imgs"
    records = []
    for identity, split in zip((11, 12, 13), splits, strict=True):
        for k in range(2):
            relative = f"p{identity}/{k}.jpg"
            write(images / relative, fixtures.person_jpeg)
            records.append({"id": identity, "split": split, path_field: relative,
                            "captions": [f"a person {identity} in a red jacket", "another caption"],
                            "processed_tokens": [["a"], ["another"]]})
    return records, images


def dataset_case(fixtures: Fixtures, rng: random.Random, folder: Path) -> Case:
    layout = rng.choice([*TEXT_LAYOUTS, "market1501", "sysu-mm01"])
    root = folder / "dataset"
    if layout in TEXT_LAYOUTS:
        annotation, path_field, _ = TEXT_LAYOUTS[layout]
        records, images = text_dataset(fixtures, root, layout)
        how = rng.choice(["records", "records", "records", "malformed", "top-level", "empty", "long-caption",
                          "bad-image"])
        if how == "records":
            kind = damage_records(records, rng, path_field, folder, images)
            text = json.dumps(records)
        elif how == "malformed":
            text = json.dumps(records)[:rng.randrange(1, 200)]
            kind = how
        elif how == "top-level":
            text = json.dumps(rng.choice([{"annotations": records}, 5, "x", None]))
            kind = how
        elif how == "empty":
            text = ""
            kind = how
        elif how == "long-caption":
            records[0]["captions"] = [rng.choice(["x" * 100_000, "\x00\x1b[31m", "", "😀" * 1000, "...!!!"])]
            text = json.dumps(records)
            kind = how
        else:
            _, suffix, data = bad_image(fixtures, rng)
            write(images / records[-1][path_field], data)
            text = json.dumps(records)
            kind = how
        (root / annotation).write_text(text, encoding="utf-8")
        names = [annotation, "dataset", root.name]
    elif layout == "market1501":
        for sub in ("bounding_box_train", "bounding_box_test", "query"):
            for pid, cam in ((1, 1), (1, 2), (2, 1), (2, 3)):
                write(root / sub / f"{pid:04d}_c{cam}s1_000151_01.jpg", fixtures.person_jpeg)
        how = rng.choice(["bad-name", "bad-image", "missing-folder", "empty-folder", "file-as-folder"])
        if how == "bad-name":
            write(root / "query" / rng.choice(["x.jpg", "0001_c9.jpg", "-1_c1s1_0_01.jpg", "99999999_c1s1_1_1.jpg",
                                               "0001_c0s1_000151_01.jpg"]), fixtures.person_jpeg)
        elif how == "bad-image":
            _, _, data = bad_image(fixtures, rng)
            write(root / "bounding_box_test" / "0003_c1s1_000151_01.jpg", data)
        elif how == "missing-folder":
            shutil.rmtree(root / rng.choice(["query", "bounding_box_test"]))
        elif how == "empty-folder":
            shutil.rmtree(root / "query")
            (root / "query").mkdir()
        else:
            shutil.rmtree(root / "query")
            write(root / "query", b"file")
        kind = how
        names = ["dataset", "query", "bounding_box", "market"]
    else:
        for camera in range(1, 7):
            for person in (1, 2, 4, 5):
                write(root / f"cam{camera}" / f"{person:04d}" / "0001.jpg", fixtures.person_jpeg)
        exp = root / "exp"
        ids = {"train_id.txt": "1,2", "val_id.txt": "3", "test_id.txt": "4,5"}
        how = rng.choice(["id-file", "id-file", "bad-image", "missing-camera", "bad-path"])
        if how == "id-file":
            target = rng.choice(list(ids))
            ids[target] = rng.choice(["", "x", "1,,2", "99999999999999999999", "-1", "1;2", "\x00", "4,5" * 3,
                                      "1.5", "😀"])
        elif how == "bad-image":
            _, _, data = bad_image(fixtures, rng)
            write(root / "cam3" / "0004" / "0002.jpg", data)
        elif how == "missing-camera":
            shutil.rmtree(root / f"cam{rng.randrange(1, 7)}")
        else:
            write(root / "cam1" / rng.choice(["abcd", "0004/xx.jpg", "0004/0001.txt"]), b"x")
        for name, text in ids.items():
            write(exp / name, text.encode())
        kind = how
        names = ["dataset", "id.txt", "cam", "sysu"]
    argv = ["eval", "--data", f"{layout}:{root}", "--protocol", "t2i", "--json", "--device", "cpu"]
    return Case("eval --data", f"{layout}:{kind}", argv, names)


# --------------------------------------------------------------------------------------------- checkpoints


def copy_checkpoint(fixtures: Fixtures, folder: Path) -> Path:
    out = folder / "checkpoint"
    out.mkdir(parents=True)
    for file in fixtures.checkpoint.iterdir():
        if file.is_file():
            if file.name == "weights.safetensors":
                os.link(file, out / file.name)  # read-only use; replaced (never written) when damaged
            else:
                shutil.copy(file, out / file.name)
    return out


def safetensors_parts(data: bytes) -> tuple[dict, bytes]:
    length = struct.unpack("<Q", data[:8])[0]
    return json.loads(data[8:8 + length]), data[8 + length:]


def safetensors_bytes(header: dict, body: bytes) -> bytes:
    raw = json.dumps(header).encode()
    return struct.pack("<Q", len(raw)) + raw + body


def damage_checkpoint(fixtures: Fixtures, rng: random.Random, checkpoint: Path) -> str:
    weights = checkpoint / "weights.safetensors"
    how = rng.choice(["truncated", "truncated", "header-length", "header-json", "wrong-shape", "wrong-dtype",
                      "offsets", "config-json", "config-value", "config-value", "metadata", "missing"])
    if how in ("truncated", "header-length", "header-json", "wrong-shape", "wrong-dtype", "offsets"):
        data = weights.read_bytes()
        weights.unlink()
        if how == "truncated":
            data = data[:rng.choice([0, 4, 8, 100, rng.randrange(len(data))])]
        elif how == "header-length":
            data = struct.pack("<Q", rng.choice([2**63, 2**40, len(data), 3])) + data[8:]
        elif how == "header-json":
            length = struct.unpack("<Q", data[:8])[0]
            data = data[:8] + b"{" + data[9:8 + length].replace(b'"', b"'", 3) + data[8 + length:]
        else:
            header, body = safetensors_parts(data)
            name = rng.choice([k for k in header if k != "__metadata__"])
            if how == "wrong-shape":
                shape = header[name]["shape"]
                header[name]["shape"] = list(reversed(shape)) if len(shape) > 1 and shape[0] != shape[-1] else \
                    [*shape, 1] if rng.random() < 0.5 else [max(1, s // 2) for s in shape] or [1]
                if rng.random() < 0.5:  # a shape that disagrees with the byte count too
                    header[name]["shape"] = [s + 1 for s in shape] or [2]
            elif how == "wrong-dtype":
                header[name]["dtype"] = rng.choice(["F64", "I8", "BOOL", "X9", "U8"])
            else:
                start, end = header[name]["data_offsets"]
                header[name]["data_offsets"] = rng.choice([[end, start], [0, 2**40], [start, start], [-1, end]])
            data = safetensors_bytes(header, body)
        weights.write_bytes(data)
    elif how == "config-json":
        (checkpoint / "config.json").write_text(rng.choice(["{", "", "[]", "null", "\x00\x01", '{"name": 5}']))
    elif how == "config-value":
        config = json.loads((checkpoint / "config.json").read_text())
        path = rng.choice([("embed_dim",), ("vision", "width"), ("vision", "layers"), ("vision", "image_size"),
                           ("vision", "patch_size"), ("vision", "heads"), ("text", "context_length"),
                           ("text", "width"), ("vision", "mean"), ("name",)])
        target = config
        for key in path[:-1]:
            target = target.setdefault(key, {}) if isinstance(target, dict) else {}
        target[path[-1]] = rng.choice([10**9, 10**18, -1, 0, "x", None, [1, 2, 3], 2.5, [0, 0], 1e308])
        (checkpoint / "config.json").write_text(json.dumps(config))
        how = f"{how}:{'.'.join(path)}"
    elif how == "metadata":
        (checkpoint / "metadata.json").write_text(rng.choice(["{", "[]", "5", '{"weights_dtype": "int3"}',
                                                              '{"parameters": "many"}']))
    else:
        (checkpoint / rng.choice(["config.json", "weights.safetensors", "metadata.json"])).unlink()
    return how


def checkpoint_case(fixtures: Fixtures, rng: random.Random, folder: Path) -> Case:
    checkpoint = copy_checkpoint(fixtures, folder)
    kind = damage_checkpoint(fixtures, rng, checkpoint)
    names = ["checkpoint", "weights.safetensors", "config.json", "metadata.json"]
    route = rng.choice(["info", "info", "search", "ingest", "eval", "detector-onnx"])
    if route == "info":
        return Case("checkpoint info", f"checkpoint:{kind}", ["checkpoint", "info", str(checkpoint)], names)
    if route == "search":
        return Case("search --checkpoint", f"checkpoint:{kind}",
                    ["search", "--gallery", str(fixtures.gallery), "--checkpoint", str(checkpoint), "--text",
                     "a man", "--device", "cpu"], names)
    if route == "ingest":
        return Case("ingest --checkpoint", f"checkpoint:{kind}",
                    ["ingest", str(fixtures.world), "--gallery", str(folder / "gallery"), "--checkpoint",
                     str(checkpoint), "--device", "cpu"], names)
    if route == "eval":
        return Case("eval --checkpoint", f"checkpoint:{kind}",
                    ["eval", "--world", str(fixtures.world), "--protocol", "mg-separate", "--checkpoint",
                     str(checkpoint), "--device", "cpu"], names)
    model = write(folder / "detector.onnx", rng.choice([b"", rng.randbytes(500), b"\x08\x07" + rng.randbytes(64)]))
    source = write(folder / "source" / "good.jpg", fixtures.person_jpeg)
    layout = rng.choice(["yolo", "yolov8", "ssd", "yolox"])
    return Case("detect --detector ONNX", "onnx:garbage",
                ["detect", str(source), "--detector", str(model), "--onnx-layout", layout], ["detector.onnx"])


# --------------------------------------------------------------------------------------------- queries

ABSURD_TEXTS = ["", " ", "\t\n", "x" * 100_000, "a man " * 20_000, "\x00\x01\x02\x1b[31mred\x1b[0m", "!!!???...;;;",
                "😀🧥👖🎒" * 50, "\u202ea man in red\u202c", "a\u0301\u0302\u0303" * 1000, "-" * 10, "--text",
                "0", "red red red red red red red red", "NaN", "a man in a red jacket" + "\n" * 1000,
                "\ufeffa woman", "名前 赤いジャケット", "<script>alert(1)</script>", "%s%n%x{0}", "\\" * 500]
KEEP_VALUES = ["0", "-1", "1e309", "nan", "inf", "abc", "0.0000001", "1.5", "99999999999999999999", "", "1/2",
               " 3 ", "0x10", "-0"]
OPTIONS = {"--keep": KEEP_VALUES, "--threshold": ["nan", "inf", "-inf", "1e400", "abc", ""],
           "--level": ["XX", "", "uc", "UF ", "😀", "classifier", "parser"],
           "--after": ["not a time", "1e400", "nan", "-99999999999999", "2024-13-45", "", "9999-12-31T23:59:59"],
           "--before": ["yesterday", "inf", "0", "2024-01-01T00:00:00+99:00"],
           "--require": ["nonsense", "", "top_color", "top_color=red", "😀"],
           "--camera": ["", "../../x", "\x00", "cam03"],
           "--top": ["0", "-1", "99999999999999999999", "1e3"],
           "--attribute-weight": ["nan", "inf", "-1e308", "1e308", "x"]}


def query_case(fixtures: Fixtures, rng: random.Random, folder: Path) -> Case:
    route = rng.choice(["parse", "parse", "search-text", "search-then", "search-option", "search-option",
                        "interactive"])
    text = rng.choice(ABSURD_TEXTS)
    label = repr(text[:12])
    gallery = ["search", "--gallery", str(fixtures.gallery)]
    if route == "parse":
        argv = ["parse", text] + (["--json"] if rng.random() < 0.5 else [])
        return Case("parse", f"text:{label}", argv, ["text", "description"], timeout=60)
    if route == "search-text":
        return Case("search --text", f"text:{label}", [*gallery, "--text", text, "--json"], ["text", "description"])
    if route == "search-then":
        return Case("search --then", f"text:{label}", [*gallery, "--text", "a man", "--then", text],
                    ["then", "text", "description", "step"])
    if route == "interactive":
        lines = rng.sample([":undo", ":branch 99", ":confirm nothing", ":similar 0", ":help", text, ":keep -1",
                            ":bogus", ":branch -1", ":similar ../x", "a man", ":" + "x" * 5000], 5)
        return Case("search --interactive", "prompt", [*gallery, "--interactive"], ["search", "command"],
                    stdin="\n".join(lines) + "\n")
    option = rng.choice(list(OPTIONS))
    value = rng.choice(OPTIONS[option])
    argv = [*gallery, "--text", rng.choice(["a man", text]), option, value]
    names = [option, option.lstrip("-"), value or "''", "--text", "query", "filters"]
    return Case(f"search {option}", f"option:{value[:16]!r}", argv, names)


FOOTAGE_OPTIONS = {"--tiles": ["0x0", "99999x99999", "-1x2", "x", "3x", "auto ", "1x1000000", "off", "16x16", "1x16"],
                   "--detector": ["nonsense", "", "../../etc/passwd.onnx", "HOG", "yolox.ONNX"],
                   "--min-score": ["nan", "-1", "2", "inf", "1e-300"],
                   "--stride": ["0", "-1", "99999999999999999999", "1000000"],
                   "--onnx-size": ["0x0", "100000x100000", "axb", "640", "-640x640"],
                   "--start": ["nan", "1e400", "-1e20", "2024-02-30T00:00:00", "tomorrow"],
                   "--modality": ["thermal", "", "IR", "😀"],
                   "--reid": ["XX-YY", "", "all,none", "AD-LT,AD-LT", ","],
                   "--batch": ["0", "99999999", "-5"],
                   "--camera": ["", "\x00", "../x", "c" * 5000],
                   "--samples-per-track": ["0", "100000"],
                   "--min-box-height": ["0", "nan", "1e308"]}
INGEST_ONLY = {"--start", "--modality", "--reid", "--batch", "--camera", "--samples-per-track", "--min-box-height"}


def footage_option_case(fixtures: Fixtures, rng: random.Random, folder: Path) -> Case:
    """An absurd value of one detect or ingest option on good footage."""
    option = rng.choice(list(FOOTAGE_OPTIONS))
    value = rng.choice(FOOTAGE_OPTIONS[option])
    source = fixtures.video if rng.random() < 0.5 else write(folder / "source" / "good.jpg", fixtures.person_jpeg)
    extra = []
    if option == "--onnx-size" or (option == "--tiles" and rng.random() < 0.3):
        extra = ["--detector", str(ROOT_DETECTOR), "--onnx-layout", "yolox"] if option == "--onnx-size" else []
    if option in INGEST_ONLY or rng.random() < 0.4:
        argv = ["ingest", str(source), "--gallery", str(folder / "gallery"), option, value, *extra]
    else:
        argv = ["detect", str(source), option, value, *extra]
    return Case(f"{argv[0]} {option}", f"option:{value[:16]!r}", argv, [option, option.lstrip("-"), value or "''"])


ROOT_DETECTOR = Path(__file__).resolve().parents[1] / "resources" / "models" / "detectors" / "yolox_nano.onnx"


# --------------------------------------------------------------------------------------------- galleries


def gallery_case(fixtures: Fixtures, rng: random.Random, folder: Path) -> Case:
    gallery = folder / "gallery"
    shutil.copytree(fixtures.gallery, gallery)
    target = rng.choice(["gallery.json", "gallery.json", "gallery.json", "items.jsonl", "items.jsonl", "vectors",
                         "index", "crops", "attributes", "writer", "journal"])
    if target == "gallery.json":
        file = gallery / "gallery.json"
        meta = json.loads(file.read_text())
        how = rng.choice(["malformed", "wrong-type", "view-file", "count", "missing-key", "format", "empty"])
        if how == "malformed":
            file.write_text(file.read_text()[:rng.randrange(1, 300)])
        elif how == "empty":
            file.write_text("")
        elif how == "wrong-type":
            key = rng.choice(list(meta))
            meta[key] = wrong_value(rng)
            how = f"{how}:{key}"
        elif how == "view-file":
            view = rng.choice(list(meta["views"]))
            meta["views"][view]["file"] = rng.choice(["../../outside/owned", "/tmp/owned", "", "a/b", "..",
                                                      "x" * 300, "\x00"])
        elif how == "count":
            meta[rng.choice(["count", "items_bytes"])] = rng.choice([10**18, -1, 0, 2, 1.5])
        elif how == "missing-key":
            key = rng.choice(list(meta))
            del meta[key]
            how = f"{how}:{key}"
        else:
            meta["format"] = rng.choice([999, 0, "1"])
        if how not in ("malformed", "empty"):
            file.write_text(json.dumps(meta))
        kind = f"gallery.json:{how}"
    elif target == "items.jsonl":
        file = gallery / "items.jsonl"
        lines = file.read_text().splitlines()
        how = rng.choice(["truncated", "garbage-line", "wrong-type", "crop-path", "missing", "short"])
        if how == "truncated":
            file.write_text(file.read_text()[:rng.randrange(1, len(file.read_text()))])
        elif how == "garbage-line":
            lines[rng.randrange(len(lines))] = rng.choice(["{", "[]", "null", "\x00\x00", "😀"])
            file.write_text("\n".join(lines) + "\n")
        elif how in ("wrong-type", "crop-path"):
            at = rng.randrange(len(lines))
            item = json.loads(lines[at])
            if how == "crop-path":
                item["crop"] = rng.choice(["../../../../etc/passwd", "/etc/passwd", "crops/../../x.jpg", ""])
            else:
                key = rng.choice(list(item))
                item[key] = wrong_value(rng)
                how = f"{how}:{key}"
            lines[at] = json.dumps(item)
            file.write_text("\n".join(lines) + "\n")
        elif how == "missing":
            file.unlink()
        else:
            file.write_text("\n".join(lines[:-1]) + "\n")
        kind = f"items.jsonl:{how}"
    elif target in ("vectors", "index"):
        files = sorted((gallery / target).iterdir())
        file = rng.choice(files)
        how = rng.choice(["truncated", "random", "missing", "empty", "other-dim"])
        if how == "truncated":
            data = file.read_bytes()
            file.write_bytes(data[:rng.randrange(len(data))])
        elif how == "random":
            file.write_bytes(rng.randbytes(rng.choice([16, 500, 5000])))
        elif how == "missing":
            file.unlink()
        elif how == "empty":
            file.write_bytes(b"")
        elif target == "vectors":
            with open(file, "wb") as fh:
                np.save(fh, np.zeros((rng.choice([1, 3, 1000]), 7), np.float16))
        else:
            import faiss

            faiss.write_index(faiss.IndexFlatIP(7), str(file))
        kind = f"{target}:{how}"
    elif target == "crops":
        crops = sorted(p for p in (gallery / "crops").rglob("*") if p.is_file())
        file = rng.choice(crops)
        how = rng.choice(["missing", "replaced"])
        if how == "missing":
            file.unlink()
        else:
            _, _, data = bad_image(fixtures, rng)
            file.write_bytes(data)
        kind = f"crop:{how}"
    elif target == "attributes":
        files = sorted(p for p in (gallery / "attributes").iterdir() if p.is_file())
        file = rng.choice(files)
        how = rng.choice(["truncated", "random", "missing", "json"])
        if how == "truncated":
            file.write_bytes(file.read_bytes()[:rng.randrange(max(1, file.stat().st_size))])
        elif how == "random":
            file.write_bytes(rng.randbytes(64))
        elif how == "missing":
            file.unlink()
        else:
            file.write_text(rng.choice(["{", "[]", json.dumps({"format": 1, "rows": 10**12, "columns": 5})]))
        kind = f"attributes:{how}"
    elif target == "writer":
        write(gallery / "writer.json", rng.choice([b"{", b"[]", b'{"pid": "x"}', b'{"pid": -1}', rng.randbytes(40)]))
        kind = "writer.json"
    else:
        write(gallery / rng.choice(["journal.json", "redo.json", "journal/redo.json"]),
              rng.choice([b"{", b"[]", b'{"ops": [{"op": "rename", "from": "../../x", "to": "/tmp/y"}]}']))
        kind = "journal"
    names = ["gallery", str(gallery)]
    route = rng.choice(["info", "verify", "rebuild", "search", "ingest", "rebuild-attributes"])
    if route == "search":
        argv = ["search", "--gallery", str(gallery), "--text", "a man in a red jacket", "--device", "cpu"]
    elif route == "ingest":
        argv = ["ingest", str(fixtures.world), "--gallery", str(gallery), "--device", "cpu"]
    elif route == "rebuild-attributes":
        argv = ["gallery", "rebuild", str(gallery), "--attributes"]
    else:
        argv = ["gallery", route, str(gallery)]
    entry = "gallery rebuild --attributes" if route == "rebuild-attributes" else \
        argv[0] if argv[0] != "gallery" else f"gallery {argv[1]}"
    return Case(entry, kind, argv, names)


# --------------------------------------------------------------------------------------------- case databases


def database_case(fixtures: Fixtures, rng: random.Random, folder: Path) -> Case:
    db = folder / "cases.db"
    report = folder / fixtures.report.name
    manifest = folder / f"{fixtures.report.name}.manifest.json"
    shutil.copy(fixtures.db, db)
    shutil.copy(fixtures.report, report)
    shutil.copy(fixtures.report.with_name(f"{fixtures.report.name}.manifest.json"), manifest)
    how = rng.choice(["not-sqlite", "empty", "truncated", "newer-schema", "other-tables", "missing", "folder",
                      "manifest-json", "manifest-field", "report-missing"])
    names = [db.name, "database", "cases.db"]
    if how == "not-sqlite":
        db.write_bytes(rng.choice([rng.randbytes(5000), b"SQLite format 3\x00" + rng.randbytes(200), b"hello"]))
    elif how == "empty":
        db.write_bytes(b"")
    elif how == "truncated":
        data = fixtures.db.read_bytes()
        db.write_bytes(data[:rng.randrange(100, len(data))])
    elif how == "newer-schema":
        with sqlite3.connect(db) as connection:
            connection.execute("UPDATE alembic_version SET version_num = ?", (rng.choice(["9999_future", "", "x"]),))
    elif how == "other-tables":
        db.unlink()
        with sqlite3.connect(db) as connection:
            connection.execute("CREATE TABLE cases (id TEXT, title BLOB)")
            connection.execute("INSERT INTO cases VALUES ('x', x'00')")
    elif how == "missing":
        db.unlink()
    elif how == "folder":
        db.unlink()
        db.mkdir()
    elif how == "manifest-json":
        manifest.write_text(rng.choice(["{", "", "[]", "null", "\x00"]))
        names = [manifest.name, "manifest"]
    elif how == "manifest-field":
        data = json.loads(manifest.read_text())
        key = rng.choice(list(data))
        data[key] = wrong_value(rng)
        manifest.write_text(json.dumps(data))
        names = [manifest.name, "manifest", key]
        how = f"{how}:{key}"
    else:
        report.unlink()
        names = [report.name, "report"]
    if rng.random() < 0.5 and not how.startswith(("manifest", "report")):
        argv = ["report", "export", "--db", str(db), "--case", str(rng.choice([1, 1, 0, -1, 2**62])),
                "--out", str(folder / "out.html")]
        entry = "report export"
    else:
        argv = ["report", "verify", str(report), "--db", str(db)]
        entry = "report verify"
    return Case(entry, f"case-db:{how}", argv, names)


# --------------------------------------------------------------------------------------------- bounded inputs
# Deep JSON in every JSON file Lineup reads, batches of large-declared-size images, huge sparse files named by a
# manifest, planted gallery journals, crafted pickles as a training state, bidi/NUL text in case titles and
# notes (docs/hardening.md).


def deep_json(rng: random.Random) -> str:
    """A JSON document nested far past the reader's depth limit (a RecursionError for a plain ``json.loads``)."""
    depth = rng.choice([70, 1000, 5000, 100_000])
    opener, closer = rng.choice([("[", "]"), ('{"a":', "}")])
    return opener * depth + "1" + closer * depth


def deep_json_case(fixtures: Fixtures, rng: random.Random, folder: Path) -> Case:
    target = rng.choice(["manifest", "gallery.json", "evidence", "items.jsonl", "db-payload", "config.json",
                         "report-manifest"])
    text = deep_json(rng)
    if target == "manifest":
        world = copy_world(fixtures, folder)
        lines = (world / "manifest.jsonl").read_text().splitlines()
        lines[rng.randrange(len(lines))] = text
        (world / "manifest.jsonl").write_text("\n".join(lines) + "\n")
        route = rng.choice(["ingest", "eval"])
        if route == "ingest":
            return Case("ingest", "deep-json:manifest", ["ingest", str(world), "--gallery", str(folder / "g"),
                                                         "--device", "cpu"], ["manifest.jsonl", "world"])
        return Case("eval", "deep-json:manifest", ["eval", "--world", str(world), "--protocol", "mg-separate",
                                                   "--device", "cpu"], ["manifest.jsonl", "world"])
    if target in ("gallery.json", "evidence", "items.jsonl"):
        gallery = folder / "gallery"
        shutil.copytree(fixtures.gallery, gallery)
        if target == "gallery.json":
            (gallery / "gallery.json").write_text(text)
        elif target == "items.jsonl":
            file = gallery / "items.jsonl"
            lines = file.read_text().splitlines()
            lines[rng.randrange(len(lines))] = text
            file.write_text("\n".join(lines) + "\n")
        else:
            files = sorted(p for p in (gallery / "attributes").rglob("*.json") if p.is_file()) \
                if (gallery / "attributes").is_dir() else []
            write(rng.choice(files) if files else gallery / "attributes" / "evidence.json", text.encode())
        route = rng.choice(["gallery info", "gallery verify", "search"])
        argv = ["search", "--gallery", str(gallery), "--text", "a man", "--device", "cpu"] if route == "search" \
            else [*route.split(), str(gallery)]
        return Case(route, f"deep-json:{target}", argv, ["gallery", target])
    if target == "config.json":
        checkpoint = copy_checkpoint(fixtures, folder)
        (checkpoint / rng.choice(["config.json", "metadata.json"])).write_text(text)
        return Case("checkpoint info", "deep-json:checkpoint", ["checkpoint", "info", str(checkpoint)],
                    ["config.json", "metadata.json", "checkpoint"])
    db = folder / "cases.db"
    shutil.copy(fixtures.db, db)
    report = folder / fixtures.report.name
    manifest = folder / f"{fixtures.report.name}.manifest.json"
    shutil.copy(fixtures.report, report)
    shutil.copy(fixtures.report.with_name(manifest.name), manifest)
    if target == "report-manifest":
        manifest.write_text(text)
        return Case("report verify", "deep-json:report-manifest", ["report", "verify", str(report), "--db", str(db)],
                    [manifest.name, "manifest"])
    with sqlite3.connect(db) as connection:
        tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        done = False
        for table in rng.sample(tables, len(tables)):
            columns = [row[1] for row in connection.execute(f"PRAGMA table_info({table})")]
            for column in columns:
                if column in ("payload", "data", "details", "meta", "attributes", "values", "query", "result",
                              "histogram", "settings", "boxes", "filters"):
                    try:
                        connection.execute(f'UPDATE "{table}" SET "{column}" = ?', (text,))
                    except sqlite3.DatabaseError:  # the audit trail's triggers refuse updates
                        continue
                    done = True
                    break
            if done:
                break
    return Case("report export", "deep-json:db-payload", ["report", "export", "--db", str(db), "--case", "1",
                                                          "--out", str(folder / "out.html")],
                ["cases.db", "database", "table", "row", "audit"])


@functools.lru_cache(maxsize=4)
def png_full(width: int, height: int, colour: int = 0) -> bytes:
    """A complete, valid 8-bit PNG of ``width`` × ``height``, grey (``colour`` 0) or RGB (2): all zero rows,
    deflated as a stream (about 1 KB per decoded megabyte on disk), the full size once decoded."""
    packer = zlib.compressobj(9)
    row = b"\x00" * (width * (3 if colour == 2 else 1) + 1)
    body = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    header = struct.pack(">IIBBBBB", width, height, 8, colour, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", header) + _png_chunk(b"IDAT", body) + _png_chunk(b"IEND", b"")


def large_batch_case(fixtures: Fixtures, rng: random.Random, folder: Path) -> Case:
    """Several images each just under the per-image pixel limit (tiny on disk): a batch's decoded size must stay
    bounded (``PixelBudget``) or the images be refused by name."""
    crops = folder / "crops"
    count = rng.choice([2, 4, 6])
    side = rng.choice([9_950, 9_999, 12_000, 30_000])
    for number in range(count):
        kind = rng.choice(["png", "png-full", "jpeg", "bmp"])
        if kind == "png-full" and side <= 10_000:
            data, kind = png_full(side, side, rng.choice([0, 2])), "png"
        elif kind.startswith("png"):
            data, kind = png_declaring(side, side), "png"
        elif kind == "jpeg":
            data = jpeg_declaring(fixtures.person_jpeg, side, side)
        else:
            data = bmp_declaring(side, side)
        write(crops / f"big{number}.{kind}", data)
    write(crops / "good.jpg", fixtures.person_jpeg)
    return Case("ingest --crops", f"large-batch:{side}x{count}",
                ["ingest", str(crops), "--crops", "--gallery", str(folder / "gallery"), "--device", "cpu"],
                ["big", "crops"], max_rss=2 << 30)


def sparse_case(fixtures: Fixtures, rng: random.Random, folder: Path) -> Case:
    """A world whose manifest names a huge sparse file: a PNG header declaring a small image, then gigabytes of
    holes; it must be refused by its size, not read whole."""
    world = copy_world(fixtures, folder)
    lines = (world / "manifest.jsonl").read_text().splitlines()
    at = rng.randrange(len(lines))
    record = json.loads(lines[at])
    huge = world / "images" / "huge.png"
    huge.parent.mkdir(parents=True, exist_ok=True)
    head = rng.choice([png_declaring(64, 128), fixtures.person_jpeg[:2000], b""])
    with open(huge, "wb") as fh:
        fh.write(head)
        fh.truncate(rng.choice([300 << 20, 1 << 30, 3 << 30]))
    record["image"] = str(huge.relative_to(world))
    lines[at] = json.dumps(record)
    (world / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    return Case("ingest", "sparse:manifest", ["ingest", str(world), "--gallery", str(folder / "gallery"),
                                              "--device", "cpu"], ["huge.png", "world"], max_rss=2 << 30)


def journal_case(fixtures: Fixtures, rng: random.Random, folder: Path) -> Case:
    """A planted ``journal.json``: without or with a wrong ``gallery_id``, moving files in or out of the gallery
    or deleting them. It must not be applied; the files it names must survive."""
    gallery = folder / "gallery"
    shutil.copytree(fixtures.gallery, gallery)
    victim = write(folder / "outside" / "precious.txt", b"keep me")
    meta = json.loads((gallery / "gallery.json").read_text())
    how = rng.choice(["no-id", "wrong-id", "move-out", "move-in", "delete-items", "delete-outside", "right-id"])
    record: dict = {"moves": [], "gallery": dict(meta, count=0), "delete": []}
    if how != "no-id":
        record["gallery_id"] = "someone-else" if how == "wrong-id" else meta.get("id", "x")
    if how == "move-out":
        record["moves"] = [["items.jsonl", "../outside/items.jsonl"]]
    elif how == "move-in":
        record["moves"] = [["../outside/precious.txt", "items.jsonl"]]
    elif how == "delete-items":
        record["delete"] = ["items.jsonl", "gallery.json"]
    elif how in ("delete-outside", "right-id"):
        record["delete"] = ["../outside/precious.txt", "crops/../../outside/precious.txt"]
    if how == "wrong-id" or rng.random() < 0.5:
        record["delete"] = [*record["delete"], "../outside/precious.txt"]
    (gallery / "journal.json").write_text(json.dumps(record))
    route = rng.choice(["gallery info", "gallery verify", "gallery rebuild", "search", "ingest"])
    if route == "search":
        argv = ["search", "--gallery", str(gallery), "--text", "a man", "--device", "cpu"]
    elif route == "ingest":
        argv = ["ingest", str(fixtures.world), "--gallery", str(gallery), "--device", "cpu"]
    else:
        argv = [*route.split(), str(gallery)]
    survivors = [str(victim), str(gallery / "items.jsonl"), str(gallery / "gallery.json")]
    return Case(route, f"journal:{how}", argv, ["journal.json", "gallery"], survivors=survivors)


class _Planted:
    """Pickled as a call of ``os.system``: loading it without ``weights_only`` would run the command."""

    def __init__(self, command: str) -> None:
        self.command = command

    def __reduce__(self):
        return os.system, (self.command,)


def pickle_case(fixtures: Fixtures, rng: random.Random, folder: Path) -> Case:
    """A crafted pickle as ``training_state.pt`` of a resumable run: resuming must refuse it by name, never run
    it (the marker file it would write must not appear)."""
    import pickle

    run = folder / "run"
    if fixtures.run is None:
        run.mkdir(parents=True)
    else:
        shutil.copytree(fixtures.run, run)
    marker = folder / "pwned"
    payload = _Planted(f"touch {shlex_quote(str(marker))}")
    how = rng.choice(["plain-pickle", "torch-zip", "nested"])
    state = run / "training_state.pt"
    if how == "plain-pickle":
        state.write_bytes(pickle.dumps(payload, protocol=rng.choice([2, 4, 5])))
    elif how == "nested":
        state.write_bytes(pickle.dumps({"model": {"w": payload}, "epoch": 1}))
    else:
        import torch

        torch.save({"model": {}, "epoch": payload}, state)
    world = fixtures.world if fixtures.run is None else fixtures.run.parent / "trainworld"
    argv = ["train", "--config", "tiny", "--data", f"world:{world}", "--out", str(run), "--resume",
            "--epochs", "2", "--device", "cpu"]
    return Case("train --resume", f"pickle:{how}", argv, ["training_state.pt", "run"], forbidden=[str(marker)])


def shlex_quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


BIDI_TEXTS = ["\u202eevil\u202c title", "nul\x00byte", "\u2066isolate\u2069", "\u200f\u200e\u061c marks",
              "line\nbreak\rcarriage", "\x1b[31mred\x1b[0m", "\ufeffbom", "\ud800".encode("utf-8", "surrogatepass")
              .decode("utf-8", "replace"), "a" * 70_000, "\u0000" * 10]


def bidi_case(fixtures: Fixtures, rng: random.Random, folder: Path) -> Case:
    """Bidi controls, NUL and other control text written straight into a case's title and notes, then the report
    exported and verified: no crash, and no raw control character may reach the report unescaped."""
    db = folder / "cases.db"
    shutil.copy(fixtures.db, db)
    text = rng.choice(BIDI_TEXTS)
    where = rng.choice(["title", "note", "both"])
    with sqlite3.connect(db) as connection:
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        with contextlib.suppress(sqlite3.DatabaseError):  # triggers may refuse an update: the case runs as is
            if where in ("title", "both") and "cases" in tables:
                connection.execute("UPDATE cases SET title = ?", (text,))
            if where in ("note", "both") and "notes" in tables:
                columns = [row[1] for row in connection.execute("PRAGMA table_info(notes)")]
                column = next((c for c in ("text", "body", "content") if c in columns), None)
                if column:
                    connection.execute(f'UPDATE notes SET "{column}" = ?', (text,))
    out = folder / "out.html"
    return Case("report export", f"bidi:{where}", ["report", "export", "--db", str(db), "--case", "1", "--out",
                                                   str(out)], ["cases.db", "database", "case", "note", "title"])


GENERATORS: dict[str, tuple[Callable[[Fixtures, random.Random, Path], Case], float]] = {
    "image": (image_case, 0.24),
    "video": (video_case, 0.08),
    "world": (world_case, 0.12),
    "dataset": (dataset_case, 0.12),
    "checkpoint": (checkpoint_case, 0.10),
    "query": (query_case, 0.10),
    "footage-option": (footage_option_case, 0.06),
    "gallery": (gallery_case, 0.12),
    "database": (database_case, 0.06),
    "deep-json": (deep_json_case, 0.08),
    "large-batch": (large_batch_case, 0.04),
    "sparse": (sparse_case, 0.03),
    "journal": (journal_case, 0.05),
    "pickle": (pickle_case, 0.04),
    "bidi": (bidi_case, 0.04),
}


def make_case(fixtures: Fixtures, seed: int, number: int, folder: Path, families: list[str] | None = None) -> Case:
    """Case ``number`` of the run seeded ``seed``, written under ``folder`` (rebuilt identically from the two and
    ``families``, the generators drawn from: all when None)."""
    rng = random.Random(f"{seed}:{number}")
    chosen = [name for name in GENERATORS if families is None or name in families]
    family = rng.choices(chosen, weights=[GENERATORS[name][1] for name in chosen])[0]
    folder.mkdir(parents=True, exist_ok=True)
    case = GENERATORS[family][0](fixtures, rng, folder)
    case.number = number
    return case
