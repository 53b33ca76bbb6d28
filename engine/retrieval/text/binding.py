"""The parser's binding step (``engine.retrieval.text.parser``): each colour or adjective goes to one noun: predicate
first ("his trousers are grey"), then forward inside the noun phrase ("green jacket and jeans"), then post forms
("khaki ones", "cream coloured"), then a bare trailing colour. ``bind`` runs it over units the clause and negation
steps (``engine.retrieval.text.clauses``) have annotated."""

from __future__ import annotations

from engine.retrieval.text import lexicon as lx
from engine.retrieval.text.candidates import Candidates
from engine.retrieval.text.tokens import GENDER_OF_PRONOUN
from engine.retrieval.text.units import FORWARD_SKIP, NOUN_KINDS, PREDICATE_SKIP, PREDICATE_VERBS, Entity, Unit


def bind(units: list[Unit], entities: list[Entity], candidates: Candidates) -> None:
    """Give every colour and adjective of ``units`` to its noun and add what each unit states to ``candidates``;
    a colour bound to a place ("red on top") adds that place's entity to ``entities``."""
    Binder(units, entities, candidates).bind_all()


class Binder:
    """Binding of colours and adjectives to nouns over ``units``: entities take their colours, the other readings go
    to ``candidates``."""

    def __init__(self, units: list[Unit], entities: list[Entity], candidates: Candidates) -> None:
        self.units = units
        self.entities = entities
        self.candidates = candidates

    def bind_all(self) -> None:
        units = self.units
        add = self.candidates.add
        for i, u in enumerate(units):
            kind = u.kind
            if u.negated:
                continue
            if kind in ("color", "adj"):
                self._bind(i)
            elif kind == "haircolor":
                add("hair_color", u.data, u.start, u.end)
            elif kind == "hairstyle":
                add("hairstyle", u.data, u.start, u.end)
            elif kind == "fixed":
                for key, value in u.data.items():
                    add(key, value, u.start, u.end, priority=3 if key == "age" else 1)
            elif kind == "person":
                gender, age = u.data
                if gender:
                    add("gender", gender, u.start, u.end, priority=2)
                if age:
                    prio = 2 if age == "child" else 3
                    add("age", age, u.start, u.end, priority=prio)
            elif kind in ("ppron", "poss") and u.word in GENDER_OF_PRONOUN:
                add("gender", GENDER_OF_PRONOUN[u.word], u.start, u.end, priority=1)
            elif kind == "decade":
                add("age", u.data, u.start, u.end, priority=3)
            elif kind == "num":
                self._number(i)
            elif kind == "unk" and u.word in ("knee", "knees", "ankle", "ankles"):
                self._limb_length(i)

    def _number(self, i: int) -> None:
        units = self.units
        u = units[i]
        digits = "".join(ch for ch in u.word if ch.isdigit())
        if not digits or len(digits) > 3:
            return
        before = units[i - 1].word if i > 0 else ""
        after = units[i + 1].kind if i + 1 < len(units) else ""
        if before not in ("aged", "age") and after != "year":
            return
        years = int(digits)
        if years < 13:
            age = "child"
        elif years < 40:
            age = "young"
        elif years < 60:
            age = "middle_aged"
        else:
            age = "elderly"
        self.candidates.add("age", age, u.start, u.end, priority=3)

    def _bind(self, i: int) -> None:
        units = self.units
        u = units[i]
        is_color = u.kind == "color"
        if u.kind == "adj" and u.word in ("old", "aged"):
            if i > 0 and units[i - 1].kind == "year":
                return
            if u.word == "aged" and i + 1 < len(units) and units[i + 1].kind == "num":
                return
        # 1. predicate: "… is green", "… that is green", "… in green", "Hair: short", "cap (grey)";
        #    after a determiner ("was a brown satchel") the noun phrase that follows comes first.
        j = i - 1
        steps = 0
        crossed_det = False
        while j >= 0 and steps < 6:
            v = units[j]
            if v.kind in PREDICATE_SKIP or v.word in PREDICATE_VERBS or \
                    (v.kind == "clause" and v.word in ("and", "or")):
                crossed_det = crossed_det or v.kind in ("det", "poss", "clause")
                j -= 1
                steps += 1
                continue
            break
        predicate_refs: list = []
        if j >= 0:
            v = units[j]
            if v.subjects is not None and (v.kind == "be" or v.word in (":", "(")):
                predicate_refs = v.subjects
            elif is_color and v.kind == "prep" and v.word == "in" and v.near and v.near[0] == "entity":
                predicate_refs = [v.near]
                crossed_det = True
        if predicate_refs and not crossed_det and self._apply_all(u, predicate_refs, i):
            return
        # 2. forward, inside the noun phrase ("in red and blue jeans": the colour list stops at "and")
        target, stop = self._forward(i, allow_list=not predicate_refs)
        if target is not None:
            self._apply(u, target, i, forward=True)
            return
        nxt = units[stop] if stop < len(units) else None
        if is_color and nxt is not None and nxt.kind == "place":
            ent = Entity(nxt.data, None, False, {}, nxt.start, nxt.end, i)
            self.entities.append(ent)
            self._apply(u, ("entity", ent), i)
            return
        if predicate_refs and crossed_det and self._apply_all(u, predicate_refs, i):
            return
        # 3. post forms
        if is_color:
            if nxt is not None and nxt.kind in ("colored", "material"):
                after = units[stop + 1] if stop + 1 < len(units) else None
                ends_phrase = after is None or after.kind not in NOUN_KINDS
                if ends_phrase and u.sent_entity is not None and self._apply(u, ("entity", u.sent_entity), i):
                    return
            # 4. a bare trailing colour: "a windbreaker, bright yellow", "Hair: short, black."
            if nxt is None or nxt.kind in ("punct", "ppron", "adv", "clause"):
                if u.colon_subject is not None and self._apply(u, u.colon_subject, i):
                    return
                ent = u.sent_entity
                if ent is not None and ent.color is None and ent.slot != "sink" and \
                        self._apply(u, ("entity", ent), i):
                    return
            return
        readings = u.data
        if u.word in lx.BOTTOM_LENGTH_WORDS and u.sent_entity is not None and u.sent_entity.slot == "bottom":
            self._apply(u, ("entity", u.sent_entity), i)
            return
        at_break = stop >= len(units) or units[stop].kind == "punct"
        if at_break and u.colon_subject is not None and self._apply(u, u.colon_subject, i):
            return
        default = readings.get("default")
        if default:
            self._add_reading(u, default)

    def _apply_all(self, u: Unit, refs: list, i: int) -> bool:
        done = False
        for ref in refs:
            done = self._apply(u, ref, i) or done
        return done

    def _limb_length(self, i: int) -> None:
        """"a skirt to the knee" → knee, "above the knee" → short, "to the ankles" → long."""
        units = self.units
        u = units[i]
        ent = u.sent_entity
        if ent is None or ent.slot != "bottom" or ent.negated:
            return
        j = i - 1
        while j >= 0 and units[j].kind in ("det", "poss", "adv"):
            j -= 1
        if j < 0:
            return
        before = units[j].word
        knee = u.word.startswith("knee")
        if before == "above" and knee:
            value = "short"
        elif before in ("to", "at", "reach", "reaches", "reaching", "reached", "past"):
            value = "knee" if knee else "long"
        else:
            return
        self.candidates.add("bottom_length", value, units[j].start, u.end)

    def _forward(self, i: int, allow_list: bool = True) -> tuple[tuple | None, int]:
        """The noun this colour / adjective modifies inside its noun phrase, and where the scan stopped."""
        units = self.units
        n = len(units)
        u = units[i]
        unknown = 3
        j = i + 1
        limit = min(n, i + 9)
        while j < limit:
            v = units[j]
            k = v.kind
            if k in NOUN_KINDS and k not in ("ppron", "tpron"):
                if k == "body" and v.word in lx.SUFFIX_NOUNS and j != i + 1:
                    j += 1
                    continue
                if k == "item":
                    return ("entity", v.entity), j
                if k == "body":
                    return ("body", v.data), j
                if k == "hairstyle":
                    return ("body", "hair"), j
                if k == "person":
                    return ("person",), j
                if k == "one":
                    return (("entity", u.last_entity) if u.last_entity else ("none",)), j
            if k in FORWARD_SKIP or k == "num":
                j += 1
                continue
            if k == "unk" and unknown > 0:
                unknown -= 1
                j += 1
                continue
            if k == "punct" and v.word == "," and u.kind == "adj" and j + 1 < n and \
                    units[j + 1].word in lx.HAIR_TEXTURE_WORDS:
                j += 1
                continue
            if allow_list and k == "clause" and v.word in ("and", "or") and u.kind == "color" and j + 1 < n and \
                    units[j + 1].kind == "color":
                j += 1
                continue
            return None, j
        return None, j

    def _apply(self, u: Unit, ref: tuple, i: int, forward: bool = False) -> bool:
        """Give unit ``u`` (colour or adjective) to ``ref``; True when the unit is used up."""
        what = ref[0]
        if what == "it":
            ent = u.last_entity
            if ent is None:
                return False
            ref = ("entity", ent)
            what = "entity"
        elif what == "they":
            if u.kind == "color":
                if u.last_entity is None:
                    return False
                ref = ("entity", u.last_entity)
                what = "entity"
            else:
                ref = ("person",)
                what = "person"
        if what == "none":
            return True
        if u.kind == "color":
            color, skin = u.data
            if what == "entity":
                ent = ref[1]
                if ent.color is None:
                    ent.color = color
                    ent.color_span = (u.start, u.end)
                    return True
                return forward
            if what == "body":
                cls = ref[1]
                if cls == "hair":
                    hair = lx.HAIR_FROM_COLOR.get(color)
                    if hair:
                        self.candidates.add("hair_color", hair, u.start, u.end)
                    return True
                if cls == "skin":
                    if skin:
                        self.candidates.add("skin_color", skin, u.start, u.end)
                    return True
                return True
            return forward
        readings = u.data
        if what == "entity":
            reading = readings.get(ref[1].slot)
        elif what == "body":
            reading = readings.get(ref[1])
        else:
            reading = readings.get("person") if forward else (readings.get("person") or readings.get("default"))
        if reading:
            self._add_reading(u, reading)
            return True
        return what != "person" or forward

    def _add_reading(self, u: Unit, reading: tuple[str, str]) -> None:
        key, value = reading
        priority = 1
        if key == "age":
            priority = {"young": 1, "little": 2}.get(u.word, 3)
        self.candidates.add(key, value, u.start, u.end, priority=priority)
