"""Ingest of a folder of ready person crops (``IngestOptions(crops=True)`` / ``lineup ingest --crops``): one item
per image, the whole image as box and crop, camera and time from file names, skipped files with reasons,
resume without duplicates, and the named errors of an empty or undecodable folder."""

import cv2
import numpy as np
import pytest

from engine.index import Gallery
from engine.ingest import IngestError, IngestOptions, ingest, level_of_height
from engine.ingest.crops import MIN_CROP_HEIGHT, MIN_CROP_WIDTH
from engine.ingest.timing import parse_time
from engine.kernel.hashing import sha256_file

STAMP = "20240506T101530"


class StatsEncoder:
    """Test double of the model: unit vectors from crop statistics; counts the crops it encodes."""

    def __init__(self) -> None:
        self.views = {"rgb": 5, "reid:AD-LT": 5}
        self.fingerprint = "stats-encoder"
        self.encoded = 0

    def __call__(self, crops, modalities, resolutions):
        self.encoded += len(crops)
        rows = np.array([[*c.reshape(-1, 3).mean(0) + 1, c.shape[0], c.shape[1]] for c in crops], np.float32)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        return {"rgb": rows, "reid:AD-LT": rows[:, ::-1].copy()}


def person(colour: tuple[int, int, int], height: int, width: int, seed: int) -> np.ndarray:
    """A noisy crop of one colour (BGR) with a darker 'head' so GrabCut has something to separate."""
    rng = np.random.default_rng(seed)
    image = np.clip(np.array(colour, np.int16) + rng.integers(-20, 21, (height, width, 3)), 0, 255).astype(np.uint8)
    image[: height // 5, width // 3 : 2 * width // 3] = 40
    return image


@pytest.fixture
def crop_folder(tmp_path):
    root = tmp_path / "crops"
    (root / "lobby").mkdir(parents=True)
    (root / "yard").mkdir()
    cv2.imwrite(str(root / "lobby" / "p10.png"), person((0, 0, 200), 128, 64, 1))
    cv2.imwrite(str(root / "lobby" / "p2.png"), person((0, 200, 0), 96, 40, 2))
    cv2.imwrite(str(root / "lobby" / "p3.jpg"), person((200, 0, 0), 64, 32, 3))
    grey = person((0, 0, 0), 80, 40, 4)[..., :1].repeat(3, axis=2) + 90
    cv2.imwrite(str(root / "lobby" / "p4.png"), grey)
    cv2.imwrite(str(root / "lobby" / "dot.png"), np.full((1, 1, 3), 128, np.uint8))
    (root / "lobby" / "notes.txt").write_text("not an image")
    (root / "lobby" / "broken.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\0" * 20)  # header only
    cv2.imwrite(str(root / "yard" / f"cam07_{STAMP}.png"), person((0, 200, 200), 120, 48, 5))
    return root


def test_every_image_is_one_item_with_its_whole_box(crop_folder, tmp_path):
    encoder = StatsEncoder()
    summary = ingest(crop_folder, tmp_path / "g", encoder, options=IngestOptions(crops=True, batch_size=2))
    gallery = Gallery.open(tmp_path / "g")
    items = {item.source.rsplit("/", 1)[-1]: item for item in gallery.iter_items()}
    assert set(items) == {"p2.png", "p3.jpg", "p4.png", "p10.png", f"cam07_{STAMP}.png"}
    assert encoder.encoded == 5 and summary.totals()["detections"] == 0
    for name, item in items.items():
        folder = "yard" if name.startswith("cam07") else "lobby"
        image = cv2.imread(str(crop_folder / folder / name))
        height, width = image.shape[:2]
        assert item.box == (0.0, 0.0, float(width), float(height))
        assert item.frame is None and item.track is None
        assert item.source_sha256 == sha256_file(crop_folder / folder / name)
        assert item.crop_sha256 == item.source_sha256  # the stored crop is the file itself
        assert sha256_file(gallery.root / item.crop) == item.crop_sha256
        assert item.resolution == level_of_height(height)
    assert items["p4.png"].modality == "ir" and items["p10.png"].modality == "rgb"
    assert {items[n].camera for n in ("p2.png", "p3.jpg", "p10.png")} == {"lobby"}
    stamped = items[f"cam07_{STAMP}.png"]
    assert stamped.camera == "cam07" and stamped.time == parse_time(STAMP, "test")
    lobby = [r for r in summary.sources if r.camera == "lobby"][0]
    assert lobby.kind == "crops" and lobby.items_added == 4 and lobby.small == 1
    reasons = dict(summary.skipped_files)
    assert f"{MIN_CROP_WIDTH}×{MIN_CROP_HEIGHT} px" in reasons[str(crop_folder / "lobby" / "dot.png")]
    assert "1×1" in reasons[str(crop_folder / "lobby" / "dot.png")]
    assert "not an image" in reasons[str(crop_folder / "lobby" / "notes.txt")]
    assert "decodable" in reasons[str(crop_folder / "lobby" / "broken.png")]
    from engine.index.evidence_table import current_table, folder_of

    table = current_table(folder_of(gallery.root))
    assert table is not None and set(table.row_of) == set(gallery.ids)  # evidence for every crop


def test_natural_order_and_resume_without_duplicates(crop_folder, tmp_path):
    ingest(crop_folder, tmp_path / "g", StatsEncoder(), options=IngestOptions(crops=True, attributes=False))
    first = Gallery.open(tmp_path / "g")
    lobby = [i.source.rsplit("/", 1)[-1] for i in first.iter_items() if i.camera == "lobby"]
    assert lobby == ["p2.png", "p3.jpg", "p4.png", "p10.png"]
    encoder = StatsEncoder()
    again = ingest(crop_folder, tmp_path / "g", encoder, options=IngestOptions(crops=True, attributes=False))
    assert encoder.encoded == 0 and {s.status for s in again.sources} == {"done before"}
    forced = ingest(crop_folder, tmp_path / "g", encoder,
                    options=IngestOptions(crops=True, attributes=False, force=True))
    totals = forced.totals()
    assert totals["items_added"] == 0 and totals["items_present"] == 5 and encoder.encoded == 0
    assert Gallery.open(tmp_path / "g").ids == first.ids


def test_a_folder_as_crops_is_not_marked_done_as_footage(crop_folder, tmp_path):
    """The same folder read as footage (detector) first, then as crops: the crop ingest still runs."""
    from engine.perception.detection.detectors import Detections

    class Nobody:
        name = "nobody"

        def settings(self):
            return {"name": self.name}

        def reset(self):
            pass

        def detect(self, frame):
            return Detections(np.zeros((0, 4), np.float32), np.zeros(0, np.float32))

    ingest(crop_folder, tmp_path / "g", StatsEncoder(), Nobody(), IngestOptions(attributes=False))
    summary = ingest(crop_folder, tmp_path / "g", StatsEncoder(), options=IngestOptions(crops=True, attributes=False))
    assert summary.totals()["items_added"] == 5


def test_empty_and_undecodable_crop_folders_are_named_errors(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(IngestError, match=r"crop folder .*empty holds no decodable image"):
        ingest(empty, tmp_path / "g", StatsEncoder(), options=IngestOptions(crops=True))
    junk = tmp_path / "junk"
    junk.mkdir()
    (junk / "a.jpg").write_bytes(b"this is no jpeg")
    (junk / "b.txt").write_text("nor this")
    with pytest.raises(IngestError, match=r"junk holds no decodable image \(2 files skipped"):
        ingest(junk, tmp_path / "g", StatsEncoder(), options=IngestOptions(crops=True))
    tiny = tmp_path / "tiny"
    tiny.mkdir()
    cv2.imwrite(str(tiny / "dot.png"), np.zeros((1, 1, 3), np.uint8))
    with pytest.raises(IngestError, match=r"gave no person crop.*dot.png: crop of 1×1 px"):
        ingest(tiny, tmp_path / "g2", StatsEncoder(), options=IngestOptions(crops=True))
    with pytest.raises(IngestError, match="stride 2 does not apply"):
        IngestOptions(crops=True, stride=2)
    with pytest.raises(IngestError, match="does not exist"):
        ingest(tmp_path / "absent", tmp_path / "g3", StatsEncoder(), options=IngestOptions(crops=True))


def test_several_sources_in_one_ingest_read_each_source_once(crop_folder, tmp_path):
    """``lineup ingest SOURCES…``: the folders named one by one give the gallery their parent gives; a folder
    named twice (or inside another one named) is read once; no source at all is a named error."""
    options = IngestOptions(crops=True)
    ingest(crop_folder, tmp_path / "whole", StatsEncoder(), options=options)
    encoder = StatsEncoder()
    summary = ingest([crop_folder / "yard", crop_folder / "lobby", crop_folder / "yard", crop_folder],
                     tmp_path / "parts", encoder, options=options)
    whole, parts = Gallery.open(tmp_path / "whole"), Gallery.open(tmp_path / "parts")
    assert sorted(i.crop_sha256 for i in parts.iter_items()) == sorted(i.crop_sha256 for i in whole.iter_items())
    assert encoder.encoded == len(parts) == 5 and summary.totals()["sources_read"] == 2
    assert [i.camera for i in parts.iter_items()][0] == "cam07"  # the order given: yard first
    with pytest.raises(IngestError, match="no source given"):
        ingest([], tmp_path / "none", StatsEncoder(), options=options)
