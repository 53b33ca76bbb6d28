"""Multi-grained annotation engine: attribute dict → fluent English descriptions (docs/methods.md §1.1).

``describe`` states exactly the requested attributes (no more, no fewer) in one of several sentence
structures; ``nested_key_subsets`` draws the nested subsets t⁰⊂t¹⊂… of sizes 5, 8, 11, 14 (upper bounds
of UC, C, M, F) ending with the full set (UF); ``descriptions_by_level`` and ``query_chain`` describe
them. Everything is deterministic given a ``random.Random`` or an int seed.

Without ``gender`` among the stated keys no gendered word is used ("the person", "they").
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Mapping, Sequence

from engine.kernel.ontology import ATTRIBUTE_KEYS, DEPENDENT_COLORS, ONTOLOGY
from engine.retrieval.text.phrases import (
    CARRY_NONE_SENTENCE,
    CARRY_NONE_WITH,
    HAT_NONE_SENTENCE,
    HAT_NONE_WITH,
    NEUTRAL_NOUNS,
    Item,
    Voice,
    capitalised,
    carry_phrase,
    color_word,
    hair_phrases,
    item_noun,
    item_np,
    join_words,
    person_phrases,
    predicate_sentence,
    voice_of,
    wear_phrase,
    with_article,
)

#: Subset sizes of the nested chain (N_c=5, N_iv=3, stop before N_f=15; docs/methods.md §1.1).
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


# ------------------------------------------------------------------------------------------ describe
def _items(attrs: Mapping[str, str], keys: set[str]) -> list[Item]:
    def get(key: str) -> str | None:
        return attrs[key] if key in keys else None

    specs = [
        ("hat", get("hat_type"), get("hat_color"), None),
        ("top", get("top_type"), get("top_color"), get("top_length")),
        ("bottom", get("bottom_type"), get("bottom_color"), get("bottom_length")),
        ("shoe", get("shoe_type"), None, None),
        ("carry", get("carrying_type"), get("carrying_color"), None),
    ]
    return [Item(slot, kind, color, length) for slot, kind, color, length in specs
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
    voice = voice_of(gender, rng)
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


def _single_sentence(attrs: Mapping[str, str], keys: set[str], voice: Voice, rng: random.Random) -> str:
    """"A tall young man with short black hair, wearing …, carrying …"."""
    person = person_phrases(attrs, keys, voice, rng)
    head = with_article(person.noun_phrase)
    if person.predicates:
        head += ", " + join_words(person.predicates, rng) + ","
    withs = list(person.with_phrases)
    style, color = _hair_keys(attrs, keys)
    if style or color:
        withs.append(hair_phrases(style, color, voice, rng)[0])
    worn: list[str] = []
    tails: list[str] = []
    for item in _items(attrs, keys):
        if item.slot == "hat" and item.kind == "none":
            withs.append(rng.choice(HAT_NONE_WITH))
        elif item.slot == "carry" and item.kind == "none":
            if rng.random() < 0.5:
                withs.append(rng.choice(CARRY_NONE_WITH))
            else:
                tails.append(rng.choice(("carrying nothing", "not carrying anything", "empty-handed")))
        elif item.slot == "carry":
            if rng.random() < 0.6:
                tails.append(carry_phrase(item, rng))
            else:
                withs.append(item_np(item, rng, allow_relative=False))
        else:
            worn.append(wear_phrase(item, rng))
    rng.shuffle(worn)
    parts = []
    if withs:
        parts.append("with " + join_words(withs, rng))
    opening = ""
    bare = person.noun_phrase in NEUTRAL_NOUNS and not person.predicates
    modes = ("plain", "plain", "who") if bare else ("plain", "plain", "participle_first", "who")
    mode = rng.choice(modes) if worn else "plain"
    if mode == "participle_first":
        # "Wearing a red jacket and jeans, a tall man …"
        opening = rng.choice(("Wearing ", "Dressed in ")) + join_words(worn, rng) + ", "
    elif mode == "who":
        # "A tall man who wears a red jacket and jeans, …"
        head = head.rstrip(",") + rng.choice((" who wears ", " who is wearing ")) + join_words(worn, rng)
    elif worn:
        parts.append(rng.choice(("wearing ", "dressed in ", "in ")) + join_words(worn, rng))
    parts.extend(tails)
    rng.shuffle(parts)
    sentence = head.rstrip(",")
    for index, part in enumerate(parts):
        sentence += (" " if index == 0 and not person.predicates and mode != "who" else ", ") + part
    return capitalised(opening + sentence) + "."


def _sentences(attrs: Mapping[str, str], keys: set[str], voice: Voice, rng: random.Random) -> str:
    """Several short sentences with pronoun back-references."""
    person = person_phrases(attrs, keys, voice, rng)
    sentences = []
    if person.noun_phrase in NEUTRAL_NOUNS and not person.with_phrases:
        # nothing to say about the person itself: start with what they wear
        voice = Voice(rng.choice(("the person", "the pedestrian")), "their", False)
    else:
        opening_subject = rng.choice(("The person is", "This is", "I saw", "There is"))
        opening = f"{opening_subject} {with_article(person.noun_phrase)}"
        if person.with_phrases:
            opening += " with " + join_words(person.with_phrases, rng)
        sentences.append(opening)
    body: list[str] = []
    if person.predicates:
        body.append(f"{voice.be} {join_words(person.predicates, rng)}")
    style, color = _hair_keys(attrs, keys)
    if style or color:
        body.append(hair_phrases(style, color, voice, rng)[1])
    worn: list[str] = []
    for item in _items(attrs, keys):
        if item.slot == "hat" and item.kind == "none":
            body.append(rng.choice(HAT_NONE_SENTENCE).format(be=voice.be, has=voice.has))
        elif item.slot == "carry" and item.kind == "none":
            body.append(rng.choice(CARRY_NONE_SENTENCE).format(be=voice.be, has=voice.has))
        elif item.slot == "carry":
            body.append(f"{voice.be} {carry_phrase(item, rng)}")
        else:
            predicate = predicate_sentence(item, voice, rng) if rng.random() < 0.3 else None
            if predicate:
                body.append(predicate)
            elif item.color and item.kind not in (None, "none") and rng.random() < 0.15:
                bare = Item(item.slot, item.kind, None, item.length)
                noun, plural = item_noun(bare, rng)
                if noun in ("tank top", "miniskirt") or plural or voice.plural:
                    worn.append(wear_phrase(item, rng))
                else:
                    # back-reference: "She wears a jacket. It is green."
                    body.append(f"{voice.verb('wears', 'wear')} {item_np(bare, rng)}. "
                                f"It is {color_word(item.color, rng)}")
            else:
                worn.append(wear_phrase(item, rng))
    if worn:
        rng.shuffle(worn)
        verb = rng.choice((voice.verb("wears", "wear"), voice.verb("is wearing", "are wearing"),
                           voice.verb("has on", "have on")))
        body.append(f"{verb} {join_words(worn, rng)}")
    rng.shuffle(body)
    sentences.extend(body)
    return " ".join(capitalised(s) + "." for s in sentences)


def _telegraphic(attrs: Mapping[str, str], keys: set[str], voice: Voice, rng: random.Random) -> str:
    """A witness-style list: "Young man, tall, short black hair, red t-shirt, blue jeans, no bag."."""
    person = person_phrases(attrs, keys, voice, rng)
    parts = [person.noun_phrase] + person.predicates + person.with_phrases
    style, color = _hair_keys(attrs, keys)
    if style or color:
        parts.append(hair_phrases(style, color, voice, rng)[0])
    for item in _items(attrs, keys):
        if item.slot == "hat" and item.kind == "none":
            parts.append(rng.choice(("no hat", "no hat", "bareheaded")))
        elif item.slot == "carry" and item.kind == "none":
            parts.append(rng.choice(("no bag", "carrying nothing", "empty-handed")))
        else:
            phrase = wear_phrase(item, rng) if item.slot != "carry" else item_np(item, rng)
            if phrase.startswith(("a ", "an ")) and rng.random() < 0.6:
                phrase = phrase.split(" ", 1)[1]
            parts.append(phrase)
    head, rest = parts[0], parts[1:]
    rng.shuffle(rest)
    if head in NEUTRAL_NOUNS and rest:
        # a bare "Person," adds nothing: list the features only
        return capitalised(", ".join(rest)) + "."
    return capitalised(", ".join([head] + rest)) + "."


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
    dropped (docs/methods.md §1.1). Each subset is listed in ontology order.
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
    """The progressive query chain: [{"text", "keys", "level"}] for nested subsets (docs/methods.md §1.1, §1.3)."""
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
