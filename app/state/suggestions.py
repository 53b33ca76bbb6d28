""""Add next" suggestions: for an attribute the description does not state yet, one short sentence per
canonical value that the parser reads back as exactly that value (checked in tests/test_app_query_panel.py).

Sentences name the garment the description already gives ("The jacket is red") so a colour attaches to it,
and otherwise a generic noun the parser knows ("The top is red", "The bottoms are blue").
"""

from __future__ import annotations

from collections.abc import Mapping

from engine.kernel.ontology import ONTOLOGY

#: How an attribute key is shown to a person ("top_color" → "top colour").
KEY_LABELS: dict[str, str] = {
    "gender": "gender", "skin_color": "skin tone", "age": "age", "height": "height", "physique": "build",
    "hairstyle": "hairstyle", "hair_color": "hair colour", "hat_type": "headwear", "hat_color": "hat colour",
    "top_type": "top", "top_length": "sleeves", "top_color": "top colour", "bottom_type": "bottoms",
    "bottom_length": "bottom length", "bottom_color": "bottom colour", "shoe_type": "shoes",
    "carrying_type": "carrying", "carrying_color": "bag colour",
}

_VALUE_WORDS: dict[str, str] = {
    "middle_aged": "middle-aged", "t_shirt": "T-shirt", "leather_shoes": "leather shoes",
    "high_heels": "high heels", "brimmed_hat": "brimmed hat", "shoulder_bag": "shoulder bag",
    "plastic_bag": "plastic bag", "gray": "grey", "short_sleeve": "short sleeves",
    "long_sleeve": "long sleeves", "sleeveless": "sleeveless", "knee": "knee-length",
}
_PLURAL_NOUNS = frozenset({"trousers", "jeans", "shorts", "leggings", "bottoms"})
_GENERIC_NOUN = {"top_type": "top", "bottom_type": "bottoms", "hat_type": "hat", "carrying_type": "bag"}

_PERSON_IS = {
    "gender": {"male": "a man", "female": "a woman"},
    "age": {"child": "a child", "young": "young", "middle_aged": "middle-aged", "elderly": "elderly"},
    "height": {"short": "short", "average": "of average height", "tall": "tall"},
    "physique": {"slim": "slim", "average": "of average build", "heavy": "heavy"},
}
_HAIRSTYLE = {"bald": "The person is bald", "short": "The hair is short",
              "medium": "The hair is shoulder-length", "long": "The hair is long",
              "ponytail": "The hair is in a ponytail", "bun": "The hair is in a bun"}
_SLEEVES = {"sleeveless": "no sleeves", "short_sleeve": "short sleeves", "long_sleeve": "long sleeves"}
_BOTTOM_LENGTH = {"short": "short", "knee": "knee-length", "long": "ankle-length"}


def label(key: str) -> str:
    return KEY_LABELS.get(key, key.replace("_", " "))


def value_label(value: str) -> str:
    """A canonical value as words ("leather_shoes" → "leather shoes")."""
    return _VALUE_WORDS.get(value, value.replace("_", " "))


def _with_article(noun: str) -> str:
    if noun in _PLURAL_NOUNS:
        return noun
    return ("an " if noun[0].lower() in "aeiou" else "a ") + noun


def _item_noun(attributes: Mapping[str, str], type_key: str) -> str:
    value = attributes.get(type_key)
    if value is None or value == "none":
        return _GENERIC_NOUN[type_key]
    return value_label(value)


def _be(noun: str) -> str:
    return "are" if noun in _PLURAL_NOUNS else "is"


def suggestion_sentence(key: str, value: str, attributes: Mapping[str, str]) -> str:
    """A sentence (no final full stop) stating ``key = value`` next to a description whose parsed
    ``attributes`` are given. Raises ``ValueError`` for a key or value outside the ontology."""
    if not ONTOLOGY.is_valid(key, value):
        raise ValueError(f"attribute {key!r} has no value {value!r} in the ontology")
    if key in _PERSON_IS:
        return f"The person is {_PERSON_IS[key][value]}"
    if key == "skin_color":
        return f"The person has {value} skin"
    if key == "hairstyle":
        return _HAIRSTYLE[value]
    if key == "hair_color":
        return f"The hair is {value_label(value)}"
    if key in ("top_type", "bottom_type"):
        return f"The person wears {_with_article(value_label(value))}"
    if key == "shoe_type":
        return f"The person wears {value_label(value)}"
    if key == "hat_type":
        if value == "none":
            return "The person wears no hat"
        return f"The person wears {_with_article(value_label(value))}"
    if key == "carrying_type":
        return "The person carries nothing" if value == "none" else \
            f"The person carries {_with_article(value_label(value))}"
    if key == "top_length":
        return f"The {_item_noun(attributes, 'top_type')} has {_SLEEVES[value]}"
    if key == "bottom_length":
        noun = _item_noun(attributes, "bottom_type")
        return f"The {noun} {_be(noun)} {_BOTTOM_LENGTH[value]}"
    type_key = {"top_color": "top_type", "bottom_color": "bottom_type", "hat_color": "hat_type",
                "carrying_color": "carrying_type"}[key]
    noun = _item_noun(attributes, type_key)
    return f"The {noun} {_be(noun)} {value_label(value)}"


def append_sentence(text: str, sentence: str) -> str:
    """``text`` with ``sentence`` added as a new sentence ("a tall man" → "a tall man. The person is
    young.")."""
    body = text.rstrip()
    if not body:
        return f"{sentence}."
    if body[-1] not in ".!?;":
        body += "."
    return f"{body} {sentence}."
