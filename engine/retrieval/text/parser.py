"""Free-text person description → canonical attributes of the 18-attribute ontology.

Binding rules: docs/text-conventions.md. The pipeline is a small hand-written tokenizer plus rules, linear
in the input length (every scan is bounded by a constant window, so a 1 MB text is read whole, never cut):

1. tokenize (``engine.retrieval.text.tokens``): words, numbers and punctuation with character offsets; clitics split
   ("isn't" → is not, "she's" → she is); a hyphen between two words joins them ("t-shirt", "long-sleeved").
2. phrases (``engine.retrieval.text.units``): greedy longest match against the lexicon → units (garments, colours,
   adjectives, ...).
3. compounds (``engine.retrieval.text.units``): an item noun right before another one only modifies it ("denim
   jacket", "suit jacket").
4. clauses (``engine.retrieval.text.clauses.structure``): entities, subjects of "is/are/was" and of a colon
   section, antecedents of "that/which/who".
5. negation (``engine.retrieval.text.clauses.negate``): "no hat", "without a bag", "not carrying anything",
   "neither a hat nor a bag".
6. binding (``engine.retrieval.text.binding.bind``): each colour / adjective goes to one noun: predicate first
   ("his trousers are grey", "a jacket that is green", "a jacket in green", "Hair: short"), then forward inside
   the noun phrase ("green jacket and jeans"), then post forms ("khaki ones", "cream coloured", "brown leather",
   "red on top"), then a bare trailing colour ("a windbreaker, bright yellow").
7. assembly (here): one value per attribute (``engine.retrieval.text.candidates``: first evidence, ranked where
   the conventions rank), the spans that gave each value, the level and the keys still missing.

Each step takes the units and what the steps before it found as its arguments.

With a ``fallback`` (``engine.retrieval.text.guess``, docs/unknown-words.md), runs of words the lexicon does not
know are read as their nearest lexicon phrase between steps 2 and 3; the spans they give are marked ``"source":
"guessed"`` with the phrase and similarity, and the result lists every guess. Without one, nothing changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from engine.kernel.ontology import ATTRIBUTE_KEYS, ONTOLOGY
from engine.retrieval.text.binding import bind
from engine.retrieval.text.candidates import Candidates
from engine.retrieval.text.clauses import negate, structure
from engine.retrieval.text.guess import Fallback, Guess, guess_units
from engine.retrieval.text.tokens import tokenize
from engine.retrieval.text.units import Entity, Unit, layered_under, mark_compounds, read_units

# ======================================================================================= parse


@dataclass(frozen=True)
class ParseResult:
    """What a description states: canonical attributes, their count and level, evidence spans and
    suggestions of what to add next."""

    attributes: dict[str, str]
    count: int
    level: str | None
    spans: list[dict] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    #: With a fallback: each unknown span read as a lexicon phrase (``Guess.to_dict``); None without one.
    guessed: list[dict] | None = None

    def to_dict(self) -> dict:
        out = {"attributes": dict(self.attributes), "count": self.count, "level": self.level,
               "spans": [dict(s) for s in self.spans], "missing": list(self.missing)}
        if self.guessed is not None:
            out["guessed"] = [dict(g) for g in self.guessed]
        return out


#: Order in which unstated attributes are suggested: coarse and salient first.
SUGGESTION_ORDER: tuple[str, ...] = (
    "gender", "age", "height", "physique", "skin_color",
    "top_type", "top_color", "top_length", "bottom_type", "bottom_color", "bottom_length",
    "hairstyle", "hair_color", "hat_type", "hat_color", "shoe_type", "carrying_type", "carrying_color",
)



def _assemble(text: str, units: list[Unit], entities: list[Entity], candidates: Candidates,
              guesses: list[Guess] | None) -> ParseResult:
    """One value per attribute (the best candidate, then each item slot's winning entity), the spans that gave
    them, the level and the keys still missing."""
    spans = candidates.best()
    _items(units, entities, spans)
    attrs = {key: spans[key][0] for key in ATTRIBUTE_KEYS if key in spans}
    for dependent, owner in (("hat_color", "hat_type"), ("carrying_color", "carrying_type")):
        if dependent in attrs and attrs.get(owner) in (None, "none"):
            del attrs[dependent]
    span_list = [{"attribute": key, "value": attrs[key], "start": spans[key][1], "end": spans[key][2],
                  "text": text[spans[key][1]:spans[key][2]]} for key in attrs]
    span_list.sort(key=lambda s: (s["start"], ATTRIBUTE_KEYS.index(s["attribute"])))
    for span in span_list:
        for guess in guesses or ():
            if guess.start < span["end"] and span["start"] < guess.end:
                span.update(source="guessed", read_as=guess.read_as, similarity=round(guess.similarity, 3))
                break
    count = ONTOLOGY.count(attrs)
    guessed = None if guesses is None else [g.to_dict() for g in guesses]
    return ParseResult(attributes=attrs, count=count, level=ONTOLOGY.level_of(count), spans=span_list,
                       missing=_missing(attrs), guessed=guessed)


def _items(units: list[Unit], entities: list[Entity], spans: dict[str, tuple[str, int, int]]) -> None:
    """Each item slot's type, colour and extras from its entities into ``spans`` (a live, outer, strongly typed
    mention first; a negated hat or bag says "none")."""
    slots = {"hat": ("hat_type", "hat_color", None), "top": ("top_type", "top_color", "top_length"),
             "bottom": ("bottom_type", "bottom_color", "bottom_length"), "shoe": ("shoe_type", None, None),
             "carry": ("carrying_type", "carrying_color", None)}
    inner = set()
    for i, u in enumerate(units):
        if u.kind == "item":
            hidden = layered_under(units, i)
            if hidden is not None:
                inner.add(id(units[hidden].entity))
    for slot, (type_key, color_key, _length_key) in slots.items():
        mentions = [e for e in entities if e.slot == slot]
        live = [e for e in mentions if not e.negated]
        if any(id(e) not in inner for e in live):
            live = [e for e in live if id(e) not in inner]
        for ent in live:
            for key, value in ent.extras.items():
                spans.setdefault(key, (value, ent.start, ent.end))
        typed = [e for e in live if e.value is not None]
        strong = [e for e in typed if not e.weak]
        winner = (strong or typed or [None])[0]
        if winner is not None:
            spans[type_key] = (winner.value, winner.start, winner.end)
        elif slot in ("hat", "carry"):
            negated = [e for e in mentions if e.negated]
            if negated:
                ent = negated[0]
                spans[type_key] = ("none", ent.neg_start, ent.end)
        if color_key is None:
            continue
        colored = None
        if winner is not None and winner.color is not None:
            colored = winner
        else:
            pool = [e for e in live if e.value is None] + [e for e in typed if winner is None or
                                                           e.value == winner.value]
            colored = next((e for e in pool if e.color is not None), None)
        if colored is not None and colored.color_span is not None:
            spans[color_key] = (colored.color, colored.color_span[0], colored.color_span[1])

def _missing(attrs: dict[str, str]) -> list[str]:
    out = []
    for key in SUGGESTION_ORDER:
        if key in attrs:
            continue
        if key == "hat_color" and attrs.get("hat_type") in (None, "none"):
            continue
        if key == "carrying_color" and attrs.get("carrying_type") in (None, "none"):
            continue
        out.append(key)
    return out


def parse(text: str, fallback: Fallback | None = None) -> ParseResult:
    """Read the attributes a free-text description states (docs/text-conventions.md).

    Never raises on a string: empty, nonsense or non-English text gives no attributes and level None.
    Runs in time linear in the length of ``text``. ``fallback`` reads words the lexicon does not know
    (docs/unknown-words.md); its matcher is only called when the text has unknown content words.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse() needs a str, got {type(text).__name__}")
    units = read_units(tokenize(text))
    guesses = None if fallback is None else guess_units(text, units, fallback.matcher, fallback.threshold)
    mark_compounds(units)
    entities = structure(units)
    candidates = Candidates()
    negate(units, candidates)
    bind(units, entities, candidates)
    return _assemble(text, units, entities, candidates, guesses)
