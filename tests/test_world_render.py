"""The renderer: sizes per resolution level, modality looks, determinism, legible attributes, bad input."""

import cv2
import numpy as np
import pytest

from engine.lab.world.cameras import CAMERAS
from engine.lab.world.identities import random_attributes
from engine.lab.world.modalities import RESOLUTIONS
from engine.lab.world.render import VIEWS, RenderError, render_sample

PERSON = {"gender": "male", "skin_color": "medium", "age": "young", "height": "average", "physique": "average",
          "hairstyle": "short", "hair_color": "black", "top_type": "t_shirt", "top_length": "short_sleeve",
          "top_color": "red", "bottom_type": "trousers", "bottom_length": "long", "bottom_color": "blue",
          "shoe_type": "sneakers", "hat_type": "cap", "hat_color": "yellow", "carrying_type": "backpack",
          "carrying_color": "green"}


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


@pytest.mark.parametrize("modality,camera", [("rgb", "cam01"), ("ir", "cam06"), ("sketch", "sketch")])
@pytest.mark.parametrize("resolution", list(RESOLUTIONS))
def test_sizes_and_dtype_per_resolution(modality, camera, resolution):
    img = render_sample(PERSON, modality, resolution, "front", camera, rng())
    assert img.dtype == np.uint8 and img.shape == (*RESOLUTIONS[resolution], 3)


def test_low_resolution_is_area_downsampled_hr():
    hr = render_sample(PERSON, "rgb", "HR", "side", "cam02", rng(5))
    for level in ("mild", "mid", "ultra"):
        low = render_sample(PERSON, "rgb", level, "side", "cam02", rng(5))
        h, w = RESOLUTIONS[level]
        assert np.array_equal(low, cv2.resize(hr, (w, h), interpolation=cv2.INTER_AREA))


def test_same_rng_state_same_image_other_state_other_image():
    a = render_sample(PERSON, "rgb", "HR", "back", "cam03", rng(1))
    assert np.array_equal(a, render_sample(PERSON, "rgb", "HR", "back", "cam03", rng(1)))
    assert not np.array_equal(a, render_sample(PERSON, "rgb", "HR", "back", "cam03", rng(2)))


@pytest.mark.parametrize("view", VIEWS)
def test_infrared_has_no_colour_and_warm_skin(view):
    img = render_sample(PERSON, "ir", "HR", view, "cam07", rng(3))
    assert np.array_equal(img[..., 0], img[..., 1]) and np.array_equal(img[..., 1], img[..., 2])
    red = render_sample({**PERSON, "top_color": "red"}, "ir", "HR", view, "cam07", rng(3))
    green = render_sample({**PERSON, "top_color": "green"}, "ir", "HR", view, "cam07", rng(3))
    assert np.array_equal(red, green), "clothing colour must not change an infrared image"
    assert np.percentile(img, 99) > 170 > np.median(img), "warm person on a cold background"


@pytest.mark.parametrize("view", VIEWS)
def test_sketch_is_white_paper_with_dark_lines(view):
    img = render_sample(PERSON, "sketch", "HR", view, "sketch", rng(4))
    assert np.array_equal(img[..., 0], img[..., 2])
    grey = img[..., 0]
    assert (grey >= 240).mean() > 0.7
    assert 0.01 < (grey < 100).mean() < 0.2
    assert (grey[:, :4] == 255).all() and (grey[:, -4:] == 255).all(), "no background at the edges"
    coloured = render_sample({**PERSON, "top_color": "green", "hat_color": "pink"}, "sketch", "HR", view, "sketch",
                             rng(4))
    assert np.array_equal(img, coloured), "colours must not change a sketch"


def _ink_box(attrs: dict) -> tuple[int, int]:
    """Height of the inked figure and its widest row at the waist, in a sketch."""
    grey = render_sample(attrs, "sketch", "HR", "front", "sketch", rng(0))[..., 0]
    rows = np.where((grey < 128).any(axis=1))[0]
    waist = int(rows.min() + 0.42 * (rows.max() - rows.min()))
    cols = np.where(grey[waist] < 128)[0]
    return int(rows.max() - rows.min()), int(cols.max() - cols.min())


def test_height_and_physique_show_as_figure_size():
    base = {**PERSON, "hat_type": "none", "carrying_type": "none"}
    base.pop("hat_color"), base.pop("carrying_color")
    heights = [_ink_box({**base, "height": h})[0] for h in ("short", "average", "tall")]
    assert heights[0] + 10 < heights[1] < heights[2] - 10
    widths = [_ink_box({**base, "physique": p})[1] for p in ("slim", "average", "heavy")]
    assert widths[0] < widths[1] < widths[2]
    child = _ink_box({**base, "age": "child", "height": "short"})[0]
    assert child < heights[0] - 20


def _share(img: np.ndarray, rgb: tuple[int, int, int], tol: int = 45) -> float:
    return float((np.abs(img.astype(int) - np.array(rgb)).max(axis=2) < tol).mean())


def test_garment_colours_are_drawn():
    for top, ref in (("red", (200, 30, 38)), ("blue", (34, 78, 180)), ("yellow", (242, 208, 38))):
        attrs = {**PERSON, "top_color": top, "bottom_color": "black", "hat_color": "black", "carrying_color": "black"}
        img = render_sample(attrs, "rgb", "HR", "front", "cam03", rng(6), occlusion=False)
        assert _share(img, ref) > 0.03, top


def test_dependent_colour_without_item_is_ignored_and_missing_colour_is_an_error():
    no_hat = {**PERSON, "hat_type": "none"}
    render_sample(no_hat, "rgb", "mid", "front", "cam01", rng())       # hat_color is dropped, not an error
    missing = dict(PERSON)
    missing.pop("hat_color")
    with pytest.raises(RenderError, match="hat_color"):
        render_sample(missing, "rgb", "HR", "front", "cam01", rng())


@pytest.mark.parametrize("kwargs,pattern", [
    ({"modality": "thermal"}, "modality 'thermal'"),
    ({"resolution": "low"}, "resolution 'low'"),
    ({"view": "top"}, "view 'top'"),
    ({"camera": "cam99"}, "unknown camera 'cam99'"),
    ({"camera": "sketch"}, "camera 'sketch' only goes with modality 'sketch'"),
    ({"rng": 3}, "rng must be a numpy.random.Generator"),
    ({"attributes": {**PERSON, "top_color": "teal"}}, "top_color"),
    ({"attributes": {"gender": "male"}}, "missing"),
])
def test_bad_arguments_are_named(kwargs, pattern):
    args = {"attributes": PERSON, "modality": "rgb", "resolution": "HR", "view": "front", "camera": "cam01",
            "rng": rng()}
    args.update(kwargs)
    with pytest.raises(RenderError, match=pattern):
        render_sample(**args)


def test_every_camera_and_random_people_render():
    gen = rng(9)
    for cam in CAMERAS:
        for view in VIEWS:
            img = render_sample(random_attributes(gen), cam.modality, "HR", view, cam.id, gen)
            assert img.shape == (256, 128, 3) and img.std() > 10
