"""The ``extract_attributes`` API: its result, the result's JSON form, and clear errors for bad input."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from figure_drawing import draw_figure
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from engine.kernel.ontology import ONTOLOGY
from engine.perception.attributes import (
    AttributeEvidence,
    AttributeEvidenceError,
    AttributeInputError,
    extract_attributes,
)


def assert_valid(evidence: AttributeEvidence) -> None:
    assert set(evidence.probabilities) == set(evidence.confidence)
    for key, dist in evidence.probabilities.items():
        assert key in ONTOLOGY.attributes
        assert dist and set(dist) <= set(ONTOLOGY.attributes[key])
        assert all(math.isfinite(p) and p >= 0 for p in dist.values())
        assert sum(dist.values()) == pytest.approx(1.0, abs=1e-9)
        assert 0.0 <= evidence.confidence[key] <= 1.0
    json.dumps(evidence.to_dict())


def test_result_is_valid_and_round_trips_through_json():
    img, mask, _ = draw_figure()
    evidence = extract_attributes(img, mask=mask)
    assert_valid(evidence)
    assert evidence.info["mask_source"] == "given"
    assert {"person", "top", "bottom", "hair"} <= set(evidence.regions)
    for x, y, w, h in evidence.regions.values():
        assert x >= 0 and y >= 0 and x + w <= img.shape[1] + 1 and y + h <= img.shape[0] + 1
    data = json.loads(json.dumps(evidence.to_dict()))
    back = AttributeEvidence.from_dict(data)
    assert back == evidence
    assert back.to_dict() == evidence.to_dict()
    assert back.masks is None and back.region_mask("top", img.shape[:2]) is None


def test_region_masks_come_back_at_crop_size():
    img, mask, _ = draw_figure()
    evidence = extract_attributes(img, mask=mask)
    top = evidence.region_mask("top", img.shape[:2])
    assert top.shape == img.shape[:2] and top.any()
    assert (top & (mask == 0)).sum() <= 0.05 * top.sum()     # up to resampling at the edges


def test_grey_and_bgra_crops_are_accepted():
    img, mask, _ = draw_figure()
    assert_valid(extract_attributes(img[:, :, 1]))
    bgra = np.dstack([img, np.full(img.shape[:2], 255, np.uint8)])
    assert_valid(extract_attributes(bgra, mask=mask > 0))


@pytest.mark.parametrize(
    ("crop", "match"),
    [
        ("not an image", "crop_bgr must be a numpy uint8 image"),
        ([[1, 2], [3, 4]], "crop_bgr must be a numpy uint8 image"),
        (np.zeros((64, 32, 3), np.float32), "dtype uint8"),
        (np.zeros((0, 32, 3), np.uint8), "empty"),
        (np.zeros((64, 0, 3), np.uint8), "empty"),
        (np.zeros((10, 5, 3), np.uint8), "at least 16×8"),
        (np.zeros((64, 32, 2), np.uint8), "H×W×3"),
        (np.zeros((2, 64, 32, 3), np.uint8), "H×W×3"),
    ],
)
def test_bad_crops_raise_a_clear_error(crop, match):
    with pytest.raises(AttributeInputError, match=match):
        extract_attributes(crop)


def test_bad_masks_and_scenes_raise_a_clear_error():
    crop = np.zeros((64, 32, 3), np.uint8)
    with pytest.raises(AttributeInputError, match="mask is 32×64 but the crop is 64×32"):
        extract_attributes(crop, mask=np.zeros((32, 64), np.uint8))
    with pytest.raises(AttributeInputError, match="mask must have dtype uint8 or bool"):
        extract_attributes(crop, mask=np.zeros((64, 32), np.float64))
    with pytest.raises(AttributeInputError, match="mask must be a numpy"):
        extract_attributes(crop, mask="everything")
    with pytest.raises(AttributeInputError, match="scene_bgr is empty"):
        extract_attributes(crop, scene_bgr=np.zeros((0, 10, 3), np.uint8))
    assert issubclass(AttributeInputError, ValueError)


@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda d: d.update(version=99), "version"),
        (lambda d: d["probabilities"].update(eye_color={"blue": 1.0}), "unknown attribute key"),
        (lambda d: d["probabilities"].update(top_color={"teal": 1.0}), "outside the ontology"),
        (lambda d: d["probabilities"].update(top_color={"red": 0.5, "blue": 0.4}), "sums to"),
        (lambda d: d["probabilities"].update(top_color={"red": float("nan")}), "finite"),
        (lambda d: d["confidence"].pop("top_color"), "exactly the keys"),
        (lambda d: d["confidence"].update(top_color=1.5), "outside \\[0, 1\\]"),
        (lambda d: d["regions"].update(top=[1, 2, 3]), "regions"),
    ],
)
def test_malformed_stored_evidence_is_refused(change, match):
    img, mask, _ = draw_figure()
    data = extract_attributes(img, mask=mask).to_dict()
    change(data)
    with pytest.raises(AttributeEvidenceError, match=match):
        AttributeEvidence.from_dict(data)


def test_from_dict_refuses_a_non_dict():
    with pytest.raises(AttributeEvidenceError, match="must be a dict"):
        AttributeEvidence.from_dict([1, 2])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    image=st.integers(1, 48).flatmap(
        lambda h: st.integers(1, 40).flatmap(
            lambda w: arrays(np.uint8, st.sampled_from([(h, w, 3), (h, w)]), elements=st.integers(0, 255))
        )
    ),
    with_mask=st.booleans(),
)
def test_any_small_uint8_image_gives_valid_evidence_or_a_clear_error(image, with_mask):
    mask = (image.reshape(image.shape[0], image.shape[1], -1)[:, :, 0] > 127).astype(np.uint8) * 255
    try:
        evidence = extract_attributes(image, mask=mask if with_mask else None)
    except AttributeInputError as exc:
        assert "crop_bgr" in str(exc)
        assert image.shape[0] < 16 or image.shape[1] < 8
        return
    assert_valid(evidence)
