"""Hostile image inputs: decompression bombs refused from the header, truncated files, tiny and damaged images
reported per file while the rest of a folder is ingested, query images refused or shrunk, HOG on images smaller
than its window."""

import struct
import subprocess
import sys
import zlib
from pathlib import Path

import cv2
import numpy as np
import pytest

from engine.index import Gallery
from engine.ingest import HogDetector, ingest
from engine.kernel.images import ImageInputError, decode_image, read_image
from engine.retrieval.search.errors import QueryInputError
from engine.retrieval.search.query import QUERY_MAX_SIDE, load_image

ROOT = Path(__file__).resolve().parents[1]


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def png_declaring(width: int, height: int) -> bytes:
    """A small, well-formed PNG whose header declares ``width`` × ``height`` (its pixel data is one tiny row)."""
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(b"\x00" * 7))
            + _chunk(b"IEND", b""))


def jpeg(width: int = 64, height: int = 128) -> bytes:
    rng = np.random.default_rng(0)
    ok, data = cv2.imencode(".jpg", rng.integers(0, 255, (height, width, 3), dtype=np.uint8))
    assert ok
    return data.tobytes()


class CountingEncoder:
    """Test double of the model: unit vectors from crop statistics."""

    def __init__(self) -> None:
        self.views = {"rgb": 4}
        self.fingerprint = "counting-1"

    def __call__(self, crops, modalities, resolutions):
        rows = np.array([[*c.reshape(-1, 3).mean(0), 1.0 + c.std()] for c in crops], np.float32)
        return {"rgb": rows / np.linalg.norm(rows, axis=1, keepdims=True)}


def test_a_png_declaring_60000_squared_is_refused_by_name(tmp_path):
    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(png_declaring(60000, 60000))
    with pytest.raises(ImageInputError, match=r"bomb\.png.*3,600,000,000 pixels, over the limit") as caught:
        read_image(bomb)
    assert caught.value.path == str(bomb)


def test_the_pixel_limit_is_settable(tmp_path, monkeypatch):
    path = tmp_path / "wide.jpg"
    path.write_bytes(jpeg(64, 128))
    assert read_image(path).shape == (128, 64, 3)
    with pytest.raises(ImageInputError, match="8,192 pixels, over the limit of 8,000"):
        read_image(path, max_pixels=8000)
    monkeypatch.setenv("LINEUP_MAX_IMAGE_PIXELS", "8000")
    with pytest.raises(ImageInputError, match="over the limit of 8,000"):
        read_image(path)
    monkeypatch.setenv("LINEUP_MAX_IMAGE_PIXELS", "lots")
    with pytest.raises(ImageInputError, match="LINEUP_MAX_IMAGE_PIXELS='lots' is not a whole number"):
        read_image(path)


def test_truncated_damaged_and_empty_files_are_named_errors(tmp_path):
    data = jpeg()
    with pytest.raises(ImageInputError, match="truncated JPEG"):
        decode_image(data[: len(data) * 2 // 3], "cut.jpg")
    ok, png = cv2.imencode(".png", np.zeros((40, 20, 3), np.uint8))
    with pytest.raises(ImageInputError, match="truncated PNG"):
        decode_image(png.tobytes()[:-20], "cut.png")
    with pytest.raises(ImageInputError, match="empty"):
        decode_image(b"", "empty.png")
    with pytest.raises(ImageInputError, match="not a decodable image"):
        decode_image(b"GIF89a" + b"\x00" * 3, "junk.gif")
    with pytest.raises(ImageInputError, match="cannot be read"):
        read_image(tmp_path / "missing.png")
    damaged = bytearray(data)
    damaged[200:400] = b"\xff" * 200  # markers in the middle of the entropy-coded data
    try:
        image = decode_image(bytes(damaged), "damaged.jpg")
    except ImageInputError as exc:
        assert "damaged.jpg" in str(exc)
    else:
        assert image.shape == (128, 64, 3)


def test_hog_on_images_smaller_than_its_window_does_not_crash():
    # run in a child: before the guard, 200 × 40 killed the process with SIGSEGV
    code = ("import numpy as np\nfrom engine.ingest import HogDetector\nd = HogDetector()\n"
            "for h, w in [(40, 200), (16, 32), (1, 1), (127, 63), (10, 2000)]:\n"
            "    assert len(d.detect(np.full((h, w, 3), 128, np.uint8))) == 0\nprint('ok')\n")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr
    assert len(HogDetector().detect(np.zeros((40, 200, 3), np.uint8))) == 0


def test_a_folder_of_bad_images_is_reported_per_file_and_the_rest_ingests(tmp_path):
    folder = tmp_path / "cam1"
    folder.mkdir()
    rng = np.random.default_rng(1)
    cv2.imwrite(str(folder / "a_wide.png"), rng.integers(0, 255, (40, 200, 3), dtype=np.uint8))
    for i in range(3):
        cv2.imwrite(str(folder / f"b_ultra{i}.png"), rng.integers(0, 255, (32, 16, 3), dtype=np.uint8))
    person = cv2.resize(rng.integers(0, 255, (32, 16, 3), dtype=np.uint8), (128, 256))
    cv2.imwrite(str(folder / "c_person.png"), person)
    (folder / "d_bomb.png").write_bytes(png_declaring(60000, 60000))
    data = jpeg()
    (folder / "e_cut.jpg").write_bytes(data[: len(data) // 2])
    summary = ingest(folder, tmp_path / "g", CountingEncoder(), HogDetector())
    skipped = dict(summary.skipped_files)
    assert "over the limit" in skipped[str(folder / "d_bomb.png")]
    assert "truncated JPEG" in skipped[str(folder / "e_cut.jpg")]
    assert len(skipped) == 2
    (report,) = summary.sources
    assert report.status == "ingested" and report.frames == 5
    assert len(Gallery.open(tmp_path / "g")) == summary.totals()["items_added"]


def test_query_images_tiny_refused_large_shrunk(tmp_path):
    tiny = tmp_path / "tiny.png"
    cv2.imwrite(str(tiny), np.zeros((1, 1, 3), np.uint8))
    with pytest.raises(QueryInputError, match=r"sketch file .*tiny\.png is not a readable image: .*1 × 1"):
        load_image(tiny, "sketch")
    with pytest.raises(QueryInputError, match="IR image is 1 × 1 pixels"):
        load_image(np.zeros((1, 1), np.uint8), "IR")
    big = tmp_path / "big.jpg"
    cv2.imwrite(str(big), np.full((3000, 1500, 3), 200, np.uint8))
    shrunk = load_image(big, "sketch")
    assert max(shrunk.shape[:2]) == QUERY_MAX_SIDE and shrunk.shape[2] == 3
    assert max(load_image(np.zeros((4000, 100, 3), np.uint8), "IR").shape[:2]) == QUERY_MAX_SIDE
    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(png_declaring(20000, 20000))
    with pytest.raises(QueryInputError, match="over the limit"):
        load_image(bomb, "sketch")
