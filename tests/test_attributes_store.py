"""Gallery attribute evidence on disk (engine/index/evidence_table.py) and the agreement math
(engine/retrieval/evidence/agreement.py), checked by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from engine.index import evidence_table as store
from engine.index.errors import GalleryCorruptError, GalleryInputError
from engine.kernel.ontology import ONTOLOGY
from engine.perception.attributes.evidence import AttributeEvidence
from engine.retrieval.evidence import agreement as agree
from engine.retrieval.evidence.model_heads import evidence_from_probabilities

COLORS = ONTOLOGY.attributes["top_color"]


def colour(key: str, value: str, p: float, confidence: float) -> dict:
    """A distribution putting ``p`` on ``value`` and the rest evenly on the key's other values."""
    values = ONTOLOGY.attributes[key]
    rest = (1 - p) / (len(values) - 1)
    return {"probabilities": {v: (p if v == value else rest) for v in values}, "confidence": confidence}


def evidence(**keys) -> dict:
    out = {"version": 1, "probabilities": {}, "confidence": {}}
    for key, (value, p, c) in keys.items():
        entry = colour(key, value, p, c)
        out["probabilities"][key] = entry["probabilities"]
        out["confidence"][key] = entry["confidence"]
    return out


# ------------------------------------------------------------------------------------------------ math


def test_key_agreement_by_hand():
    assert agree.key_agreement(np.array(1.0), np.array(1.0), 12) == pytest.approx(1.0)
    assert agree.key_agreement(np.array(1 / 12), np.array(1.0), 12) == pytest.approx(0.0, abs=1e-12)
    assert agree.key_agreement(np.array(0.9), np.array(0.0), 12) == pytest.approx(0.0, abs=1e-12)
    assert agree.key_agreement(np.array(0.0), np.array(1.0), 12) == -1.0  # log 0 clipped
    # p = 0.6, c = 0.8: p̃ = 0.48 + 0.2/12, log(12 p̃)/log 12 = log(5.96)/log(12)
    assert agree.key_agreement(np.array(0.6), np.array(0.8), 12) == pytest.approx(math.log(5.96) / math.log(12))
    # a mismatch with half confidence is bounded by log(1 − c)/log|V|
    assert agree.key_agreement(np.array(0.0), np.array(0.5), 3) == pytest.approx(math.log(0.5) / math.log(3))
    assert np.isnan(agree.key_agreement(np.array(0.5), np.array(np.nan), 3))
    with pytest.raises(ValueError, match="two values"):
        agree.key_agreement(np.array(1.0), np.array(1.0), 1)


def test_agreement_is_the_mean_over_covered_keys_with_missing_evidence_neutral():
    per_key = np.array([[1.0, -0.5, 0.2], [np.nan, 0.5, 0.9], [np.nan, np.nan, np.nan]])
    covered = np.array([True, True, False])
    np.testing.assert_allclose(agree.agreement(per_key, covered), [0.25, 0.25, 0.0])
    np.testing.assert_allclose(agree.agreement(per_key, np.zeros(3, bool)), [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="per_key"):
        agree.agreement(per_key, np.ones(2, bool))


def test_pooled_sources_requirement_and_status():
    p = np.array([[0.2, np.nan], [0.2, 0.6], [0.9, 0.3], [0.4, 0.8], [np.nan, np.nan]])
    c = np.array([[0.5, np.nan], [1.0, 0.5], [0.0, 0.0], [0.8, 0.0], [np.nan, np.nan]])
    pooled_p, pooled_c = agree.pool_sources(p, c)
    # confidence-weighted: (1·0.2 + 0.5·0.6)/1.5; all-zero confidence → plain mean; a c = 0 source is ignored
    np.testing.assert_allclose(pooled_p, [0.2, 0.5 / 1.5, 0.6, 0.4, np.nan])
    np.testing.assert_allclose(pooled_c, [0.5, 1.0, 0.0, 0.8, np.nan])
    tempered = agree.tempered_probability(np.array([0.0, 0.0, 0.9]), np.array([1.0, 0.5, 1.0]), 12)
    np.testing.assert_allclose(tempered, [0.0, 0.5 / 12, 0.9])
    # below REQUIRE_RATIO/|V| = 0.5/12 fails; exactly at it passes; NaN (no evidence) passes
    assert agree.fails_requirement(np.append(tempered, np.nan), 12).tolist() == [True, False, False, False]
    assert [agree.status(v) for v in (0.5, -0.3, 0.05, None, math.nan)] == \
        ["match", "mismatch", "unsure", "no evidence", "no evidence"]


def test_model_confidence_is_one_minus_normalised_entropy():
    flat = evidence_from_probabilities({"gender": np.array([0.5, 0.5]), "top_length": np.array([1.0, 0.0, 0.0])})
    assert flat.confidence == {"gender": pytest.approx(0.0), "top_length": pytest.approx(1.0)}
    skew = evidence_from_probabilities({"gender": np.array([0.9, 0.1])})
    h = -(0.9 * math.log(0.9) + 0.1 * math.log(0.1))
    assert skew.confidence["gender"] == pytest.approx(1 - h / math.log(2))
    assert skew.probabilities["gender"] == {"male": pytest.approx(0.9), "female": pytest.approx(0.1)}
    AttributeEvidence.from_dict(skew.to_dict())  # valid stored form


# ----------------------------------------------------------------------------------------------- store


def test_round_trip_gather_and_record(tmp_path):
    records = [{"pixels": evidence(top_color=("red", 0.7, 0.9))},
               {"pixels": evidence(top_color=("green", 0.8, 0.5), bottom_length=("long", 0.9, 0.8)),
                "model": evidence(gender=("female", 0.95, 0.7))},
               {}]
    assert store.append(tmp_path, ["a", "b", "c"], records) == 3
    table = store.EvidenceTable.read(tmp_path)
    assert len(table) == 3 and table.ids == ["a", "b", "c"]
    assert table.covered("pixels") == {"top_color", "bottom_length"} and table.covered("model") == {"gender"}
    rows = table.row_map(["c", "zz", "a", "b"])
    assert rows.tolist() == [2, -1, 0, 1]
    red, conf = store.COLUMN_OF[("top_color", "red")], store.CONFIDENCE_COLUMN["top_color"]
    block = table.gather("pixels", rows, [red, conf])
    assert np.isnan(block[:2]).all()  # c said nothing, zz has no row
    np.testing.assert_allclose(block[2], [0.7, 0.9], atol=1e-3)
    np.testing.assert_allclose(block[3], [0.2 / 11, 0.5], atol=1e-3)
    back = table.record(1)
    assert set(back) == {"pixels", "model"}
    assert back["pixels"].best("top_color") == "green" and back["model"].best("gender") == "female"
    assert back["pixels"].confidence["bottom_length"] == pytest.approx(0.8, abs=1e-3)
    assert sum(back["pixels"].probabilities["top_color"].values()) == pytest.approx(1.0)
    assert table.record(2) == {}


def test_append_skips_known_ids_and_backfills_a_new_source(tmp_path):
    store.append(tmp_path, ["a"], [{"pixels": evidence(top_color=("red", 0.9, 1.0))}])
    added = store.append(tmp_path, ["a", "b"], [{"pixels": evidence(top_color=("blue", 0.9, 1.0))},
                                               {"model": evidence(gender=("male", 0.9, 0.6))}],
                         model_fingerprint="f1")
    assert added == 1
    table = store.EvidenceTable.read(tmp_path)
    assert table.record(0)["pixels"].best("top_color") == "red"  # kept as it was
    assert "model" not in table.record(0) and table.record(1)["model"].best("gender") == "male"
    assert table.sources["model"]["fingerprint"] == "f1"
    with pytest.raises(GalleryInputError, match="another|comes from"):
        store.append(tmp_path, ["c"], [{"model": evidence(gender=("male", 0.9, 0.6))}], model_fingerprint="f2")


def test_an_interrupted_append_is_invisible_and_trimmed(tmp_path):
    store.append(tmp_path, ["a"], [{"pixels": evidence(top_color=("red", 0.9, 1.0))}])
    folder = store.folder_of(tmp_path)
    ids_file = folder / "ids-1.txt"
    with open(ids_file, "ab") as fh:  # a killed writer's tail: bytes and rows past the commit point
        fh.write(b"ghost\n")
    with open(folder / "pixels-1.f16.npy", "ab") as fh:
        fh.write(np.zeros(store.WIDTH, np.float16).tobytes())
    table = store.EvidenceTable.read(tmp_path)
    assert table.ids == ["a"]
    store.append(tmp_path, ["b"], [{"pixels": evidence(top_color=("green", 0.9, 1.0))}])
    table = store.EvidenceTable.read(tmp_path)
    assert table.ids == ["a", "b"] and table.record(1)["pixels"].best("top_color") == "green"
    assert ids_file.read_text() == "a\nb\n"


def test_rewrite_switches_generation_and_removes_the_old_files(tmp_path):
    store.append(tmp_path, ["a", "b"], [{"pixels": evidence(top_color=("red", 0.9, 1.0))}] * 2)
    store.rewrite(tmp_path, ["b"], [{"model": evidence(gender=("male", 0.9, 0.6))}], model_fingerprint="f")
    folder = store.folder_of(tmp_path)
    assert sorted(p.name for p in folder.iterdir()) == ["evidence.json", "ids-2.txt", "model-2.f16.npy"]
    table = store.EvidenceTable.read(tmp_path)
    assert table.ids == ["b"] and list(table.sources) == ["model"]
    with pytest.raises(RuntimeError), store.rewriting(tmp_path) as writer:  # a failed rewrite changes nothing
        writer.add(["x"], [{"pixels": evidence(top_color=("red", 0.9, 1.0))}])
        raise RuntimeError("stop")
    assert sorted(p.name for p in folder.iterdir()) == ["evidence.json", "ids-2.txt", "model-2.f16.npy"]
    assert store.EvidenceTable.read(tmp_path).ids == ["b"]


def test_bad_input_and_corrupt_files_are_named(tmp_path):
    good = {"pixels": evidence(top_color=("red", 0.9, 1.0))}
    with pytest.raises(GalleryInputError, match="one record per item"):
        store.append(tmp_path, ["a", "b"], [good])
    with pytest.raises(GalleryInputError, match="distinct"):
        store.append(tmp_path, ["a", "a"], [good, good])
    with pytest.raises(GalleryInputError, match="source must be one of"):
        store.append(tmp_path, ["a"], [{"eyes": good["pixels"]}])
    broken = evidence(top_color=("red", 0.9, 1.0))
    broken["probabilities"]["top_color"]["red"] = 5.0
    with pytest.raises(GalleryInputError, match="sums to"):
        store.append(tmp_path, ["a"], [{"pixels": broken}])
    with pytest.raises(GalleryInputError, match="single-line"):
        store.append(tmp_path, ["a\nb"], [good])
    assert store.EvidenceTable.read(tmp_path) is None
    store.append(tmp_path, ["a"], [good])
    meta_path = store.folder_of(tmp_path) / store.META_FILE
    meta = json.loads(meta_path.read_text())
    meta["columns"] = meta["columns"][:-1]
    meta_path.write_text(json.dumps(meta))
    with pytest.raises(GalleryCorruptError, match="another ontology"):
        store.EvidenceTable.read(tmp_path)
    meta_path.write_text("{")
    with pytest.raises(GalleryCorruptError, match="unreadable"):
        store.EvidenceTable.read(tmp_path)


def test_successive_appends_do_not_reread_the_table(tmp_path, monkeypatch):
    good = {"pixels": evidence(top_color=("red", 0.9, 1.0))}
    store.append(tmp_path, ["a"], [good])
    reads = []
    original = store.EvidenceTable.read
    monkeypatch.setattr(store.EvidenceTable, "read",
                        classmethod(lambda cls, root: reads.append(root) or original(root)))
    store.append(tmp_path, ["b"], [good])
    store.append(tmp_path, ["c", "b"], [good, good])
    assert store.current_table(store.folder_of(tmp_path)).ids == ["a", "b", "c"]
    assert len(reads) <= 1  # at most the first append after the initial write
    reads.clear()
    store.rewrite(tmp_path, ["z"], [good])  # the table changed behind the cached copy
    store.append(tmp_path, ["y"], [good])
    assert len(reads) == 1 and original(tmp_path).ids == ["z", "y"]
