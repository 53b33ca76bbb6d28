"""The attribute oracle of the query modes, on hand-made galleries whose answers are known."""

import numpy as np
import pytest

from engine.evaluation import EvaluationError
from engine.evaluation.oracle import COLOR_KEYS, VISIBLE, attribute_oracle, matching_attributes
from engine.ontology import ATTRIBUTE_KEYS, ONTOLOGY


def person(index: int) -> dict[str, str]:
    """A distinct attribute set per index (every attribute moves with it)."""
    return {key: ONTOLOGY.attributes[key][(index * (k + 1)) % len(ONTOLOGY.attributes[key])]
            for k, key in enumerate(ATTRIBUTE_KEYS)}


def other(values: tuple[str, ...], value: str) -> str:
    return values[(values.index(value) + 1) % len(values)]


def test_visible_attributes():
    assert set(VISIBLE["T"]) == set(ATTRIBUTE_KEYS)
    assert set(VISIBLE["S"]) == set(VISIBLE["IR"]) == set(ATTRIBUTE_KEYS) - set(COLOR_KEYS)
    assert set(COLOR_KEYS) == {"skin_color", "hair_color", "top_color", "bottom_color", "hat_color", "carrying_color"}


def test_matching_counts():
    a, b = person(1), person(1)
    b["top_color"] = other(ONTOLOGY.attributes["top_color"], a["top_color"])
    counts = matching_attributes([a], [a, b, {}], ATTRIBUTE_KEYS)
    assert counts.tolist() == [[18, 17, 0]]
    assert matching_attributes([a], [b], VISIBLE["S"]).tolist() == [[12]]


def test_colour_twins_fool_sketch_and_ir_but_not_text():
    """Each query's outfit has a twin that differs only in a colour and a decoy that differs in its top type:
    text always ranks the true outfit first, sketch and IR tie it with the twin (about half the R@1)."""
    queries, gallery = [], []
    for i in range(300):
        target = person(i)
        twin = {**target, "bottom_color": other(ONTOLOGY.attributes["bottom_color"], target["bottom_color"])}
        decoy = {**target, "top_type": other(ONTOLOGY.attributes["top_type"], target["top_type"])}
        queries.append({"attributes": target})
        gallery += [{"attributes": a} for a in (twin, target, decoy)]
    relevance = np.zeros((300, 900), dtype=bool)
    relevance[np.arange(300), 3 * np.arange(300) + 1] = True
    oracle = attribute_oracle({"queries": queries, "gallery": gallery}, relevance, seed=1)
    assert oracle["by"]["T"]["R@1"] == 1.0
    for mode in ("S", "IR"):
        assert 0.4 < oracle["by"][mode]["R@1"] < 0.6
        assert oracle["by"][mode]["R@5"] == 1.0
    assert oracle["visible"]["S"] == list(VISIBLE["S"]) and "seed 1" in oracle["tie_break"]
    again = attribute_oracle({"queries": queries, "gallery": gallery}, relevance, seed=1)
    assert again["by"] == oracle["by"]


def test_missing_attributes_are_named():
    with pytest.raises(EvaluationError, match="query 0 has no attributes; rebuild the benchmark"):
        attribute_oracle({"queries": [{}], "gallery": [{"attributes": person(0)}]}, np.ones((1, 1), dtype=bool))
