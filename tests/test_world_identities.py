"""Identity generation: canonical attribute dicts, correlated distributions, clothing changes."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.kernel.ontology import ATTRIBUTE_KEYS, ONTOLOGY
from engine.lab.world.identities import (
    BIOMETRIC_KEYS,
    CLOTHING_KEYS,
    canonical,
    draw_identity,
    make_identity,
    random_attributes,
)


def _assert_canonical(attrs: dict) -> None:
    ONTOLOGY.validate(attrs)
    assert list(attrs) == [k for k in ATTRIBUTE_KEYS if k in attrs], "keys out of ontology order"
    assert ("hat_color" in attrs) == (attrs["hat_type"] != "none")
    assert ("carrying_color" in attrs) == (attrs["carrying_type"] != "none")
    required = [k for k in ATTRIBUTE_KEYS if k not in ("hat_color", "carrying_color")]
    assert all(k in attrs for k in required)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), identity=st.integers(0, 10**6), outfits=st.integers(1, 4))
def test_identities_are_canonical_and_keep_biometrics(seed, identity, outfits):
    person = make_identity(seed, identity, outfits)
    assert person.identity == identity and len(person.outfits) == outfits == len(person.weathers)
    for attrs in person.outfits:
        _assert_canonical(attrs)
        assert {k: attrs[k] for k in BIOMETRIC_KEYS} == person.biometrics
    for k, new in enumerate(person.outfits[1:], start=1):
        for old in person.outfits[:k]:
            assert (new["top_type"], new["top_color"]) != (old["top_type"], old["top_color"])
            assert sum(new.get(c) != old.get(c) for c in CLOTHING_KEYS) >= 3


def test_identities_are_deterministic_and_independent():
    assert make_identity(7, 3, 2) == make_identity(7, 3, 2)
    assert make_identity(7, 3, 2) != make_identity(8, 3, 2)
    # asking for more outfits extends the wardrobe without changing the earlier outfits
    assert make_identity(7, 3, 3).outfits[:2] == make_identity(7, 3, 2).outfits


def test_canonical_drops_colours_of_missing_items_and_orders_keys():
    attrs = random_attributes(np.random.default_rng(0))
    messy = dict(reversed(list(attrs.items())))
    messy.update(hat_type="none", hat_color="red", carrying_type="none", carrying_color="blue")
    out = canonical(messy)
    assert "hat_color" not in out and "carrying_color" not in out
    assert list(out) == [k for k in ATTRIBUTE_KEYS if k in out]
    with pytest.raises(ValueError, match="top_color"):
        canonical({**attrs, "top_color": "teal"})


def test_draw_identity_rejects_zero_outfits():
    with pytest.raises(ValueError, match="outfits must be ≥ 1"):
        draw_identity(0, 0, np.random.default_rng(0))


def test_distributions_are_plausibly_correlated():
    people = [make_identity(123, i, 2) for i in range(1500)]
    outfits = [a for p in people for a in p.outfits]
    bios = [p.biometrics for p in people]
    dresses = [a for a in outfits if a["top_type"] == "dress"]
    heels = [a for a in outfits if a["shoe_type"] == "high_heels"]
    skirts = [a for a in outfits if a["bottom_type"] == "skirt"]
    assert dresses and all(a["gender"] == "female" and a["bottom_type"] == "skirt" and
                           a["bottom_color"] == a["top_color"] for a in dresses)
    assert heels and sum(a["gender"] == "female" for a in heels) / len(heels) > 0.95
    assert skirts and sum(a["gender"] == "female" for a in skirts) / len(skirts) > 0.95
    children = [b for b in bios if b["age"] == "child"]
    assert children and sum(b["height"] == "short" for b in children) / len(children) > 0.8
    assert all(b["hairstyle"] != "bald" for b in children)
    grey = Counter(b["age"] for b in bios if b["hair_color"] in ("gray", "white"))
    ages = Counter(b["age"] for b in bios)
    assert grey["elderly"] / ages["elderly"] > 0.5 > 0.05 > grey["young"] / ages["young"]
    shorts = [a for a in outfits if a["bottom_type"] == "shorts"]
    assert shorts and sum(a["bottom_length"] == "short" for a in shorts) / len(shorts) > 0.6
    assert all(a["top_type"] in ("hoodie", "jacket", "coat") for a in outfits if a["hat_type"] == "hood")
    assert all(a["top_length"] == "sleeveless" for a in outfits if a["top_type"] == "vest")
    jeans = [a for a in outfits if a["bottom_type"] == "jeans"]
    assert sum(a["bottom_color"] == "blue" for a in jeans) / len(jeans) > 0.5
    # every value of every attribute occurs somewhere in a world of this size
    for key in ATTRIBUTE_KEYS:
        seen = {a[key] for a in outfits if key in a}
        assert seen == set(ONTOLOGY.attributes[key]), key
