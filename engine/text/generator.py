"""Multi-grained annotation engine: attribute dict → fluent English descriptions (METHODS §1.1).

``describe`` states exactly the requested attributes (no more, no fewer) in one of several sentence
structures; ``nested_key_subsets`` draws the nested subsets t⁰⊂t¹⊂… of sizes 5, 8, 11, 14 (upper bounds
of UC, C, M, F) ending with the full set (UF); ``descriptions_by_level`` and ``query_chain`` describe
them. Everything is deterministic given a ``random.Random`` or an int seed.

Without ``gender`` among the stated keys no gendered word is used ("the person", "they").
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from engine.ontology import ATTRIBUTE_KEYS, DEPENDENT_COLORS, ONTOLOGY
from engine.text import lexicon as lx

#: Subset sizes of the nested chain (N_c=5, N_iv=3, stop before N_f=15; METHODS §1.1).
CHAIN_SIZES: tuple[int, ...] = (5, 8, 11, 14)

RngLike = random.Random | int | None


def as_rng(rng: RngLike) -> random.Random:
    """A ``random.Random`` from a Random, an int seed, or None (seed 0)."""
    if isinstance(rng, random.Random):
        return rng
    if rng is None:
        return random.Random(0)
    if isinstance(rng, bool) or not isinstance(rng, int):
        raise ValueError(f"rng must be a random.Random, an int seed or None, got {type(rng).__name__}")
    return random.Random(rng)


# ------------------------------------------------------------------------------------ key validation
def stated_keys(attributes: Mapping[str, str]) -> list[str]:
    """The counted keys of an attribute dict, in ontology order (a colour of a ``none`` item is dropped)."""
    counted = ONTOLOGY.counted(attributes)
    return [key for key in ATTRIBUTE_KEYS if key in counted]


def _check_request(attributes: Mapping[str, str], keys: Iterable[str]) -> list[str]:
    ONTOLOGY.validate(attributes)
    wanted = list(dict.fromkeys(keys))
    for key in wanted:
        if key not in ONTOLOGY.attributes:
            raise ValueError(f"unknown attribute key {key!r}")
        if key not in attributes:
            raise ValueError(f"key {key!r} is requested but the attribute dict has no value for it")
    for color, owner in DEPENDENT_COLORS.items():
        if color in wanted and owner not in wanted:
            raise ValueError(f"{color!r} can only be described together with {owner!r}")
        if color in wanted and attributes[owner] == "none":
            raise ValueError(f"{color!r} cannot be described when {owner!r} is 'none'")
    return [key for key in ATTRIBUTE_KEYS if key in wanted]


# ------------------------------------------------------------------------------------------ wording
def _article(phrase: str) -> str:
    return ("an " if phrase[:1].lower() in "aeiou" else "a ") + phrase


def _join(parts: Sequence[str], rng: random.Random, conj: str = "and") -> str:
    parts = [p for p in parts if p]
    if len(parts) <= 1:
        return "".join(parts)
    if len(parts) == 2:
        return f"{parts[0]} {conj} {parts[1]}"
    comma = "," if rng.random() < 0.5 else ""
    return ", ".join(parts[:-1]) + f"{comma} {conj} {parts[-1]}"


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class _Voice:
    """How the text refers to the person: he / she / they / "the person"."""

    subject: str
    possessive: str
    plural: bool

    def verb(self, singular: str, plural: str) -> str:
        return f"{self.subject} {plural if self.plural else singular}"

    @property
    def be(self) -> str:
        return self.verb("is", "are")

    @property
    def has(self) -> str:
        return self.verb("has", "have")


def _voice(gender: str | None, rng: random.Random) -> _Voice:
    if gender == "male":
        return _Voice("he", "his", False)
    if gender == "female":
        return _Voice("she", "her", False)
    if rng.random() < 0.5:
        return _Voice("they", "their", True)
    return _Voice("the person", "the person's", False)


# ---------------------------------------------------------------------------------------- the person
_GENDER_NOUNS = {"male": ("man", "man", "guy", "gentleman"), "female": ("woman", "woman", "lady")}
_NEUTRAL_NOUNS = ("person", "person", "individual", "pedestrian")


def _person_noun(gender: str | None, age: str | None, rng: random.Random) -> str:
    """A noun phrase stating exactly ``gender`` and ``age`` (either may be None)."""
    if age == "child":
        options = {"male": ("boy", "little boy", "young boy"), "female": ("girl", "little girl", "young girl"),
                   None: ("child", "kid", "young child")}[gender]
        return rng.choice(options)
    if age == "young":
        if gender is None:
            return rng.choice(("young person", "teenager", "young adult", "youth"))
        return "young " + rng.choice(_GENDER_NOUNS[gender])
    if age == "middle_aged":
        return "middle-aged " + (rng.choice(_GENDER_NOUNS[gender]) if gender else rng.choice(_NEUTRAL_NOUNS))
    if age == "elderly":
        adjective = rng.choice(("elderly", "old", "elderly", "senior"))
        if gender is None:
            return rng.choice(("elderly person", "old person", "senior citizen", "elderly pedestrian"))
        return f"{adjective} {rng.choice(_GENDER_NOUNS[gender])}"
    if gender is not None:
        return rng.choice(_GENDER_NOUNS[gender])
    return rng.choice(_NEUTRAL_NOUNS)


_HEIGHT_PRE = {"tall": ("tall",), "short": ("short",), "average": ("average-height", "medium-height")}
_HEIGHT_POST = {"tall": ("tall",), "short": ("short",), "average": ("of average height", "of medium height")}
_PHYSIQUE_PRE = {"slim": ("slim", "thin", "slender", "skinny", "lean"),
                 "heavy": ("heavy", "heavyset", "stocky", "overweight", "chubby", "plump"),
                 "average": ("average-build",)}
_PHYSIQUE_POST = {"slim": ("slim", "thin", "slender", "of slim build"),
                  "heavy": ("heavy", "heavyset", "stocky", "overweight", "of heavy build"),
                  "average": ("of average build", "of medium build", "of normal build")}
_PHYSIQUE_WITH = {"slim": ("a slim build", "a slender build"), "heavy": ("a heavy build", "a large build"),
                  "average": ("an average build", "a medium build")}
_SKIN_PRE = {"light": ("light-skinned", "fair-skinned", "pale-skinned"),
             "medium": ("olive-skinned", "medium-skinned", "tanned"),
             "dark": ("dark-skinned",)}
_SKIN_WITH = {"light": ("light skin", "fair skin", "pale skin"),
              "medium": ("olive skin", "medium skin", "tanned skin"),
              "dark": ("dark skin", "a dark complexion")}
_DECADES = {"young": ("twenties",), "middle_aged": ("forties", "fifties")}


@dataclass
class _Person:
    """Realised pieces of the person: a noun phrase plus phrases for the attributes left out of it."""

    noun_phrase: str             # "tall young man" (no article)
    predicates: list[str]        # adjectives / phrases usable after "is": "tall", "of average build"
    with_phrases: list[str]      # "dark skin", "a slim build" (after "with")


def _person(attrs: Mapping[str, str], keys: set[str], voice: _Voice, rng: random.Random) -> _Person:
    gender = attrs["gender"] if "gender" in keys else None
    age = attrs["age"] if "age" in keys else None
    predicates: list[str] = []
    with_phrases: list[str] = []
    pre: list[str] = []
    decade = None
    if age in _DECADES and rng.random() < 0.25:
        decade = f"in {voice.possessive if gender else 'their'} {rng.choice(_DECADES[age])}"
        age_for_noun = None
    else:
        age_for_noun = age
    noun = _person_noun(gender, age_for_noun, rng)
    if "height" in keys:
        if rng.random() < 0.6:
            pre.append(rng.choice(_HEIGHT_PRE[attrs["height"]]))
        else:
            predicates.append(rng.choice(_HEIGHT_POST[attrs["height"]]))
    if "physique" in keys:
        roll = rng.random()
        if roll < 0.5:
            pre.append(rng.choice(_PHYSIQUE_PRE[attrs["physique"]]))
        elif roll < 0.8:
            predicates.append(rng.choice(_PHYSIQUE_POST[attrs["physique"]]))
        else:
            with_phrases.append(rng.choice(_PHYSIQUE_WITH[attrs["physique"]]))
    if "skin_color" in keys:
        if rng.random() < 0.5:
            pre.append(rng.choice(_SKIN_PRE[attrs["skin_color"]]))
        else:
            with_phrases.append(rng.choice(_SKIN_WITH[attrs["skin_color"]]))
    rng.shuffle(pre)
    # keep "short" away from nouns it could modify: put it first
    if "short" in pre:
        pre.remove("short")
        pre.insert(0, "short")
    adjectives = ", ".join(pre)
    phrase = f"{adjectives} {noun}" if adjectives else noun
    if decade:
        phrase = f"{phrase} {decade}"
    return _Person(phrase, predicates, with_phrases)


# ------------------------------------------------------------------------------------------- the hair
_STYLE_ADJ = {"short": ("short", "short", "cropped"), "medium": ("shoulder-length", "medium-length"),
              "long": ("long",)}
_STYLE_PREDICATE = {"short": ("short", "cut short"), "medium": ("shoulder-length", "medium-length"),
                    "long": ("long",)}


def _hair_color_word(color: str, rng: random.Random) -> str:
    return rng.choice(lx.HAIR_COLOR_FORMS[color])


def _hair_phrases(style: str | None, color: str | None, voice: _Voice, rng: random.Random) -> tuple[str, str]:
    """(object phrase for "with …"/"has …", standalone sentence) stating exactly the hair keys."""
    c = _hair_color_word(color, rng) if color else None
    poss = voice.possessive
    if style in _STYLE_ADJ:
        adj = rng.choice(_STYLE_ADJ[style])
        obj = f"{adj} {c} hair" if c else f"{adj} hair"
        if c and rng.random() < 0.5:
            sentence = f"{poss} hair is {rng.choice(_STYLE_PREDICATE[style])} and {c}"
        elif c:
            sentence = f"{voice.has} {obj}"
        else:
            sentence = f"{poss} hair is {rng.choice(_STYLE_PREDICATE[style])}"
        return obj, sentence
    if style == "ponytail":
        obj = rng.choice((f"a {c} ponytail", f"{c} hair in a ponytail", f"{c} hair tied back in a ponytail")
                         if c else ("a ponytail", "hair in a ponytail", "a ponytail"))
        sentence = (f"{poss} {c} hair is tied in a ponytail" if c else f"{poss} hair is in a ponytail")
        return obj, sentence
    if style == "bun":
        obj = rng.choice((f"{c} hair in a bun", f"{c} hair tied up in a bun", f"a {c} bun")
                         if c else ("a bun", "hair in a bun", "a top knot"))
        sentence = f"{poss} {c} hair is in a bun" if c else f"{poss} hair is tied up in a bun"
        return obj, sentence
    if style == "bald":
        if c:
            obj = f"a bald head with some {c} hair at the sides"
            return obj, f"{voice.be} bald with some {c} hair at the sides"
        obj = rng.choice(("a bald head", "a shaved head"))
        return obj, f"{voice.be} bald" if rng.random() < 0.5 else f"{voice.has} {obj}"
    # colour only
    obj = f"{c} hair"
    sentence = f"{poss} hair is {c}" if rng.random() < 0.5 else f"{voice.has} {c} hair"
    return obj, sentence


# ----------------------------------------------------------------------------------------- the items
@dataclass
class _Item:
    slot: str                    # hat, top, bottom, shoe, carry
    kind: str | None             # canonical type, "none", or None (type not stated)
    color: str | None
    length: str | None


_TOP_LEN_PRE = {"sleeveless": ("sleeveless",), "short_sleeve": ("short-sleeved", "short-sleeve"),
                "long_sleeve": ("long-sleeved", "long-sleeve")}
_TOP_LEN_POST = {"sleeveless": ("with no sleeves",), "short_sleeve": ("with short sleeves",),
                 "long_sleeve": ("with long sleeves",)}
_BOTTOM_LEN_PRE = {"short": ("short",), "knee": ("knee-length",), "long": ("long", "full-length", "ankle-length")}
_BOTTOM_LEN_POST = {"short": ("that end above the knee",), "knee": ("that reach the knee", "that come to the knee"),
                    "long": ("that reach the ankles",)}


def _color_word(color: str, rng: random.Random) -> str:
    return rng.choice(lx.COLOR_FORMS[color])


def _noun(item: _Item, rng: random.Random) -> tuple[str, bool]:
    """(noun, plural) for an item; a missing type uses the generic slot noun ("top", "bottoms")."""
    if item.slot == "top":
        if item.kind is None:
            return "top", False
        if item.kind == "vest" and item.length == "sleeveless" and rng.random() < 0.4:
            return "tank top", False
        return rng.choice(lx.TOP_FORMS[item.kind]), False
    if item.slot == "bottom":
        if item.kind is None:
            return "bottoms", True
        if item.kind == "skirt" and item.length == "short" and rng.random() < 0.3:
            return "miniskirt", False
        noun = rng.choice(lx.BOTTOM_FORMS[item.kind])
        return noun, _is_plural(noun)
    table = {"hat": lx.HAT_FORMS, "shoe": lx.SHOE_FORMS, "carry": lx.CARRY_FORMS}[item.slot]
    noun = rng.choice(table[item.kind])
    return noun, _is_plural(noun)


def _is_plural(noun: str) -> bool:
    return noun.endswith("s") and not noun.endswith("ss")


def _item_np(item: _Item, rng: random.Random, allow_relative: bool = True) -> str:
    """A noun phrase (with article) stating exactly the item's keys."""
    noun, plural = _noun(item, rng)
    implied_length = noun in ("tank top", "miniskirt")
    color = _color_word(item.color, rng) if item.color else None
    pre_len = post_len = None
    if item.length and not implied_length:
        if rng.random() < 0.7:
            table = _TOP_LEN_PRE if item.slot == "top" else _BOTTOM_LEN_PRE
            pre_len = rng.choice(table[item.length])
        else:
            table = _TOP_LEN_POST if item.slot == "top" else _BOTTOM_LEN_POST
            post_len = rng.choice(table[item.length])
    color_mode = "pre"
    if color and allow_relative and post_len is None:
        color_mode = rng.choice(("pre", "pre", "pre", "relative", "in"))
    words = []
    if color and color_mode == "pre":
        words.append(color)
    if pre_len:
        if color and color_mode == "pre" and rng.random() < 0.5:
            words.insert(0, pre_len)
        else:
            words.append(pre_len)
    words.append(noun)
    phrase = " ".join(words)
    if not plural:
        phrase = _article(phrase)
    elif rng.random() < 0.2:
        phrase = "a pair of " + phrase
    if post_len:
        if item.slot == "bottom" and not plural:
            post_len = post_len.replace("end ", "ends ").replace("reach ", "reaches ").replace("come ", "comes ")
        phrase = f"{phrase} {post_len}"
    if color and color_mode == "relative":
        phrase = f"{phrase} {rng.choice(('that', 'which'))} {'are' if plural else 'is'} {color}"
    elif color and color_mode == "in":
        phrase = f"{phrase} in {color}"
    return phrase


def _top_without_type(item: _Item, rng: random.Random) -> str:
    """Object phrase for a top whose type is not stated ("red on top", "long sleeves", "a red top")."""
    if item.color and not item.length and rng.random() < 0.35:
        return f"{_color_word(item.color, rng)} on top"
    if item.length in ("short_sleeve", "long_sleeve") and not item.color and rng.random() < 0.5:
        return ("short" if item.length == "short_sleeve" else "long") + " sleeves"
    return _item_np(item, rng)


def _wear_phrase(item: _Item, rng: random.Random) -> str:
    """What follows "wearing" for a worn item."""
    if item.slot == "top" and item.kind is None:
        return _top_without_type(item, rng)
    if item.slot == "hat" and item.kind == "hood" and rng.random() < 0.4:
        c = f"{_color_word(item.color, rng)} " if item.color else ""
        return f"the {c}hood up" if c else rng.choice(("a hood", "the hood up"))
    return _item_np(item, rng)


_HAT_NONE_WITH = ("no hat", "no hat", "nothing on the head")
_HAT_NONE_SENTENCE = ("{be} not wearing a hat", "{be} bareheaded", "{has} no hat on", "{be} hatless")
_CARRY_NONE_WITH = ("no bag", "nothing in hand")
_CARRY_NONE_SENTENCE = ("{be} carrying nothing", "{be} empty-handed", "{be} not carrying anything",
                        "{has} no bag")
_CARRY_VERBS = {"umbrella": ("holding", "carrying"), "suitcase": ("pulling", "carrying", "wheeling"),
                "backpack": ("carrying", "wearing"), "plastic_bag": ("carrying", "holding")}


def _carry_phrase(item: _Item, rng: random.Random) -> str:
    """A participle phrase for a carried item: "carrying a red backpack"."""
    verb = rng.choice(_CARRY_VERBS.get(item.kind, ("carrying", "holding")))
    return f"{verb} {_item_np(item, rng)}"


def _predicate_sentence(item: _Item, voice: _Voice, rng: random.Random) -> str | None:
    """"His jacket is green." style sentence for an item with a colour (None when unsuitable)."""
    if not item.color or item.kind == "none":
        return None
    noun, plural = _noun(item, rng)
    if noun in ("tank top", "miniskirt") and not item.length:
        return None
    length = ""
    if item.length and noun not in ("tank top", "miniskirt"):
        length = rng.choice((_TOP_LEN_PRE if item.slot == "top" else _BOTTOM_LEN_PRE)[item.length]) + " "
    owner = rng.choice((voice.possessive, "the")) if voice.subject != "the person" else "the"
    verb = "are" if plural else "is"
    return f"{owner} {length}{noun} {verb} {_color_word(item.color, rng)}"


# ------------------------------------------------------------------------------------------ describe
def _items(attrs: Mapping[str, str], keys: set[str]) -> list[_Item]:
    def get(key: str) -> str | None:
        return attrs[key] if key in keys else None

    specs = [
        ("hat", get("hat_type"), get("hat_color"), None),
        ("top", get("top_type"), get("top_color"), get("top_length")),
        ("bottom", get("bottom_type"), get("bottom_color"), get("bottom_length")),
        ("shoe", get("shoe_type"), None, None),
        ("carry", get("carrying_type"), get("carrying_color"), None),
    ]
    return [_Item(slot, kind, color, length) for slot, kind, color, length in specs
            if kind is not None or color is not None or length is not None]


def describe(attributes: Mapping[str, str], keys: Iterable[str] | None = None, rng: RngLike = None) -> str:
    """One fluent description stating exactly ``keys`` of ``attributes`` (default: all counted keys).

    Raises ``ValueError`` for values outside the ontology, keys missing from ``attributes``, or a
    dependent colour (hat_color / carrying_color) requested without its item or with a ``none`` item.
    """
    rng = as_rng(rng)
    wanted = _check_request(attributes, stated_keys(attributes) if keys is None else keys)
    if not wanted:
        return ""
    keyset = set(wanted)
    gender = attributes["gender"] if "gender" in keyset else None
    voice = _voice(gender, rng)
    style = rng.choice(("single", "single", "sentences", "sentences", "telegraphic"))
    if style == "single":
        text = _single_sentence(attributes, keyset, voice, rng)
    elif style == "sentences":
        text = _sentences(attributes, keyset, voice, rng)
    else:
        text = _telegraphic(attributes, keyset, voice, rng)
    return text


def _hair_keys(attrs: Mapping[str, str], keys: set[str]) -> tuple[str | None, str | None]:
    return (attrs["hairstyle"] if "hairstyle" in keys else None,
            attrs["hair_color"] if "hair_color" in keys else None)


def _single_sentence(attrs: Mapping[str, str], keys: set[str], voice: _Voice, rng: random.Random) -> str:
    """"A tall young man with short black hair, wearing …, carrying …"."""
    person = _person(attrs, keys, voice, rng)
    head = _article(person.noun_phrase)
    if person.predicates:
        head += ", " + _join(person.predicates, rng) + ","
    withs = list(person.with_phrases)
    style, color = _hair_keys(attrs, keys)
    if style or color:
        withs.append(_hair_phrases(style, color, voice, rng)[0])
    worn: list[str] = []
    tails: list[str] = []
    for item in _items(attrs, keys):
        if item.slot == "hat" and item.kind == "none":
            withs.append(rng.choice(_HAT_NONE_WITH))
        elif item.slot == "carry" and item.kind == "none":
            if rng.random() < 0.5:
                withs.append(rng.choice(_CARRY_NONE_WITH))
            else:
                tails.append(rng.choice(("carrying nothing", "not carrying anything", "empty-handed")))
        elif item.slot == "carry":
            if rng.random() < 0.6:
                tails.append(_carry_phrase(item, rng))
            else:
                withs.append(_item_np(item, rng, allow_relative=False))
        else:
            worn.append(_wear_phrase(item, rng))
    rng.shuffle(worn)
    parts = []
    if withs:
        parts.append("with " + _join(withs, rng))
    opening = ""
    bare = person.noun_phrase in _NEUTRAL_NOUNS and not person.predicates
    modes = ("plain", "plain", "who") if bare else ("plain", "plain", "participle_first", "who")
    mode = rng.choice(modes) if worn else "plain"
    if mode == "participle_first":
        # "Wearing a red jacket and jeans, a tall man …"
        opening = rng.choice(("Wearing ", "Dressed in ")) + _join(worn, rng) + ", "
    elif mode == "who":
        # "A tall man who wears a red jacket and jeans, …"
        head = head.rstrip(",") + rng.choice((" who wears ", " who is wearing ")) + _join(worn, rng)
    elif worn:
        parts.append(rng.choice(("wearing ", "dressed in ", "in ")) + _join(worn, rng))
    parts.extend(tails)
    rng.shuffle(parts)
    sentence = head.rstrip(",")
    for index, part in enumerate(parts):
        sentence += (" " if index == 0 and not person.predicates and mode != "who" else ", ") + part
    return _capital(opening + sentence) + "."


def _sentences(attrs: Mapping[str, str], keys: set[str], voice: _Voice, rng: random.Random) -> str:
    """Several short sentences with pronoun back-references."""
    person = _person(attrs, keys, voice, rng)
    sentences = []
    if person.noun_phrase in _NEUTRAL_NOUNS and not person.with_phrases:
        # nothing to say about the person itself: start with what they wear
        voice = _Voice(rng.choice(("the person", "the pedestrian")), "their", False)
    else:
        opening_subject = rng.choice(("The person is", "This is", "I saw", "There is"))
        opening = f"{opening_subject} {_article(person.noun_phrase)}"
        if person.with_phrases:
            opening += " with " + _join(person.with_phrases, rng)
        sentences.append(opening)
    body: list[str] = []
    if person.predicates:
        body.append(f"{voice.be} {_join(person.predicates, rng)}")
    style, color = _hair_keys(attrs, keys)
    if style or color:
        body.append(_hair_phrases(style, color, voice, rng)[1])
    worn: list[str] = []
    for item in _items(attrs, keys):
        if item.slot == "hat" and item.kind == "none":
            body.append(rng.choice(_HAT_NONE_SENTENCE).format(be=voice.be, has=voice.has))
        elif item.slot == "carry" and item.kind == "none":
            body.append(rng.choice(_CARRY_NONE_SENTENCE).format(be=voice.be, has=voice.has))
        elif item.slot == "carry":
            body.append(f"{voice.be} {_carry_phrase(item, rng)}")
        else:
            predicate = _predicate_sentence(item, voice, rng) if rng.random() < 0.3 else None
            if predicate:
                body.append(predicate)
            elif item.color and item.kind not in (None, "none") and rng.random() < 0.15:
                bare = _Item(item.slot, item.kind, None, item.length)
                noun, plural = _noun(bare, rng)
                if noun in ("tank top", "miniskirt") or plural or voice.plural:
                    worn.append(_wear_phrase(item, rng))
                else:
                    # back-reference: "She wears a jacket. It is green."
                    body.append(f"{voice.verb('wears', 'wear')} {_item_np(bare, rng)}. "
                                f"It is {_color_word(item.color, rng)}")
            else:
                worn.append(_wear_phrase(item, rng))
    if worn:
        rng.shuffle(worn)
        verb = rng.choice((voice.verb("wears", "wear"), voice.verb("is wearing", "are wearing"),
                           voice.verb("has on", "have on")))
        body.append(f"{verb} {_join(worn, rng)}")
    rng.shuffle(body)
    sentences.extend(body)
    return " ".join(_capital(s) + "." for s in sentences)


def _telegraphic(attrs: Mapping[str, str], keys: set[str], voice: _Voice, rng: random.Random) -> str:
    """A witness-style list: "Young man, tall, short black hair, red t-shirt, blue jeans, no bag."."""
    person = _person(attrs, keys, voice, rng)
    parts = [person.noun_phrase] + person.predicates + person.with_phrases
    style, color = _hair_keys(attrs, keys)
    if style or color:
        parts.append(_hair_phrases(style, color, voice, rng)[0])
    for item in _items(attrs, keys):
        if item.slot == "hat" and item.kind == "none":
            parts.append(rng.choice(("no hat", "no hat", "bareheaded")))
        elif item.slot == "carry" and item.kind == "none":
            parts.append(rng.choice(("no bag", "carrying nothing", "empty-handed")))
        else:
            phrase = _wear_phrase(item, rng) if item.slot != "carry" else _item_np(item, rng)
            if phrase.startswith(("a ", "an ")) and rng.random() < 0.6:
                phrase = phrase.split(" ", 1)[1]
            parts.append(phrase)
    head, rest = parts[0], parts[1:]
    rng.shuffle(rest)
    if head in _NEUTRAL_NOUNS and rest:
        # a bare "Person," adds nothing: list the features only
        return _capital(", ".join(rest)) + "."
    return _capital(", ".join([head] + rest)) + "."


# ------------------------------------------------------------------------------- nested subsets / levels
def _dependency_order(keys: Sequence[str], rng: random.Random) -> list[str]:
    """A random order of ``keys`` in which a dependent colour comes after its item."""
    order: list[str] = []
    remaining = list(keys)
    while remaining:
        placed = set(order)
        available = [k for k in remaining if DEPENDENT_COLORS.get(k) is None or DEPENDENT_COLORS[k] in placed]
        pick = rng.choice(available)
        order.append(pick)
        remaining.remove(pick)
    return order


def random_key_subset(attributes: Mapping[str, str], rng: RngLike = None, size: int | None = None) -> list[str]:
    """A random subset of the counted keys (size uniform in 1..all unless given), in ontology order;
    a dependent colour is only drawn together with its item."""
    rng = as_rng(rng)
    full = stated_keys(attributes)
    if not full:
        return []
    if size is None:
        size = rng.randint(1, len(full))
    if not 1 <= size <= len(full):
        raise ValueError(f"subset size must be in 1..{len(full)}, got {size}")
    chosen = set(_dependency_order(full, rng)[:size])
    return [k for k in ATTRIBUTE_KEYS if k in chosen]


def nested_key_subsets(attributes: Mapping[str, str], rng: RngLike = None,
                       sizes: Sequence[int] = CHAIN_SIZES) -> list[list[str]]:
    """Nested key subsets t⁰⊂t¹⊂… of the counted keys with the given sizes, ending with the full set.

    A dependent colour (hat_color, carrying_color) only enters after its item. Sizes ≥ the full count are
    dropped (METHODS §1.1). Each subset is listed in ontology order.
    """
    rng = as_rng(rng)
    ONTOLOGY.validate(attributes)
    full = stated_keys(attributes)
    order = _dependency_order(full, rng)
    subsets = []
    for size in sorted(set(sizes)):
        if size <= 0:
            raise ValueError(f"subset sizes must be positive, got {size}")
        if size >= len(full):
            break
        chosen = set(order[:size])
        subsets.append([k for k in ATTRIBUTE_KEYS if k in chosen])
    if full:
        subsets.append(full)
    return subsets


def query_chain(attributes: Mapping[str, str], rng: RngLike = None,
                sizes: Sequence[int] = CHAIN_SIZES) -> list[dict]:
    """The progressive query chain: [{"text", "keys", "level"}] for nested subsets (METHODS §1.1, §1.3)."""
    rng = as_rng(rng)
    chain = []
    for keys in nested_key_subsets(attributes, rng, sizes):
        chain.append({"text": describe(attributes, keys, rng), "keys": keys,
                      "level": ONTOLOGY.level_of(len(keys))})
    return chain


def descriptions_by_level(attributes: Mapping[str, str], rng: RngLike = None) -> dict[str, str]:
    """One description per granularity level from nested subsets: {"UC", "C", "M", "F", "UF"} → text.

    A full identity (15–18 counted attributes) gets all five levels; a smaller attribute dict gets the
    levels its subsets reach (keyed by the level of each subset's size).
    """
    return {step["level"]: step["text"] for step in query_chain(attributes, rng)}
