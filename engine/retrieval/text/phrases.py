"""The wording the description generator (``engine.retrieval.text.generator``) builds sentences from: articles and
lists, the voice (he/she/they), the person's noun and build, the hair, and each garment or carried item as a
noun phrase, a "wearing …" phrase or a predicate sentence."""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from engine.retrieval.text import lexicon as lx


# ------------------------------------------------------------------------------------------ wording
def with_article(phrase: str) -> str:
    return ("an " if phrase[:1].lower() in "aeiou" else "a ") + phrase


def join_words(parts: Sequence[str], rng: random.Random, conj: str = "and") -> str:
    parts = [p for p in parts if p]
    if len(parts) <= 1:
        return "".join(parts)
    if len(parts) == 2:
        return f"{parts[0]} {conj} {parts[1]}"
    comma = "," if rng.random() < 0.5 else ""
    return ", ".join(parts[:-1]) + f"{comma} {conj} {parts[-1]}"


def capitalised(text: str) -> str:
    return text[:1].upper() + text[1:]


@dataclass(frozen=True)
class Voice:
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


def voice_of(gender: str | None, rng: random.Random) -> Voice:
    if gender == "male":
        return Voice("he", "his", False)
    if gender == "female":
        return Voice("she", "her", False)
    if rng.random() < 0.5:
        return Voice("they", "their", True)
    return Voice("the person", "the person's", False)


# ---------------------------------------------------------------------------------------- the person
_GENDER_NOUNS = {"male": ("man", "man", "guy", "gentleman"), "female": ("woman", "woman", "lady")}
NEUTRAL_NOUNS = ("person", "person", "individual", "pedestrian")


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
        return "middle-aged " + (rng.choice(_GENDER_NOUNS[gender]) if gender else rng.choice(NEUTRAL_NOUNS))
    if age == "elderly":
        adjective = rng.choice(("elderly", "old", "elderly", "senior"))
        if gender is None:
            return rng.choice(("elderly person", "old person", "senior citizen", "elderly pedestrian"))
        return f"{adjective} {rng.choice(_GENDER_NOUNS[gender])}"
    if gender is not None:
        return rng.choice(_GENDER_NOUNS[gender])
    return rng.choice(NEUTRAL_NOUNS)


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


def person_phrases(attrs: Mapping[str, str], keys: set[str], voice: Voice, rng: random.Random) -> _Person:
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


def hair_phrases(style: str | None, color: str | None, voice: Voice, rng: random.Random) -> tuple[str, str]:
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
class Item:
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


def color_word(color: str, rng: random.Random) -> str:
    return rng.choice(lx.COLOR_FORMS[color])


def item_noun(item: Item, rng: random.Random) -> tuple[str, bool]:
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


def item_np(item: Item, rng: random.Random, allow_relative: bool = True) -> str:
    """A noun phrase (with article) stating exactly the item's keys."""
    noun, plural = item_noun(item, rng)
    implied_length = noun in ("tank top", "miniskirt")
    color = color_word(item.color, rng) if item.color else None
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
        phrase = with_article(phrase)
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


def _top_without_type(item: Item, rng: random.Random) -> str:
    """Object phrase for a top whose type is not stated ("red on top", "long sleeves", "a red top")."""
    if item.color and not item.length and rng.random() < 0.35:
        return f"{color_word(item.color, rng)} on top"
    if item.length in ("short_sleeve", "long_sleeve") and not item.color and rng.random() < 0.5:
        return ("short" if item.length == "short_sleeve" else "long") + " sleeves"
    return item_np(item, rng)


def wear_phrase(item: Item, rng: random.Random) -> str:
    """What follows "wearing" for a worn item."""
    if item.slot == "top" and item.kind is None:
        return _top_without_type(item, rng)
    if item.slot == "hat" and item.kind == "hood" and rng.random() < 0.4:
        c = f"{color_word(item.color, rng)} " if item.color else ""
        return f"the {c}hood up" if c else rng.choice(("a hood", "the hood up"))
    return item_np(item, rng)


HAT_NONE_WITH = ("no hat", "no hat", "nothing on the head")
HAT_NONE_SENTENCE = ("{be} not wearing a hat", "{be} bareheaded", "{has} no hat on", "{be} hatless")
CARRY_NONE_WITH = ("no bag", "nothing in hand")
CARRY_NONE_SENTENCE = ("{be} carrying nothing", "{be} empty-handed", "{be} not carrying anything",
                        "{has} no bag")
_CARRY_VERBS = {"umbrella": ("holding", "carrying"), "suitcase": ("pulling", "carrying", "wheeling"),
                "backpack": ("carrying", "wearing"), "plastic_bag": ("carrying", "holding")}


def carry_phrase(item: Item, rng: random.Random) -> str:
    """A participle phrase for a carried item: "carrying a red backpack"."""
    verb = rng.choice(_CARRY_VERBS.get(item.kind, ("carrying", "holding")))
    return f"{verb} {item_np(item, rng)}"


def predicate_sentence(item: Item, voice: Voice, rng: random.Random) -> str | None:
    """"His jacket is green." style sentence for an item with a colour (None when unsuitable)."""
    if not item.color or item.kind == "none":
        return None
    noun, plural = item_noun(item, rng)
    if noun in ("tank top", "miniskirt") and not item.length:
        return None
    length = ""
    if item.length and noun not in ("tank top", "miniskirt"):
        length = rng.choice((_TOP_LEN_PRE if item.slot == "top" else _BOTTOM_LEN_PRE)[item.length]) + " "
    owner = rng.choice((voice.possessive, "the")) if voice.subject != "the person" else "the"
    verb = "are" if plural else "is"
    return f"{owner} {length}{noun} {verb} {color_word(item.color, rng)}"
