"""Held-out phrasings for evaluation: descriptions built from their own synonyms and sentence frames.

``paraphrase(attributes, keys, rng)`` states exactly the attribute-values of ``keys`` (as
``engine.text.generator.describe`` does), but with words and templates the training generator never
uses wherever the language allows it ("bloke", "lanky", "clad in a ruby anorak", "toting a knapsack").
Evaluating on these texts tells how much of a model's text retrieval survives phrasings it was never
trained on (docs/training-notes.md, "Evaluation texts"). Plain colour names are avoided too: each colour
has its own shades, none of them in the generator's colour tables.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping

from engine.ontology import ATTRIBUTE_KEYS, ONTOLOGY


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
_FRAMES = (
    "Witness recalls {subject}{rest}.",
    "Be on the lookout for {subject}{rest}.",
    "Sighting: {subject}{rest}.",
    "Possibly {subject}{rest}.",
)


def _a(phrase: str) -> str:
    return f"{'an' if phrase[0] in 'aeiou' else 'a'} {phrase}"


def _shade(color: str | None, rng: random.Random, table: Mapping[str, tuple[str, ...]] = _SHADES) -> str:
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


def _subject(stated: Mapping[str, str], rng: random.Random) -> str:
    adjectives = [rng.choice(table[stated[key]]) for key, table in (("height", _HEIGHT), ("physique", _PHYSIQUE))
                  if key in stated]
    noun = rng.choice(_NOUNS[(stated.get("gender"), stated.get("age"))])
    words = _a(" ".join([*adjectives, noun]))
    if "skin_color" in stated:
        words += f" of {rng.choice(_SKIN[stated['skin_color']])} colouring"
    return words


def _garment(stated: Mapping[str, str], type_key: str, color_key: str, nouns: Mapping[str, tuple[str, ...]],
             fallback: str, rng: random.Random) -> str | None:
    if type_key not in stated and color_key not in stated:
        return None
    noun = rng.choice(nouns[stated[type_key]]) if type_key in stated else fallback
    return f"{_shade(stated.get(color_key), rng)}{noun}"


def _a_garment(*args) -> str:
    return _a(_garment(*args))


def paraphrase(attributes: Mapping[str, str], keys: Iterable[str] | None = None,
               rng: random.Random | None = None) -> str:
    """One description stating exactly ``attributes[k]`` for every ``k`` in ``keys`` (default: all)."""
    rng = rng if rng is not None else random.Random()
    stated = _check(attributes, keys)
    parts: list[str] = []
    if "hairstyle" in stated or "hair_color" in stated:
        color = _shade(stated.get("hair_color"), rng, _HAIR_SHADES)
        style = stated.get("hairstyle")
        if style == "bald" and color:
            style = None  # a bald head with a stated hair colour: say the colour of what is left
        parts.append("with " + (_HAIRSTYLE[style].format(c=color) if style else f"{color}locks"))
    hat = stated.get("hat_type")
    if hat == "none":
        parts.append("no headgear")
    elif hat is not None or "hat_color" in stated:
        parts.append("topped with " + _a_garment(stated, "hat_type", "hat_color", _HAT, "headpiece", rng))
    top = _garment(stated, "top_type", "top_color", _TOP, "upper garment", rng)
    if top or "top_length" in stated:
        phrase = f"clad in {_a(top)}" if top else "garbed"
        if "top_length" in stated:
            phrase += f" ({_TOP_LENGTH[stated['top_length']]})"
        parts.append(phrase)
    bottom = _garment(stated, "bottom_type", "bottom_color", _BOTTOM, "lower garment", rng)
    if bottom or "bottom_length" in stated:
        length = f"{_BOTTOM_LENGTH[stated['bottom_length']]} " if "bottom_length" in stated else ""
        parts.append(f"{length}{bottom or 'legwear'} below")
    if "shoe_type" in stated:
        parts.append(f"{rng.choice(_SHOES[stated['shoe_type']])} on the feet")
    carry = stated.get("carrying_type")
    if carry == "none":
        parts.append("hands free")
    elif carry is not None or "carrying_color" in stated:
        parts.append("toting " + _a_garment(stated, "carrying_type", "carrying_color", _CARRY, "holdall", rng))
    rng.shuffle(parts)
    rest = ", " + " and ".join(parts) if len(parts) < 3 else ", " + ", ".join(parts[:-1]) + " and " + parts[-1]
    rest = rest if parts else ""
    return rng.choice(_FRAMES).format(subject=_subject(stated, rng), rest=rest)
