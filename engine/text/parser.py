"""Free-text person description → canonical attributes of the 18-attribute ontology.

Binding rules: docs/text-conventions.md. The pipeline is a small hand-written tokenizer plus rules, linear
in the input length (every scan is bounded by a constant window, so a 1 MB text is read whole, never cut):

1. tokenize: words, numbers and punctuation with character offsets; clitics split ("isn't" → is not,
   "she's" → she is); a hyphen between two words joins them ("t-shirt", "long-sleeved").
2. phrases: greedy longest match against the lexicon → units (garments, colours, adjectives, ...).
3. compounds: an item noun right before another one only modifies it ("denim jacket", "suit jacket").
4. clauses: subjects of "is/are/was" and of a colon section, antecedents of "that/which/who".
5. negation: "no hat", "without a bag", "not carrying anything", "neither a hat nor a bag".
6. binding: each colour / adjective goes to one noun: predicate first ("his trousers are grey", "a jacket
   that is green", "a jacket in green", "Hair: short"), then forward inside the noun phrase ("green
   jacket and jeans"), then post forms ("khaki ones", "cream coloured", "brown leather", "red on top"),
   then a bare trailing colour ("a windbreaker, bright yellow").
7. assembly: one value per attribute (first evidence, ranked where the conventions rank), the spans that
   gave each value, the level and the keys still missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engine.ontology import ATTRIBUTE_KEYS, ONTOLOGY
from engine.text import lexicon as lx

# ============================================================================ lexicon index (built once)


@dataclass(frozen=True)
class _Entry:
    kind: str
    data: object = None


def _plural(word: str) -> str:
    if word.endswith(("s", "sh", "ch", "x")):
        return word + "es"
    return word + "s"


def _build_index() -> dict[tuple[str, ...], _Entry]:
    index: dict[tuple[str, ...], _Entry] = {}

    def put(phrase: str, entry: _Entry) -> None:
        key = tuple(phrase.split())
        index.setdefault(key, entry)

    for phrase, place in lx.COLOR_PLACES.items():
        put(phrase, _Entry("place", place))
    for phrase, attrs in lx.FIXED_PHRASES.items():
        put(phrase, _Entry("fixed", dict(attrs)))
    for phrase, style in lx.HAIRSTYLE_WORDS.items():
        put(phrase, _Entry("hairstyle", style))
    for phrase, (gender, age) in lx.PERSON_NOUNS.items():
        put(phrase, _Entry("person", (gender, age)))
    for phrase, (slot, value) in lx.ITEM_NOUNS.items():
        weak = phrase in ("bag", "hat")
        data = (slot, value, weak, lx.ITEM_EXTRAS.get(phrase, {}))
        put(phrase, _Entry("item", data))
    for phrase, (slot, value) in lx.ITEM_NOUNS.items():
        words = phrase.split()
        if slot != "sink" and not words[-1].endswith("s") or words[-1].endswith("ss"):
            plural = " ".join(words[:-1] + [_plural(words[-1])])
            weak = phrase in ("bag", "hat")
            put(plural, _Entry("item", (slot, value, weak, lx.ITEM_EXTRAS.get(phrase, {}))))
    for phrase, cls in lx.BODY_NOUNS.items():
        put(phrase, _Entry("body", cls))
    for phrase, value in lx.HAIR_COLOR_WORDS.items():
        put(phrase, _Entry("haircolor", value))
    for phrase, color in lx.COLOR_WORDS.items():
        put(phrase, _Entry("color", (color, lx.SKIN_WORDS.get(phrase))))
    for phrase, value in lx.DECADE_AGES.items():
        put(phrase, _Entry("decade", value))
    readings: dict[str, dict[str, tuple[str, str]]] = {w: dict(r) for w, r in lx.ADJECTIVES.items()}

    def add(word: str, cls: str, key: str, value: str) -> None:
        readings.setdefault(word, {}).setdefault(cls, (key, value))

    for word, value in lx.HEIGHT_WORDS.items():
        for cls in ("default", "person", "height"):
            add(word, cls, "height", value)
    for word, value in lx.PHYSIQUE_WORDS.items():
        add(word, "build", "physique", value)
        if word not in lx.PHYSIQUE_NEEDS_BUILD_NOUN:
            add(word, "person", "physique", value)
            add(word, "default", "physique", value)
    for word in ("average", "medium", "normal", "regular", "mid"):
        add(word, "height", "height", "average")
    for word in ("medium", "mid"):
        add(word, "hair", "hairstyle", "medium")
    for word, value in lx.AGE_WORDS.items():
        if " " in word:
            continue
        add(word, "person", "age", value)
        if word != "little":
            add(word, "default", "age", value)
    for word, value in lx.SKIN_WORDS.items():
        if word not in lx.COLOR_WORDS:
            add(word, "skin", "skin_color", value)
    for word in ("tanned", "bronzed"):
        add(word, "person", "skin_color", "medium")
        add(word, "default", "skin_color", "medium")
    add("fair", "hair", "hair_color", "blonde")
    for word, table in readings.items():
        put(word, _Entry("adj", table))
    for word in lx.SHADE_MODIFIERS:
        put(word, _Entry("adj", {}))
    function_words = [
        (lx.BE_WORDS, "be"), (lx.NEGATION_WORDS, "neg"), (lx.NOTHING_WORDS, "nothing"),
        (lx.RELATIVE_WORDS, "rel"), (lx.CLAUSE_WORDS, "clause"), (frozenset({"his", "her", "their"}), "poss"),
        (lx.THING_PRONOUNS, "tpron"), (lx.PERSON_PRONOUNS, "ppron"), (lx.DETERMINERS, "det"),
        (lx.CARRY_VERBS, "carry"), (lx.WEAR_VERBS, "wear"), (lx.PREPOSITIONS, "prep"), (lx.ADVERBS, "adv"),
        (lx.YEAR_WORDS, "year"), (frozenset({"one", "ones"}), "one"),
        (frozenset({"coloured", "colored", "colour", "color", "colours", "colors", "shade", "tone"}), "colored"),
        (lx.MATERIAL_WORDS, "material"),
    ]
    for words, kind in function_words:
        for word in words:
            put(word, _Entry(kind, word))
    return index


_INDEX = _build_index()
_BY_FIRST: dict[str, list[tuple[tuple[str, ...], _Entry]]] = {}
for _phrase, _entry in sorted(_INDEX.items(), key=lambda kv: -len(kv[0])):
    if len(_phrase) > 1:
        _BY_FIRST.setdefault(_phrase[0], []).append((_phrase, _entry))
_SINGLE: dict[str, _Entry] = {p[0]: e for p, e in _INDEX.items() if len(p) == 1}
_PAIRS: frozenset[tuple[str, str]] = frozenset(p[:2] for p in _INDEX if len(p) > 1)
_MULTI_FIRST: frozenset[str] = frozenset(p[0] for p in _PAIRS)
_GENDER_OF_PRONOUN = lx.GENDER_PRONOUNS

# ===================================================================================== tokenization
_TOKEN_RE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*|\d+(?:['’]?s)?|\n|[^\w\s]", re.UNICODE)
_SENTENCE_END = frozenset(".!?;")
_SOFT_BREAK = frozenset(",()/\n–—-‐|[]{}*•·<>=~")
_IGNORED = frozenset("\"'`’‘“”«»#@$%^_\\")
_CLITIC_BE = frozenset({"it", "he", "she", "that", "there", "who", "what", "here", "where", "this"})


# A token is a tuple (word, start, end, kind): kind 0 = word, 1 = punctuation, 2 = word with a possessive
# "'s" ("the woman's hair"). Runs of punctuation collapse into the strongest mark ("!!!" → ".").
_WORD, _PUNCT, _POSSESSIVE = 0, 1, 2
_PUNCT_RANK = {",": 0, "(": 1, ":": 2, ".": 3}


def _tokenize(text: str) -> list[tuple[str, int, int, int]]:
    toks: list[tuple[str, int, int, int]] = []
    append = toks.append
    prev_end = -1
    prev_word = False
    pending_hyphen = False
    lowered = text.lower()
    # str.lower never shortens a character; equal lengths mean offsets in ``lowered`` are offsets in ``text``
    aligned = len(lowered) == len(text)
    for m in _TOKEN_RE.finditer(lowered if aligned else text):
        s = m.group()
        a = m.start()
        b = m.end()
        if s[0].isalnum():
            if pending_hyphen and a == prev_end:
                toks.pop()  # the hyphen between two words only joins them
            pending_hyphen = False
            low = s if aligned else s.lower()
            if "'" in low or "’" in low:
                toks.extend(_split_clitic(low.replace("’", "'"), a, b))
            else:
                append((low, a, b, _WORD))
            prev_end = b
            prev_word = True
            continue
        hyphen_after_word = s in "-‐" and prev_word and a == prev_end
        prev_word = False
        prev_end = m.end()
        if s == "." and toks and toks[-1][3] != _PUNCT and toks[-1][0] in lx.ABBREVIATIONS:
            continue
        if s in _SENTENCE_END:
            mark = "."
        elif s == ":" or s == "(":
            mark = s
        elif s in "&+":
            pending_hyphen = False
            append(("and", a, m.end(), _WORD))
            continue
        elif s in _IGNORED:
            continue
        else:
            mark = ","
        if toks and toks[-1][3] == _PUNCT:
            last = toks[-1]
            pending_hyphen = False
            if _PUNCT_RANK[mark] > _PUNCT_RANK[last[0]]:
                toks[-1] = (mark, last[1], m.end(), _PUNCT)
            continue
        append((mark, a, m.end(), _PUNCT))
        pending_hyphen = hyphen_after_word
    return toks


def _split_clitic(low: str, a: int, b: int) -> list[tuple[str, int, int, int]]:
    base, _, rest = low.partition("'")
    if "'" in rest or not base:
        return [(low.replace("'", ""), a, b, _WORD)]
    mid = a + len(base)
    if rest == "s":
        if base in _CLITIC_BE:
            return [(base, a, mid, _WORD), ("is", mid, b, _WORD)]
        return [(base, a, mid, _POSSESSIVE)]
    if rest == "t" and base.endswith("n"):
        stem = base[:-1]
        stem = {"ca": "can", "wo": "will", "sha": "shall"}.get(stem, stem)
        if not stem:
            return [("not", a, b, _WORD)]
        return [(stem, a, mid - 1, _WORD), ("not", mid - 1, b, _WORD)]
    if rest == "re":
        return [(base, a, mid, _WORD), ("are", mid, b, _WORD)]
    if rest == "m":
        return [(base, a, mid, _WORD), ("am", mid, b, _WORD)]
    if rest in ("ll", "d", "ve"):
        return [(base, a, mid, _WORD)]
    return [(low.replace("'", ""), a, b, _WORD)]


# ========================================================================================= units


class _Entity:
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


class _Unit:
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


def _units(toks: list[tuple[str, int, int, int]]) -> list[_Unit]:
    units: list[_Unit] = []
    append = units.append
    n = len(toks)
    i = 0
    while i < n:
        word, start, end, kind = toks[i]
        if kind == _PUNCT:
            append(_Unit("punct", word, word, start, end, False))
            i += 1
            continue
        match = None
        if word in _MULTI_FIRST and i + 1 < n and kind == _WORD and (word, toks[i + 1][0]) in _PAIRS:
            for phrase, entry in _BY_FIRST[word]:
                size = len(phrase)
                if i + size > n:
                    continue
                ok = True
                for k in range(1, size):
                    other = toks[i + k]
                    if other[3] == _PUNCT or other[0] != phrase[k] or toks[i + k - 1][3] == _POSSESSIVE:
                        ok = False
                        break
                if ok:
                    match = (size, entry)
                    break
        if match is None:
            size = 1
            entry = _SINGLE.get(word)
            if entry is None:
                entry = _Entry("num", word) if word[0].isdigit() else _Entry("unk", word)
            append(_Unit(entry.kind, entry.data, word, start, end, kind == _POSSESSIVE))
            i += 1
            continue
        size, entry = match
        last = toks[i + size - 1]
        text = " ".join(toks[i + k][0] for k in range(size))
        append(_Unit(entry.kind, entry.data, text, start, last[2], last[3] == _POSSESSIVE))
        i += size
    return units


def _mark_compounds(units: list[_Unit]) -> None:
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


def _garment_hood(units: list[_Unit], i: int) -> bool:
    """"a jacket with a hood" names part of the jacket, not a hood worn up ("with the hood up" is)."""
    n = len(units)
    for k in (i + 1, i + 2):
        if k < n and units[k].word in ("up", "on", "raised"):
            return False
    j = i - 1
    while j >= 0 and units[j].kind in ("det", "poss", "adj", "color", "material"):
        j -= 1
    return j >= 1 and units[j].word == "with" and units[j - 1].kind == "item" and units[j - 1].data[0] == "top"


_LAYER_WORDS = {"under": "first", "underneath": "first", "beneath": "first", "over": "second"}


def _layered_under(units: list[_Unit], i: int) -> int | None:
    """For "A under B" / "B over A" between two tops, the index of the inner (hidden) garment A."""
    n = len(units)
    k = i + 1
    if k >= n or units[k].word not in _LAYER_WORDS:
        return None
    j = k + 1
    while j < n and units[j].kind in ("det", "poss", "adj", "color", "material", "mod", "unk") and j < k + 5:
        j += 1
    if j >= n or units[j].kind != "item" or units[j].data[0] != units[i].data[0] or units[i].data[0] != "top":
        return None
    return i if _LAYER_WORDS[units[k].word] == "first" else j


# ======================================================================================= parse


@dataclass(frozen=True)
class ParseResult:
    """What a description states: canonical attributes, their count and level, evidence spans and
    suggestions of what to add next."""

    attributes: dict[str, str]
    count: int
    level: str | None
    spans: list[dict] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"attributes": dict(self.attributes), "count": self.count, "level": self.level,
                "spans": [dict(s) for s in self.spans], "missing": list(self.missing)}


#: Order in which unstated attributes are suggested: coarse and salient first.
SUGGESTION_ORDER: tuple[str, ...] = (
    "gender", "age", "height", "physique", "skin_color",
    "top_type", "top_color", "top_length", "bottom_type", "bottom_color", "bottom_length",
    "hairstyle", "hair_color", "hat_type", "hat_color", "shoe_type", "carrying_type", "carrying_color",
)

#: Units that read their context (the entities before them, the colon section they are in).
_CONTEXT_KINDS = frozenset({"color", "adj", "unk"})
_NOUN_KINDS = frozenset({"item", "body", "person", "hairstyle", "one", "ppron", "tpron"})
_FORWARD_SKIP = frozenset({"adj", "color", "haircolor", "material", "mod", "colored", "fixed"})
_PREDICATE_SKIP = frozenset({"adv", "det", "adj", "color", "haircolor", "neg", "poss"})
_PREDICATE_VERBS = frozenset({"cut", "worn", "kept", "styled", "dyed", "coloured", "colored"})


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.units = _units(_tokenize(text))
        _mark_compounds(self.units)
        self.entities: list[_Entity] = []
        # candidates: key → list of (priority, order, value, start, end)
        self.cands: dict[str, list[tuple[int, int, str, int, int]]] = {}
        self.order = 0

    # ---------------------------------------------------------------------------------- evidence
    def add(self, key: str, value: str, start: int, end: int, priority: int = 1) -> None:
        self.order += 1
        self.cands.setdefault(key, []).append((priority, self.order, value, start, end))

    # ------------------------------------------------------------------------------ structure pass
    def structure(self) -> None:
        """Entities, subjects of predicates, antecedents, colon sections (one left-to-right pass)."""
        units = self.units
        last_entity: _Entity | None = None
        sent_entity: _Entity | None = None
        last_noun = None             # nearest noun ref in the sentence
        last_person = None
        clause_first = None
        clause_pure = True
        prev_clause_first = None     # first noun of the previous clause, if joined by "and" and pure
        prev_firsts: list = []       # first nouns of earlier clauses of this sentence (bounded)
        colon_subject = None
        for i, u in enumerate(units):
            kind = u.kind
            if kind in _CONTEXT_KINDS:
                u.last_entity = last_entity
                u.sent_entity = sent_entity
                u.colon_subject = colon_subject
            ref = None
            if kind == "item":
                slot, value, weak, extras = u.data
                if slot == "hat" and value == "hood" and _garment_hood(units, i):
                    slot, value = "sink", None
                ent = _Entity(slot, value, weak, extras, u.start, u.end, i)
                u.entity = ent
                self.entities.append(ent)
                last_entity = sent_entity = ent
                ref = ("entity", ent)
            elif kind == "body" and u.word not in lx.SUFFIX_NOUNS:
                ref = ("body", u.data)
            elif kind == "hairstyle":
                ref = ("body", "hair")
            elif kind == "person" and not u.possessive:
                ref = ("person",)
            elif kind == "ppron":
                ref = ("they",) if u.word in ("they", "them") else ("person",)
            elif kind == "tpron" or kind == "one":
                ref = ("it",)
            if ref is not None:
                last_noun = ref
                if ref[0] == "person":
                    last_person = ref
                if clause_first is None:
                    clause_first = ref
                continue
            if kind == "punct":
                word = u.word
                if word == ".":
                    sent_entity = None
                    last_noun = last_person = clause_first = prev_clause_first = None
                    colon_subject = None
                    prev_firsts = []
                    clause_pure = True
                    continue
                if word == ":":
                    subject = clause_first or (prev_firsts[-1] if prev_firsts else None)
                    u.subjects = [subject] if subject else []
                    colon_subject = subject
                elif word == "(":
                    u.subjects = [last_noun] if last_noun else []
                if clause_first is not None:
                    prev_firsts = (prev_firsts + [clause_first])[-4:]
                clause_first = None
                prev_clause_first = None
                clause_pure = True
                continue
            if kind == "clause":
                if clause_first is not None:
                    prev_firsts = (prev_firsts + [clause_first])[-4:]
                prev_clause_first = clause_first if (u.word == "and" and clause_pure) else None
                clause_first = None
                clause_pure = True
                continue
            if kind == "rel":
                u.near = last_person if u.word in ("who", "whom") and last_person else last_noun
                continue
            if kind == "be":
                subjects = self._subject(i, clause_first, prev_firsts, prev_clause_first)
                u.subjects = subjects
                clause_pure = False
                continue
            if kind in ("wear", "carry", "prep"):
                clause_pure = False
                if kind == "prep" and u.word == "in" and i > 0 and units[i - 1].kind == "item":
                    u.near = ("entity", units[i - 1].entity)

    def _subject(self, i: int, clause_first, prev_firsts: list, prev_clause_first) -> list:
        units = self.units
        j = i - 1
        while j >= 0 and units[j].kind in ("adv", "neg"):
            j -= 1
        if j >= 0 and units[j].kind == "rel":
            return [units[j].near] if units[j].near else []
        if clause_first is not None:
            subjects = [clause_first]
            if prev_clause_first is not None and prev_clause_first[0] == "entity" and clause_first[0] == "entity":
                subjects.append(prev_clause_first)
            return subjects
        for ref in reversed(prev_firsts):
            if ref is not None:
                return [ref]
        return []

    # ------------------------------------------------------------------------------------ negation
    def negation(self) -> None:
        """Mark negated items and adjectives; "carrying nothing" style phrases (conventions: negation)."""
        units = self.units
        for i, u in enumerate(units):
            if u.kind == "neg":
                if u.word == "none":
                    self._negate_none(i)
                    continue
                self._negate_from(i)
            elif u.kind == "nothing":
                self._nothing(i, carry_seen=i > 0 and units[i - 1].kind == "carry", cue_start=u.start)

    def _negate_none(self, i: int) -> None:
        units = self.units
        j = i - 1
        if j >= 1 and (units[j].kind == "be" or units[j].word == ":") and units[j - 1].kind == "item":
            self._negate_entity(units[j - 1], units[j - 1].start)

    def _negate_entity(self, unit: _Unit, cue_start: int) -> None:
        ent = unit.entity
        if ent is not None and not ent.negated:
            ent.negated = True
            ent.neg_start = min(cue_start, ent.start)

    def _negate_from(self, i: int) -> None:
        units = self.units
        n = len(units)
        cue_start = units[i].start
        carry_seen = False
        unknown = 2
        j = i + 1
        limit = min(n, i + 9)
        while j < limit:
            v = units[j]
            k = v.kind
            if k in ("det", "poss", "adv", "wear", "be"):
                j += 1
                continue
            if k == "carry":
                carry_seen = True
                j += 1
                continue
            if k in ("adj", "color", "haircolor", "material", "mod", "colored"):
                if k == "adj":
                    v.negated = True
                j += 1
                continue
            if k == "unk" and unknown > 0:
                unknown -= 1
                j += 1
                continue
            if k == "item":
                self._negate_entity(v, cue_start)
                self._negate_chain(j)
                return
            if k == "body" and v.data == "hair":
                self.add("hairstyle", "bald", cue_start, v.end)
                return
            if k == "body" and v.data == "sleeve":
                self.add("top_length", "sleeveless", cue_start, v.end)
                return
            if k == "nothing":
                self._nothing(j, carry_seen, cue_start)
                return
            return

    def _negate_chain(self, j: int) -> None:
        """Continue a negation over "or"/"nor"/"and" lists: "no hat or bag", "neither a hat nor a bag"."""
        units = self.units
        n = len(units)
        count = 0
        while count < 6:
            k = j + 1
            if k >= n or not (units[k].kind in ("clause", "neg") and units[k].word in ("or", "nor", "and")):
                return
            conj = units[k].word
            k += 1
            while k < n and units[k].kind in ("det", "adj", "color", "material", "mod"):
                if conj == "and" and units[k].kind == "det":
                    return
                k += 1
            if k >= n or units[k].kind != "item":
                return
            self._negate_entity(units[k], units[k].start)
            j = k
            count += 1

    def _nothing(self, i: int, carry_seen: bool, cue_start: int) -> None:
        """"carrying nothing", "nothing in his hands" → no carried item; "nothing on his head" → no hat."""
        units = self.units
        n = len(units)
        u = units[i]
        j = i + 1
        if j < n and units[j].kind == "prep" and units[j].word in ("on", "in"):
            place = units[j].word
            k = j + 1
            while k < n and units[k].kind in ("det", "poss"):
                k += 1
            if k < n:
                w = units[k].word
                if place == "on" and w == "head":
                    self.add("hat_type", "none", cue_start, units[k].end)
                    return
                if place == "in" and w in ("hand", "hands"):
                    self.add("carrying_type", "none", cue_start, units[k].end)
                    return
        if carry_seen or (i > 0 and units[i - 1].kind == "carry"):
            self.add("carrying_type", "none", cue_start, u.end)

    # ------------------------------------------------------------------------------------- binding
    def bind_all(self) -> None:
        units = self.units
        for i, u in enumerate(units):
            kind = u.kind
            if u.negated:
                continue
            if kind in ("color", "adj"):
                self._bind(i)
            elif kind == "haircolor":
                self.add("hair_color", u.data, u.start, u.end)
            elif kind == "hairstyle":
                self.add("hairstyle", u.data, u.start, u.end)
            elif kind == "fixed":
                for key, value in u.data.items():
                    self.add(key, value, u.start, u.end, priority=3 if key == "age" else 1)
            elif kind == "person":
                gender, age = u.data
                if gender:
                    self.add("gender", gender, u.start, u.end, priority=2)
                if age:
                    prio = 2 if age == "child" else 3
                    self.add("age", age, u.start, u.end, priority=prio)
            elif kind in ("ppron", "poss") and u.word in _GENDER_OF_PRONOUN:
                self.add("gender", _GENDER_OF_PRONOUN[u.word], u.start, u.end, priority=1)
            elif kind == "decade":
                self.add("age", u.data, u.start, u.end, priority=3)
            elif kind == "num":
                self._number(i)
            elif kind == "unk" and u.word in ("knee", "knees", "ankle", "ankles"):
                self._limb_length(i)

    def _number(self, i: int) -> None:
        units = self.units
        u = units[i]
        digits = "".join(ch for ch in u.word if ch.isdigit())
        if not digits or len(digits) > 3:
            return
        before = units[i - 1].word if i > 0 else ""
        after = units[i + 1].kind if i + 1 < len(units) else ""
        if before not in ("aged", "age") and after != "year":
            return
        years = int(digits)
        if years < 13:
            age = "child"
        elif years < 40:
            age = "young"
        elif years < 60:
            age = "middle_aged"
        else:
            age = "elderly"
        self.add("age", age, u.start, u.end, priority=3)

    def _bind(self, i: int) -> None:
        units = self.units
        u = units[i]
        is_color = u.kind == "color"
        if u.kind == "adj" and u.word in ("old", "aged"):
            if i > 0 and units[i - 1].kind == "year":
                return
            if u.word == "aged" and i + 1 < len(units) and units[i + 1].kind == "num":
                return
        # 1. predicate: "… is green", "… that is green", "… in green", "Hair: short", "cap (grey)";
        #    after a determiner ("was a brown satchel") the noun phrase that follows comes first.
        j = i - 1
        steps = 0
        crossed_det = False
        while j >= 0 and steps < 6:
            v = units[j]
            if v.kind in _PREDICATE_SKIP or v.word in _PREDICATE_VERBS or \
                    (v.kind == "clause" and v.word in ("and", "or")):
                crossed_det = crossed_det or v.kind in ("det", "poss", "clause")
                j -= 1
                steps += 1
                continue
            break
        predicate_refs: list = []
        if j >= 0:
            v = units[j]
            if v.subjects is not None and (v.kind == "be" or v.word in (":", "(")):
                predicate_refs = v.subjects
            elif is_color and v.kind == "prep" and v.word == "in" and v.near and v.near[0] == "entity":
                predicate_refs = [v.near]
                crossed_det = True
        if predicate_refs and not crossed_det and self._apply_all(u, predicate_refs, i):
            return
        # 2. forward, inside the noun phrase ("in red and blue jeans": the colour list stops at "and")
        target, stop = self._forward(i, allow_list=not predicate_refs)
        if target is not None:
            self._apply(u, target, i, forward=True)
            return
        nxt = units[stop] if stop < len(units) else None
        if is_color and nxt is not None and nxt.kind == "place":
            ent = _Entity(nxt.data, None, False, {}, nxt.start, nxt.end, i)
            self.entities.append(ent)
            self._apply(u, ("entity", ent), i)
            return
        if predicate_refs and crossed_det and self._apply_all(u, predicate_refs, i):
            return
        # 3. post forms
        if is_color:
            if nxt is not None and nxt.kind in ("colored", "material"):
                after = units[stop + 1] if stop + 1 < len(units) else None
                ends_phrase = after is None or after.kind not in _NOUN_KINDS
                if ends_phrase and u.sent_entity is not None and self._apply(u, ("entity", u.sent_entity), i):
                    return
            # 4. a bare trailing colour: "a windbreaker, bright yellow", "Hair: short, black."
            if nxt is None or nxt.kind in ("punct", "ppron", "adv", "clause"):
                if u.colon_subject is not None and self._apply(u, u.colon_subject, i):
                    return
                ent = u.sent_entity
                if ent is not None and ent.color is None and ent.slot != "sink" and \
                        self._apply(u, ("entity", ent), i):
                    return
            return
        readings = u.data
        if u.word in lx.BOTTOM_LENGTH_WORDS and u.sent_entity is not None and u.sent_entity.slot == "bottom":
            self._apply(u, ("entity", u.sent_entity), i)
            return
        at_break = stop >= len(units) or units[stop].kind == "punct"
        if at_break and u.colon_subject is not None and self._apply(u, u.colon_subject, i):
            return
        default = readings.get("default")
        if default:
            self._add_reading(u, default)

    def _apply_all(self, u: _Unit, refs: list, i: int) -> bool:
        done = False
        for ref in refs:
            done = self._apply(u, ref, i) or done
        return done

    def _limb_length(self, i: int) -> None:
        """"a skirt to the knee" → knee, "above the knee" → short, "to the ankles" → long."""
        units = self.units
        u = units[i]
        ent = u.sent_entity
        if ent is None or ent.slot != "bottom" or ent.negated:
            return
        j = i - 1
        while j >= 0 and units[j].kind in ("det", "poss", "adv"):
            j -= 1
        if j < 0:
            return
        before = units[j].word
        knee = u.word.startswith("knee")
        if before == "above" and knee:
            value = "short"
        elif before in ("to", "at", "reach", "reaches", "reaching", "reached", "past"):
            value = "knee" if knee else "long"
        else:
            return
        self.add("bottom_length", value, units[j].start, u.end)

    def _forward(self, i: int, allow_list: bool = True) -> tuple[tuple | None, int]:
        """The noun this colour / adjective modifies inside its noun phrase, and where the scan stopped."""
        units = self.units
        n = len(units)
        u = units[i]
        unknown = 3
        j = i + 1
        limit = min(n, i + 9)
        while j < limit:
            v = units[j]
            k = v.kind
            if k in _NOUN_KINDS and k not in ("ppron", "tpron"):
                if k == "body" and v.word in lx.SUFFIX_NOUNS and j != i + 1:
                    j += 1
                    continue
                if k == "item":
                    return ("entity", v.entity), j
                if k == "body":
                    return ("body", v.data), j
                if k == "hairstyle":
                    return ("body", "hair"), j
                if k == "person":
                    return ("person",), j
                if k == "one":
                    return (("entity", u.last_entity) if u.last_entity else ("none",)), j
            if k in _FORWARD_SKIP or k == "num":
                j += 1
                continue
            if k == "unk" and unknown > 0:
                unknown -= 1
                j += 1
                continue
            if k == "punct" and v.word == "," and u.kind == "adj" and j + 1 < n and \
                    units[j + 1].word in lx.HAIR_TEXTURE_WORDS:
                j += 1
                continue
            if allow_list and k == "clause" and v.word in ("and", "or") and u.kind == "color" and j + 1 < n and \
                    units[j + 1].kind == "color":
                j += 1
                continue
            return None, j
        return None, j

    def _apply(self, u: _Unit, ref: tuple, i: int, forward: bool = False) -> bool:
        """Give unit ``u`` (colour or adjective) to ``ref``; True when the unit is used up."""
        what = ref[0]
        if what == "it":
            ent = u.last_entity
            if ent is None:
                return False
            ref = ("entity", ent)
            what = "entity"
        elif what == "they":
            if u.kind == "color":
                if u.last_entity is None:
                    return False
                ref = ("entity", u.last_entity)
                what = "entity"
            else:
                ref = ("person",)
                what = "person"
        if what == "none":
            return True
        if u.kind == "color":
            color, skin = u.data
            if what == "entity":
                ent = ref[1]
                if ent.color is None:
                    ent.color = color
                    ent.color_span = (u.start, u.end)
                    return True
                return forward
            if what == "body":
                cls = ref[1]
                if cls == "hair":
                    hair = lx.HAIR_FROM_COLOR.get(color)
                    if hair:
                        self.add("hair_color", hair, u.start, u.end)
                    return True
                if cls == "skin":
                    if skin:
                        self.add("skin_color", skin, u.start, u.end)
                    return True
                return True
            return forward
        readings = u.data
        if what == "entity":
            reading = readings.get(ref[1].slot)
        elif what == "body":
            reading = readings.get(ref[1])
        else:
            reading = readings.get("person") if forward else (readings.get("person") or readings.get("default"))
        if reading:
            self._add_reading(u, reading)
            return True
        return what != "person" or forward

    def _add_reading(self, u: _Unit, reading: tuple[str, str]) -> None:
        key, value = reading
        priority = 1
        if key == "age":
            priority = {"young": 1, "little": 2}.get(u.word, 3)
        self.add(key, value, u.start, u.end, priority=priority)

    # ------------------------------------------------------------------------------------ assembly
    def assemble(self) -> ParseResult:
        spans: dict[str, tuple[str, int, int]] = {}
        for key, options in self.cands.items():
            best = min(options, key=lambda c: (-c[0], c[1]))
            spans[key] = (best[2], best[3], best[4])
        self._items(spans)
        attrs = {key: spans[key][0] for key in ATTRIBUTE_KEYS if key in spans}
        for dependent, owner in (("hat_color", "hat_type"), ("carrying_color", "carrying_type")):
            if dependent in attrs and attrs.get(owner) in (None, "none"):
                del attrs[dependent]
        span_list = [{"attribute": key, "value": attrs[key], "start": spans[key][1], "end": spans[key][2],
                      "text": self.text[spans[key][1]:spans[key][2]]} for key in attrs]
        span_list.sort(key=lambda s: (s["start"], ATTRIBUTE_KEYS.index(s["attribute"])))
        count = ONTOLOGY.count(attrs)
        return ParseResult(attributes=attrs, count=count, level=ONTOLOGY.level_of(count), spans=span_list,
                           missing=_missing(attrs))

    def _items(self, spans: dict[str, tuple[str, int, int]]) -> None:
        slots = {"hat": ("hat_type", "hat_color", None), "top": ("top_type", "top_color", "top_length"),
                 "bottom": ("bottom_type", "bottom_color", "bottom_length"), "shoe": ("shoe_type", None, None),
                 "carry": ("carrying_type", "carrying_color", None)}
        inner = set()
        for i, u in enumerate(self.units):
            if u.kind == "item":
                hidden = _layered_under(self.units, i)
                if hidden is not None:
                    inner.add(id(self.units[hidden].entity))
        for slot, (type_key, color_key, _length_key) in slots.items():
            mentions = [e for e in self.entities if e.slot == slot]
            live = [e for e in mentions if not e.negated]
            if any(id(e) not in inner for e in live):
                live = [e for e in live if id(e) not in inner]
            for ent in live:
                for key, value in ent.extras.items():
                    spans.setdefault(key, (value, ent.start, ent.end))
            typed = [e for e in live if e.value is not None]
            strong = [e for e in typed if not e.weak]
            winner = (strong or typed or [None])[0]
            if winner is not None:
                spans[type_key] = (winner.value, winner.start, winner.end)
            elif slot in ("hat", "carry"):
                negated = [e for e in mentions if e.negated]
                if negated:
                    ent = negated[0]
                    spans[type_key] = ("none", ent.neg_start, ent.end)
            if color_key is None:
                continue
            colored = None
            if winner is not None and winner.color is not None:
                colored = winner
            else:
                pool = [e for e in live if e.value is None] + [e for e in typed if winner is None or
                                                               e.value == winner.value]
                colored = next((e for e in pool if e.color is not None), None)
            if colored is not None and colored.color_span is not None:
                spans[color_key] = (colored.color, colored.color_span[0], colored.color_span[1])


def _missing(attrs: dict[str, str]) -> list[str]:
    out = []
    for key in SUGGESTION_ORDER:
        if key in attrs:
            continue
        if key == "hat_color" and attrs.get("hat_type") in (None, "none"):
            continue
        if key == "carrying_color" and attrs.get("carrying_type") in (None, "none"):
            continue
        out.append(key)
    return out


def parse(text: str) -> ParseResult:
    """Read the attributes a free-text description states (docs/text-conventions.md).

    Never raises on a string: empty, nonsense or non-English text gives no attributes and level None.
    Runs in time linear in the length of ``text``.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse() needs a str, got {type(text).__name__}")
    parser = _Parser(text)
    parser.structure()
    parser.negation()
    parser.bind_all()
    return parser.assemble()
