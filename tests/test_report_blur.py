"""Face blurring of the report's thumbnails (app/report/blur.py): the faces the shipped face detector finds are
blurred, else the estimated head region; only the report's copy changes, never the evidence file; on the real
clips every hand-labelled face is covered."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest
from footage_frames import real_frame
from report_cases import person_crop, report_case

from app.report import blur, export_report, read_manifest
from app.report.blur import FACE, FACE_AND_HEAD, HEAD, blur_faces, head_region
from app.report.errors import ReportError
from app.report.images import read_image
from engine.kernel.hashing import sha256_file
from engine.perception.detection.faces import FACE_OUTPUT, FaceDetector
from engine.perception.pretrained.errors import PretrainedModelError

pytestmark = pytest.mark.usefixtures("qapp")  # a QApplication, as in the app (not a bare QGuiApplication)

FACES = Path(__file__).parent / "data" / "footage" / "faces.json"


class FakeNetwork:
    """The face network's answers, one per call: each a list of [score, x0, y0, x1, y1] fractions."""

    input_size = (300, 300)

    def __init__(self, *answers):
        self.answers = list(answers)
        self.calls = 0

    def infer(self, batch):
        self.calls += 1
        out = np.zeros((1, 1, 200, 7), np.float32)
        found = self.answers.pop(0) if self.answers else []
        for i, (score, *box) in enumerate(found):
            out[0, 0, i] = [0, 1, score, *box]
        out[0, 0, len(found), 0] = -1
        return {FACE_OUTPUT: out}


def changed(before: np.ndarray, after: np.ndarray) -> np.ndarray:
    return np.any(before != after, axis=-1)


def test_without_a_face_the_crops_head_band_is_blurred_and_nothing_else():
    network = FakeNetwork([], [])
    crop = person_crop(3)
    result = blur_faces(crop, detector=FaceDetector(model=network))
    assert network.calls == 2 and result.method == HEAD and result.faces == ()
    (x, y, w, h), = result.regions
    assert (x, y, w, h) == head_region(128, 48) == (7, 0, 34, 24)
    inside = (slice(y, y + h), slice(x, x + w))
    assert result.image[inside].std() < 0.5 * crop[inside].std()
    outside = np.ones(crop.shape[:2], bool)
    outside[inside] = False
    assert np.array_equal(result.image[outside], crop[outside])
    assert np.array_equal(crop, person_crop(3))  # the input is left as it was


def test_the_head_band_grows_with_the_crops_width_for_upper_bodies():
    assert head_region(128, 48) == (7, 0, 34, 24)  # a whole standing body: its top 18 %
    assert head_region(200, 160) == (24, 0, 112, 80)  # an upper body: half its width
    assert head_region(50, 200) == (30, 0, 140, 50)  # never more than the crop


def test_a_detected_face_is_blurred_with_a_margin_and_nothing_else():
    crop = person_crop(5, height=150, width=50)
    network = FakeNetwork([[0.9, 0.2, 0.2, 0.6, 0.6]])  # in the top 50 × 50 square: pixels 10 … 30
    result = blur_faces(crop, detector=FaceDetector(model=network))
    assert network.calls == 1 and result.method == FACE
    assert [f.box for f in result.faces] == [(10, 10, 20, 20)]
    assert result.regions == ((6, 6, 28, 28),)  # grown by 20 % of its size on each side
    diff = changed(crop, result.image)
    assert diff[6:34, 6:34].mean() > 0.3 and not diff[34:].any() and not diff[:, 34:].any()


def test_a_face_found_only_low_in_the_crop_is_blurred_and_so_is_the_head_band():
    crop = person_crop(6, height=150, width=50)
    network = FakeNetwork([], [[0.8, 0.4, 0.7, 0.5, 0.8]])  # whole crop: x −50 + 60 … 75, y 105 … 120
    result = blur_faces(crop, detector=FaceDetector(model=network))
    assert result.method == FACE_AND_HEAD
    assert [f.box for f in result.faces] == [(10, 105, 15, 15)]
    assert result.regions == ((7, 102, 21, 21), head_region(150, 50))


@pytest.mark.parametrize("image", [np.zeros((0, 48, 3), np.uint8), np.zeros((10, 10, 3), np.float32),
                                   np.zeros((10, 10, 2), np.uint8), None])
def test_bad_images_are_refused_with_a_report_error(image):
    with pytest.raises(ReportError, match="non-empty uint8 image"):
        blur_faces(image, detector=FaceDetector(model=FakeNetwork()))


def test_a_network_that_cannot_load_is_a_report_error(monkeypatch):
    def broken(**options):
        raise PretrainedModelError("the shipped network face-detection-retail-0005: its .bin is truncated")

    monkeypatch.setattr(blur, "_DETECTOR", None)
    monkeypatch.setattr(blur, "FaceDetector", broken)
    with pytest.raises(ReportError, match="face detector cannot be loaded.*truncated"):
        blur_faces(person_crop(1))


def test_tiny_crops_are_blurred_whole_or_by_their_head_band():
    for shape in ((1, 1, 3), (3, 200, 3), (200, 2, 3)):
        crop = np.random.default_rng(0).integers(0, 255, shape, dtype=np.uint8)
        result = blur_faces(crop)
        assert result.method in (FACE, FACE_AND_HEAD, HEAD) and result.image.shape == crop.shape


def test_a_person_inside_a_loose_crop_has_their_own_face_blurred():
    """A world render shrunk into the lower right of a plain canvas: the crop's top band is empty wall, and
    the blur must land on the person's face instead."""
    from engine.lab.world.identities import make_identity
    from engine.lab.world.render import render_sample

    rng = np.random.default_rng(3)
    person = cv2.cvtColor(render_sample(make_identity(0, 4, 1).outfits[0], "rgb", "HR", "front", "cam02", rng),
                          cv2.COLOR_RGB2BGR)
    small = cv2.resize(person, (96, 192), interpolation=cv2.INTER_AREA)
    canvas = np.full((320, 160, 3), 128, np.uint8)
    top, left = 120, 56
    canvas[top:top + 192, left:left + 96] = small
    result = blur_faces(canvas)
    assert result.method == FACE
    (x, y, w, h), = result.regions
    assert y >= top and y + h <= top + 0.3 * 192  # the pasted person's face, not the wall above
    assert x >= left and x + w <= left + 96
    assert np.array_equal(result.image[:top], canvas[:top])


def real_faces(clip: str, frame: int) -> tuple[np.ndarray, list[dict]]:
    return real_frame(clip, frame), json.loads(FACES.read_text(encoding="utf-8"))["clips"][clip][str(frame)]


@pytest.mark.parametrize(("clip", "frame"), [("face-demographics-walking.gif", 30),
                                             ("face-demographics-walking-and-pause.gif", 20)])
def test_the_labelled_faces_of_a_real_frame_are_covered(clip, frame):
    image, labels = real_faces(clip, frame)
    assert labels
    for label in labels:
        cx, cy, cw, ch = label["crop"]
        fx, fy, fw, fh = label["face"]
        crop = image[cy:cy + ch, cx:cx + cw].copy()
        result = blur_faces(crop)
        assert result.method == FACE, label
        mask = np.zeros(crop.shape[:2], bool)
        for x, y, w, h in result.regions:
            mask[y:y + h, x:x + w] = True
        face = mask[fy - cy:fy - cy + fh, fx - cx:fx - cx + fw]
        assert face.mean() >= 0.8, label
        assert changed(crop, result.image)[fy - cy:fy - cy + fh, fx - cx:fx - cx + fw].mean() > 0.5


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
    crops = sum(entry.kind == "crop" for entry in read_manifest(blurred.manifest_path).evidence)
    assert f"({crops} no face found: the estimated head region)" in page  # the synthetic figures have no face
    assert page != plain.report_path.read_text(encoding="utf-8")
    for entry in read_manifest(blurred.manifest_path).evidence:
        if entry.kind == "crop":
            sha, data = manifest_crops[entry.path]
            assert entry.sha256 == sha == sha256_file(tmp_path / entry.path)
            assert (tmp_path / entry.path).read_bytes() == data
            assert read_image(tmp_path / entry.path).shape == (128, 48, 3)


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
