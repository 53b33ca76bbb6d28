"""The face detector report redaction uses (engine/perception/detection/faces.py): decoding face-detection-retail-0005's
``527`` rows (padding, score threshold, clipping, mapping a window back to crop pixels), the windows it
searches, the head-window-then-whole-crop order, bad input, and the shipped network on a rendered person."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from engine.perception.detection.errors import DetectorError
from engine.perception.detection.faces import (
    CROP_PASS,
    FACE_OUTPUT,
    HEAD_PASS,
    PAD_VALUE,
    FaceDetector,
    Window,
    crop_window,
    decode_faces,
    head_window,
    window_input,
)


def rows(*detections, pad_with=None) -> np.ndarray:
    """A ``[1, 1, 200, 7]`` answer: the given rows, then an end row (image_id -1), then ``pad_with`` rows."""
    out = np.zeros((1, 1, 200, 7), np.float32)
    for i, row in enumerate(detections):
        out[0, 0, i] = row
    out[0, 0, len(detections), 0] = -1
    if pad_with is not None:
        out[0, 0, len(detections) + 1:] = pad_with
    return out


def test_a_head_window_row_maps_to_crop_pixels():
    window = head_window(150, 50)  # the top 50 × 50 square of a 50 × 150 crop
    assert window == Window(0.0, 0.0, 50.0)
    faces = decode_faces(rows([0, 1, 0.9, 0.2, 0.1, 0.6, 0.5]), window, 150, 50)
    assert [(f.box, round(f.score, 3), f.found_in) for f in faces] == [((10, 5, 20, 20), 0.9, HEAD_PASS)]


def test_a_whole_crop_row_maps_through_the_centred_square_and_is_clipped_to_the_crop():
    window = crop_window(150, 50)  # a 150 × 150 square, centred: 50 grey columns each side
    assert window == Window(-50.0, 0.0, 150.0)
    faces = decode_faces(rows([0, 1, 0.8, 0.4, 0.2, 0.6, 0.4], [0, 1, 0.7, 0.2, 0.0, 0.4, 0.2]), window, 150, 50,
                         found_in=CROP_PASS)
    # 0.4 · 150 − 50 = 10 … 0.6 · 150 − 50 = 40; the second starts in the grey at −20 and is cut at 0
    assert [f.box for f in faces] == [(10, 30, 30, 30), (0, 0, 10, 30)]
    assert {f.found_in for f in faces} == {CROP_PASS}


def test_rows_after_the_end_row_are_padding_and_low_scores_are_dropped():
    answer = rows([0, 1, 0.29, 0.1, 0.1, 0.3, 0.3], [0, 1, 0.95, 0.5, 0.5, 0.7, 0.7],
                  pad_with=[0, 1, 0.99, 0.0, 0.0, 1.0, 1.0])
    faces = decode_faces(answer, Window(0, 0, 100), 100, 100, min_score=0.3)
    assert [f.box for f in faces] == [(50, 50, 20, 20)]
    assert len(decode_faces(answer, Window(0, 0, 100), 100, 100, min_score=0.2)) == 2


def test_boxes_are_widened_to_whole_pixels_sorted_by_score_and_empty_ones_dropped():
    answer = rows([0, 1, 0.5, 0.101, 0.101, 0.299, 0.299],  # 10.1 … 29.9 → 10 … 30
                  [0, 1, 0.9, 0.6, 0.6, 0.8, 0.9],
                  [0, 1, 0.9, 1.2, 0.2, 1.5, 0.4],  # wholly right of the crop
                  [0, 1, float("nan"), 0.1, 0.1, 0.2, 0.2],
                  [0, 1, 0.8, 0.7, 0.3, 0.6, 0.5])  # corners swapped
    faces = decode_faces(answer, Window(0, 0, 100), 100, 100)
    assert [f.box for f in faces] == [(60, 60, 20, 30), (60, 30, 10, 20), (10, 10, 20, 20)]


def test_a_malformed_answer_is_named():
    with pytest.raises(DetectorError, match="rows of 7"):
        decode_faces(np.zeros((1, 1, 200, 5), np.float32), Window(0, 0, 10), 10, 10)


def test_windows_for_tall_and_wide_crops():
    assert head_window(170, 48) == Window(0.0, 0.0, 48.0)
    assert crop_window(100, 300) == Window(0.0, -100.0, 300.0) == head_window(100, 300)


def test_the_head_window_is_enlarged_to_fill_the_input_and_the_whole_crop_is_padded_grey():
    crop = np.zeros((150, 50, 3), np.uint8)
    crop[:50] = (10, 20, 30)
    crop[50:] = (200, 200, 200)
    head = window_input(crop, head_window(150, 50), (300, 300))
    assert head.shape == (1, 3, 300, 300) and head.dtype == np.float32
    assert np.all(head[0, :, :, :] == np.array([10, 20, 30], np.float32)[:, None, None])  # BGR order kept
    whole = window_input(crop, crop_window(150, 50), (300, 300))
    assert np.all(whole[0, :, :, :99] == PAD_VALUE) and np.all(whole[0, :, :, 201:] == PAD_VALUE)
    assert np.all(whole[0, :, 150:, 110:190] == 200)


class FakeNetwork:
    """Answers ``infer`` from a list of prepared answers, recording each input."""

    input_size = (300, 300)

    def __init__(self, *answers):
        self.answers = list(answers)
        self.seen = []

    def infer(self, batch):
        self.seen.append(batch)
        return {FACE_OUTPUT: self.answers.pop(0)}


def test_a_face_in_the_head_window_ends_the_search():
    network = FakeNetwork(rows([0, 1, 0.9, 0.3, 0.2, 0.7, 0.6]))
    faces = FaceDetector(model=network).detect(np.full((160, 40, 3), 90, np.uint8))
    assert len(network.seen) == 1
    assert [(f.box, f.found_in) for f in faces] == [((12, 8, 16, 16), HEAD_PASS)]


def test_the_whole_crop_is_searched_when_the_head_window_holds_no_face():
    network = FakeNetwork(rows(), rows([0, 1, 0.6, 0.4, 0.5, 0.6, 0.7]))
    faces = FaceDetector(model=network).detect(np.full((160, 40, 3), 90, np.uint8))
    assert len(network.seen) == 2
    assert [(f.box, f.found_in) for f in faces] == [((4, 80, 32, 32), CROP_PASS)]


def test_a_crop_wider_than_tall_is_searched_once_and_grey_or_bgra_crops_are_accepted():
    network = FakeNetwork(rows(), rows(), rows())
    detector = FaceDetector(model=network)
    assert detector.detect(np.full((40, 160), 90, np.uint8)) == []
    assert len(network.seen) == 1
    assert detector.detect(np.full((160, 40, 4), 90, np.uint8)) == [] and len(network.seen) == 3


@pytest.mark.parametrize("image", [np.zeros((0, 10, 3), np.uint8), np.zeros((10, 10, 3), np.float32),
                                   np.zeros((10, 10, 2), np.uint8), np.zeros((4, 10, 10, 3), np.uint8), "crop.png"])
def test_bad_crops_are_refused_by_name(image):
    with pytest.raises(DetectorError, match="non-empty uint8 image"):
        FaceDetector(model=FakeNetwork()).detect(image)


def test_a_score_threshold_outside_zero_to_one_is_refused():
    with pytest.raises(DetectorError, match="min_score"):
        FaceDetector(min_score=1.5, model=FakeNetwork())


def test_the_shipped_network_finds_a_rendered_persons_face_in_the_head_window():
    from engine.lab.world.identities import make_identity
    from engine.lab.world.render import render_sample

    rng = np.random.default_rng(3)
    person = cv2.cvtColor(render_sample(make_identity(0, 4, 1).outfits[0], "rgb", "HR", "front", "cam02", rng),
                          cv2.COLOR_RGB2BGR)
    faces = FaceDetector().detect(person)
    assert faces and faces[0].found_in == HEAD_PASS and faces[0].score > 0.9
    x, y, w, h = faces[0].box
    height, width = person.shape[:2]
    assert y + h < 0.35 * height and 0.2 * width < x + w / 2 < 0.8 * width and 10 <= w <= 0.5 * width
