"""Bounded inputs (docs/hardening.md): image headers checked before a file is read whole, a size cap on files
read whole, a decoded-pixel budget per ingest batch, guarded thumbnails, the any-time protocol with a scenario
lacking queries, a refused second ingest writer before the model loads, and errors that name their file."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import threading
import zlib
from io import StringIO
from pathlib import Path

import cv2
import numpy as np
import pytest
from typer.testing import CliRunner

from engine.index import Gallery, GalleryBusyError, GalleryCorruptError, writing
from engine.ingest import IngestOptions, ingest
from engine.kernel.images import (
    HEADER_BYTES,
    ImageInputError,
    PixelBudget,
    decode_image_sized,
    image_size,
    read_image,
    read_image_bytes,
)
from engine.retrieval.search.errors import QueryInputError
from engine.retrieval.search.query import load_image


def _chunk(kind: bytes, body: bytes) -> bytes:
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF)


def png_declaring(width: int, height: int) -> bytes:
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(b"\x00" * 64))
            + _chunk(b"IEND", b""))


def person(path: Path, shade: int = 120, size=(80, 40)) -> Path:
    image = np.full((*size, 3), shade, np.uint8)
    image[10:30, 10:30] = 255 - shade
    cv2.imwrite(str(path), image)
    return path


def sparse(path: Path, head: bytes, size: int) -> Path:
    with open(path, "wb") as fh:
        fh.write(head)
        fh.truncate(size)
    return path


class RecordingEncoder:
    """Test double of the model: records each batch's crop count and pixels."""

    def __init__(self) -> None:
        self.views = {"rgb": 4}
        self.fingerprint = "recording-1"
        self.batches: list[int] = []

    def __call__(self, crops, modalities, resolutions):
        self.batches.append(len(crops))
        rows = np.array([[*c.reshape(-1, 3).mean(0), 1.0 + c.std()] for c in crops], np.float32)
        return {"rgb": rows / np.linalg.norm(rows, axis=1, keepdims=True)}


# --------------------------------------------------------------------------------------------- images


def test_a_bomb_header_is_refused_before_the_file_is_read_whole(tmp_path, monkeypatch):
    bomb = sparse(tmp_path / "bomb.png", png_declaring(30000, 30000), 1 << 30)
    reads: list[int] = []
    real_open = open

    class Counting:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def fileno(self):
            return self.fh.fileno()

        def read(self, n=-1):
            reads.append(n)
            return self.fh.read(n)

    monkeypatch.setattr("builtins.open", lambda *a, **k: Counting(real_open(*a, **k)))
    with pytest.raises(ImageInputError, match=r"bomb\.png: declares 900,000,000 pixels, over the limit"):
        read_image_bytes(bomb)
    assert reads == [HEADER_BYTES]  # the header only, never the gigabyte behind it


def test_a_huge_file_is_refused_by_its_size_unread(tmp_path):
    huge = sparse(tmp_path / "huge.png", png_declaring(64, 128), 2 << 30)
    with pytest.raises(ImageInputError, match=r"huge\.png: is 2,147,483,648 bytes, over the limit of .* bytes"):
        read_image(huge)
    with pytest.raises(ImageInputError, match="over the limit"):
        read_image_bytes(huge, max_bytes=1000)


def test_image_size_reads_the_header_only(tmp_path):
    assert image_size(person(tmp_path / "p.png")) == (40, 80)
    with pytest.raises(ImageInputError, match=r"big\.png.*over the limit"):
        image_size(sparse(tmp_path / "big.png", png_declaring(20000, 20000), 1 << 30))
    with pytest.raises(ImageInputError, match=r"is a folder, not an image"):
        image_size(tmp_path)


def test_the_pixel_budget_closes_a_batch_early():
    budget = PixelBudget(limit=100)
    assert budget.fits(500)  # an empty batch takes any one image (bounded per image)
    budget.add(60)
    assert budget.fits(40) and not budget.fits(41)
    budget.reset()
    assert budget.used == 0


def test_a_crop_folder_is_split_into_batches_within_the_pixel_budget(tmp_path, monkeypatch):
    folder = tmp_path / "crops"
    folder.mkdir()
    for number in range(5):
        person(folder / f"p{number}.png", shade=40 * number + 20)
    monkeypatch.setenv("LINEUP_BATCH_PIXELS", str(2 * 80 * 40))  # two crops per batch at most
    encoder = RecordingEncoder()
    summary = ingest(folder, tmp_path / "g", encoder, options=IngestOptions(crops=True, batch_size=32))
    assert summary.totals()["items_added"] == 5
    assert sum(encoder.batches) == 5 and max(encoder.batches) <= 2


def test_a_large_crop_is_shrunk_as_it_decodes_and_keeps_its_own_size(tmp_path):
    folder = tmp_path / "crops"
    folder.mkdir()
    tall = np.tile(np.linspace(0, 255, 3000, dtype=np.uint8), (6000, 1))  # 3000 × 6000 grey, stored as one channel
    assert cv2.imwrite(str(folder / "tall.png"), tall)
    shapes: list[tuple[int, ...]] = []

    class Shapes(RecordingEncoder):
        def __call__(self, crops, modalities, resolutions):
            shapes.extend(c.shape for c in crops)
            return super().__call__(crops, modalities, resolutions)

    ingest(folder, tmp_path / "g", Shapes(), options=IngestOptions(crops=True))
    assert shapes == [(2048, 1024, 3)]  # the model sees it shrunk, in colour
    (item,) = Gallery.open(tmp_path / "g").iter_items()
    assert item.box == (0.0, 0.0, 3000.0, 6000.0)  # the box is the file's own size
    assert item.crop_sha256 == item.source_sha256  # and the stored crop is the file itself
    assert read_image(tmp_path / "g" / item.crop).shape == (6000, 3000, 3)


def test_a_nearly_square_jpeg_decoded_reduced_keeps_its_stored_sides(tmp_path):
    image = np.tile(np.linspace(0, 255, 999, dtype=np.uint8), (1000, 1))  # 999 wide, 1000 high
    ok, data = cv2.imencode(".jpg", cv2.cvtColor(image, cv2.COLOR_GRAY2BGR))
    shrunk, size = decode_image_sized(data.tobytes(), "square.jpg", max_side=100)  # decoded at 1/8: 125 × 125
    assert ok and max(shrunk.shape[:2]) <= 100 and size == (999, 1000)


def test_a_crop_over_the_crop_pixel_limit_is_skipped_by_name(tmp_path, monkeypatch):
    folder = tmp_path / "crops"
    folder.mkdir()
    person(folder / "small.png")
    person(folder / "large.png", size=(200, 100))  # 20,000 pixels
    monkeypatch.setenv("LINEUP_MAX_CROP_PIXELS", "10000")
    summary = ingest(folder, tmp_path / "g", RecordingEncoder(), options=IngestOptions(crops=True))
    assert summary.totals()["items_added"] == 1
    ((path, reason),) = summary.skipped_files
    assert path.endswith("large.png") and "LINEUP_MAX_CROP_PIXELS" in reason and "100 × 200" in reason


def test_decode_image_sized_gives_the_stored_size_and_shrinks_a_grey_png_in_one_channel(tmp_path):
    side = 9_000  # 81 Mpx: 243 MB in colour, 81 MB as one channel
    packer = zlib.compressobj(9)
    body = b"".join(packer.compress(b"\x00" * (side + 1)) for _ in range(side)) + packer.flush()
    (tmp_path / "grey.png").write_bytes(
        b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0))
        + _chunk(b"IDAT", body) + _chunk(b"IEND", b""))
    script = (
        "import resource, sys; from engine.kernel.images import decode_image_sized, read_image_bytes\n"
        "data = read_image_bytes(sys.argv[1]); before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "image, size = decode_image_sized(data, sys.argv[1], max_side=2048)\n"
        "grown = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before\n"
        "print(image.shape, size, grown // 1024)\n")
    out = subprocess.run([sys.executable, "-c", script, str(tmp_path / "grey.png")], capture_output=True, text=True,
                         check=True).stdout.split(") ")
    assert out[0] + ")" == "(2048, 2048, 3)" and out[1] + ")" == f"({side}, {side})"
    assert int(out[2]) < 300  # MB: decoding in colour first costs about twice the 243 MB colour image


def test_thumbnails_refuse_a_declared_bomb_without_decoding(tmp_path):
    from app.views.thumbnails import read_image as thumbnail

    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(png_declaring(30000, 30000))
    assert thumbnail(bomb) is None
    assert thumbnail(tmp_path) is None
    good = thumbnail(person(tmp_path / "p.png"))
    assert good is not None and good.shape == (80, 40, 3)
    big = person(tmp_path / "big.jpg", size=(3000, 1500))
    assert max(thumbnail(big, max_side=1024).shape[:2]) <= 1024


# --------------------------------------------------------------------------------------------- named errors


def test_a_folder_given_as_ir_image_is_named_as_a_folder(tmp_path):
    with pytest.raises(QueryInputError, match=rf"infrared query file {tmp_path} is a folder, not an image"):
        load_image(tmp_path, "infrared query")
    loop = tmp_path / "loop.png"
    loop.symlink_to(loop)
    with pytest.raises(QueryInputError, match=r"loop\.png is not a regular file"):
        load_image(loop, "infrared query")


def test_a_non_utf8_line_of_items_jsonl_names_the_file_and_line(tmp_path):
    gallery = Gallery.create(tmp_path / "g", {"rgb": 4}, "m")
    rows = np.eye(4, dtype=np.float32)[:3]
    gallery.add([{"id": f"i{n}", "source": "clip.mp4", "frame": n} for n in range(3)], {"rgb": rows})
    file = tmp_path / "g" / "items.jsonl"
    lines = file.read_bytes().split(b"\n")
    lines[1] = lines[1].replace(b"clip", b"cl\xffp")
    file.write_bytes(b"\n".join(lines))
    opened = Gallery.open(tmp_path / "g")  # records are read when used (columns/ holds what opening needs)
    with pytest.raises(GalleryCorruptError, match=r"items\.jsonl line 2: not UTF-8 text \(byte \d+\)"):
        opened.item(1)
    assert any("not UTF-8 text" in problem.message for problem in opened.verify())
    lines[1] = b"[" * 5000 + b"]" * 5000
    file.write_bytes(b"\n".join(lines))
    with pytest.raises((GalleryCorruptError, ValueError), match=r"items\.jsonl"):
        Gallery.open(tmp_path / "g").item(1)


def test_nan_weights_are_blamed_on_the_checkpoint_file(tmp_path):
    import torch
    from safetensors.torch import load_file, save_file

    from engine.retrieval.models import create, save
    from engine.retrieval.models.checkpoint import CheckpointError, load

    torch.manual_seed(0)
    folder = save(create("tiny", device="cpu"), tmp_path / "ckpt")
    weights = folder / "weights.safetensors"
    state = load_file(str(weights))
    name = next(k for k, v in state.items() if v.is_floating_point())
    state[name][...] = float("nan")
    save_file(state, str(weights))
    with pytest.raises(CheckpointError, match=r"weights\.safetensors holds NaN or infinite weights in 1 tensor"):
        load(folder, device="cpu")


def test_a_symlink_loop_is_skipped_with_a_warning_naming_it(tmp_path):
    folder = tmp_path / "crops"
    folder.mkdir()
    person(folder / "a.png")
    (folder / "loop.png").symlink_to(folder / "loop.png")
    (folder / "sub").mkdir()
    (folder / "sub" / "up").symlink_to(folder)  # a folder link back up: not followed
    summary = ingest(folder, tmp_path / "g", RecordingEncoder(), options=IngestOptions(crops=True))
    assert summary.totals()["items_added"] == 1
    assert any(path.endswith("loop.png") for path, _ in summary.skipped_files)


def test_a_symlink_loop_given_as_the_source_is_named(tmp_path):
    from engine.ingest import IngestError

    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    with pytest.raises(IngestError, match=r"source .*loop is a broken or looping link"):
        ingest(loop, tmp_path / "g", RecordingEncoder())


# --------------------------------------------------------------------------------------------- the writer lock


def _held(gallery: Path):
    """Hold the gallery's write lock on another thread (refused like another process) until released."""
    ready, release = threading.Event(), threading.Event()

    def hold():
        with writing(gallery):
            ready.set()
            release.wait(30)

    thread = threading.Thread(target=hold, daemon=True)
    thread.start()
    assert ready.wait(10)
    return release, thread


def test_a_second_cli_writer_is_refused_before_the_model_loads(tmp_path, monkeypatch):
    from lineup.cli import app

    gallery = tmp_path / "g"
    gallery.mkdir()
    source = tmp_path / "crops"
    source.mkdir()
    person(source / "a.png")
    loaded = []
    monkeypatch.setattr("engine.retrieval.models.discovery.load_model", lambda *a, **k: loaded.append(1) or 1 / 0)
    release, thread = _held(gallery)
    try:
        result = CliRunner().invoke(app, ["ingest", str(source), "--crops", "--gallery", str(gallery)])
    finally:
        release.set()
        thread.join()
    assert result.exit_code in (1, 2), result.output
    assert f"gallery {gallery} is being written by process {os.getpid()}" in " ".join(result.output.split())
    assert "Traceback" not in result.output and not loaded


def test_the_app_ingest_job_is_refused_before_the_model_loads(tmp_path):
    from app.jobs.ingest_footage import IngestFootageJob

    class Models:
        asked = 0

        def ingest_encoder(self):
            Models.asked += 1
            raise AssertionError("the model was loaded")

    class FakeJob:
        def progress(self, *args):
            pass

        def engine_progress(self, message):
            return lambda done, total: None

    gallery = tmp_path / "g"
    gallery.mkdir()
    release, thread = _held(gallery)
    try:
        with pytest.raises(GalleryBusyError, match="is being written by process"):
            IngestFootageJob(tmp_path, gallery, Models()).run(FakeJob())
    finally:
        release.set()
        thread.join()
    assert Models.asked == 0


# --------------------------------------------------------------------------------------------- any-time


def test_anytime_skips_a_scenario_without_queries_and_reports_the_others(tmp_path):
    from evaluation_data import write_world
    from rich.console import Console
    from test_evaluation_protocols import TINY

    from engine.lab.evaluation import evaluate, render
    from engine.lab.evaluation.api import evaluate_benchmark
    from engine.lab.evaluation.sources import world_benchmark
    from engine.retrieval.models import create

    write_world(tmp_path / "w", identities=4)
    model = create(TINY, device="cpu")
    evaluate(model, tmp_path / "w", "mg-separate", batch_size=16)  # builds the benchmarks
    bench, _ = world_benchmark(tmp_path / "w", "anytime")
    # daytime images keep one outfit per person: DT-LT (daytime, changed clothes) has no query with a positive
    outfit: dict = {}
    for q in bench["query"]:
        if q["modality"] == "rgb":
            outfit[q["identity"]] = min(outfit.get(q["identity"], q["outfit"]), q["outfit"])
    bench["query"] = [q for q in bench["query"] if q["modality"] != "rgb" or q["outfit"] == outfit[q["identity"]]]
    bench["gallery"] = [g for g in bench["gallery"] if g["modality"] != "rgb" or g["identity"] not in outfit
                        or g["outfit"] == outfit[g["identity"]]]
    report = evaluate_benchmark(model, bench, "anytime", batch_size=16)
    assert report["by"]["DT-LT"]["queries"] == 0
    assert any(note.startswith("DT-LT: skipped") for note in report["notes"])
    assert any(block["queries"] > 0 for key, block in report["by"].items() if key not in ("DT-LT", "any-time"))
    out = StringIO()
    render(report, Console(file=out, width=200))
    assert "DT-LT: skipped" in out.getvalue()


def test_a_file_too_short_for_its_declared_size_is_refused_undecoded(tmp_path):
    bomb = tmp_path / "short.png"
    bomb.write_bytes(png_declaring(9950, 9950))  # 69 bytes declaring 99 Mpx: the decoder would allocate 300 MB
    with pytest.raises(ImageInputError, match=r"short\.png: declares 9950 × 9950 pixels but holds only 69 bytes"):
        read_image(bomb)
    black = np.zeros((3000, 4000), np.uint8)  # real files compress far less than the bound allows
    for suffix in (".png", ".jpg"):
        path = tmp_path / f"black{suffix}"
        cv2.imwrite(str(path), black)
        assert read_image(path).shape == (3000, 4000, 3)


def test_deep_json_in_a_world_manifest_names_the_file_and_line(tmp_path):
    from engine.ingest.datasets.records import DatasetFormatError
    from engine.ingest.datasets.world import read_world

    world = tmp_path / "w"
    world.mkdir()
    (world / "manifest.jsonl").write_text("[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(DatasetFormatError, match=r"manifest\.jsonl: line 1: JSON nested 5000 levels deep"):
        read_world(world, check_images=False)


@pytest.mark.parametrize("name", ["gallery.json", "evidence"])
def test_deeply_nested_gallery_files_are_named_errors(tmp_path, name):
    gallery = Gallery.create(tmp_path / "g", {"rgb": 4}, "ckpt")
    target = gallery.root / "gallery.json"
    if name == "evidence":
        from engine.index.evidence_table import META_FILE, folder_of

        folder_of(gallery.root).mkdir(parents=True, exist_ok=True)
        target = folder_of(gallery.root) / META_FILE
        from engine.index.evidence_table import _read_meta as read_meta
    else:
        from engine.index.folder import GalleryFolder

        read_meta = GalleryFolder.read_meta
    target.write_text("[" * 3000)
    with pytest.raises(GalleryCorruptError, match=r"is unreadable: .*nested 3000 levels deep"):
        read_meta(target)
