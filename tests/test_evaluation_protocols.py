"""Every protocol with a tiny randomly initialised model: report schema, metric ranges, benchmarks built on
demand and rebuilt when stale, and the ``lineup eval`` command (JSON, table, missing checkpoint)."""

import json

import pytest
from evaluation_data import write_cuhk, write_world
from typer.testing import CliRunner

from engine.kernel.ontology import LEVELS
from engine.lab.evaluation import DATASET_PROTOCOLS, PROTOCOLS, evaluate
from engine.lab.world.benchmarks import MODES, SCENARIOS
from engine.retrieval.metrics import SUMMARY_KEYS
from engine.retrieval.models import create, discovery, save
from lineup.cli import app

TINY = {
    "name": "tiny-eval",
    "embed_dim": 32,
    "vision": {
        "image_size": [32, 16],
        "stem": "conv",
        "patch_size": 8,
        "stem_channels": [8, 8, 8],
        "width": 32,
        "layers": 1,
        "heads": 2,
    },
    "text": {"context_length": 48, "width": 32, "layers": 1, "heads": 2},
    "granularity": {"enabled": True, "expert_widths": [8, 8, 16, 16, 32]},
    "gcr": {"enabled": True},
    "adapters": {"enabled": True, "num_experts": 2, "bottleneck": 8, "top_k": 1},
    "fusion": {"kind": "cmqf", "heads": 2},
    "resolution": {"embedding": True},
    "scenarios": {"enabled": True, "moae": True},
}
BY_KEYS = {
    "mg-separate": list(LEVELS),
    "mg-progressive": list(LEVELS),
    "modes": list(MODES),
    "cross-res": ["HR", "mild", "mid", "ultra"],
    "anytime": [*SCENARIOS, "any-time"],
    "t2i": ["footage ranking", "attributes only", "checkpoint similarity"],
}


@pytest.fixture(scope="module")
def model():
    return create(TINY, device="cpu")


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("world")
    write_world(root, identities=4)
    return root


def check_block(block):
    assert set(block) == {*SUMMARY_KEYS, "queries"}
    assert block["queries"] > 0
    for key in SUMMARY_KEYS:
        assert 0.0 <= block[key] <= 1.0, (key, block[key])


def check_report(report, protocol):
    assert report["protocol"] == protocol
    json.dumps(report)  # serialisable as it is
    check_block(report["overall"])
    assert list(report["by"]) == BY_KEYS[protocol]
    for key, block in report["by"].items():
        if key == "any-time":
            assert set(block) == {"score", "R@1", "mAP"} and 0.0 <= block["score"] <= 1.0
        else:
            check_block(block)
    assert isinstance(report["notes"], list)


@pytest.mark.parametrize("protocol", [p for p in PROTOCOLS if p not in DATASET_PROTOCOLS])
def test_world_protocol_reports(model, world, protocol):
    report = evaluate(model, world, protocol, batch_size=16)
    check_report(report, protocol)
    assert report["source"]["world"] == str(world.resolve())
    if protocol == "mg-progressive":
        counts = [(s["candidates_before"], s["candidates_after"]) for s in report["steps"]]
        assert counts == [(16, 8), (8, 4), (4, 2), (2, 1), (1, 1)]  # 4 identities × 2 outfits × 2 RGB HR
    if protocol == "modes":
        assert report["fusion"] == "cmqf" and report["relevance"].startswith("outfit")
        assert set(report["oracle"]["by"]) == {"T", "S", "IR"}
        for block in report["oracle"]["by"].values():
            check_block(block)
    if protocol == "cross-res":
        assert report["gallery_per_resolution"] == {"HR": 16, "mild": 16, "mid": 16, "ultra": 16}
        assert report["relevance"].startswith("outfit")
        check_block(report["mixed"])


def test_level_auto_uses_the_classifier(model, world):
    report = evaluate(model, world, "mg-separate", level="auto")
    assert report["level"] == "auto" and 0.0 <= report["level_accuracy"] <= 1.0
    check_report(report, "mg-separate")


def test_t2i_report_and_training_mode_restored(model, tmp_path):
    write_cuhk(tmp_path)
    model.train()
    try:
        report = evaluate(model, f"cuhk-pedes:{tmp_path}", "t2i")
        assert model.training  # the trainer's validation gets its model back in training mode
    finally:
        model.eval()
    check_report(report, "t2i")
    assert report["queries"] == 12 and report["gallery"] == 6 and sum(report["levels_used"].values()) == 12
    assert evaluate(model, f"cuhk-pedes:{tmp_path}", "t2i")["overall"] == report["overall"]  # eval mode ran


def test_benchmarks_are_built_on_demand_and_rebuilt_when_stale(model, tmp_path):
    write_world(tmp_path, identities=2)
    first = evaluate(model, tmp_path, "cross-res")
    assert (
        first["source"]["benchmarks_built_now"]
        and (tmp_path / "benchmarks" / "cross_resolution.json").is_file()
    )
    assert not evaluate(model, tmp_path, "cross-res")["source"]["benchmarks_built_now"]
    write_world(tmp_path, identities=3)  # the manifest changes, so its hash does
    again = evaluate(model, f"world:{tmp_path}", "cross-res")
    assert again["source"]["benchmarks_built_now"] and again["queries"] == 3


def test_mg_separate_text_sets(model, world):
    both = evaluate(model, world, "mg-separate", texts="both")
    assert both["texts"] == "both"
    assert list(both["text_sets"]) == ["generated", "paraphrased", "reframed", "handwritten"]
    generated = evaluate(model, world, "mg-separate")
    assert "text_sets" not in generated and both["overall"] == generated["overall"]
    assert both["text_sets"]["generated"]["overall"] == generated["overall"]
    assert both["text_sets"]["paraphrased"]["queries"] == generated["queries"]
    assert both["text_sets"]["paraphrased"]["overall"] != generated["overall"]  # other words, other vectors
    held_out = evaluate(model, world, "mg-separate", texts="paraphrased")
    assert held_out["overall"] == both["text_sets"]["paraphrased"]["overall"]
    for part in both["text_sets"].values():
        check_block(part["overall"])
    with pytest.raises(ValueError, match="texts must be one of"):
        evaluate(model, world, "mg-separate", texts="poems")
    with pytest.raises(ValueError, match="--texts paraphrased is a choice of the mg-separate protocol"):
        evaluate(model, world, "modes", texts="paraphrased")


# ------------------------------------------------------------------------------------------------- CLI


def test_cli_json_and_table(model, world, tmp_path):
    checkpoint = save(model, tmp_path / "ckpt")
    runner = CliRunner()
    out = tmp_path / "report.json"
    result = runner.invoke(
        app,
        [
            "eval",
            "--checkpoint",
            str(checkpoint),
            "--world",
            str(world),
            "--protocol",
            "modes",
            "--json",
            "--batch",
            "8",
            "--device",
            "cpu",
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    check_report(report, "modes")
    assert report["checkpoint"] == str(checkpoint) and json.loads(out.read_text()) == report
    table = runner.invoke(
        app,
        [
            "eval",
            "--checkpoint",
            str(checkpoint),
            "--world",
            str(world),
            "--protocol",
            "mg-progressive",
            "--device",
            "cpu",
        ],
    )
    assert table.exit_code == 0, table.output
    assert "overall" in table.stdout and "candidates" in table.stdout


def test_cli_errors(world, tmp_path, monkeypatch):
    runner = CliRunner()
    monkeypatch.setattr(discovery, "DEFAULT_CHECKPOINT", ("checkpoints", "not-shipped"))
    missing = runner.invoke(app, ["eval", "--world", str(world), "--protocol", "modes"])
    assert missing.exit_code == 2
    assert "no default checkpoint is shipped" in missing.output and "not-shipped" in missing.output
    assert "Traceback" not in missing.output
    absent = runner.invoke(
        app, ["eval", "--checkpoint", str(tmp_path / "none"), "--world", str(world), "--protocol", "modes"]
    )
    assert absent.exit_code == 2 and "checkpoint folder not found" in absent.output
    both = runner.invoke(
        app, ["eval", "--world", str(world), "--data", f"cuhk-pedes:{tmp_path}", "--protocol", "t2i"]
    )
    assert both.exit_code == 2 and "exactly one of --world" in both.output
    wrong = runner.invoke(app, ["eval", "--data", f"world:{world}", "--protocol", "t2i"])
    assert wrong.exit_code == 2 and "runs on a real dataset" in wrong.output


def test_cli_anytime_without_scenario_tokens_is_a_named_error(world, tmp_path):
    checkpoint = save(create({**TINY, "scenarios": {"enabled": False}}, device="cpu"), tmp_path / "no-scenarios")
    result = CliRunner().invoke(
        app,
        ["eval", "--checkpoint", str(checkpoint), "--world", str(world), "--protocol", "anytime", "--device", "cpu"],
    )
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "the anytime protocol needs scenario tokens" in result.output and "tiny-eval" in result.output
