"""The parser's clause and negation steps (``engine.retrieval.text.parser``), functions of the units they read:
``structure`` finds the entities, the subjects of "is/are/was" and of a colon section and the antecedents of
"that/which/who"; ``negate`` reads "no hat", "without a bag", "not carrying anything", "neither a hat nor a
bag" into the units' entities and the candidates."""

from __future__ import annotations

from engine.retrieval.text import lexicon as lx
from engine.retrieval.text.candidates import Candidates
from engine.retrieval.text.units import CONTEXT_KINDS, Entity, Unit, garment_hood


def structure(units: list[Unit]) -> list[Entity]:
    """Entities, subjects of predicates, antecedents, colon sections (one left-to-right pass over ``units``,
    which it annotates); returns the entities in the order of their nouns."""
    entities: list[Entity] = []
    last_entity: Entity | None = None
    sent_entity: Entity | None = None
    last_noun = None             # nearest noun ref in the sentence
    last_person = None
    clause_first = None
    clause_pure = True
    prev_clause_first = None     # first noun of the previous clause, if joined by "and" and pure
    prev_firsts: list = []       # first nouns of earlier clauses of this sentence (bounded)
    colon_subject = None
    for i, u in enumerate(units):
        kind = u.kind
        if kind in CONTEXT_KINDS:
            u.last_entity = last_entity
            u.sent_entity = sent_entity
            u.colon_subject = colon_subject
        ref = None
        if kind == "item":
            slot, value, weak, extras = u.data
            if slot == "hat" and value == "hood" and garment_hood(units, i):
                slot, value = "sink", None
            ent = Entity(slot, value, weak, extras, u.start, u.end, i)
            u.entity = ent
            entities.append(ent)
            last_entity = sent_entity = ent
            ref = ("entity", ent)
        elif kind == "body" and u.word not in lx.SUFFIX_NOUNS:
            ref = ("body", u.data)
        elif kind == "hairstyle":
            ref = ("body", "hair")
        elif kind == "person" and not u.possessive:
            ref = ("person",)
        elif kind == "ppron":
            ref = ("they",) if u.word in ("they", "them") else ("person",)
        elif kind == "tpron" or kind == "one":
            ref = ("it",)
        if ref is not None:
            last_noun = ref
            if ref[0] == "person":
                last_person = ref
            if clause_first is None:
                clause_first = ref
            continue
        if kind == "punct":
            word = u.word
            if word == ".":
                sent_entity = None
                last_noun = last_person = clause_first = prev_clause_first = None
                colon_subject = None
                prev_firsts = []
                clause_pure = True
                continue
            if word == ":":
                subject = clause_first or (prev_firsts[-1] if prev_firsts else None)
                u.subjects = [subject] if subject else []
                colon_subject = subject
            elif word == "(":
                u.subjects = [last_noun] if last_noun else []
            if clause_first is not None:
                prev_firsts = (prev_firsts + [clause_first])[-4:]
            clause_first = None
            prev_clause_first = None
            clause_pure = True
            continue
        if kind == "clause":
            if clause_first is not None:
                prev_firsts = (prev_firsts + [clause_first])[-4:]
            prev_clause_first = clause_first if (u.word == "and" and clause_pure) else None
            clause_first = None
            clause_pure = True
            continue
        if kind == "rel":
            u.near = last_person if u.word in ("who", "whom") and last_person else last_noun
            continue
        if kind == "be":
            subjects = _subject(units, i, clause_first, prev_firsts, prev_clause_first)
            u.subjects = subjects
            clause_pure = False
            continue
        if kind in ("wear", "carry", "prep"):
            clause_pure = False
            if kind == "prep" and u.word == "in" and i > 0 and units[i - 1].kind == "item":
                u.near = ("entity", units[i - 1].entity)
    return entities


def _subject(units: list[Unit], i: int, clause_first, prev_firsts: list, prev_clause_first) -> list:
    j = i - 1
    while j >= 0 and units[j].kind in ("adv", "neg"):
        j -= 1
    if j >= 0 and units[j].kind == "rel":
        return [units[j].near] if units[j].near else []
    if clause_first is not None:
        subjects = [clause_first]
        if prev_clause_first is not None and prev_clause_first[0] == "entity" and clause_first[0] == "entity":
            subjects.append(prev_clause_first)
        return subjects
    for ref in reversed(prev_firsts):
        if ref is not None:
            return [ref]
    return []


def negate(units: list[Unit], candidates: Candidates) -> None:
    """Mark negated items and adjectives in ``units``; "carrying nothing" style phrases add to ``candidates``
    (conventions: negation)."""
    for i, u in enumerate(units):
        if u.kind == "neg":
            if u.word == "none":
                _negate_none(units, i)
                continue
            _negate_from(units, i, candidates)
        elif u.kind == "nothing":
            _nothing(units, i, candidates, carry_seen=i > 0 and units[i - 1].kind == "carry", cue_start=u.start)


def _negate_none(units: list[Unit], i: int) -> None:
    j = i - 1
    if j >= 1 and (units[j].kind == "be" or units[j].word == ":") and units[j - 1].kind == "item":
        _negate_entity(units[j - 1], units[j - 1].start)


def _negate_entity(unit: Unit, cue_start: int) -> None:
    ent = unit.entity
    if ent is not None and not ent.negated:
        ent.negated = True
        ent.neg_start = min(cue_start, ent.start)


def _negate_from(units: list[Unit], i: int, candidates: Candidates) -> None:
    n = len(units)
    cue_start = units[i].start
    carry_seen = False
    unknown = 2
    j = i + 1
    limit = min(n, i + 9)
    while j < limit:
        v = units[j]
        k = v.kind
        if k in ("det", "poss", "adv", "wear", "be"):
            j += 1
            continue
        if k == "carry":
            carry_seen = True
            j += 1
            continue
        if k in ("adj", "color", "haircolor", "material", "mod", "colored"):
            if k == "adj":
                v.negated = True
            j += 1
            continue
        if k == "unk" and unknown > 0:
            unknown -= 1
            j += 1
            continue
        if k == "item":
            _negate_entity(v, cue_start)
            _negate_chain(units, j)
            return
        if k == "body" and v.data == "hair":
            candidates.add("hairstyle", "bald", cue_start, v.end)
            return
        if k == "body" and v.data == "sleeve":
            candidates.add("top_length", "sleeveless", cue_start, v.end)
            return
        if k == "nothing":
            _nothing(units, j, candidates, carry_seen, cue_start)
            return
        return


def _negate_chain(units: list[Unit], j: int) -> None:
    """Continue a negation over "or"/"nor"/"and" lists: "no hat or bag", "neither a hat nor a bag"."""
    n = len(units)
    count = 0
    while count < 6:
        k = j + 1
        if k >= n or not (units[k].kind in ("clause", "neg") and units[k].word in ("or", "nor", "and")):
            return
        conj = units[k].word
        k += 1
        while k < n and units[k].kind in ("det", "adj", "color", "material", "mod"):
            if conj == "and" and units[k].kind == "det":
                return
            k += 1
        if k >= n or units[k].kind != "item":
            return
        _negate_entity(units[k], units[k].start)
        j = k
        count += 1


def _nothing(units: list[Unit], i: int, candidates: Candidates, carry_seen: bool, cue_start: int) -> None:
    """"carrying nothing", "nothing in his hands" → no carried item; "nothing on his head" → no hat."""
    n = len(units)
    u = units[i]
    j = i + 1
    if j < n and units[j].kind == "prep" and units[j].word in ("on", "in"):
        place = units[j].word
        k = j + 1
        while k < n and units[k].kind in ("det", "poss"):
            k += 1
        if k < n:
            w = units[k].word
            if place == "on" and w == "head":
                candidates.add("hat_type", "none", cue_start, units[k].end)
                return
            if place == "in" and w in ("hand", "hands"):
                candidates.add("carrying_type", "none", cue_start, units[k].end)
                return
    if carry_seen or (i > 0 and units[i - 1].kind == "carry"):
        candidates.add("carrying_type", "none", cue_start, u.end)
