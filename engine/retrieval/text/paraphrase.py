"""Held-out phrasings for evaluation: descriptions built from their own synonyms and sentence frames.

``paraphrase(attributes, keys, rng)`` states exactly the attribute-values of ``keys`` (as
``engine.retrieval.text.generator.describe`` does), but with words and templates the training generator never
uses wherever the language allows it ("bloke", "lanky", "clad in a ruby anorak", "toting a knapsack").
Evaluating on these texts tells how much of a model's text retrieval survives phrasings it was never
trained on (docs/training-notes.md, "Benchmarks that measure the right thing"). Plain colour names are
avoided too: each colour has its own shades, none of them in the generator's colour tables.

``words="canonical"`` keeps the held-out sentence frames but names every value plainly ("red", "jacket",
"tall man"), which separates what unseen templates cost from what unseen words cost.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from engine.kernel.ontology import ATTRIBUTE_KEYS, ONTOLOGY


class ParaphraseError(ValueError):
    """A paraphrase request naming unknown attributes or values."""


_SHADES: dict[str, tuple[str, ...]] = {
    "red": ("ruby", "cherry", "wine-coloured", "oxblood"),
    "orange": ("apricot", "amber", "peach"),
    "yellow": ("canary", "saffron", "gold"),
    "blue": ("azure", "indigo", "sapphire", "cerulean"),
    "green": ("jade", "mint", "sage", "viridian"),
    "purple": ("mauve", "aubergine", "eggplant"),
    "pink": ("rose", "salmon", "blush"),
    "brown": ("mocha", "coffee", "mahogany", "caramel"),
    "beige": ("ivory", "oatmeal", "ecru", "taupe"),
    "white": ("pearl", "chalk", "alabaster"),
    "gray": ("ash", "slate", "graphite", "gunmetal"),
    "black": ("ebony", "inky", "onyx", "raven"),
}
_HAIR_SHADES: dict[str, tuple[str, ...]] = {
    "black": ("raven", "inky"), "brown": ("mousy", "brunette"), "blonde": ("flaxen", "wheaten"),
    "red": ("copper", "strawberry"), "gray": ("salt-and-pepper", "greying"), "white": ("snowy", "silvery"),
}
# (gender, age) → nouns; None = not stated
_NOUNS: dict[tuple[str | None, str | None], tuple[str, ...]] = {
    ("male", None): ("bloke", "chap", "fellow"), ("female", None): ("gal", "lass", "madam"),
    (None, None): ("passer-by", "subject", "figure"),
    ("male", "child"): ("schoolboy", "nipper"),
    ("female", "child"): ("schoolgirl", "wee lassie"),
    (None, "child"): ("youngster", "minor"),
    ("male", "young"): ("lad", "twentysomething bloke"), ("female", "young"): ("twentysomething gal", "lassie"),
    (None, "young"): ("twentysomething", "adolescent"),
    ("male", "middle_aged"): ("fortysomething bloke", "chap in midlife"),
    ("female", "middle_aged"): ("fortysomething gal", "madam in midlife"),
    (None, "middle_aged"): ("fortysomething", "somebody in midlife"),
    ("male", "elderly"): ("pensioner chap", "grandad"), ("female", "elderly"): ("pensioner lass", "granny"),
    (None, "elderly"): ("pensioner", "retiree"),
}
_HEIGHT = {"short": ("petite", "diminutive"), "average": ("mid-stature",), "tall": ("lanky", "towering")}
_PHYSIQUE = {"slim": ("wiry", "willowy"), "average": ("regular-framed",), "heavy": ("portly", "burly")}
_SKIN = {"light": ("porcelain", "rosy"), "medium": ("tawny", "bronzed"), "dark": ("deep umber", "ebony")}
_HAIRSTYLE = {"bald": "a bare scalp", "short": "{c}clipped locks", "medium": "{c}collar-grazing locks",
              "long": "{c}flowing locks", "ponytail": "{c}locks in a pigtail", "bun": "{c}locks in a topknot"}
_TOP = {"t_shirt": ("crewneck", "jersey"), "shirt": ("oxford", "flannel"), "blouse": ("tunic", "chemise"),
        "sweater": ("knitwear", "turtleneck"), "hoodie": ("hoody", "zip-up hoody"),
        "jacket": ("anorak", "cagoule", "puffer"), "coat": ("mackintosh", "greatcoat", "duffel"),
        "vest": ("singlet", "camisole"), "dress": ("frock", "gown")}
_TOP_LENGTH = {"sleeveless": "arms bare", "short_sleeve": "forearms showing",
               "long_sleeve": "arms covered to the wrist"}
_BOTTOM = {"trousers": ("joggers", "khakis", "cargos"), "jeans": ("denim", "dungarees"),
           "shorts": ("bermudas", "hotpants"), "skirt": ("kilt", "wrap"), "leggings": ("lycra", "jeggings")}
_BOTTOM_LENGTH = {"short": "mid-thigh", "knee": "kneecap-grazing", "long": "floor-grazing"}
_SHOES = {"sneakers": ("plimsolls", "kicks"), "boots": ("wellies", "galoshes"), "sandals": ("espadrilles", "thongs"),
          "leather_shoes": ("brogues", "oxfords"), "high_heels": ("stilettos", "pumps"),
          "slippers": ("house mules", "moccasins")}
_HAT = {"cap": ("snapback",), "beanie": ("toque", "tuque"), "brimmed_hat": ("trilby", "panama"),
        "helmet": ("hardhat", "crash lid"), "hood": ("cowl",)}
_CARRY = {"backpack": ("knapsack", "daypack"), "handbag": ("clutch", "pocketbook"),
          "shoulder_bag": ("sling pouch", "musette"), "suitcase": ("valise", "piece of luggage"),
          "umbrella": ("brolly", "parasol"), "plastic_bag": ("polythene sack", "grocery sack")}
@dataclass(frozen=True)
class _Lexicon:
    shades: Mapping[str, tuple[str, ...]]
    hair_shades: Mapping[str, tuple[str, ...]]
    nouns: Mapping[tuple[str | None, str | None], tuple[str, ...]]
    height: Mapping[str, tuple[str, ...]]
    physique: Mapping[str, tuple[str, ...]]
    skin: Mapping[str, tuple[str, ...]]
    hairstyle: Mapping[str, str]
    hair: str
    top: Mapping[str, tuple[str, ...]]
    top_length: Mapping[str, str]
    bottom: Mapping[str, tuple[str, ...]]
    bottom_length: Mapping[str, str]
    shoes: Mapping[str, tuple[str, ...]]
    hat: Mapping[str, tuple[str, ...]]
    carry: Mapping[str, tuple[str, ...]]
    no_hat: str
    hands_free: str
    upper: str
    lower: str
    headwear: str
    bag: str


def _plain(key: str) -> dict[str, tuple[str, ...]]:
    return {value: (value.replace("_", " "),) for value in ONTOLOGY.attributes[key]}


HELD_OUT = _Lexicon(_SHADES, _HAIR_SHADES, _NOUNS, _HEIGHT, _PHYSIQUE, _SKIN, _HAIRSTYLE, "locks", _TOP, _TOP_LENGTH,
                    _BOTTOM, _BOTTOM_LENGTH, _SHOES, _HAT, _CARRY, "no headgear", "hands free", "upper garment",
                    "lower garment", "headpiece", "holdall")
_PLAIN_NOUNS = {"male": "man", "female": "woman", None: "person"}
_PLAIN_AGE = {None: "", "child": "", "young": "young ", "middle_aged": "middle-aged ", "elderly": "elderly "}
CANONICAL = _Lexicon(
    _plain("top_color"), _plain("hair_color"),
    {(g, a): (({"male": "boy", "female": "girl", None: "child"}[g],) if a == "child"
              else (_PLAIN_AGE[a] + _PLAIN_NOUNS[g],))
     for g in ("male", "female", None) for a in (None, "child", "young", "middle_aged", "elderly")},
    {"short": ("short",), "average": ("average-height",), "tall": ("tall",)},
    {"slim": ("slim",), "average": ("average-build",), "heavy": ("heavy",)},
    {"light": ("light",), "medium": ("medium",), "dark": ("dark",)},
    {"bald": "a bald head", "short": "{c}short hair", "medium": "{c}medium hair", "long": "{c}long hair",
     "ponytail": "{c}hair in a ponytail", "bun": "{c}hair in a bun"}, "hair",
    {**_plain("top_type"), "t_shirt": ("t-shirt",)},
    {"sleeveless": "sleeveless", "short_sleeve": "short sleeves", "long_sleeve": "long sleeves"},
    _plain("bottom_type"), {"short": "short", "knee": "knee-length", "long": "long"},
    _plain("shoe_type"), _plain("hat_type"), _plain("carrying_type"),
    "no hat", "nothing carried", "top", "bottoms", "hat", "bag",
)
WORDS: dict[str, _Lexicon] = {"held_out": HELD_OUT, "canonical": CANONICAL}

_FRAMES = (
    "Witness recalls {subject}{rest}.",
    "Be on the lookout for {subject}{rest}.",
    "Sighting: {subject}{rest}.",
    "Possibly {subject}{rest}.",
)


def _a(phrase: str) -> str:
    return f"{'an' if phrase[0] in 'aeiou' else 'a'} {phrase}"


def _shade(color: str | None, rng: random.Random, table: Mapping[str, tuple[str, ...]]) -> str:
    return f"{rng.choice(table[color])} " if color else ""


def _check(attributes: Mapping[str, str], keys: Iterable[str] | None) -> dict[str, str]:
    chosen = list(attributes) if keys is None else list(keys)
    out = {}
    for key in chosen:
        if key not in ATTRIBUTE_KEYS:
            raise ParaphraseError(f"unknown attribute {key!r}")
        if key not in attributes:
            raise ParaphraseError(f"attribute {key!r} is asked for but has no value")
        if attributes[key] not in ONTOLOGY.attributes[key]:
            raise ParaphraseError(f"attribute {key!r} has no value {attributes[key]!r}")
        out[key] = attributes[key]
    return out


def _subject(stated: Mapping[str, str], lex: _Lexicon, rng: random.Random) -> str:
    adjectives = [rng.choice(table[stated[key]]) for key, table in (("height", lex.height),
                                                                     ("physique", lex.physique)) if key in stated]
    noun = rng.choice(lex.nouns[(stated.get("gender"), stated.get("age"))])
    words = _a(" ".join([*adjectives, noun]))
    if "skin_color" in stated:
        words += f" of {rng.choice(lex.skin[stated['skin_color']])} colouring"
    return words


def _garment(stated: Mapping[str, str], type_key: str, color_key: str, nouns: Mapping[str, tuple[str, ...]],
             fallback: str, lex: _Lexicon, rng: random.Random) -> str | None:
    if type_key not in stated and color_key not in stated:
        return None
    noun = rng.choice(nouns[stated[type_key]]) if type_key in stated else fallback
    return f"{_shade(stated.get(color_key), rng, lex.shades)}{noun}"


def paraphrase(attributes: Mapping[str, str], keys: Iterable[str] | None = None,
               rng: random.Random | None = None, words: str = "held_out") -> str:
    """One description stating exactly ``attributes[k]`` for every ``k`` in ``keys`` (default: all), in
    ``words`` ``held_out`` (synonyms the generator never uses) or ``canonical`` (plain value names)."""
    rng = rng if rng is not None else random.Random()
    if words not in WORDS:
        raise ParaphraseError(f"words must be one of {list(WORDS)}, got {words!r}")
    lex = WORDS[words]
    stated = _check(attributes, keys)
    parts: list[str] = []
    if "hairstyle" in stated or "hair_color" in stated:
        color = _shade(stated.get("hair_color"), rng, lex.hair_shades)
        style = stated.get("hairstyle")
        if style == "bald" and color:
            style = None  # a bald head with a stated hair colour: say the colour of what is left
        parts.append("with " + (lex.hairstyle[style].format(c=color) if style else f"{color}{lex.hair}"))
    hat = stated.get("hat_type")
    if hat == "none":
        parts.append(lex.no_hat)
    elif hat is not None or "hat_color" in stated:
        parts.append("topped with " + _a(_garment(stated, "hat_type", "hat_color", lex.hat, lex.headwear, lex, rng)))
    top = _garment(stated, "top_type", "top_color", lex.top, lex.upper, lex, rng)
    if top or "top_length" in stated:
        phrase = f"clad in {_a(top)}" if top else "garbed"
        if "top_length" in stated:
            phrase += f" ({lex.top_length[stated['top_length']]})"
        parts.append(phrase)
    bottom = _garment(stated, "bottom_type", "bottom_color", lex.bottom, lex.lower, lex, rng)
    if bottom or "bottom_length" in stated:
        length = f"{lex.bottom_length[stated['bottom_length']]} " if "bottom_length" in stated else ""
        parts.append(f"{length}{bottom or 'legwear'} below")
    if "shoe_type" in stated:
        parts.append(f"{rng.choice(lex.shoes[stated['shoe_type']])} on the feet")
    carry = stated.get("carrying_type")
    if carry == "none":
        parts.append(lex.hands_free)
    elif carry is not None or "carrying_color" in stated:
        parts.append("toting " + _a(_garment(stated, "carrying_type", "carrying_color", lex.carry, lex.bag, lex,
                                             rng)))
    rng.shuffle(parts)
    rest = ", " + " and ".join(parts) if len(parts) < 3 else ", " + ", ".join(parts[:-1]) + " and " + parts[-1]
    rest = rest if parts else ""
    return rng.choice(_FRAMES).format(subject=_subject(stated, lex, rng), rest=rest)
