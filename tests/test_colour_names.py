"""Colour-name regions (``engine.kernel.colour_names``) and the world's wide palette that paints from them."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.kernel.colour_names import GARMENT_REGIONS, HAIR_REGIONS, lab_of_rgb, rgb_of_lab
from engine.kernel.ontology import COLORS, ONTOLOGY
from engine.lab.world.identities import make_identity
from engine.lab.world.look import WIDE_SPREAD, make_look
from engine.lab.world.modalities import COLOR_RGB, jitter_color
from engine.perception.attributes.colors import GARMENT_NAMER, HAIR_NAMER

HAIR_COLORS = ONTOLOGY.attributes["hair_color"]


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(COLORS), seed=st.integers(0, 2**32 - 1))
def test_a_wide_garment_shade_reads_as_its_name_to_the_pixel_reader(name, seed):
    shade = GARMENT_REGIONS.sample(name, np.random.default_rng(seed), WIDE_SPREAD)
    assert all(0.0 <= v <= 255.0 for v in shade)
    assert GARMENT_REGIONS.names_of(np.array([shade]))[0] == name
    assert GARMENT_NAMER.read(lab_of_rgb(np.array([shade] * 80))).best == name


@settings(max_examples=40, deadline=None)
@given(name=st.sampled_from(HAIR_COLORS), seed=st.integers(0, 2**32 - 1))
def test_a_wide_hair_shade_reads_as_its_name_to_the_pixel_reader(name, seed):
    shade = HAIR_REGIONS.sample(name, np.random.default_rng(seed), WIDE_SPREAD)
    assert HAIR_NAMER.read(lab_of_rgb(np.array([shade] * 80))).best == name


@pytest.mark.parametrize("name", COLORS)
def test_the_wide_palette_spreads_far_wider_than_the_reference_jitter(name):
    rng = np.random.default_rng(0)
    wide = lab_of_rgb(np.array([GARMENT_REGIONS.sample(name, rng, WIDE_SPREAD) for _ in range(200)]))
    reference = lab_of_rgb(np.array([jitter_color(COLOR_RGB[name], rng) for _ in range(200)]))
    assert wide.std(axis=0).sum() > 1.5 * reference.std(axis=0).sum()


def test_lab_round_trip_and_unknown_names():
    colours = np.array([[12, 200, 40], [250, 250, 250], [90, 60, 30]], np.float64)
    assert np.abs(rgb_of_lab(lab_of_rgb(colours)) - colours).max() < 1.0
    with pytest.raises(ValueError, match="'mauve' has no prototypes"):
        GARMENT_REGIONS.sample("mauve", np.random.default_rng(0), WIDE_SPREAD)


def test_a_wide_look_paints_every_named_item_in_a_shade_of_its_name():
    checked = 0
    for identity in range(40):
        for attrs in make_identity(5, identity, 2).outfits:
            look = make_look(attrs, np.random.default_rng(identity), np.random.default_rng(100 + identity), "wide")
            items = [("top_color", look.top_rgb), ("bottom_color", look.bottom_rgb), ("hat_color", look.hat_rgb),
                     ("carrying_color", look.carry_rgb)]
            for key, shade in items:
                if key in attrs:
                    assert GARMENT_REGIONS.names_of(np.array([shade]))[0] == attrs[key]
                    checked += 1
            assert HAIR_REGIONS.names_of(np.array([look.hair_rgb]))[0] == attrs["hair_color"]
    assert checked > 100


def test_the_reference_look_is_the_default_and_an_unknown_palette_is_refused():
    attrs = make_identity(5, 0, 1).outfits[0]
    default = make_look(attrs, np.random.default_rng(1), np.random.default_rng(2))
    assert default == make_look(attrs, np.random.default_rng(1), np.random.default_rng(2), "reference")
    with pytest.raises(ValueError, match="palette 'vivid' is not one of"):
        make_look(attrs, np.random.default_rng(1), np.random.default_rng(2), "vivid")
