"""The canonical 18-attribute ontology (``resources/ontology.json``), the level rule, and how the product words
keys and values for people (``resources/ontology_labels.json``: ``key_label``, ``value_label``).

A description's granularity is the number of distinct attributes it states (docs/methods.md §1.1):
UC 1–5, C 6–8, M 9–11, F 12–14, UF 15–18; no attribute → no level.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from engine.kernel import jsonio, vocabulary
from engine.kernel.resources import resource_path

#: Attributes whose value only counts when the carrying item exists (ontology notes).
DEPENDENT_COLORS: dict[str, str] = {"hat_color": "hat_type", "carrying_color": "carrying_type"}


@dataclass(frozen=True)
class Level:
    name: str
    label: str
    min: int
    max: int


@dataclass(frozen=True)
class Ontology:
    groups: dict[str, tuple[str, ...]]
    attributes: dict[str, tuple[str, ...]]
    levels: tuple[Level, ...]

    @property
    def keys(self) -> tuple[str, ...]:
        """Attribute keys in canonical (file) order."""
        return tuple(self.attributes)

    @property
    def level_names(self) -> tuple[str, ...]:
        return tuple(level.name for level in self.levels)

    @property
    def colors(self) -> tuple[str, ...]:
        return self.attributes["top_color"]

    def group_of(self, key: str) -> str:
        for group, keys in self.groups.items():
            if key in keys:
                return group
        raise KeyError(f"unknown attribute {key!r}")

    def is_valid(self, key: str, value: str) -> bool:
        return key in self.attributes and value in self.attributes[key]

    def validate(self, attributes: Mapping[str, str]) -> None:
        """Raise ``ValueError`` naming the first attribute key or value outside the ontology."""
        for key, value in attributes.items():
            if key not in self.attributes:
                raise ValueError(f"unknown attribute key {key!r}")
            if value not in self.attributes[key]:
                raise ValueError(f"attribute {key!r} has value {value!r}; allowed: {list(self.attributes[key])}")

    def counted(self, attributes: Mapping[str, str]) -> dict[str, str]:
        """The attributes that count for granularity: a dependent colour counts only when its item exists."""
        out = {}
        for key, value in attributes.items():
            owner = DEPENDENT_COLORS.get(key)
            if owner is not None and attributes.get(owner) == "none":
                continue
            out[key] = value
        return out

    def count(self, attributes: Mapping[str, str]) -> int:
        return len(self.counted(attributes))

    def level_of(self, count: int) -> str | None:
        """Level name for a number of stated attributes, or ``None`` for zero (docs/methods.md §1.1)."""
        if count <= 0:
            return None
        for level in self.levels:
            if level.min <= count <= level.max:
                return level.name
        return self.levels[-1].name

    def level_index(self, name: str) -> int:
        return self.level_names.index(name)


def _parse(data: dict) -> Ontology:
    try:
        groups = {g: tuple(keys) for g, keys in data["groups"].items()}
        attributes = {k: tuple(v) for k, v in data["attributes"].items()}
        levels = tuple(Level(lv["name"], lv["label"], int(lv["min"]), int(lv["max"])) for lv in data["levels"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"malformed ontology: {exc!r}") from exc
    grouped = [k for keys in groups.values() for k in keys]
    if sorted(grouped) != sorted(attributes):
        raise ValueError("malformed ontology: groups and attributes disagree")
    return Ontology(groups=groups, attributes=attributes, levels=levels)


def load_ontology(path: str | Path | None = None) -> Ontology:
    """Load an ontology file; without ``path`` the shipped one (cached)."""
    if path is None:
        return _default()
    return _parse(jsonio.read(path, expect=dict))


@lru_cache(maxsize=1)
def _default() -> Ontology:
    ontology = _parse(jsonio.read(resource_path("ontology.json"), expect=dict))
    if ontology.level_names != vocabulary.LEVELS:
        raise ValueError(f"the shipped ontology names the levels {list(ontology.level_names)}; "
                         f"engine.kernel.vocabulary.LEVELS says {list(vocabulary.LEVELS)}")
    return ontology


ONTOLOGY = _default()
ATTRIBUTE_KEYS: tuple[str, ...] = ONTOLOGY.keys
LEVELS: tuple[str, ...] = vocabulary.LEVELS
COLORS: tuple[str, ...] = ONTOLOGY.colors
#: The attributes that are colours (a sketch or an infrared image cannot show them).
COLOR_KEYS: tuple[str, ...] = tuple(key for key in ATTRIBUTE_KEYS if key.endswith("_color"))
#: The attributes a change of clothes leaves as they were: the global biometrics and the hair.
BIOMETRIC_KEYS: tuple[str, ...] = ONTOLOGY.groups["global_biometrics"] + ("hairstyle", "hair_color")


def level_of(count: int) -> str | None:
    return ONTOLOGY.level_of(count)


LABELS_FILE = "ontology_labels.json"


@dataclass(frozen=True)
class OntologyLabels:
    """Words for the ontology: ``keys`` one phrase per attribute key ("colour of the top"), ``values`` a value's
    words wherever it occurs ("gray" → "grey"), ``values_by_key`` a value's words for one key only (hat_type
    "none" → "no headwear"). A value named in neither reads as itself with underscores as spaces."""

    keys: Mapping[str, str]
    values: Mapping[str, str]
    values_by_key: Mapping[str, Mapping[str, str]]

    def key(self, key: str) -> str:
        return self.keys.get(key, key.replace("_", " "))

    def value(self, key: str, value: str) -> str:
        by_key = self.values_by_key.get(key, {})
        if value in by_key:
            return by_key[value]
        return self.values.get(value, value.replace("_", " "))


def parse_labels(data: dict, ontology: Ontology) -> OntologyLabels:
    """Check a label table against ``ontology``: every key worded, only its keys and values named."""
    try:
        keys = {str(k): str(v) for k, v in data["keys"].items()}
        values = {str(k): str(v) for k, v in data.get("values", {}).items()}
        by_key = {str(k): {str(a): str(b) for a, b in v.items()} for k, v in data.get("values_by_key", {}).items()}
    except (KeyError, TypeError, AttributeError) as exc:
        raise ValueError(f"malformed ontology labels: {exc!r}") from exc
    missing, extra = sorted(set(ontology.attributes) - set(keys)), sorted(set(keys) - set(ontology.attributes))
    if missing or extra:
        raise ValueError(f"ontology labels must word every key: missing {missing}, unknown {extra}")
    known = {v for vs in ontology.attributes.values() for v in vs}
    unknown = sorted(set(values) - known)
    unknown += [f"{k}={v}" for k, vs in by_key.items() for v in vs if not ontology.is_valid(k, v)]
    if unknown:
        raise ValueError(f"ontology labels name values outside the ontology: {unknown}")
    return OntologyLabels(keys, values, by_key)


@lru_cache(maxsize=1)
def labels() -> OntologyLabels:
    """The shipped label table (``LABELS_FILE``), checked against the shipped ontology."""
    return parse_labels(jsonio.read(resource_path(LABELS_FILE), expect=dict), ONTOLOGY)


def key_label(key: str) -> str:
    """An attribute key in words ("top_color" → "colour of the top")."""
    return labels().key(key)


def value_label(key: str, value: str) -> str:
    """A value of ``key`` in words ("gray" → "grey", hat_type "none" → "no headwear")."""
    return labels().value(key, value)
