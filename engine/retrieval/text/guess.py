"""Fallback for words the lexicon does not know (docs/unknown-words.md): a run of unknown content words is read
as the lexicon phrase nearest to it, when that phrase is near enough, so "a vermilion jacket" can still state a
top colour. The parser's rules then bind the borrowed reading exactly as they bind the known phrase.

Candidates are the lexicon's own phrases with a reading (colours, garments, hairstyles, hair colours, person
nouns, build / height / age adjectives, decades). Things outside the ontology ("scarf", "beard") are
candidates too: a word nearest to one of them is left unknown, so it states nothing. Two matchers score a
span against the candidates: :class:`CharGramMatcher` here (character trigrams: spelling variants and typos);
the measurement adds one built on the pretrained sentence encoder (``engine.retrieval.text.sentence_encoder``). Neither
is switched on in the product: ``parse`` reads unknown words only when given a :class:`Fallback`;
docs/unknown-words.md has the figures and why. Stop words and the few unknown words the parser's rules
read by name are never replaced.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import lru_cache
from typing import Protocol

from engine.retrieval.text import lexicon as lx
from engine.retrieval.text.tokens import INDEX, Entry
from engine.retrieval.text.units import Unit

#: Function words outside the lexicon's function-word tables: never read as an attribute.
STOP_WORDS: frozenset[str] = frozenset({
    "about", "after", "again", "ago", "all", "also", "am", "among", "an", "as", "because", "before", "being",
    "can", "could", "did", "do", "does", "doing", "done", "during", "either", "else", "even", "ever", "few",
    "further", "get", "gets", "getting", "go", "goes", "going", "gone", "had", "has", "here", "how", "if",
    "into", "it", "just", "least", "let", "lot", "lots", "many", "may", "might", "mine", "most", "must",
    "myself", "now", "once", "only", "ought", "ours", "own", "per", "quite", "same", "several", "shall",
    "should", "since", "such", "than", "thanks", "their", "theirs", "themselves", "there", "thereby",
    "therefore", "these", "thing", "things", "thus", "till", "until", "upon", "us", "via", "want", "was",
    "well", "what", "whatever", "when", "whenever", "where", "wherever", "whether", "why", "will", "within",
    "without", "would", "yes", "yet", "yours", "yourself", "etc", "ok", "okay", "please", "thank", "the",
    "and", "or", "not", "who", "which", "that", "this", "those", "then", "them", "they", "were", "whom",
    "seen", "saw", "see", "sees", "seeing", "look", "looking", "last", "near", "far", "left", "right",
    "some", "something", "somewhere", "someone", "anyone", "everyone", "nobody", "one", "two", "three",
})
#: Unknown words that the parser's rules read by name ("knee-length", "hair cut short"): kept as they are.
RULE_WORDS: frozenset[str] = frozenset({"knee", "knees", "ankle", "ankles", "up", "on", "raised", "length"}
                                       | {"cut", "worn", "kept", "styled", "dyed", "coloured", "colored"})
#: Longest run of unknown words read as one span.
MAX_RUN = 3
#: Entry kinds whose phrases are candidates (with "adj" only when it has a reading, and sink items).
_KINDS = frozenset({"color", "item", "hairstyle", "haircolor", "person", "adj", "decade", "fixed"})


@dataclass(frozen=True)
class Candidate:
    """A lexicon phrase a span may be read as; ``absorbs`` when it names a thing outside the ontology."""

    phrase: str
    entry: Entry
    absorbs: bool


@dataclass(frozen=True)
class Span:
    """A run of unknown content words: units ``[first, last)`` covering characters ``[start, end)``."""

    first: int
    last: int
    start: int
    end: int
    text: str


@dataclass(frozen=True)
class Guess:
    """A span read as a lexicon phrase: ``read_as`` with cosine ``similarity`` (threshold: ``threshold``)."""

    text: str
    start: int
    end: int
    read_as: str
    similarity: float
    method: str

    def to_dict(self) -> dict:
        return {"text": self.text, "start": self.start, "end": self.end, "read_as": self.read_as,
                "similarity": round(self.similarity, 3), "method": self.method}


@lru_cache(maxsize=1)
def candidates() -> tuple[Candidate, ...]:
    """Every lexicon phrase with a reading, in the lexicon index's order (deterministic)."""
    out = []
    for words, entry in INDEX.items():
        if entry.kind not in _KINDS or (entry.kind in ("adj", "fixed") and not entry.data):
            continue
        absorbs = entry.kind == "item" and entry.data[0] == "sink"
        out.append(Candidate(" ".join(words), entry, absorbs))
    return tuple(out)


def is_content_word(word: str) -> bool:
    """A word the fallback may read: letters only, three or more, not a stop word nor a rule word."""
    return len(word) >= 3 and word.isalpha() and word not in STOP_WORDS and word not in RULE_WORDS \
        and word not in lx.SHADE_MODIFIERS


def unknown_spans(text: str, units: list[Unit]) -> list[Span]:
    """Runs (at most :data:`MAX_RUN` words) of adjacent unknown content-word units."""
    spans: list[Span] = []
    i, n = 0, len(units)
    while i < n:
        if units[i].kind != "unk" or not is_content_word(units[i].word):
            i += 1
            continue
        j = i + 1
        while j < n and j - i < MAX_RUN and units[j].kind == "unk" and is_content_word(units[j].word):
            j += 1
        start, end = units[i].start, units[j - 1].end
        spans.append(Span(i, j, start, end, " ".join(u.word for u in units[i:j])))
        i = j
    return spans


class Matcher(Protocol):
    """Scores spans of one text against :func:`candidates`: per span, (candidate index, similarity)."""

    name: str

    def match(self, text: str, spans: list[Span]) -> list[tuple[int, float]]: ...


class CharGramMatcher:
    """Cosine of character-trigram counts (words padded with spaces): catches spelling variants and typos."""

    name = "char trigrams"

    def __init__(self) -> None:
        self._phrases = [c.phrase for c in candidates()]
        self._grams = [self._count(p) for p in self._phrases]
        self._norms = [math.sqrt(sum(v * v for v in g.values())) for g in self._grams]

    @staticmethod
    def _count(phrase: str) -> Counter:
        padded = f" {phrase} "
        return Counter(padded[k:k + 3] for k in range(len(padded) - 2))

    def match(self, text: str, spans: list[Span]) -> list[tuple[int, float]]:
        out = []
        for span in spans:
            grams = self._count(span.text)
            norm = math.sqrt(sum(v * v for v in grams.values())) or 1.0
            best, best_sim = 0, -1.0
            for k, (other, other_norm) in enumerate(zip(self._grams, self._norms, strict=True)):
                sim = sum(c * other.get(g, 0) for g, c in grams.items()) / (norm * other_norm)
                if sim > best_sim:
                    best, best_sim = k, sim
            out.append((best, best_sim))
        return out


def guess_units(text: str, units: list[Unit], matcher: Matcher, threshold: float) -> list[Guess]:
    """Replace, in place, each unknown span whose nearest candidate reaches ``threshold`` (and names something
    in the ontology) by one unit reading as that candidate; the guesses made, in text order."""
    spans = unknown_spans(text, units)
    if not spans:
        return []
    table = candidates()
    picks = []
    for span, (k, similarity) in zip(spans, matcher.match(text, spans), strict=True):
        cand = table[k]
        if similarity >= threshold and not cand.absorbs:
            picks.append((span, cand, similarity))
    for span, cand, _ in reversed(picks):
        possessive = units[span.last - 1].possessive
        units[span.first:span.last] = [Unit(cand.entry.kind, cand.entry.data, cand.phrase, span.start, span.end,
                                            possessive)]
    return [Guess(text[s.start:s.end], s.start, s.end, c.phrase, sim, matcher.name) for s, c, sim in picks]


@dataclass(frozen=True)
class Fallback:
    """What ``engine.retrieval.text.parser.parse`` reads unknown words with: a matcher and its similarity threshold."""

    matcher: Matcher
    threshold: float
