"""The parser's first step: the lexicon indexed by phrase (built once at import), and the tokenizer: words,
numbers and punctuation with character offsets, clitics split ("isn't" → is not), a hyphen between two words
joining them. See ``engine.retrieval.text.parser`` for the whole pipeline."""

from __future__ import annotations

import re
from dataclasses import dataclass

from engine.retrieval.text import lexicon as lx

# ============================================================================ lexicon index (built once)


@dataclass(frozen=True)
class Entry:
    kind: str
    data: object = None


def _plural(word: str) -> str:
    if word.endswith(("s", "sh", "ch", "x")):
        return word + "es"
    return word + "s"


def _build_index() -> dict[tuple[str, ...], Entry]:
    index: dict[tuple[str, ...], Entry] = {}

    def put(phrase: str, entry: Entry) -> None:
        key = tuple(phrase.split())
        index.setdefault(key, entry)

    for phrase, place in lx.COLOR_PLACES.items():
        put(phrase, Entry("place", place))
    for phrase, attrs in lx.FIXED_PHRASES.items():
        put(phrase, Entry("fixed", dict(attrs)))
    for phrase, style in lx.HAIRSTYLE_WORDS.items():
        put(phrase, Entry("hairstyle", style))
    for phrase, (gender, age) in lx.PERSON_NOUNS.items():
        put(phrase, Entry("person", (gender, age)))
    for phrase, (slot, value) in lx.ITEM_NOUNS.items():
        weak = phrase in ("bag", "hat")
        data = (slot, value, weak, lx.ITEM_EXTRAS.get(phrase, {}))
        put(phrase, Entry("item", data))
    for phrase, (slot, value) in lx.ITEM_NOUNS.items():
        words = phrase.split()
        if slot != "sink" and not words[-1].endswith("s") or words[-1].endswith("ss"):
            plural = " ".join(words[:-1] + [_plural(words[-1])])
            weak = phrase in ("bag", "hat")
            put(plural, Entry("item", (slot, value, weak, lx.ITEM_EXTRAS.get(phrase, {}))))
    for phrase, cls in lx.BODY_NOUNS.items():
        put(phrase, Entry("body", cls))
    for phrase, value in lx.HAIR_COLOR_WORDS.items():
        put(phrase, Entry("haircolor", value))
    for phrase, color in lx.COLOR_WORDS.items():
        put(phrase, Entry("color", (color, lx.SKIN_WORDS.get(phrase))))
    for phrase, value in lx.DECADE_AGES.items():
        put(phrase, Entry("decade", value))
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
        put(word, Entry("adj", table))
    for word in lx.SHADE_MODIFIERS:
        put(word, Entry("adj", {}))
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
            put(word, Entry(kind, word))
    return index


INDEX = _build_index()
BY_FIRST: dict[str, list[tuple[tuple[str, ...], Entry]]] = {}
for _phrase, _entry in sorted(INDEX.items(), key=lambda kv: -len(kv[0])):
    if len(_phrase) > 1:
        BY_FIRST.setdefault(_phrase[0], []).append((_phrase, _entry))
SINGLE: dict[str, Entry] = {p[0]: e for p, e in INDEX.items() if len(p) == 1}
PAIRS: frozenset[tuple[str, str]] = frozenset(p[:2] for p in INDEX if len(p) > 1)
MULTI_FIRST: frozenset[str] = frozenset(p[0] for p in PAIRS)
GENDER_OF_PRONOUN = lx.GENDER_PRONOUNS

# ===================================================================================== tokenization
_TOKEN_RE = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)*|\d+(?:['’]?s)?|\n|[^\w\s]", re.UNICODE)
SENTENCE_END = frozenset(".!?;")
SOFT_BREAK = frozenset(",()/\n–—-‐|[]{}*•·<>=~")
_IGNORED = frozenset("\"'`’‘“”«»#@$%^_\\")
_CLITIC_BE = frozenset({"it", "he", "she", "that", "there", "who", "what", "here", "where", "this"})


# A token is a tuple (word, start, end, kind): kind 0 = word, 1 = punctuation, 2 = word with a possessive
# "'s" ("the woman's hair"). Runs of punctuation collapse into the strongest mark ("!!!" → ".").
WORD, PUNCT, POSSESSIVE = 0, 1, 2
_PUNCT_RANK = {",": 0, "(": 1, ":": 2, ".": 3}


def tokenize(text: str) -> list[tuple[str, int, int, int]]:
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
                append((low, a, b, WORD))
            prev_end = b
            prev_word = True
            continue
        hyphen_after_word = s in "-‐" and prev_word and a == prev_end
        prev_word = False
        prev_end = m.end()
        if s == "." and toks and toks[-1][3] != PUNCT and toks[-1][0] in lx.ABBREVIATIONS:
            continue
        if s in SENTENCE_END:
            mark = "."
        elif s == ":" or s == "(":
            mark = s
        elif s in "&+":
            pending_hyphen = False
            append(("and", a, m.end(), WORD))
            continue
        elif s in _IGNORED:
            continue
        else:
            mark = ","
        if toks and toks[-1][3] == PUNCT:
            last = toks[-1]
            pending_hyphen = False
            if _PUNCT_RANK[mark] > _PUNCT_RANK[last[0]]:
                toks[-1] = (mark, last[1], m.end(), PUNCT)
            continue
        append((mark, a, m.end(), PUNCT))
        pending_hyphen = hyphen_after_word
    return toks


def _split_clitic(low: str, a: int, b: int) -> list[tuple[str, int, int, int]]:
    base, _, rest = low.partition("'")
    if "'" in rest or not base:
        return [(low.replace("'", ""), a, b, WORD)]
    mid = a + len(base)
    if rest == "s":
        if base in _CLITIC_BE:
            return [(base, a, mid, WORD), ("is", mid, b, WORD)]
        return [(base, a, mid, POSSESSIVE)]
    if rest == "t" and base.endswith("n"):
        stem = base[:-1]
        stem = {"ca": "can", "wo": "will", "sha": "shall"}.get(stem, stem)
        if not stem:
            return [("not", a, b, WORD)]
        return [(stem, a, mid - 1, WORD), ("not", mid - 1, b, WORD)]
    if rest == "re":
        return [(base, a, mid, WORD), ("are", mid, b, WORD)]
    if rest == "m":
        return [(base, a, mid, WORD), ("am", mid, b, WORD)]
    if rest in ("ll", "d", "ve"):
        return [(base, a, mid, WORD)]
    return [(low.replace("'", ""), a, b, WORD)]


