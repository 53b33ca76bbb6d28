"""Benchmark splits from a hand-written world manifest, and the any-time filters on hand-made records."""

import json
import random
from pathlib import Path

import cv2
import numpy as np
import pytest

from engine.kernel.ontology import ATTRIBUTE_KEYS, LEVELS, ONTOLOGY
from engine.lab.world.benchmarks import (
    BENCHMARKS,
    MODES,
    RELEVANCE,
    SCENARIOS,
    anytime_masks,
    build_benchmarks,
    load_benchmark,
    relevance_matrix,
)

CHAIN_SIZES = (3, 7, 10, 13, 16)


def fake_chain(attributes: dict, rng: random.Random) -> list[dict]:
    """A stand-in for engine.retrieval.text.generator.query_chain: nested random key subsets of sizes 3, 7, 10, 13,
    16."""
    keys = sorted(attributes)
    rng.shuffle(keys)
    return [{"text": ", ".join(f"{k} {attributes[k]}" for k in keys[:n]), "keys": keys[:n],
             "level": ONTOLOGY.level_of(n)} for n in CHAIN_SIZES]


def _attributes(identity: int, outfit: int) -> dict:
    """Identities 0 and 1 differ only in hairstyle; outfit 1 changes the top and bottom colours."""
    base = identity if identity > 1 else 0
    attrs = {key: ONTOLOGY.attributes[key][(base + i) % len(ONTOLOGY.attributes[key])]
             for i, key in enumerate(ATTRIBUTE_KEYS)}
    attrs["hairstyle"] = ONTOLOGY.attributes["hairstyle"][identity]
    if outfit:
        attrs["top_color"], attrs["bottom_color"] = "pink", "beige"
    return attrs


# (modality, resolution, camera) per outfit; outfit 0 also gets a sketch
SHOTS = [("rgb", "HR", "1"), ("rgb", "HR", "2"), ("ir", "HR", "3"), ("ir", "HR", "4"), ("rgb", "mild", "1"),
         ("rgb", "ultra", "2")]


def write_world(root: Path, identities: int = 4) -> list[dict]:
    records = []
    for identity in range(identities):
        for outfit in (0, 1):
            shots = SHOTS + ([("sketch", "HR", "s")] if outfit == 0 else [])
            for n, (modality, resolution, camera) in enumerate(shots):
                if identity == 3 and modality == "ir":
                    continue  # identity 3 was never seen at night
                rel = f"images/{identity}/{outfit}_{n}.png"
                (root / rel).parent.mkdir(parents=True, exist_ok=True)
                assert cv2.imwrite(str(root / rel), np.zeros((8, 4, 3), np.uint8))
                records.append({"id": f"{identity}-{outfit}-{n}", "image": rel, "identity": identity,
                                "outfit": outfit, "attributes": _attributes(identity, outfit), "camera": camera,
                                "time": 10.0, "daytime": "day", "modality": modality, "resolution": resolution,
                                "view": "front", "descriptions": {lv: f"{lv} of {identity}/{outfit}" for lv in LEVELS}})
    (root / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return records


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    world = tmp_path_factory.mktemp("world")
    records = write_world(world)
    summary = build_benchmarks(world, seed=0, query_chain=fake_chain)
    return world, records, summary


def test_files_summary_and_loader(built):
    world, _, summary = built
    out = world / "benchmarks"
    assert summary["identities"] == 4 and summary["out_dir"] == str(out)
    for name in BENCHMARKS:
        data = load_benchmark(out, name)
        assert data["benchmark"] == name and data["version"] == 3 and data["identities"] == [0, 1, 2, 3]
        assert data["relevance"] == RELEVANCE[name]
        assert Path(data["world"]) == world.resolve()
    assert load_benchmark(out, "summary")["granularity"] == summary["granularity"]
    with pytest.raises(ValueError, match="unknown benchmark"):
        load_benchmark(out, "mars")
    with pytest.raises(FileNotFoundError, match="run `lineup world benchmarks"):
        load_benchmark(world, "anytime")


def test_granularity_queries_and_cross_identity_relevance(built):
    world, records, summary = built
    data = load_benchmark(world / "benchmarks", "granularity")
    gallery = data["gallery"]
    assert len(gallery) == sum(r["modality"] == "rgb" and r["resolution"] == "HR" for r in records) == 16
    assert summary["granularity"]["queries_per_level"] == {lv: 4 for lv in LEVELS}
    ids = {g["id"]: j for j, g in enumerate(gallery)}
    cross = 0
    for q in data["queries"]:
        assert len(q["attributes"]) == CHAIN_SIZES[LEVELS.index(q["level"])]
        stated = q["attributes"].items()
        expected = [j for j, g in enumerate(gallery) if all(g["attributes"][k] == v for k, v in stated)]
        assert q["relevant"] == expected and ids[q["source"]] in expected
        source_attrs = gallery[ids[q["source"]]]["attributes"]
        assert all(source_attrs[k] == v for k, v in q["attributes"].items())
        cross += len({gallery[j]["identity"] for j in q["relevant"]}) > 1
    assert cross > 0  # identities 0 and 1 share all but the hairstyle
    matrix = relevance_matrix(data)
    assert matrix.shape == (20, 16) and matrix.sum() == sum(len(q["relevant"]) for q in data["queries"])


def test_paraphrased_and_handwritten_texts(built):
    world, _, _ = built
    data = load_benchmark(world / "benchmarks", "granularity")
    paraphrases = [q["paraphrase"] for q in data["queries"]]
    reframed = [q["reframed"] for q in data["queries"]]
    assert all(isinstance(p, str) and p for p in paraphrases + reframed)
    assert not set(paraphrases + reframed) & {q["text"] for q in data["queries"]}
    assert len(set(paraphrases)) == len(set(reframed)) == len(paraphrases)
    for q in data["queries"]:  # plain words: every stated colour is named as the ontology names it
        for key in ("top_color", "bottom_color"):
            if key in q["attributes"]:
                assert q["attributes"][key] in q["reframed"] and q["attributes"][key] not in q["paraphrase"]
    gallery = data["gallery"]
    handwritten = data["handwritten"]
    assert len(handwritten) > 400 and any(q["relevant"] for q in handwritten)
    for q in handwritten:
        assert q["level"] == ONTOLOGY.level_of(len(q["attributes"]))
        assert q["relevant"] == [j for j, g in enumerate(gallery)
                                 if all(g["attributes"][k] == v for k, v in q["attributes"].items())]


def test_handwritten_queries_outside_the_ontology_are_named(tmp_path):
    write_world(tmp_path)
    with pytest.raises(ValueError, match=r"hand-written query 0 .*top_color='teal' is not in the ontology"):
        build_benchmarks(tmp_path, query_chain=fake_chain,
                         handwritten=[{"text": "a teal top", "attributes": {"top_color": "teal"}}])


def test_progressive_chains_are_nested(built):
    world, _, _ = built
    data = load_benchmark(world / "benchmarks", "granularity")
    assert len(data["chains"]) == 4
    for chain in data["chains"]:
        steps = chain["steps"]
        assert [s["level"] for s in steps] == list(LEVELS)
        for before, after in zip(steps, steps[1:], strict=False):
            assert set(before["attributes"].items()) < set(after["attributes"].items())
            assert set(after["relevant"]) <= set(before["relevant"])
    assert relevance_matrix(data, data["chains"][0]["steps"]).shape == (5, 16)


def test_modalities(built):
    world, _, summary = built
    data = load_benchmark(world / "benchmarks", "modalities")
    assert data["modes"] == list(MODES)
    assert summary["modalities"]["skipped_identities"] == {"no_ir": 1}
    assert [q["identity"] for q in data["queries"]] == [0, 1, 2]
    gallery = data["gallery"]
    for q in data["queries"]:
        assert q["sketch"]["modality"] == "sketch" and q["ir"]["modality"] == "ir"
        assert q["sketch"]["identity"] == q["ir"]["identity"] == q["identity"]
        # text, sketch and IR show one outfit: the only one with a sketch
        assert q["sketch"]["outfit"] == q["ir"]["outfit"] == q["outfit"] == 0 and q["ir"]["resolution"] == "HR"
        assert q["text"] == f"UF of {q['identity']}/0" and q["text_level"] == "UF"
        assert q["attributes"] == _attributes(q["identity"], 0)
        assert q["relevant"] == [j for j, g in enumerate(gallery) if (g["identity"], g["outfit"]) == (q["identity"], 0)]
        assert len(q["relevant"]) == 2
        assert (world / q["sketch"]["image"]).is_file()
    assert all(g["attributes"] == _attributes(g["identity"], g["outfit"]) for g in gallery)


def test_cross_resolution(built):
    world, records, summary = built
    data = load_benchmark(world / "benchmarks", "cross_resolution")
    # every level holds the same 16 RGB HR images (the world's own 8 mild and 8 ultra images are not used)
    assert summary["cross_resolution"]["gallery_per_resolution"] == {"HR": 16, "mild": 16, "mid": 16, "ultra": 16}
    gallery = data["gallery"]
    hr_ids = [r["id"] for r in records if r["modality"] == "rgb" and r["resolution"] == "HR"]
    sizes = {"HR": (8, 4), "mild": (4, 2), "mid": (2, 1), "ultra": (1, 1)}
    for level in sizes:
        items = [g for g in gallery if g["resolution"] == level]
        assert [g["source_id"] for g in items] == hr_ids
        for g in items:
            image = cv2.imread(str(Path(data["world"]) / g["image"]))
            assert image.shape[:2] == sizes[level]
            assert g["id"] == (g["source_id"] if level == "HR" else f"{g['source_id']}@{level}")
    assert len(data["queries"]) == 4
    for q in data["queries"]:
        positives = {(gallery[j]["identity"], gallery[j]["outfit"]) for j in q["relevant"]}
        assert positives == {(q["identity"], q["outfit"])}  # the query's outfit, never the other one
        assert len(q["relevant"]) == 2 * len(sizes)
    assert sorted(gallery[j]["source_id"] for j in data["mixed"]) == sorted(hr_ids)


def test_anytime_split_and_counts(built):
    world, records, _ = built
    data = load_benchmark(world / "benchmarks", "anytime")
    query_ids = {r["id"] for r in data["query"]}
    gallery_ids = {r["id"] for r in data["gallery"]}
    pool = {r["id"] for r in records if r["modality"] in ("rgb", "ir") and r["resolution"] == "HR"}
    assert not query_ids & gallery_ids and query_ids | gallery_ids == pool
    assert len(query_ids) == len(pool) // 2  # every (identity, modality, outfit) group holds two images
    by_group = {}
    for side in ("query", "gallery"):
        for r in data[side]:
            by_group.setdefault((r["identity"], r["modality"], r["outfit"]), {})[side] = r["camera"]
    assert all(g["query"] != g["gallery"] for g in by_group.values())
    attributes = {r["id"]: r["attributes"] for r in records}
    assert all(r["attributes"] == attributes[r["id"]] for side in ("query", "gallery") for r in data[side])
    for scenario in SCENARIOS:
        valid, positive = anytime_masks(data["query"], data["gallery"], scenario)
        assert data["counts"][scenario] == {"queries": int(positive.any(1).sum()), "valid_pairs": int(valid.sum()),
                                            "positive_pairs": int(positive.sum())}
        assert data["counts"][scenario]["queries"] > 0


def test_rebuild_is_identical_and_seed_matters(tmp_path):
    write_world(tmp_path)
    build_benchmarks(tmp_path, seed=3, query_chain=fake_chain)
    first = {n: (tmp_path / "benchmarks" / f"{n}.json").read_bytes() for n in BENCHMARKS}
    build_benchmarks(tmp_path, seed=3, query_chain=fake_chain)
    assert first == {n: (tmp_path / "benchmarks" / f"{n}.json").read_bytes() for n in BENCHMARKS}
    build_benchmarks(tmp_path, tmp_path / "other", seed=4, query_chain=fake_chain)
    assert json.loads((tmp_path / "other" / "granularity.json").read_text())["chains"] != json.loads(
        first["granularity"])["chains"]
    assert not list((tmp_path / "benchmarks").glob(".*.tmp"))


def test_max_identities_and_bad_chain(tmp_path):
    write_world(tmp_path)
    summary = build_benchmarks(tmp_path, tmp_path / "b", max_identities=2, query_chain=fake_chain)
    kept = load_benchmark(tmp_path / "b", "cross_resolution")["identities"]
    assert summary["identities"] == 2 and len(kept) == 2
    assert {g["identity"] for g in load_benchmark(tmp_path / "b", "granularity")["gallery"]} == set(kept)
    with pytest.raises(ValueError, match="max_identities"):
        build_benchmarks(tmp_path, tmp_path / "c", max_identities=0, query_chain=fake_chain)

    def wrong_keys(attributes, rng):
        return [{"text": "a person", "keys": ["mood"], "level": "UC"}]

    with pytest.raises(ValueError, match=r"keys \['mood'\] are not attributes"):
        build_benchmarks(tmp_path, tmp_path / "d", query_chain=wrong_keys)

    def not_nested(attributes, rng):
        return [{"text": "x", "keys": ["gender"], "level": "UC"}, {"text": "y", "keys": ["age"], "level": "UC"}]

    with pytest.raises(ValueError, match="do not contain the previous step"):
        build_benchmarks(tmp_path, tmp_path / "e", query_chain=not_nested)


def test_with_the_real_generator(tmp_path):
    from engine.retrieval.text import generator

    write_world(tmp_path, identities=2)
    summary = build_benchmarks(tmp_path, query_chain=generator.query_chain)
    data = load_benchmark(tmp_path / "benchmarks", "granularity")
    assert summary["granularity"]["queries"] == len(data["queries"]) > 0
    assert all(q["relevant"] for q in data["queries"])


# ------------------------------------------------------------------------------- any-time masks by hand

def _r(identity, camera, outfit, modality):
    return {"identity": identity, "camera": camera, "outfit": outfit, "modality": modality}


QUERY = [_r(1, "a", 1, "rgb"), _r(1, "a", 1, "ir"), _r(3, "a", 1, "rgb")]
GALLERY = [
    _r(1, "a", 1, "rgb"),  # g0 same person, same camera: always dropped
    _r(1, "b", 1, "rgb"),  # g1 same outfit
    _r(1, "b", 2, "rgb"),  # g2 changed outfit
    _r(2, "b", 1, "rgb"),  # g3 someone else
    _r(1, "b", 1, "ir"),   # g4 same outfit, IR
    _r(1, "c", 2, "ir"),   # g5 changed outfit, IR
    _r(2, "c", 1, "ir"),   # g6 someone else, IR
]
# scenario -> per query (valid gallery indices, positive gallery indices); query 2 (person 3) never has a positive
EXPECTED = {
    "DT-ST": [({1, 3}, {1}), (set(), set()), (set(), set())],
    "DT-LT": [({2, 3}, {2}), (set(), set()), (set(), set())],
    "NT-ST": [(set(), set()), ({4, 6}, {4}), (set(), set())],
    "NT-LT": [(set(), set()), ({5, 6}, {5}), (set(), set())],
    "AD-ST": [({4, 6}, {4}), ({1, 3}, {1}), (set(), set())],
    "AD-LT": [({5, 6}, {5}), ({2, 3}, {2}), (set(), set())],
}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_anytime_masks_rules(scenario):
    valid, positive = anytime_masks(QUERY, GALLERY, scenario)
    assert valid.shape == positive.shape == (3, 7) and valid.dtype == bool
    for row, (want_valid, want_positive) in enumerate(EXPECTED[scenario]):
        assert set(np.flatnonzero(valid[row]).tolist()) == want_valid
        assert set(np.flatnonzero(positive[row]).tolist()) == want_positive


def test_anytime_masks_errors():
    with pytest.raises(ValueError, match="unknown any-time scenario"):
        anytime_masks(QUERY, GALLERY, "DT-XX")
    with pytest.raises(ValueError, match="gallery record 0: missing field 'outfit'"):
        anytime_masks(QUERY, [{"identity": 1, "camera": "a", "modality": "rgb"}], "DT-ST")
    valid, positive = anytime_masks([], GALLERY, "AD-LT")
    assert valid.shape == (0, 7)
