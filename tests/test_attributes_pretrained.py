"""The pretrained attribute network as the ``pretrained`` evidence source: its eight outputs mapped to ontology
distributions, the network run on crops, the source stored at ingest for footage and not for worlds, and the
reliability fit that scales each source's confidence on footage."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.index import evidence_table as store
from engine.kernel.ontology import ONTOLOGY
from engine.perception.attributes.pretrained import (
    OUTPUTS,
    AttributeNetwork,
    calibrate,
    check_platt,
    evidence_from_outputs,
    shipped_platt,
)
from engine.retrieval.evidence.agreement import key_agreement
from engine.retrieval.evidence.items import compute_evidence
from engine.retrieval.evidence.ranking import AttributeTerm, GalleryEvidence
from engine.retrieval.evidence.reliability import (
    check_table,
    fit_reliability,
    for_domain,
    log_likelihood,
    scale_confidence,
)

MAPPED = {"gender", "carrying_type", "hat_type", "top_length", "bottom_length", "bottom_type", "hairstyle", "top_type"}


def outputs(**values: float) -> list[float]:
    return [values.get(name, 0.5) for name in OUTPUTS]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(0.0, 1.0), min_size=len(OUTPUTS), max_size=len(OUTPUTS)))
def test_every_output_vector_gives_valid_distributions(values):
    evidence = evidence_from_outputs(values)
    assert set(evidence.probabilities) == MAPPED
    for key, dist in evidence.probabilities.items():
        assert list(dist) == list(ONTOLOGY.attributes[key])
        assert math.isclose(sum(dist.values()), 1.0, abs_tol=1e-9) and min(dist.values()) >= 0
        assert evidence.confidence[key] == 1.0
    assert evidence.to_dict()["info"]["network"] == "person-attributes-recognition-crossroad-0230"


def test_each_output_drives_its_keys():
    man, woman = evidence_from_outputs(outputs(is_male=0.9)), evidence_from_outputs(outputs(is_male=0.1))
    assert man.probabilities["gender"]["male"] == pytest.approx(0.9)
    assert woman.best("gender") == "female"
    carrying = evidence_from_outputs(outputs(has_backpack=0.95, has_bag=0.05)).probabilities["carrying_type"]
    assert max(carrying, key=carrying.get) == "backpack" and carrying["none"] == pytest.approx(0.05 * 0.95)
    bare = evidence_from_outputs(outputs(has_backpack=0.0, has_bag=0.0)).probabilities["carrying_type"]
    assert bare["none"] == pytest.approx(1.0)
    hat = evidence_from_outputs(outputs(has_hat=0.2)).probabilities["hat_type"]
    assert hat["none"] == pytest.approx(0.8) and sum(v for k, v in hat.items() if k != "none") == pytest.approx(0.2)
    shorts = evidence_from_outputs(outputs(has_longpants=0.1))
    assert shorts.probabilities["bottom_length"]["long"] == pytest.approx(0.1)
    assert shorts.probabilities["bottom_type"]["shorts"] + shorts.probabilities["bottom_type"]["skirt"] == \
        pytest.approx(0.9)
    long_hair = evidence_from_outputs(outputs(has_longhair=0.8)).probabilities["hairstyle"]
    assert long_hair["long"] + long_hair["ponytail"] + long_hair["bun"] == pytest.approx(0.8)
    jacket = evidence_from_outputs(outputs(has_coat_jacket=0.9)).probabilities["top_type"]
    assert jacket["jacket"] + jacket["coat"] == pytest.approx(0.9)
    sleeves = evidence_from_outputs(outputs(has_longsleeves=0.3)).probabilities["top_length"]
    assert sleeves["long_sleeve"] == pytest.approx(0.3)
    with pytest.raises(ValueError, match="8 finite probabilities"):
        evidence_from_outputs([0.5] * 7)
    with pytest.raises(ValueError, match="8 finite probabilities"):
        evidence_from_outputs([float("nan")] * 8)


def test_the_network_reads_crops_and_becomes_a_source():
    network = AttributeNetwork(threads=1, batch_size=2)
    rng = np.random.default_rng(0)
    crops = [rng.integers(0, 256, (h, 50, 3), dtype=np.uint8) for h in (120, 160, 200)]
    probabilities, points = network.read(crops)
    assert probabilities.shape == (3, 8) and points.shape == (3, 2, 2)
    assert ((probabilities >= 0) & (probabilities <= 1)).all()
    records = compute_evidence(crops, network=network, modalities=["rgb", "ir", "rgb"])
    assert "pretrained" in records[0] and "pretrained" not in records[1] and "pretrained" in records[2]
    calibrated = calibrate(probabilities)
    assert records[0]["pretrained"]["probabilities"]["gender"]["male"] == pytest.approx(calibrated[0, 0], abs=1e-4)
    assert records[0]["pretrained"]["info"]["raw"]["is_male"] == pytest.approx(probabilities[0, 0], abs=1e-4)
    assert "pretrained" not in compute_evidence(crops)[0]
    assert "pretrained" in store.SOURCES


def test_the_fitted_reliability_maximises_the_likelihood():
    rng = np.random.default_rng(0)
    size = 4
    # a source right half the time and sure of itself: r well below 1
    p_true = np.where(rng.random(400) < 0.5, 0.95, 0.01)
    conf = np.ones(400)
    r = fit_reliability(p_true, conf, size)
    grid = np.linspace(0, 1, 101)
    assert log_likelihood(r, p_true, conf, size)[0] >= log_likelihood(grid, p_true, conf, size).max() - 1e-9
    assert 0.2 < r < 0.9
    assert fit_reliability(np.full(50, 0.95), conf[:50], size) == 1.0  # always right: full trust
    assert fit_reliability(np.full(50, 0.01), conf[:50], size) == 0.0  # always wrong: none
    with pytest.raises(ValueError):
        fit_reliability(np.zeros(0), np.zeros(0), size)


def test_reliability_scales_a_source_in_the_ranking():
    attributes = (("gender", "male"),)
    confidence = np.ones((2, 1, 2), np.float32)
    scaled = scale_confidence(confidence, attributes, ("pixels", "pretrained"), {"pretrained": {"gender": 0.25}})
    assert scaled[:, 0, 0].tolist() == [1, 1] and scaled[:, 0, 1].tolist() == [0.25, 0.25]
    assert scale_confidence(confidence, attributes, ("pixels",), None) is confidence
    assert for_domain("world") == {}
    with pytest.raises(ValueError, match="unknown evidence source"):
        check_table({"version": 1, "reliability": {"eyes": {}}}, "f")
    with pytest.raises(ValueError, match=r"r in \[0, 1\]"):
        check_table({"version": 1, "reliability": {"pixels": {"gender": {"r": 2}}}}, "f")


def test_an_untrusted_source_says_nothing(tmp_path):
    table_rows = [{"pretrained": evidence_from_outputs(outputs(is_male=0.95))},
                  {"pretrained": evidence_from_outputs(outputs(is_male=0.05))}]
    store.append(tmp_path, ["a", "b"], table_rows)
    evidence = GalleryEvidence(store.EvidenceTable.read(tmp_path), ["a", "b"])
    rows = np.arange(2)
    trusted = AttributeTerm((("gender", "male"),), 1.0, ("pretrained",), evidence=evidence)
    agreement, _ = trusted.scores(rows)
    assert agreement[0] > 0.8 and agreement[1] < -0.8
    assert agreement[0] == pytest.approx(key_agreement(np.array([0.95]), np.array([1.0]), 2)[0], abs=1e-3)  # float16
    muted = AttributeTerm((("gender", "male"),), 1.0, ("pretrained",), evidence=evidence,
                          reliability={"pretrained": {"gender": 0.0}})
    assert np.allclose(muted.scores(rows)[0], 0.0)


def test_platt_scaling_moves_only_the_outputs_it_names():
    raw = np.array([[0.9, 0.5, 0.2, 0.1, 0.3, 0.7, 0.5, 0.5]])
    same = calibrate(raw, {})
    assert np.allclose(same, raw)
    moved = calibrate(raw, {"has_longsleeves": (1.0, 2.0)})
    assert moved[0, 4] == pytest.approx(1 / (1 + np.exp(-(np.log(0.3 / 0.7) + 2.0))))
    assert np.allclose(np.delete(moved, 4, axis=1), np.delete(raw, 4, axis=1))
    flat = calibrate(raw, {"is_male": (0.0, 0.0)})
    assert flat[0, 0] == pytest.approx(0.5)
    with pytest.raises(ValueError, match="finite a and b"):
        check_platt({"is_male": {"a": "x", "b": 0}}, "f")
    with pytest.raises(ValueError, match="finite a and b"):
        check_platt({"has_wings": {"a": 1, "b": 0}}, "f")


def test_the_shipped_calibration_is_well_formed():
    platt = shipped_platt()
    assert set(platt) <= set(OUTPUTS)
    reliability = for_domain("footage")
    assert set(reliability) <= set(store.SOURCES)
    assert all(0 <= r <= 1 for keys in reliability.values() for r in keys.values())
