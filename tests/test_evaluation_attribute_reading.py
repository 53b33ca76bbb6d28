"""Ranking by the model's attribute heads: the agreement score against hand-worked probabilities."""

import numpy as np
import pytest

from engine.evaluation.attribute_reading import agreement, key_columns
from engine.evaluation.oracle import matching_attributes
from engine.ontology import ATTRIBUTE_KEYS, ONTOLOGY
from engine.world.identities import BIOMETRIC_KEYS


def person(index: int) -> dict[str, str]:
    return {key: ONTOLOGY.attributes[key][(index * (k + 1)) % len(ONTOLOGY.attributes[key])]
            for k, key in enumerate(ATTRIBUTE_KEYS)}


def probabilities(rows: list[dict[str, str]]) -> np.ndarray:
    """One-hot rows of the given attributes, keys laid out in ontology order; a missing key is flat."""
    out = []
    for attributes in rows:
        parts = []
        for key in ATTRIBUTE_KEYS:
            values = ONTOLOGY.attributes[key]
            part = np.full(len(values), 1 / len(values))
            if key in attributes:
                part = np.eye(len(values))[values.index(attributes[key])]
            parts.append(part)
        out.append(np.concatenate(parts))
    return np.asarray(out, dtype=np.float32)


def test_key_columns_follow_the_ontology_layout():
    sizes = [len(ONTOLOGY.attributes[key]) for key in ATTRIBUTE_KEYS]
    assert key_columns(["gender"]).tolist() == list(range(sizes[0]))
    assert key_columns([ATTRIBUTE_KEYS[-1]]).tolist() == list(range(sum(sizes) - sizes[-1], sum(sizes)))
    assert len(key_columns(ATTRIBUTE_KEYS)) == sum(sizes)
    with pytest.raises(ValueError, match="unknown attribute keys"):
        key_columns(["gown"])


@pytest.mark.parametrize("keys", [ATTRIBUTE_KEYS, BIOMETRIC_KEYS, ("top_color", "gender")])
def test_sure_heads_score_the_oracles_share_of_agreeing_keys(keys):
    people = [person(i) for i in range(7)]
    reread = [{**people[i], "gender": people[(i + 1) % 7]["gender"]} for i in range(7)]  # one key misread
    expected = matching_attributes(people, reread, keys) / len(keys)
    assert np.allclose(agreement(probabilities(people), probabilities(reread), keys), expected)


def test_undecided_heads_score_one_over_the_number_of_values():
    flat = probabilities([{}])
    sure = probabilities([person(3)])
    assert agreement(flat, sure, ["gender"])[0, 0] == pytest.approx(1 / 2)
    assert agreement(flat, flat, ["top_color"])[0, 0] == pytest.approx(1 / len(ONTOLOGY.attributes["top_color"]))
    with pytest.raises(ValueError, match="at least one"):
        agreement(flat, sure, [])
