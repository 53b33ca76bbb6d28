"""What a step can search with, declared once: the query modalities (a description, a sketch, an infrared image,
a gallery item used as the example). Everything that names, checks or words a step's modalities reads this
registry: the engine's query (``StepQuery.kind``) and the CLI's step records and lines
(``engine.retrieval.search.transcript``), the search console's commands, the case store's check of a step's
query kind (``app.store.checks``), the report's wording (``app.report.text``) and the app's query panel.

A step's query kind is its modalities' names joined by ``+`` in registry order (``"text+sketch"``); a modality
marked ``alone`` (the example item) is never combined. Each entry says what input it takes (``"text"``,
``"image"`` or ``"item"``), how it is worded, and its view routing hints: the gallery views it searches, in the
order ``engine.retrieval.encoding.views`` prefers them (docs/methods.md §1.9).

Standard library only, so that the case store can check a query kind without loading the engine.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

#: what a modality takes: a description, an image (a file or an RGB array), or a gallery item id
TAKES: tuple[str, ...] = ("text", "image", "item")


@dataclass(frozen=True)
class QueryModality:
    """One query modality. ``name``: its part of a query kind, its field of the engine's ``StepQuery`` and its
    key in the CLI's step record; ``label``: its name in reports, the CLI's lines and the console ("IR");
    ``control``: the query panel's name for its section ("IR image"); ``prompt``: what the panel asks for when
    the section is on but empty; ``takes``: one of ``TAKES``; ``alone``: combines with no other modality;
    ``views``: the views it searches, preferred first (``<level>``/``<scenario>`` stand for the step's);
    ``console``: the search console's command for it, or None."""

    name: str
    label: str
    control: str
    prompt: str
    takes: str
    views: tuple[str, ...]
    alone: bool = False
    console: str | None = None

    def __post_init__(self) -> None:
        if not self.name or "+" in self.name or self.name != self.name.strip():
            raise ValueError(f"a query modality's name must be a word without '+', got {self.name!r}")
        if self.takes not in TAKES:
            raise ValueError(f"query modality {self.name!r} takes {self.takes!r}; one of {list(TAKES)}")


#: The registry, in query-kind order (the order ``query_kind`` joins names in).
QUERY_MODALITIES: dict[str, QueryModality] = {m.name: m for m in (
    QueryModality("text", "text", "Text", "type a description", "text",
                  views=("text:<level>", "rgb")),
    QueryModality("sketch", "sketch", "Sketch", "draw a sketch", "image",
                  views=("appearance:grey", "rgb"), console=":sketch"),
    QueryModality("ir", "IR", "IR image", "load an IR image", "image",
                  views=("appearance:grey", "rgb"), console=":ir"),
    QueryModality("example", "example item", "Example item", "pick a gallery item", "item",
                  views=("reid:<scenario>", "appearance", "rgb", "biometrics"), alone=True, console=":similar"),
)}


class QueryKindError(ValueError):
    """A query kind that names an unknown modality, repeats one, or combines one that stands alone."""


def modalities() -> tuple[QueryModality, ...]:
    """Every registered modality, in query-kind order."""
    return tuple(QUERY_MODALITIES.values())


def modality(name: str) -> QueryModality:
    try:
        return QUERY_MODALITIES[name]
    except KeyError:
        raise QueryKindError(f"unknown query modality {name!r}; known: {list(QUERY_MODALITIES)}") from None


def taking(takes: str) -> tuple[QueryModality, ...]:
    """The modalities that take ``takes`` ("text", "image" or "item"), in query-kind order."""
    return tuple(m for m in QUERY_MODALITIES.values() if m.takes == takes)


def combinable() -> tuple[QueryModality, ...]:
    """The modalities a fused query may combine (all but those that stand alone)."""
    return tuple(m for m in QUERY_MODALITIES.values() if not m.alone)


def query_kind(names: Iterable[str]) -> str:
    """The query kind of a query that gives ``names``: registered names joined by '+' in registry order."""
    given = set(names)
    return "+".join(name for name in QUERY_MODALITIES if name in given)


def kind_parts(kind: str) -> tuple[str, ...]:
    """The modality names of a query kind (``"text+sketch"`` → ``("text", "sketch")``)."""
    return tuple(part for part in kind.split("+") if part)


def check_query_kind(kind: object) -> tuple[QueryModality, ...]:
    """The modalities of query kind ``kind``; ``QueryKindError`` names what is wrong with it."""
    if not isinstance(kind, str) or not kind_parts(kind):
        raise QueryKindError(f"query_kind must name at least one of {list(QUERY_MODALITIES)}, got {kind!r}")
    parts = kind_parts(kind)
    unknown = [part for part in parts if part not in QUERY_MODALITIES]
    if unknown:
        raise QueryKindError(f"query_kind {kind!r} names unknown modalities {unknown}; known: "
                             f"{list(QUERY_MODALITIES)}")
    if len(set(parts)) != len(parts):
        raise QueryKindError(f"query_kind {kind!r} names a modality twice")
    found = tuple(QUERY_MODALITIES[part] for part in parts)
    if len(found) > 1 and any(m.alone for m in found):
        raise QueryKindError(f"query_kind {kind!r} combines {[m.name for m in found if m.alone]}, which stand alone")
    return found


def describe(kind: str, joiner: str = " + ") -> str:
    """A query kind in words (``"text+ir"`` → ``"text + IR"``); an unregistered part reads as itself."""
    return joiner.join(QUERY_MODALITIES[p].label if p in QUERY_MODALITIES else p for p in kind_parts(kind))
