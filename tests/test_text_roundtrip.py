"""Generator → parser round trip on 10,000 random descriptions, and the hand-written set
(tests/data/parser_handwritten.jsonl, goal ≥ 95 % exact)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from engine.kernel.ontology import ONTOLOGY
from engine.retrieval.text.generator import describe, random_key_subset
from engine.retrieval.text.parser import parse

HANDWRITTEN = Path(__file__).parent / "data" / "parser_handwritten.jsonl"


@pytest.mark.slow
def test_roundtrip_10000_random_descriptions():
    rng = random.Random(2024)
    failures = []
    n = 10_000
    for _ in range(n):
        ident = ONTOLOGY.counted({k: rng.choice(v) for k, v in ONTOLOGY.attributes.items()})
        keys = random_key_subset(ident, rng)
        text = describe(ident, keys, rng)
        expected = {k: ident[k] for k in keys}
        if parse(text).attributes != expected:
            failures.append(text)
    assert 1 - len(failures) / n >= 0.995, failures[:5]


@pytest.mark.skipif(not HANDWRITTEN.exists(), reason="hand-written set not present")
def test_handwritten_exact_match():
    rows = [json.loads(line) for line in HANDWRITTEN.read_text(encoding="utf-8").splitlines() if line.strip()]
    assert rows
    wrong = [r["text"] for r in rows if parse(r["text"]).attributes != r["attributes"]]
    assert 1 - len(wrong) / len(rows) >= 0.95, wrong[:10]
