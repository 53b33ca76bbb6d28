"""The hand-written parser test set (``tests/data/parser_handwritten.jsonl``): its integrity, and the
parser's exact-match rate on it (docs/text-conventions.md is the labelling rule).

Each line is ``{"text": ..., "attributes": {canonical_key: canonical_value}}``; a line may state no
attribute (``{}``). Exact match means the parser's attribute dict equals the expected one.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from engine.kernel.ontology import DEPENDENT_COLORS, LEVELS, ONTOLOGY

DATA = Path(__file__).resolve().parent / "data" / "parser_handwritten.jsonl"
# Written after the parser was finished and never used to tune it: the honest generalisation check.
HELD_OUT = Path(__file__).resolve().parent / "data" / "parser_heldout.jsonl"
MIN_LINES = 300
MIN_EXACT_MATCH = 0.95
MIN_ULTRA_FINE = 20
MIN_EMPTY = 10


def _normalised(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def _load(path: Path = DATA) -> list[dict]:
    cases = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                case = json.loads(line)
            except json.JSONDecodeError as exc:
                raise AssertionError(f"{path.name}:{number}: not JSON ({exc})") from exc
            case["line"] = number
            cases.append(case)
    return cases


@pytest.fixture(scope="module")
def cases() -> list[dict]:
    return _load()


def test_enough_lines(cases):
    assert len(cases) >= MIN_LINES, f"{len(cases)} lines, need at least {MIN_LINES}"


def test_every_line_is_canonical(cases):
    problems = []
    for case in cases:
        where = f"line {case['line']}"
        if set(case) != {"text", "attributes", "line"}:
            problems.append(f"{where}: keys {sorted(set(case) - {'line'})}, want text and attributes")
            continue
        if not isinstance(case["text"], str) or not case["text"].strip():
            problems.append(f"{where}: empty or non-string text")
        attributes = case["attributes"]
        if not isinstance(attributes, dict):
            problems.append(f"{where}: attributes is not an object")
            continue
        try:
            ONTOLOGY.validate(attributes)
        except ValueError as exc:
            problems.append(f"{where}: {exc}")
        for color_key, item_key in DEPENDENT_COLORS.items():
            if color_key in attributes and attributes.get(item_key) in (None, "none"):
                problems.append(f"{where}: {color_key} without a {item_key} item")
    assert not problems, "\n".join(problems)


def test_no_duplicate_texts(cases):
    counts = Counter(_normalised(case["text"]) for case in cases)
    duplicates = sorted(text for text, n in counts.items() if n > 1)
    assert not duplicates, f"duplicate texts: {duplicates}"


def test_covers_every_level_value_and_empty_lines(cases):
    levels = Counter(ONTOLOGY.level_of(ONTOLOGY.count(case["attributes"])) for case in cases)
    assert all(levels[name] > 0 for name in LEVELS), f"level counts {dict(levels)}"
    assert levels["UF"] >= MIN_ULTRA_FINE, f"only {levels['UF']} ultra-fine lines"
    assert levels[None] >= MIN_EMPTY, f"only {levels[None]} lines without attributes"
    seen = {(key, value) for case in cases for key, value in case["attributes"].items()}
    missing = [
        f"{key}={value}" for key, values in ONTOLOGY.attributes.items() for value in values if (key, value) not in seen
    ]
    assert not missing, f"values never used: {missing}"


def test_parser_exact_match_rate(cases):
    _assert_exact_match_rate(cases)


def test_parser_exact_match_rate_on_held_out_lines():
    held_out = _load(HELD_OUT)
    assert len(held_out) >= 40
    for case in held_out:
        ONTOLOGY.validate(case["attributes"])
    _assert_exact_match_rate(held_out)


def _assert_exact_match_rate(cases: list[dict]) -> None:
    from engine.retrieval.text.parser import parse

    failures = []
    for case in cases:
        got = dict(parse(case["text"]).attributes)
        if got != case["attributes"]:
            failures.append((case["line"], case["text"], case["attributes"], got))
    rate = 1.0 - len(failures) / len(cases)
    report = "\n".join(
        f"line {line}: {text!r}\n    expected {expected}\n    got      {got}" for line, text, expected, got in failures
    )
    assert rate >= MIN_EXACT_MATCH, (
        f"exact-match rate {rate:.3f} < {MIN_EXACT_MATCH} ({len(failures)}/{len(cases)} failing)\n{report}"
    )
