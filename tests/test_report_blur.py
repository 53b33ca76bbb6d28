"""Face blurring of the report's thumbnails (app/report/blur.py): a detected face in the top of the crop is
blurred, else the estimated head region; only the report's copy changes, never the evidence file."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from report_cases import person_crop, report_case

from app.report import blur, export_report, read_manifest
from app.report.blur import blur_faces, head_region
from app.report.images import read_image
from engine.hashing import sha256_file

pytestmark = pytest.mark.usefixtures("qapp")  # a QApplication, as in the app (not a bare QGuiApplication)


def test_the_cascade_ships_with_opencv():
    assert not blur._cascade().empty()


def test_without_a_face_or_a_person_the_crops_head_band_is_blurred_and_nothing_else(monkeypatch):
    monkeypatch.setattr(blur, "detect_person", lambda image: None)
    crop = person_crop(3)
    result = blur_faces(crop)
    assert result.method == "head"
    (x, y, w, h), = result.regions
    assert (x, y, w, h) == head_region(128, 48) == (7, 0, 34, 24)
    inside = (slice(y, y + h), slice(x, x + w))
    assert result.image[inside].std() < 0.5 * crop[inside].std()
    outside = np.ones(crop.shape[:2], bool)
    outside[inside] = False
    assert np.array_equal(result.image[outside], crop[outside])
    assert np.array_equal(crop, person_crop(3))  # the input is left as it was


def test_a_person_inside_a_loose_crop_has_their_own_head_blurred():
    """A world render shrunk into the lower right of a plain canvas: the crop's top band is empty wall, and
    the blur must land on the person's head instead."""
    from engine.world.identities import make_identity
    from engine.world.render import render_sample

    rng = np.random.default_rng(3)
    person = cv2.cvtColor(render_sample(make_identity(0, 4, 1).outfits[0], "rgb", "HR", "front", "cam02", rng),
                          cv2.COLOR_RGB2BGR)
    small = cv2.resize(person, (96, 192), interpolation=cv2.INTER_AREA)
    canvas = np.full((320, 160, 3), 128, np.uint8)
    top, left = 120, 56
    canvas[top:top + 192, left:left + 96] = small
    result = blur_faces(canvas)
    assert result.method == "person"
    (x, y, w, h), = result.regions
    assert y >= top - 24 and y + h <= top + 0.45 * 192  # the upper part of the pasted person, not the wall above
    assert x >= left - 16 and x + w <= left + 96 + 16
    assert np.array_equal(result.image[:top - 24], canvas[:top - 24])


class FakeCascade:
    """Reports detections in the enlarged image's pixels, as the real cascade does."""

    def __init__(self, boxes):
        self.boxes = np.asarray(boxes, dtype=np.int32)
        self.seen = None

    def detectMultiScale(self, grey, **options):  # noqa: N802 - OpenCV's name
        self.seen = grey.shape
        return self.boxes


def test_a_detected_face_is_blurred_where_it_was_found(monkeypatch):
    crop = person_crop(5)
    fake = FakeCascade([[20, 20, 60, 60], [40, 200, 60, 50]])  # one face at the top, one low on the body
    monkeypatch.setattr(blur, "_cascade", lambda: fake)
    result = blur_faces(crop)
    assert fake.seen == (256, 96)  # a 128-pixel crop is doubled for the detector
    assert result.method == "face" and len(result.regions) == 1  # the low detection is not a head
    x, y, w, h = result.regions[0]
    assert (x, y, w, h) == (10 - 4, 10 - 4, 30 + 8, 30 + 8)  # halved back, grown by 15 % each side
    assert not np.array_equal(result.image[y:y + h, x:x + w], crop[y:y + h, x:x + w])
    assert np.array_equal(result.image[60:], crop[60:])


def test_bad_images_are_refused():
    with pytest.raises(ValueError, match="uint8"):
        blur_faces(np.zeros((10, 10, 3), np.float32))


def test_an_export_with_blur_changes_the_thumbnails_only(tmp_path):
    built = report_case(tmp_path)
    manifest_crops = {}
    plain = export_report(built.db, built.case_id, tmp_path / "plain.html")
    for entry in read_manifest(plain.manifest_path).evidence:
        if entry.kind == "crop":
            manifest_crops[entry.path] = (entry.sha256, (tmp_path / entry.path).read_bytes())
    blurred = export_report(built.db, built.case_id, tmp_path / "blurred.html", blur_faces=True)
    page = blurred.report_path.read_text(encoding="utf-8")
    assert "Faces in the thumbnails are blurred" in page
    assert page != plain.report_path.read_text(encoding="utf-8")
    for entry in read_manifest(blurred.manifest_path).evidence:
        if entry.kind == "crop":
            sha, data = manifest_crops[entry.path]
            assert entry.sha256 == sha == sha256_file(tmp_path / entry.path)
            assert (tmp_path / entry.path).read_bytes() == data
            assert read_image(entry.path).shape == (128, 48, 3)


def test_the_reports_thumbnail_differs_in_the_head_region_only(tmp_path):
    from report_cases import collect

    built = report_case(tmp_path)
    plain, _ = collect(built)
    blurred, _ = collect(built, blur_faces=True)
    assert blurred.blur_faces and not plain.blur_faces
    for before, after in zip(plain.confirmed, blurred.confirmed, strict=True):
        assert after.thumbnail.blurred == "head" and before.thumbnail.blurred is None
        assert after.crop_sha256 == before.crop_sha256 == sha256_file(after.crop_path)
        old = cv2.imdecode(np.frombuffer(before.thumbnail.png, np.uint8), cv2.IMREAD_COLOR)
        new = cv2.imdecode(np.frombuffer(after.thumbnail.png, np.uint8), cv2.IMREAD_COLOR)
        x, y, w, h = head_region(*old.shape[:2])
        assert not np.array_equal(old[y:y + h, x:x + w], new[y:y + h, x:x + w])
        assert np.array_equal(old[y + h:], new[y + h:])
