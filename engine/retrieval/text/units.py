"""The parser's second step: tokens → units by greedy longest match against the lexicon (garments, colours,
adjectives, …), the entities they name, compounds ("denim jacket") and layering ("a shirt under a jacket").
See ``engine.retrieval.text.parser`` for the whole pipeline."""

from __future__ import annotations

from engine.retrieval.text.tokens import BY_FIRST, MULTI_FIRST, PAIRS, POSSESSIVE, PUNCT, SINGLE, WORD, Entry

# ========================================================================================= units


class Entity:
    """One mention of a wearable or carried thing."""

    __slots__ = ("slot", "value", "weak", "extras", "start", "end", "color", "color_span", "negated",
                 "neg_start", "order")

    def __init__(self, slot: str, value: str | None, weak: bool, extras: dict, start: int, end: int,
                 order: int) -> None:
        self.slot = slot
        self.value = value
        self.weak = weak
        self.extras = extras
        self.start = start
        self.end = end
        self.color: str | None = None
        self.color_span: tuple[int, int] | None = None
        self.negated = False
        self.neg_start = start
        self.order = order


class Unit:
    """A lexicon match (one word or a phrase) or a punctuation mark, with what the passes attach to it."""

    __slots__ = ("kind", "data", "word", "start", "end", "possessive", "entity",
                 "negated", "subjects", "near", "last_entity", "sent_entity", "colon_subject")

    def __init__(self, kind: str, data: object, word: str, start: int, end: int, possessive: bool) -> None:
        self.kind = kind
        self.data = data
        self.word = word
        self.start = start
        self.end = end
        self.possessive = possessive
        self.negated = False
        # set by the structure pass: the item of an item unit; subjects of "is"/":"/"("; the noun before
        # "in"/"that"; the entities before a colour or adjective and the colon section it is in
        self.entity = self.subjects = self.near = self.last_entity = self.sent_entity = self.colon_subject = None


def read_units(toks: list[tuple[str, int, int, int]]) -> list[Unit]:
    units: list[Unit] = []
    append = units.append
    n = len(toks)
    i = 0
    while i < n:
        word, start, end, kind = toks[i]
        if kind == PUNCT:
            append(Unit("punct", word, word, start, end, False))
            i += 1
            continue
        match = None
        if word in MULTI_FIRST and i + 1 < n and kind == WORD and (word, toks[i + 1][0]) in PAIRS:
            for phrase, entry in BY_FIRST[word]:
                size = len(phrase)
                if i + size > n:
                    continue
                ok = True
                for k in range(1, size):
                    other = toks[i + k]
                    if other[3] == PUNCT or other[0] != phrase[k] or toks[i + k - 1][3] == POSSESSIVE:
                        ok = False
                        break
                if ok:
                    match = (size, entry)
                    break
        if match is None:
            size = 1
            entry = SINGLE.get(word)
            if entry is None:
                entry = Entry("num", word) if word[0].isdigit() else Entry("unk", word)
            append(Unit(entry.kind, entry.data, word, start, end, kind == POSSESSIVE))
            i += 1
            continue
        size, entry = match
        last = toks[i + size - 1]
        text = " ".join(toks[i + k][0] for k in range(size))
        append(Unit(entry.kind, entry.data, text, start, last[2], last[3] == POSSESSIVE))
        i += size
    return units


def mark_compounds(units: list[Unit]) -> None:
    """An item noun directly followed by another (non-sink) item noun is a modifier ("denim jacket")."""
    for i in range(len(units) - 1):
        u, v = units[i], units[i + 1]
        # adjacent units: punctuation between them would be a unit of its own
        if u.kind != "item" or v.kind != "item" or u.possessive:
            continue
        vslot, vvalue = v.data[0], v.data[1]
        if vslot == "sink":
            continue
        uslot, uvalue = u.data[0], u.data[1]
        if vvalue is None and uslot == vslot and uvalue is not None:
            v.kind = "mod"
        else:
            u.kind = "mod"


def garment_hood(units: list[Unit], i: int) -> bool:
    """"a jacket with a hood" names part of the jacket, not a hood worn up ("with the hood up" is)."""
    n = len(units)
    for k in (i + 1, i + 2):
        if k < n and units[k].word in ("up", "on", "raised"):
            return False
    j = i - 1
    while j >= 0 and units[j].kind in ("det", "poss", "adj", "color", "material"):
        j -= 1
    return j >= 1 and units[j].word == "with" and units[j - 1].kind == "item" and units[j - 1].data[0] == "top"


LAYER_WORDS = {"under": "first", "underneath": "first", "beneath": "first", "over": "second"}


def layered_under(units: list[Unit], i: int) -> int | None:
    """For "A under B" / "B over A" between two tops, the index of the inner (hidden) garment A."""
    n = len(units)
    k = i + 1
    if k >= n or units[k].word not in LAYER_WORDS:
        return None
    j = k + 1
    while j < n and units[j].kind in ("det", "poss", "adj", "color", "material", "mod", "unk") and j < k + 5:
        j += 1
    if j >= n or units[j].kind != "item" or units[j].data[0] != units[i].data[0] or units[i].data[0] != "top":
        return None
    return i if LAYER_WORDS[units[k].word] == "first" else j


#: Units that read their context (the entities before them, the colon section they are in).
CONTEXT_KINDS = frozenset({"color", "adj", "unk"})
NOUN_KINDS = frozenset({"item", "body", "person", "hairstyle", "one", "ppron", "tpron"})
FORWARD_SKIP = frozenset({"adj", "color", "haircolor", "material", "mod", "colored", "fixed"})
PREDICATE_SKIP = frozenset({"adv", "det", "adj", "color", "haircolor", "neg", "poss"})
PREDICATE_VERBS = frozenset({"cut", "worn", "kept", "styled", "dyed", "coloured", "colored"})
