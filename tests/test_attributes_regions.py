"""Body regions, silhouettes and length cues of ``engine.perception.attributes`` on drawn figures with known bands."""

from __future__ import annotations

import numpy as np
import pytest
from figure_drawing import draw_figure

from engine.perception.attributes import extract_attributes
from engine.perception.attributes.mask import clean_foreground, grabcut_mask, person_mask
from engine.perception.attributes.regions import BANDS, body_regions, figure_frame


def test_frame_of_a_whole_figure_matches_the_drawn_bands():
    img, mask, u = draw_figure()
    frame = figure_frame(mask > 0)
    assert frame is not None
    top, bottom, unit, center, _, truncated = frame
    assert top == 14
    assert not truncated
    assert unit == pytest.approx(u, rel=0.04)
    assert center == pytest.approx(64, abs=1.5)


def test_a_loose_box_bottom_stretches_the_figure_unless_told_otherwise():
    img, mask, u = draw_figure(size=(300, 128))
    loose = figure_frame(mask > 0)
    exact = figure_frame(mask > 0, box_bottom=False)
    assert loose[2] > 1.2 * u
    assert exact[2] == pytest.approx(u, rel=0.04)


def test_regions_fall_inside_their_body_parts():
    img, mask, u = draw_figure()
    regions = body_regions(mask > 0)
    rows = {name: np.flatnonzero(m.any(axis=1)) for name, m in regions.masks.items() if m.any()}
    t = 14
    assert rows["hair"].min() >= t and rows["hair"].max() <= t + 0.5 * u
    assert rows["top"].min() >= t + 1.3 * u and rows["top"].max() <= t + 3.8 * u
    assert rows["bottom"].min() >= t + 3.8 * u and rows["bottom"].max() <= t + 7.2 * u
    assert rows["shoes"].min() >= t + 6.9 * u
    # arm bands are lateral: none of their pixels is in the middle of the torso
    cols = np.flatnonzero(regions.masks["upper_arms"].any(axis=0))
    assert np.all(np.abs(cols - 64) > 0.5 * u)
    # every band is the silhouette intersected with its rows
    for name in ("head", "top", "bottom"):
        start, end = BANDS[name]
        band = np.zeros_like(mask, bool)
        band[int(round(t + start * regions.unit)): int(round(t + end * regions.unit))] = True
        assert np.array_equal(regions.masks[name], band & (mask > 0))


def test_a_figure_cut_by_the_crop_bottom_is_truncated_and_has_no_legs():
    img, mask, u = draw_figure()
    cut = int(14 + 3.2 * u)
    regions = body_regions(mask[:cut] > 0)
    assert regions.truncated
    assert regions.unit == pytest.approx(u, rel=0.25)
    assert regions.masks["top"].any()
    assert not regions.masks["bottom"].any()
    evidence = extract_attributes(img[:cut], mask=mask[:cut])
    assert "top_color" in evidence.probabilities
    assert "bottom_color" not in evidence.probabilities
    assert "bottom_length" not in evidence.probabilities


def test_empty_silhouette_gives_empty_regions():
    regions = body_regions(np.zeros((64, 32), bool))
    assert all(not m.any() for m in regions.masks.values())


def test_clean_foreground_drops_speckle_and_shadow_and_fills_holes():
    mask = np.zeros((120, 60), np.uint8)
    mask[10:110, 20:40] = 255
    mask[50:55, 28:32] = 0          # a hole
    mask[5, 5] = 255                # speckle
    mask[100:110, 40:58] = 127      # MOG2 shadow
    clean = clean_foreground(mask)
    assert clean[52, 30]
    assert not clean[5, 5]
    assert not clean[105, 50]
    assert clean[10:110, 21:39].all()


def test_grabcut_finds_a_figure_on_a_plain_background():
    img, mask, _ = draw_figure(background=(90, 160, 90))
    found = grabcut_mask(img)
    truth = mask > 0
    iou = (found & truth).sum() / (found | truth).sum()
    assert iou > 0.7


def test_person_mask_prefers_a_given_mask_and_falls_back_when_it_is_empty():
    img, mask, _ = draw_figure(background=(90, 160, 90))
    assert person_mask(img, mask).source == "given"
    assert person_mask(img, np.zeros_like(mask)).source in ("grabcut", "prior")
    assert person_mask(img).source in ("grabcut", "prior")


@pytest.mark.parametrize("sleeves", ["sleeveless", "short_sleeve", "long_sleeve"])
def test_sleeve_length_from_skin_on_the_arms(sleeves):
    img, mask, _ = draw_figure(sleeves=sleeves)
    evidence = extract_attributes(img, mask=mask)
    assert evidence.best("top_length") == sleeves


@pytest.mark.parametrize("legs", ["short", "knee", "long"])
def test_leg_length_from_skin_on_the_legs(legs):
    img, mask, _ = draw_figure(legs=legs)
    evidence = extract_attributes(img, mask=mask)
    assert evidence.best("bottom_length") == legs
