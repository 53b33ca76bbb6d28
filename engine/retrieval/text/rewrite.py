"""A description restated in the training generator's own words: parse it (``engine.retrieval.text.parser``), then
describe exactly what was understood (``engine.retrieval.text.generator.describe`` with one fixed template draw).

A text tower trained on generated descriptions knows the generator's vocabulary and sentence frames; a
witness's words ("a teal zip jacket", "a bloke in a ruby anorak") lie partly outside them. The rewrite maps
every phrase the parser reads to words the tower was trained on; what the parser cannot read is lost, so the
query side blends the embeddings of the text and of its rewrite (``engine.retrieval.encoding.text_rewrite``;
docs/training-notes.md, "Queries restated in the generator's words").
"""

from __future__ import annotations

import random

from engine.kernel.ontology import DEPENDENT_COLORS
from engine.retrieval.text.generator import describe, stated_keys
from engine.retrieval.text.parser import parse

#: The template draw of every rewrite: one seed, so a description always has the same rewrite.
REWRITE_SEED = 0


def canonical_text(text: str) -> str | None:
    """The generator's description of the attributes ``text`` states; None when the parser reads none."""
    attributes = parse(text).attributes
    keys = [key for key in stated_keys(attributes)
            if key not in DEPENDENT_COLORS or attributes.get(DEPENDENT_COLORS[key], "none") != "none"]
    if not keys:
        return None
    return describe(attributes, keys, random.Random(REWRITE_SEED)) or None
