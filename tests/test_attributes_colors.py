"""Colour naming, colour constancy and skin exclusion of ``engine.perception.attributes``."""

from __future__ import annotations

import cv2
import numpy as np
import pytest
from figure_drawing import draw_figure

from engine.kernel.ontology import COLORS, ONTOLOGY
from engine.perception.attributes import extract_attributes
from engine.perception.attributes.colors import GARMENT_NAMER, HAIR_NAMER, ColorNamer, lab_of_rgb
from engine.perception.attributes.constancy import apply_gains, shades_of_grey
from engine.perception.attributes.skin import skin_candidates

#: Typical dye colours (BGR) of each ontology colour, chosen apart from the namer's prototypes.
DYES_BGR = {
    "black": (28, 26, 26), "white": (238, 240, 242), "gray": (125, 128, 128), "red": (35, 30, 185),
    "orange": (35, 135, 235), "yellow": (45, 200, 230), "green": (70, 135, 45), "blue": (175, 85, 40),
    "purple": (150, 50, 115), "pink": (185, 150, 238), "brown": (45, 75, 115), "beige": (145, 190, 212),
}
CAST_BGR = np.array([0.78, 1.0, 1.22])   # a warm (tungsten-like) cast: blue down, red up


def neutral_scene(h=270, w=480):
    """A scene whose colours average to grey: a neutral gradient with colour blocks in every permutation."""
    scene = np.empty((h, w, 3), np.float32)
    scene[:] = np.linspace(70, 200, w, dtype=np.float32)[None, :, None]
    blocks = [(200, 120, 60), (60, 200, 120), (120, 60, 200), (60, 120, 200), (200, 60, 120), (120, 200, 60)]
    for i, color in enumerate(blocks):
        rows = slice(0, h // 4) if i < 3 else slice(3 * h // 4, h)
        cols = slice((i % 3) * w // 6, (i % 3 + 1) * w // 6)
        scene[rows, cols] = color
    return scene


def cast(img):
    return np.clip(img.astype(np.float32) * CAST_BGR, 0, 255).astype(np.uint8)


def test_dye_colours_are_named_right_without_a_cast():
    for name, bgr in DYES_BGR.items():
        reading = GARMENT_NAMER.read(lab_of_rgb(np.array([bgr[::-1]])))
        assert reading.best == name, (name, reading.probabilities)


def test_shades_of_grey_undoes_a_cast_on_a_neutral_scene():
    scene = neutral_scene()
    gains = shades_of_grey(cast(scene).reshape(-1, 3))
    assert gains == pytest.approx(1.0 / CAST_BGR / np.mean(1.0 / CAST_BGR), rel=0.06)


@pytest.mark.parametrize("name", COLORS)
def test_patch_of_each_colour_under_a_cast_is_named_after_constancy(name):
    scene = neutral_scene()
    patch = np.full((40, 30, 3), DYES_BGR[name], np.float32)
    scene[100:140, 200:230] = patch
    frame = cast(scene)
    observed = frame[100:140, 200:230]
    gains = shades_of_grey(frame.reshape(-1, 3))
    corrected = apply_gains(observed, gains)
    reading = GARMENT_NAMER.read(cv2.cvtColor(corrected, cv2.COLOR_BGR2Lab).reshape(-1, 3))
    assert reading.best == name, (name, reading.probabilities)


def test_a_cast_misnames_some_patch_when_constancy_is_skipped():
    wrong = 0
    for name, bgr in DYES_BGR.items():
        observed = cast(np.full((8, 8, 3), bgr, np.float32))
        reading = GARMENT_NAMER.read(cv2.cvtColor(apply_gains(observed, np.ones(3)), cv2.COLOR_BGR2Lab).reshape(-1, 3))
        wrong += reading.best != name
    assert wrong >= 1


@pytest.mark.parametrize("name", ["red", "blue", "green", "yellow", "white", "black", "purple", "orange"])
def test_figure_in_a_cast_frame_gets_its_top_colour(name):
    img, mask, _ = draw_figure(top=DYES_BGR[name], bottom=DYES_BGR["gray"] if name != "gray" else (0, 0, 0))
    scene = neutral_scene()
    scene[10:250, 300:428] = img
    frame = cast(scene)
    crop = frame[10:250, 300:428]
    evidence = extract_attributes(crop, mask=mask, scene_bgr=frame)
    assert evidence.best("top_color") == name, evidence.probabilities["top_color"]


def test_every_distribution_sums_to_one_with_canonical_values():
    img, mask, _ = draw_figure()
    evidence = extract_attributes(img, mask=mask)
    assert {"top_color", "bottom_color", "hair_color", "hat_type", "top_length", "bottom_length"} <= set(
        evidence.probabilities)
    for key, dist in evidence.probabilities.items():
        assert set(dist) <= set(ONTOLOGY.attributes[key])
        assert sum(dist.values()) == pytest.approx(1.0, abs=1e-9)
        assert all(p >= 0 for p in dist.values())
        assert 0.0 <= evidence.confidence[key] <= 1.0
    assert evidence.best("hair_color") == "black"


def test_skin_is_excluded_from_the_top_colour():
    img, mask, _ = draw_figure(top=DYES_BGR["blue"], sleeves="sleeveless")
    evidence = extract_attributes(img, mask=mask)
    top = evidence.region_mask("top", img.shape[:2])
    skin = evidence.region_mask("skin", img.shape[:2])
    assert (top & skin).sum() > 0.1 * top.sum()               # bare arms lie in the torso band ...
    assert evidence.probabilities["top_color"]["blue"] > 0.85  # ... but do not dilute the garment's colour
    lab = cv2.cvtColor(img.astype(np.float32) / 255.0, cv2.COLOR_BGR2Lab)
    with_skin = GARMENT_NAMER.read(lab[top])
    assert with_skin.probabilities["blue"] < evidence.probabilities["top_color"]["blue"] - 0.05


def test_skin_rule_accepts_skin_tones_and_rejects_greys_and_garment_colours():
    tones = np.array([[[176, 202, 240], [102, 144, 198], [46, 68, 106]]], np.uint8)        # BGR light/medium/dark
    others = np.array([[[128, 128, 128], [200, 205, 210], [180, 80, 40], [40, 140, 60]]], np.uint8)
    assert skin_candidates(cv2.cvtColor(tones, cv2.COLOR_BGR2YCrCb)).all()
    assert not skin_candidates(cv2.cvtColor(others, cv2.COLOR_BGR2YCrCb)).any()


def test_hair_namer_uses_the_hair_values():
    assert HAIR_NAMER.names == ONTOLOGY.attributes["hair_color"]
    reading = HAIR_NAMER.read(lab_of_rgb(np.array([[228, 195, 120]] * 10)))
    assert reading.best == "blonde"


def test_a_namer_without_prototypes_for_a_name_is_refused():
    with pytest.raises(ValueError, match="without prototypes"):
        ColorNamer({"red": ((200, 30, 30),)}, ("red", "blue"))


def test_an_empty_region_reads_uniform_with_no_confidence():
    reading = GARMENT_NAMER.read(np.zeros((0, 3), np.float32))
    assert reading.confidence == 0.0
    assert sum(reading.probabilities.values()) == pytest.approx(1.0)
