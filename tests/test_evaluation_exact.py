"""Exact figures with a test double of the model: a perfect encoder on modes and t2i, hand-worked
granularity cases (separate and progressive), and the errors for wrong inputs."""

import math

import pytest
import torch
from evaluation_data import LookupModel, one_hot, write_cuhk, write_image, write_world
from rich.console import Console

from engine.lab.evaluation import EvaluationError, evaluate, evaluate_benchmark, render, world_benchmark
from engine.lab.world.benchmarks import MODES, SCENARIOS
from engine.lab.world.identities import BIOMETRIC_KEYS


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("world")
    write_world(root)
    return root


def perfect_model(world, fusion="mean") -> LookupModel:
    """One-hot identity vectors: texts looked up from the world's benchmark files, images by their paint."""
    texts = {}
    for name in ("modalities", "cross_resolution"):
        for q in world_benchmark(world, name)[0]["queries"]:
            texts[q["text"]] = one_hot(q["identity"])
    return LookupModel(texts, lambda code, level, modality: one_hot(code), fusion=fusion)


@pytest.mark.parametrize("fusion", ["mean", "none"])
def test_perfect_encoder_is_perfect_on_every_mode(world, fusion):
    report = evaluate(perfect_model(world, fusion), world, "modes")
    assert list(report["by"]) == list(MODES)
    for block in [report["overall"], *report["by"].values()]:
        assert block["R@1"] == block["mAP"] == block["mINP"] == 1.0
        assert 0.0 <= block["mSD"] <= 1.0
    assert report["by"]["T"]["queries"] == 5 and report["overall"]["queries"] == 5 * len(MODES)
    assert report["fusion"] == fusion if fusion != "none" else report["fusion"].startswith("none")


def test_identity_encoder_on_outfit_level_cross_resolution_and_anytime(world):
    model = perfect_model(world)
    cross = evaluate(model, world, "cross-res")
    assert cross["relevance"].startswith("outfit")
    # the double tells identities apart but not outfits: per level every image of the person ties at the top,
    # outfit 0's two images first (gallery order); a query about outfit 1 finds its two at ranks 3 and 4
    queries = world_benchmark(world, "cross_resolution")[0]["queries"]
    first_outfit = sum(q["outfit"] == 0 for q in queries)
    assert 0 < first_outfit < len(queries)
    expected_map = (first_outfit + (len(queries) - first_outfit) * (1 / 3 + 2 / 4) / 2) / len(queries)
    for block in (*cross["by"].values(), cross["mixed"]):
        assert block["R@1"] == pytest.approx(first_outfit / len(queries))
        assert block["mAP"] == pytest.approx(expected_map)
    assert cross["gallery_per_resolution"] == {"HR": 20, "mild": 20, "mid": 20, "ultra": 20}
    anytime = evaluate(model, world, "anytime")
    assert anytime["by"]["DT-ST"]["R@1"] == anytime["by"]["AD-LT"]["mAP"] == 1.0
    assert anytime["by"]["any-time"] == {"score": 1.0, "R@1": 1.0, "mAP": 1.0}
    plain = anytime["plain_view"]  # the double's plain embedding tells identities apart too
    assert set(plain["by"]) == set(anytime["by"]) and plain["by"]["any-time"]["R@1"] == 1.0
    assert plain["overall"]["queries"] == anytime["overall"]["queries"]
    oracle = anytime["oracle"]
    assert set(oracle["by"]) == set(SCENARIOS) and "top_color" not in oracle["visible"]["DT-LT"]
    assert all(oracle["by"][s]["queries"] == anytime["by"][s]["queries"] for s in SCENARIOS)
    console = Console(record=True, width=120)
    render(anytime, console)
    text = console.export_text()
    assert "any-time" in text and "score 100.00" in text and "scenario tokens against" in text
    assert "ceiling of each scenario" in text


def test_anytime_ranks_by_the_attribute_heads_when_the_model_has_them(world):
    bench = world_benchmark(world, "anytime")[0]
    people = {item["identity"]: item["attributes"] for item in bench["gallery"]}
    biometrics = {code: {key: people[code][key] for key in BIOMETRIC_KEYS} for code in people}
    assert len({tuple(b.values()) for b in biometrics.values()}) == len(biometrics)  # the test's premise
    reader = LookupModel({}, lambda code, level, modality: one_hot(0), read_attributes=biometrics.__getitem__)
    calls = []
    report = evaluate_benchmark(reader, bench, "anytime", progress=lambda done, total: calls.append((done, total)))
    images = len(bench["query"]) + len(bench["gallery"])
    assert (images, images) in calls and calls[-1] == (6, 6)  # the images' pass, then the six scenarios
    heads = report["heads"]
    assert set(heads["by"]) == set(SCENARIOS) and heads["visible"] == report["oracle"]["visible"]
    assert all(heads["by"][s]["queries"] == report["by"][s]["queries"] for s in SCENARIOS)
    # the heads read each person's biometrics, which survive the clothing change; the embedding is one vector
    assert heads["by"]["DT-LT"]["R@1"] == heads["by"]["NT-LT"]["R@1"] == 1.0
    assert report["by"]["DT-LT"]["R@1"] < 1.0
    blind = LookupModel({}, lambda code, level, modality: one_hot(0), read_attributes=lambda code: biometrics[0])
    assert evaluate_benchmark(blind, bench, "anytime")["heads"]["by"]["DT-LT"]["R@1"] < 1.0
    # find similar across an outfit change: the heads' biometrics lift every sighting of the person to the top
    changed = report["outfit_change"]
    assert set(changed["by"]) == {"DT", "NT", "AD"} and changed["weight"] > 0
    for time_mode in ("DT", "NT"):
        mode, plain = changed["by"][time_mode]["outfit_change"], changed["by"][time_mode]["plain"]
        assert mode["R@1"] == mode["mAP"] == mode["other_outfit_R@10"] == 1.0
        assert plain["mAP"] < 1.0 and mode["queries"] == plain["queries"] > 0
    console = Console(record=True, width=160)
    render(report, console)
    text = console.export_text()
    assert "heads R@1" in text and "other clothes R@10" in text


def test_anytime_on_a_benchmark_without_attributes_says_it_has_no_oracle(world):
    model = LookupModel({}, lambda code, level, modality: one_hot(code))
    bench = world_benchmark(world, "anytime")[0]
    stripped = {**bench, "query": [{k: v for k, v in item.items() if k != "attributes"} for item in bench["query"]]}
    report = evaluate_benchmark(model, stripped, "anytime")
    assert "oracle" not in report and report["by"]["DT-ST"]["R@1"] == 1.0
    assert any("no attribute oracle" in note for note in report["notes"])
    assert "heads" not in report and any("no attribute-head ranking" in note for note in report["notes"])


def test_t2i_perfect_and_one_wrong_caption(tmp_path):
    model = write_cuhk(tmp_path)
    report = evaluate(model, f"cuhk-pedes:{tmp_path}", "t2i")
    assert report["queries"] == 12 and report["gallery"] == 6 and report["split"] == "test"
    assert report["overall"]["R@1"] == report["overall"]["mAP"] == report["overall"]["mINP"] == 1.0
    # the captions state no attribute: the footage ranking is the similarity, attributes alone tie-break by it
    assert report["level"] == "auto" and list(report["by"]) == ["footage ranking", "attributes only",
                                                                "checkpoint similarity"]
    assert report["by"]["footage ranking"] == report["by"]["checkpoint similarity"] == report["overall"]
    console = Console(record=True, width=120)
    render(report, console)
    text = console.export_text()
    assert "overall" in text and "100.00" in text and "auto" in text
    wrong = write_cuhk(tmp_path, wrong_caption="person 0 picture 0 caption 0")
    overall = evaluate(wrong, f"cuhk-pedes:{tmp_path}", "t2i", level="given")["overall"]
    # the wrong caption ranks the two identity-1 images first, then identity 0's at ranks 3 and 4
    assert overall["R@1"] == pytest.approx(11 / 12) and overall["R@5"] == 1.0
    assert overall["mAP"] == pytest.approx((11 + (1 / 3 + 2 / 4) / 2) / 12)
    assert overall["mINP"] == pytest.approx((11 + 2 / 4) / 12)


# ----------------------------------------------------------------------------- hand-worked granularity


def unit(*values) -> torch.Tensor:
    vector = torch.zeros(16)
    vector[: len(values)] = torch.tensor(values, dtype=torch.float32)
    return vector / vector.norm()


def gallery_bench(root, codes, **body):
    for code in codes:
        write_image(root / f"g{code}.png", code, (16, 8))
    gallery = [
        {
            "id": f"g{c}",
            "image": f"g{c}.png",
            "identity": c,
            "outfit": 0,
            "camera": "1",
            "modality": "rgb",
            "resolution": "HR",
            "attributes": {},
        }
        for c in codes
    ]
    return {
        "benchmark": "granularity",
        "world": str(root),
        "gallery": gallery,
        "queries": [],
        "chains": [],
        **body,
    }


def two_view_model(texts, logits=None) -> LookupModel:
    """Gallery items 0, 1, 2 are e0, e1, e2 in the UC view (and C, M, F) and e2, e1, e0 in the UF view."""

    def image_vector(code, level, modality):
        return one_hot(2 - code if level == "UF" else code)

    return LookupModel(texts, image_vector, level_logits=logits)


def sd(mapped, relevant) -> float:
    """SD of one ranked list (docs/methods.md §1.4), written out for the hand-worked case."""
    positives = [s for s, r in zip(mapped, relevant, strict=True) if r]
    negatives = [s for s, r in zip(mapped, relevant, strict=True) if not r]
    pnr = 1 - math.exp(-(sum(positives) / len(positives)) / (sum(negatives) / len(negatives)))
    ratios = [
        sum(s for s, r in zip(mapped[: j + 1], relevant, strict=False) if r) / sum(mapped[: j + 1])
        for j, r in enumerate(relevant)
        if r
    ]
    return pnr * sum(ratios) / len(ratios)


def test_separate_granularity_hand_worked(tmp_path):
    texts = {"q0": unit(0.8, 0.6), "q1": unit(0, 0, 1)}
    bench = gallery_bench(
        tmp_path,
        [0, 1, 2],
        queries=[
            {"level": "UC", "text": "q0", "relevant": [1, 2]},
            {"level": "UF", "text": "q1", "relevant": [0]},
        ],
    )
    logits = {"q0": one_hot(4, 5), "q1": one_hot(0, 5)}  # the classifier swaps the two levels
    model = two_view_model(texts, logits)
    given = evaluate_benchmark(model, bench, "mg-separate")
    # q0 in the UC view: sims (.8, .6, 0) → positives at ranks 2, 3; q1 in the UF view: item 0 first
    assert given["by"]["UC"] == pytest.approx(
        {
            "R@1": 0.0,
            "R@5": 1.0,
            "R@10": 1.0,
            "mAP": 7 / 12,
            "mINP": 2 / 3,
            "mSD": sd([0.9, 0.8, 0.5], [0, 1, 1]),
            "queries": 1,
        }
    )
    assert given["by"]["UF"] == pytest.approx(
        {
            "R@1": 1.0,
            "R@5": 1.0,
            "R@10": 1.0,
            "mAP": 1.0,
            "mINP": 1.0,
            "mSD": sd([1.0, 0.5, 0.5], [1, 0, 0]),
            "queries": 1,
        }
    )
    assert given["by"]["M"] == {
        "R@1": None,
        "R@5": None,
        "R@10": None,
        "mAP": None,
        "mINP": None,
        "mSD": None,
        "queries": 0,
    }
    overall = given["overall"]
    assert overall["R@1"] == 0.5 and overall["mAP"] == pytest.approx(19 / 24)
    assert overall["mINP"] == pytest.approx(5 / 6) and overall["queries"] == 2
    assert overall["mSD"] == pytest.approx((given["by"]["UC"]["mSD"] + given["by"]["UF"]["mSD"]) / 2)
    encoded = {}
    for _kind, level, _modality, n in model.calls:
        encoded[level] = encoded.get(level, 0) + n
    assert encoded == {lv: 3 for lv in ("UC", "C", "M", "F", "UF")}  # one all-levels pass per gallery image

    auto = evaluate_benchmark(model, bench, "mg-separate", level="auto")
    # q0 now searches the UF view (positives at ranks 1, 2), q1 the UC view (item 0 at rank 2)
    assert auto["by"]["UC"]["mAP"] == 1.0 and auto["by"]["UF"]["mAP"] == 0.5
    assert auto["overall"]["R@1"] == 0.5 and auto["overall"]["mAP"] == 0.75 and auto["level_accuracy"] == 0.0


def test_progressive_granularity_hand_worked(tmp_path):
    texts = {"s0": unit(4, 3, 2, 1), "s1": unit(1, 2, 0, 5)}
    bench = gallery_bench(
        tmp_path,
        [0, 1, 2, 3],
        chains=[
            {
                "identity": 3,
                "steps": [
                    {"level": "UC", "text": "s0", "relevant": [2, 3]},
                    {"level": "UF", "text": "s1", "relevant": [3]},
                ],
            }
        ],
    )
    model = LookupModel(texts, lambda code, level, modality: one_hot(code))
    report = evaluate_benchmark(model, bench, "mg-progressive", rho=0.5)
    # step 0 keeps items 0, 1 (drops 2, 3); step 1 ranks 1 before 0; final 1, 0, 2, 3: positive 3 at rank 4
    assert report["overall"]["R@1"] == 0.0 and report["overall"]["R@5"] == 1.0
    assert report["overall"]["mAP"] == 0.25 and report["overall"]["mINP"] == 0.25
    assert report["steps"] == [
        {"level": "UC", "candidates_before": 4.0, "candidates_after": 2.0, "positives_kept": 0.0},
        {"level": "UF", "candidates_before": 2.0, "candidates_after": 2.0, "positives_kept": 0.0},
    ]
    # stopped after step 0: ranking 0, 1, 2, 3 against step 0's positives {2, 3} → ranks 3 and 4
    assert report["by"]["UC"]["mAP"] == pytest.approx(5 / 12) and report["by"]["UC"]["mINP"] == 0.5
    assert report["by"]["UF"] == report["overall"] and report["rho"] == 0.5
    everything = evaluate_benchmark(model, bench, "mg-progressive", rho=1.0)
    assert everything["overall"]["R@1"] == 1.0  # ρ = 1 keeps every candidate: step 1 ranks item 3 first


def test_wrong_inputs_have_clear_errors(tmp_path, world):
    model = LookupModel({}, lambda *_: one_hot(0))
    with pytest.raises(EvaluationError, match="unknown protocol 'mg'"):
        evaluate(model, world, "mg")
    with pytest.raises(EvaluationError, match="runs on a real dataset"):
        evaluate(model, world, "t2i")
    write_cuhk(tmp_path)
    with pytest.raises(EvaluationError, match="runs on a world"):
        evaluate(model, f"cuhk-pedes:{tmp_path}", "modes")
    with pytest.raises(EvaluationError, match="rho must lie in"):
        evaluate(model, world, "mg-progressive", rho=0)
    with pytest.raises(EvaluationError, match="level must be one of"):
        evaluate(model, world, "mg-separate", level="fine")
    with pytest.raises(EvaluationError, match="no split 'val'"):
        evaluate(model, f"cuhk-pedes:{tmp_path}", "t2i", split="val")
    with pytest.raises(FileNotFoundError, match="world"):
        evaluate(model, tmp_path / "nowhere", "modes")
    no_scenarios = LookupModel({}, lambda *_: one_hot(0))
    no_scenarios.config = no_scenarios.config.with_overrides({"scenarios": {"enabled": False}})
    with pytest.raises(EvaluationError, match="scenarios.enabled is false"):
        evaluate(no_scenarios, world, "anytime")
