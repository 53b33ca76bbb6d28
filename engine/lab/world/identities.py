"""Synthetic identities: biometrics that never change and outfits that do.

An identity draws the seven biometric attributes (gender, skin_color, age, height, physique, hairstyle,
hair_color) once. Each outfit is worn on one day with its own weather (cold / mild / warm) and draws the
clothing attributes (top, bottom, shoes, hat, carried item) from distributions conditioned on the
biometrics and the weather, e.g. dresses, skirts and high heels are mostly worn by women, children are
short and rarely bald, elderly people often have gray or white hair, shorts end above the knee, hats and
bags exist before they have a colour, hoods go with hoodies, jackets and coats, jeans are mostly blue.

A clothing change (long-term, Uni-AT LT) re-draws every clothing attribute and keeps all biometrics;
later outfits are re-drawn until they differ visibly from every earlier one (another top type or top
colour, and at least three clothing attributes changed).

Attribute dicts are canonical (``engine.kernel.ontology``): keys in ontology order, ``hat_color`` only when
``hat_type != "none"`` and ``carrying_color`` only when ``carrying_type != "none"``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from engine.kernel.ontology import ATTRIBUTE_KEYS, BIOMETRIC_KEYS, ONTOLOGY

CLOTHING_KEYS: tuple[str, ...] = tuple(k for k in ATTRIBUTE_KEYS if k not in BIOMETRIC_KEYS)
WEATHERS: tuple[str, ...] = ("cold", "mild", "warm")

Table = Mapping[str, float]


def pick(rng: np.random.Generator, table: Table) -> str:
    """Draw one key of ``table`` with probability proportional to its (non-negative) weight."""
    keys = [k for k, w in table.items() if w > 0]
    if not keys:
        raise ValueError("empty distribution")
    weights = np.array([table[k] for k in keys], dtype=float)
    return keys[int(rng.choice(len(keys), p=weights / weights.sum()))]


def scaled(table: Table, **factors: float) -> dict[str, float]:
    """A copy of ``table`` with some weights multiplied."""
    return {k: w * factors.get(k, 1.0) for k, w in table.items()}


# ----------------------------------------------------------------------------------------------- biometrics

def draw_biometrics(rng: np.random.Generator) -> dict[str, str]:
    """The seven attributes that stay with a person across outfits (correlated draws)."""
    gender = pick(rng, {"male": 0.5, "female": 0.5})
    age = pick(rng, {"child": 0.09, "young": 0.41, "middle_aged": 0.33, "elderly": 0.17})
    skin = pick(rng, {"light": 0.45, "medium": 0.33, "dark": 0.22})
    if age == "child":
        height = pick(rng, {"short": 0.9, "average": 0.1})
    elif gender == "male":
        height = pick(rng, {"short": 0.14, "average": 0.5, "tall": 0.36})
    else:
        height = pick(rng, {"short": 0.36, "average": 0.5, "tall": 0.14})
    if age == "elderly" and height == "tall" and rng.random() < 0.4:
        height = "average"
    physique = pick(rng, {
        "child": {"slim": 0.55, "average": 0.4, "heavy": 0.05},
        "young": {"slim": 0.4, "average": 0.46, "heavy": 0.14},
        "middle_aged": {"slim": 0.2, "average": 0.5, "heavy": 0.3},
        "elderly": {"slim": 0.26, "average": 0.48, "heavy": 0.26},
    }[age])
    if gender == "male":
        hair = {"bald": {"child": 0.0, "young": 0.03, "middle_aged": 0.12, "elderly": 0.24}[age],
                "short": 0.72, "medium": 0.14, "long": 0.05, "ponytail": 0.03, "bun": 0.02}
    else:
        hair = {"bald": 0.005, "short": 0.15, "medium": 0.25, "long": 0.3, "ponytail": 0.18, "bun": 0.12}
        if age == "elderly":
            hair = scaled(hair, short=2.2, long=0.4, bun=1.5)
    hairstyle = pick(rng, hair)
    if age == "elderly":
        colors = {"black": 0.08, "brown": 0.08, "blonde": 0.04, "red": 0.01, "gray": 0.45, "white": 0.34}
    elif age == "middle_aged":
        colors = {"black": 0.42, "brown": 0.28, "blonde": 0.1, "red": 0.03, "gray": 0.15, "white": 0.02}
    else:
        colors = {"black": 0.45, "brown": 0.32, "blonde": 0.16, "red": 0.06, "gray": 0.01, "white": 0.0}
    if skin == "dark":
        colors = scaled(colors, black=3.0, blonde=0.1, red=0.1)
    elif skin == "medium":
        colors = scaled(colors, black=1.6, blonde=0.4, red=0.4)
    else:
        colors = scaled(colors, blonde=1.6, red=1.5)
    return {"gender": gender, "skin_color": skin, "age": age, "height": height, "physique": physique,
            "hairstyle": hairstyle, "hair_color": pick(rng, colors)}


# ------------------------------------------------------------------------------------------------- clothing

_COLORS: dict[str, float] = {"black": 16, "white": 13, "gray": 11, "red": 7, "orange": 3, "yellow": 4,
                             "green": 6, "blue": 13, "purple": 4, "pink": 5, "brown": 6, "beige": 6}
_DARK_NEUTRAL = scaled(_COLORS, black=2.2, gray=1.8, brown=1.8, beige=1.8, blue=1.4, white=0.5, yellow=0.3,
                       orange=0.3, pink=0.3, purple=0.5)


def _color(rng: np.random.Generator, gender: str, base: Table = _COLORS, **factors: float) -> str:
    table = dict(base)
    table = scaled(table, pink=2.2, purple=1.8, red=1.3) if gender == "female" else scaled(table, pink=0.3, purple=0.4)
    return pick(rng, scaled(table, **factors))


def _top(rng: np.random.Generator, bio: Mapping[str, str], weather: str) -> tuple[str, str]:
    female, age = bio["gender"] == "female", bio["age"]
    if female:
        types = {"t_shirt": 17, "shirt": 8, "blouse": 15, "sweater": 11, "hoodie": 7, "jacket": 12, "coat": 10,
                 "vest": 7, "dress": 13}
    else:
        types = {"t_shirt": 26, "shirt": 18, "blouse": 0.0, "sweater": 12, "hoodie": 13, "jacket": 16,
                 "coat": 9, "vest": 6, "dress": 0.0}
    if age == "child":
        types = scaled(types, hoodie=2.0, t_shirt=1.5, shirt=0.4, coat=0.6, blouse=0.5)
    elif age == "elderly":
        types = scaled(types, coat=1.8, sweater=1.8, shirt=1.4, hoodie=0.3, vest=0.5, t_shirt=0.7)
    types = scaled(types, **{"cold": dict(coat=3.0, jacket=2.0, sweater=2.0, hoodie=1.5, t_shirt=0.25, vest=0.05,
                                          dress=0.3, blouse=0.5),
                             "mild": {},
                             "warm": dict(coat=0.05, jacket=0.3, sweater=0.2, hoodie=0.4, t_shirt=1.6, vest=2.0,
                                          dress=1.5, blouse=1.3)}[weather])
    top = pick(rng, types)
    sleeves = {
        "t_shirt": {"short_sleeve": 0.86, "long_sleeve": 0.14},
        "shirt": {"short_sleeve": 0.35, "long_sleeve": 0.65},
        "blouse": {"sleeveless": 0.25, "short_sleeve": 0.4, "long_sleeve": 0.35},
        "sweater": {"long_sleeve": 1.0}, "hoodie": {"long_sleeve": 1.0}, "jacket": {"long_sleeve": 1.0},
        "coat": {"long_sleeve": 1.0}, "vest": {"sleeveless": 1.0},
        "dress": {"sleeveless": 0.35, "short_sleeve": 0.35, "long_sleeve": 0.3},
    }[top]
    if weather == "cold":
        sleeves = scaled(sleeves, long_sleeve=4.0)
    elif weather == "warm":
        sleeves = scaled(sleeves, long_sleeve=0.4)
    return top, pick(rng, sleeves)


def _bottom(rng: np.random.Generator, bio: Mapping[str, str], top: str, weather: str) -> tuple[str, str]:
    if top == "dress":
        return "skirt", pick(rng, {"short": 0.25, "knee": 0.5, "long": 0.25})
    if bio["gender"] == "female":
        types = {"trousers": 25, "jeans": 30, "shorts": 9, "skirt": 21, "leggings": 15}
    else:
        types = {"trousers": 46, "jeans": 40, "shorts": 14, "skirt": 0.0, "leggings": 0.0}
    if bio["age"] == "elderly":
        types = scaled(types, trousers=2.0, shorts=0.5, leggings=0.3, jeans=0.6)
    types = scaled(types, **{"cold": dict(shorts=0.1, skirt=0.5), "mild": {},
                             "warm": dict(shorts=3.0, skirt=1.5, jeans=0.7)}[weather])
    if top == "coat":      # a long coat would hide shorts and short skirts
        types = scaled(types, shorts=0.05, skirt=0.5)
    bottom = pick(rng, types)
    length = pick(rng, {
        "trousers": {"long": 0.92, "knee": 0.08}, "jeans": {"long": 0.9, "knee": 0.05, "short": 0.05},
        "shorts": {"short": 0.75, "knee": 0.25}, "skirt": {"short": 0.3, "knee": 0.45, "long": 0.25},
        "leggings": {"long": 0.8, "knee": 0.2},
    }[bottom])
    return bottom, length


def _bottom_color(rng: np.random.Generator, bio: Mapping[str, str], bottom: str, top: str,
                  top_color: str) -> str:
    if top == "dress":
        return top_color
    if bottom == "jeans":
        return pick(rng, {"blue": 0.64, "black": 0.16, "gray": 0.1, "white": 0.06, "brown": 0.02, "beige": 0.02})
    if bottom in ("trousers", "shorts"):
        return _color(rng, bio["gender"], _DARK_NEUTRAL)
    if bottom == "leggings":
        return _color(rng, bio["gender"], _COLORS, black=4.0, gray=1.5)
    return _color(rng, bio["gender"])


def _shoes(rng: np.random.Generator, bio: Mapping[str, str], bottom: str, weather: str) -> str:
    if bio["gender"] == "female":
        types = {"sneakers": 34, "boots": 14, "sandals": 10, "leather_shoes": 8, "high_heels": 20, "slippers": 4}
    else:
        types = {"sneakers": 50, "boots": 12, "sandals": 8, "leather_shoes": 25, "high_heels": 0.0, "slippers": 5}
    if bio["age"] == "child":
        types = scaled(types, sneakers=3.0, high_heels=0.0, leather_shoes=0.3)
    elif bio["age"] == "elderly":
        types = scaled(types, leather_shoes=1.8, slippers=2.0, high_heels=0.3, sneakers=0.8)
    if bottom == "skirt":
        types = scaled(types, high_heels=2.0, sandals=1.4)
    elif bottom == "shorts":
        types = scaled(types, sandals=3.0, slippers=2.0, boots=0.2, leather_shoes=0.2)
    types = scaled(types, **{"cold": dict(boots=3.0, sandals=0.1, slippers=0.3), "mild": {},
                             "warm": dict(boots=0.2, sandals=2.5)}[weather])
    return pick(rng, types)


def _hat(rng: np.random.Generator, bio: Mapping[str, str], top: str, top_color: str,
         weather: str) -> tuple[str, str | None]:
    hats = {"none": 60, "cap": 10, "beanie": 6, "brimmed_hat": 6, "helmet": 4, "hood": 0.0}
    if top == "hoodie":
        hats["hood"] = 22
    elif top in ("jacket", "coat"):
        hats["hood"] = 5
    if bio["gender"] == "male":
        hats = scaled(hats, cap=1.8)
    if bio["age"] == "elderly":
        hats = scaled(hats, brimmed_hat=2.0, cap=0.7, helmet=0.3)
    elif bio["age"] == "child":
        hats = scaled(hats, cap=1.5, helmet=1.5)
    hats = scaled(hats, **{"cold": dict(beanie=4.0, hood=2.0, brimmed_hat=0.4), "mild": {},
                           "warm": dict(beanie=0.1, brimmed_hat=2.5, cap=1.5, hood=0.2)}[weather])
    hat = pick(rng, hats)
    if hat == "none":
        return hat, None
    if hat == "hood" and rng.random() < 0.9:
        return hat, top_color
    return hat, _color(rng, bio["gender"], _COLORS, white=1.4 if hat == "helmet" else 1.0)


def _carry(rng: np.random.Generator, bio: Mapping[str, str], weather: str) -> tuple[str, str | None]:
    kinds = {"none": 34, "backpack": 20, "handbag": 6, "shoulder_bag": 10, "suitcase": 6, "umbrella": 6,
             "plastic_bag": 8}
    kinds = scaled(kinds, handbag=3.0, shoulder_bag=1.3) if bio["gender"] == "female" else scaled(kinds, handbag=0.25)
    if bio["age"] == "child":
        kinds = scaled(kinds, backpack=3.0, suitcase=0.2, handbag=0.3, shoulder_bag=0.3)
    elif bio["age"] == "elderly":
        kinds = scaled(kinds, backpack=0.4, plastic_bag=2.0, umbrella=1.5)
    if weather == "cold":
        kinds = scaled(kinds, umbrella=1.8)
    kind = pick(rng, kinds)
    if kind == "none":
        return kind, None
    if kind == "plastic_bag":
        return kind, pick(rng, {"white": 0.55, "blue": 0.1, "black": 0.1, "red": 0.07, "yellow": 0.06,
                                "green": 0.06, "pink": 0.03, "orange": 0.03})
    if kind in ("backpack", "suitcase"):
        return kind, _color(rng, bio["gender"], _DARK_NEUTRAL, red=1.5, blue=1.3)
    return kind, _color(rng, bio["gender"], _COLORS, brown=2.0, black=1.5, beige=1.5)


def draw_outfit(bio: Mapping[str, str], rng: np.random.Generator, weather: str | None = None) -> dict[str, str]:
    """Clothing attributes for one day, conditioned on the biometrics and the weather."""
    weather = weather or pick(rng, {"cold": 0.3, "mild": 0.4, "warm": 0.3})
    if weather not in WEATHERS:
        raise ValueError(f"weather must be one of {WEATHERS}, not {weather!r}")
    top, sleeves = _top(rng, bio, weather)
    top_color = _color(rng, bio["gender"], _DARK_NEUTRAL if top in ("coat", "jacket") else _COLORS)
    bottom, length = _bottom(rng, bio, top, weather)
    bottom_color = _bottom_color(rng, bio, bottom, top, top_color)
    shoes = _shoes(rng, bio, bottom, weather)
    hat, hat_color = _hat(rng, bio, top, top_color, weather)
    carry, carry_color = _carry(rng, bio, weather)
    clothing = {"top_type": top, "top_length": sleeves, "top_color": top_color, "bottom_type": bottom,
                "bottom_length": length, "bottom_color": bottom_color, "shoe_type": shoes, "hat_type": hat,
                "carrying_type": carry}
    if hat_color is not None:
        clothing["hat_color"] = hat_color
    if carry_color is not None:
        clothing["carrying_color"] = carry_color
    return clothing


def canonical(attributes: Mapping[str, str]) -> dict[str, str]:
    """Attributes in ontology key order, validated, dependent colours dropped when their item is none."""
    ONTOLOGY.validate(attributes)
    counted = ONTOLOGY.counted(attributes)
    return {k: counted[k] for k in ATTRIBUTE_KEYS if k in counted}


def _differs_enough(new: Mapping[str, str], old: Mapping[str, str]) -> bool:
    if new["top_type"] == old["top_type"] and new["top_color"] == old["top_color"]:
        return False
    changed = sum(new.get(k) != old.get(k) for k in CLOTHING_KEYS)
    return changed >= 3


@dataclass(frozen=True)
class Identity:
    """One person: ``outfits[k]`` is the full canonical attribute dict of outfit ``k``."""

    identity: int
    outfits: tuple[dict[str, str], ...]
    weathers: tuple[str, ...]

    @property
    def biometrics(self) -> dict[str, str]:
        return {k: self.outfits[0][k] for k in BIOMETRIC_KEYS}


def draw_identity(identity: int, outfits: int, rng: np.random.Generator) -> Identity:
    """A person with ``outfits`` outfits (≥ 1); later outfits differ visibly from earlier ones."""
    if outfits < 1:
        raise ValueError(f"outfits must be ≥ 1, got {outfits}")
    bio = draw_biometrics(rng)
    dressed: list[dict[str, str]] = []
    weathers: list[str] = []
    for _ in range(outfits):
        for _attempt in range(40):
            weather = pick(rng, {"cold": 0.3, "mild": 0.4, "warm": 0.3})
            clothing = draw_outfit(bio, rng, weather)
            if all(_differs_enough(clothing, old) for old in dressed):
                break
        dressed.append(clothing)
        weathers.append(weather)
    return Identity(identity, tuple(canonical({**bio, **c}) for c in dressed), tuple(weathers))


#: Independent random streams of one identity (SeedSequence spawn keys), so no two streams can collide.
STREAM_IDENTITY, STREAM_LOOK, STREAM_IMAGE, STREAM_PLAN = 0, 1, 2, 3


def stream_rng(stream: int, *entropy: int) -> np.random.Generator:
    """A generator for one named stream over integer entropy, e.g. ``(seed, identity, index)``."""
    return np.random.default_rng(np.random.SeedSequence(tuple(int(e) for e in entropy), spawn_key=(stream,)))


def identity_rng(seed: int, identity: int) -> np.random.Generator:
    """The generator that decides identity ``identity`` of world ``seed`` (independent of any other)."""
    return stream_rng(STREAM_IDENTITY, seed, identity)


def make_identity(seed: int, identity: int, outfits: int) -> Identity:
    """Identity ``identity`` of the world with ``seed``: deterministic and independent of the others."""
    return draw_identity(identity, outfits, identity_rng(seed, identity))


def random_attributes(rng: np.random.Generator) -> dict[str, str]:
    """One canonical attribute dict (a random person in a random outfit), for on-the-fly rendering."""
    bio = draw_biometrics(rng)
    return canonical({**bio, **draw_outfit(bio, rng)})
