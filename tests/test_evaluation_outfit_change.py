"""The outfit-change measurement's parts by hand: the union galleries and the first-hit rate."""

import numpy as np
import pytest

from engine.lab.evaluation.outfit_change import first_hit_within, union_masks
from engine.lab.world.benchmarks import anytime_masks


def record(identity, outfit, camera, modality="rgb"):
    return {"identity": identity, "outfit": outfit, "camera": camera, "modality": modality}


def test_first_hit_within_counts_rows_whose_first_wanted_item_ranks_early():
    similarity = np.asarray([[0.9, 0.8, 0.7, 0.1], [0.2, 0.9, 0.95, 0.3], [0.5, 0.4, 0.3, 0.2]])
    valid = np.asarray([[True, True, True, True], [True, True, False, True], [True] * 4])
    wanted = np.asarray([[False, False, True, False], [True, False, False, False], [False] * 4])
    # row 0: the wanted item is third; row 1: item 2 is not valid, so the wanted item 0 is third too; row 2: none
    assert first_hit_within(similarity, valid, wanted, 2) == 0.0
    assert first_hit_within(similarity, valid, wanted, 3) == 1.0
    assert first_hit_within(similarity, valid, np.zeros_like(wanted), 3) is None


def test_union_masks_hold_both_kinds_of_sighting_and_mark_the_other_clothes():
    query = [record(1, 10, "c1")]  # person 1 in outfit 10
    gallery = [record(1, 10, "c2"), record(1, 11, "c3"), record(2, 20, "c2"), record(1, 11, "c1"),
               record(1, 10, "c2", "ir")]
    valid, positive, other = union_masks(query, gallery, "DT")
    assert valid.tolist() == [[True, True, True, False, False]]  # same camera and infrared left out
    assert positive.tolist() == [[True, True, False, False, False]]
    assert other.tolist() == [[False, True, False, False, False]]
    st_valid, _ = anytime_masks(query, gallery, "DT-ST")
    assert not st_valid[0, 1] and valid[0, 1]  # the same-clothes scenario alone drops the other outfit
    with pytest.raises(ValueError, match="unknown any-time scenario"):
        union_masks(query, gallery, "XX")
