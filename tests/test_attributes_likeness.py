"""The attribute heads' likeness of two images: hand-worked probabilities and its properties."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.kernel.ontology import ATTRIBUTE_KEYS, BIOMETRIC_KEYS, ONTOLOGY
from engine.lab.evaluation.oracle import matching_attributes
from engine.retrieval.evidence.likeness import (
    EPSILON,
    consecutive_columns,
    key_columns,
    key_score,
    likeness,
    same_value,
)

SIZES = [len(ONTOLOGY.attributes[key]) for key in ATTRIBUTE_KEYS]


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
    assert key_columns(["gender"])[0].tolist() == list(range(SIZES[0]))
    assert key_columns([ATTRIBUTE_KEYS[-1]])[0].tolist() == list(range(sum(SIZES) - SIZES[-1], sum(SIZES)))
    assert sum(len(c) for c in key_columns(ATTRIBUTE_KEYS)) == sum(SIZES)
    assert [c.tolist() for c in consecutive_columns(["gender", "age"])] == [[0, 1], [2, 3, 4, 5]]
    with pytest.raises(ValueError, match="unknown attribute keys"):
        key_columns(["gown"])


@pytest.mark.parametrize("keys", [ATTRIBUTE_KEYS, BIOMETRIC_KEYS, ("top_color", "gender")])
def test_sure_heads_score_the_oracles_share_of_agreeing_keys(keys):
    people = [person(i) for i in range(7)]
    reread = [{**people[i], "gender": people[(i + 1) % 7]["gender"]} for i in range(7)]  # one key misread
    expected = matching_attributes(people, reread, keys) / len(keys)
    assert np.allclose(likeness(probabilities(people), probabilities(reread), keys), expected)


def test_undecided_heads_score_the_log_of_one_over_the_number_of_values():
    flat, sure = probabilities([{}]), probabilities([person(3)])
    half = (math.log(0.5 + EPSILON) - math.log(EPSILON)) / (math.log(1 + EPSILON) - math.log(EPSILON))
    assert likeness(flat, sure, ["gender"])[0, 0] == pytest.approx(half)
    assert key_score(np.asarray([0.0, 1.0])).tolist() == pytest.approx([0.0, 1.0])
    with pytest.raises(ValueError, match="at least one"):
        likeness(flat, sure, [])


def test_one_sure_disagreement_costs_more_than_several_unsure_keys():
    """The log-score: a different gender outweighs two keys the heads are unsure of (a plain mean would not)."""
    keys = ["gender", "age", "height"]
    base = person(1)
    wrong_gender = probabilities([{**base, "gender": "female" if base["gender"] == "male" else "male"}])
    unsure = probabilities([{"gender": base["gender"]}])  # age and height flat
    me = probabilities([base])
    assert likeness(me, unsure, keys)[0, 0] > likeness(me, wrong_gender, keys)[0, 0]
    plain = same_value(me, unsure, key_columns(keys)).mean(), same_value(me, wrong_gender, key_columns(keys)).mean()
    assert plain[0] < plain[1]


def test_rows_without_readings_give_nan():
    nan = np.full((1, sum(SIZES)), np.nan, dtype=np.float32)
    assert np.isnan(likeness(nan, probabilities([person(0)]), BIOMETRIC_KEYS)).all()


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=2 * sum(SIZES), max_size=2 * sum(SIZES)),
       st.lists(st.sampled_from(ATTRIBUTE_KEYS), min_size=1, max_size=6, unique=True))
def test_likeness_is_symmetric_and_bounded(values, keys):
    rows = np.asarray(values, dtype=np.float64).reshape(2, -1) + 1e-6
    forward, backward = likeness(rows[:1], rows[1:], keys)[0, 0], likeness(rows[1:], rows[:1], keys)[0, 0]
    assert forward == pytest.approx(backward)
    assert 0.0 <= forward <= 1.0 + 1e-12
