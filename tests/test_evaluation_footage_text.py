"""t2i on real data ranks as a footage search does: the parsed caption's agreement with every evidence source
(the pretrained attribute network included), weighted against the checkpoint's similarity."""

from __future__ import annotations

import numpy as np

from engine.index import evidence_table as store
from engine.lab.evaluation.footage_text import ATTRIBUTES_ONLY, FOOTAGE_RANKING, SIMILARITY_ONLY, rank_captions
from engine.perception.attributes.pretrained import OUTPUTS, evidence_from_outputs
from engine.retrieval.evidence.ranking import GalleryEvidence


def network(**values: float):
    return {"pretrained": evidence_from_outputs([values.get(name, 0.5) for name in OUTPUTS])}


def test_the_stated_attributes_rank_the_person_whose_evidence_agrees(tmp_path):
    records = [network(is_male=0.05, has_backpack=0.02, has_bag=0.02),   # a woman, nothing carried
               network(is_male=0.97, has_backpack=0.95, has_bag=0.02),   # a man with a backpack
               network(is_male=0.95, has_backpack=0.03, has_bag=0.03)]   # a man, nothing carried
    store.append(tmp_path, ["a", "b", "c"], records)
    evidence = GalleryEvidence(store.EvidenceTable.read(tmp_path), ["a", "b", "c"])
    similarity = np.array([[0.30, 0.20, 0.25], [0.30, 0.20, 0.25]])  # the checkpoint prefers the woman
    scores = rank_captions(["a man carrying a backpack", "qwerty"], similarity, evidence, weight=1.0)
    assert set(scores) == {FOOTAGE_RANKING, ATTRIBUTES_ONLY, SIMILARITY_ONLY}
    assert np.argsort(-scores[FOOTAGE_RANKING][0]).tolist() == [1, 2, 0]
    assert np.argsort(-scores[ATTRIBUTES_ONLY][0]).tolist() == [1, 2, 0]
    assert np.argsort(-scores[SIMILARITY_ONLY][0]).tolist() == [0, 2, 1]
    # a caption stating nothing the parser knows falls back to similarity in every ranking
    assert np.argsort(-scores[FOOTAGE_RANKING][1]).tolist() == [0, 2, 1]
    # with w = 0 the footage ranking is the similarity
    flat = rank_captions(["a man carrying a backpack"], similarity[:1], evidence, weight=0.0)
    assert np.allclose(flat[FOOTAGE_RANKING], similarity[:1])
