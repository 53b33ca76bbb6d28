"""The held-out paraphraser: exact statement of the asked attributes, words the generator never uses."""

import random
import re

import pytest

from engine.kernel.ontology import ATTRIBUTE_KEYS, ONTOLOGY
from engine.lab.world.identities import make_identity
from engine.retrieval.text.generator import describe, nested_key_subsets
from engine.retrieval.text.paraphrase import ParaphraseError, paraphrase

FUNCTION_WORDS = {"a", "an", "the", "with", "in", "and", "on", "of", "no", "to", "up", "at"}


def words(text: str) -> list[str]:
    return [w for w in re.split(r"[^a-z]+", text.lower()) if w]


def outfits(count: int):
    return [make_identity(5, i, 2).outfits[i % 2] for i in range(count)]


def test_content_words_are_disjoint_from_the_generator():
    rng = random.Random(0)
    generated, paraphrased = set(), []
    for attributes in outfits(300):
        for size in (None, 5, 10):
            keys = nested_key_subsets(attributes, rng, sizes=(size,))[0] if size else None
            generated |= set(words(describe(attributes, keys, rng)))
            paraphrased += [w for w in words(paraphrase(attributes, keys, rng)) if w not in FUNCTION_WORDS]
    shared = [w for w in paraphrased if w in generated]
    assert len(paraphrased) > 5000
    assert len(shared) / len(paraphrased) < 0.01, sorted(set(shared))


def test_every_stated_value_shows_in_the_words():
    attributes = outfits(1)[0]
    for key in ATTRIBUTE_KEYS:
        if key not in attributes:
            continue
        texts = {paraphrase({**attributes, key: value}, None, random.Random(3)) for value in ONTOLOGY.attributes[key]}
        assert len(texts) == len(ONTOLOGY.attributes[key]), key


def test_only_the_asked_keys_are_described():
    attributes = {**outfits(1)[0], "gender": "male", "top_type": "coat", "carrying_type": "suitcase"}
    text = paraphrase(attributes, ["gender"], random.Random(1))
    assert any(noun in text for noun in ("bloke", "chap", "fellow"))
    assert not any(w in text for w in ("clad", "toting", "locks", "feet", "below", "headgear"))
    full = paraphrase(attributes, None, random.Random(1))
    assert "clad in" in full and "toting" in full
    assert paraphrase(attributes, ["top_type"], random.Random(7)) == paraphrase(attributes, ["top_type"],
                                                                                random.Random(7))


def test_canonical_words_keep_the_frames_and_name_values_plainly():
    attributes = {**outfits(1)[0], "gender": "female", "top_type": "t_shirt", "top_color": "red", "hat_type": "none"}
    text = paraphrase(attributes, ["gender", "top_type", "top_color", "hat_type"], random.Random(4), "canonical")
    assert "woman" in text and "red t-shirt" in text and "no hat" in text and "clad in" in text
    held_out = paraphrase(attributes, ["gender", "top_type", "top_color", "hat_type"], random.Random(4))
    assert "red" not in words(held_out) and "woman" not in words(held_out)
    with pytest.raises(ParaphraseError, match="words must be one of"):
        paraphrase(attributes, None, random.Random(0), "latin")


def test_bad_requests_are_named():
    with pytest.raises(ParaphraseError, match="unknown attribute 'mood'"):
        paraphrase({"mood": "happy"})
    with pytest.raises(ParaphraseError, match="'top_color' is asked for but has no value"):
        paraphrase({"gender": "male"}, ["top_color"])
    with pytest.raises(ParaphraseError, match="'top_color' has no value 'teal'"):
        paraphrase({"top_color": "teal"})
