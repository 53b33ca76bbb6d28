"""Body regions, silhouettes and length cues of ``engine.attributes`` on drawn figures with known bands."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from engine.attributes import extract_attributes
from engine.attributes.mask import clean_foreground, grabcut_mask, person_mask
from engine.attributes.regions import BANDS, body_regions, figure_frame

SKIN = (150, 180, 225)  # BGR, a light skin tone
HAIR = (25, 22, 22)
GREY_SCENE = (128, 128, 128)


def draw_figure(top=(40, 40, 200), bottom=(170, 90, 40), hair=HAIR, sleeves="short_sleeve", legs="long",
                unit=30.0, size=(240, 128), top_row=14, background=GREY_SCENE):
    """A flat-coloured standing figure on a plain background: (BGR image, uint8 mask, unit).

    Bands in head units ``u`` from ``top_row``: head 0–1 (hair over the top 0.45, skin face below), neck
    1–1.3, torso 1.3–3.8 with arms beside it (sleeves cover 1.35–2.6 for short, –3.7 for long), hands to
    4.2, legs 3.8–7.2 (trousers to 7.2 for long, to 5.6 for knee, to 4.5 for short; skin below), feet to 7.4.
    """
    h, w = size
    img = np.empty((h, w, 3), np.uint8)
    img[:] = background
    mask = np.zeros((h, w), np.uint8)
    cx = w / 2
    u = unit

    def rect(y0, y1, x0, x1, color):
        r0, r1, c0, c1 = int(round(top_row + y0 * u)), int(round(top_row + y1 * u)), int(round(x0)), int(round(x1))
        img[r0:r1, c0:c1] = color
        mask[r0:r1, c0:c1] = 255

    center = (int(round(cx)), int(round(top_row + 0.5 * u)))
    axes = (int(round(0.4 * u)), int(round(0.5 * u)))
    cv2.ellipse(img, center, axes, 0, 0, 360, SKIN, -1)
    cv2.ellipse(mask, center, axes, 0, 0, 360, 255, -1)
    cv2.ellipse(img, center, axes, 0, 180, 360, hair, -1)
    rect(0.0, 0.2, cx - 0.4 * u, cx + 0.4 * u, hair)
    rect(1.0, 1.3, cx - 0.15 * u, cx + 0.15 * u, SKIN)
    rect(1.3, 3.8, cx - 0.85 * u, cx + 0.85 * u, top)
    sleeve_end = {"sleeveless": 1.3, "short_sleeve": 2.6, "long_sleeve": 3.7}[sleeves]
    for side in (-1, 1):
        x0, x1 = sorted((cx + side * 0.85 * u, cx + side * 1.2 * u))
        rect(1.35, 4.2, x0, x1, SKIN)
        if sleeve_end > 1.35:
            rect(1.35, sleeve_end, x0, x1, top)
        lx0, lx1 = sorted((cx + side * 0.1 * u, cx + side * 0.65 * u))
        rect(3.8, 7.2, lx0, lx1, SKIN)
        hem = {"short": 4.5, "knee": 5.6, "long": 7.2}[legs]
        rect(3.8, hem, lx0, lx1, bottom)
        rect(7.2, 7.4, lx0, lx1, (20, 20, 20))
    return img, mask, u


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
