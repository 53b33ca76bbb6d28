"""The shipped default checkpoint: present, small, documented, and it really retrieves."""

from __future__ import annotations

import json

import pytest
import torch

from engine.retrieval.models import load, read_metadata
from engine.retrieval.models.discovery import default_checkpoint

PROTOCOLS = ("mg-separate", "modes", "cross-res", "mg-progressive", "anytime")


@pytest.fixture(scope="module")
def shipped():
    return default_checkpoint()


def test_it_ships_under_60_mb_with_its_provenance(shipped):
    size = sum(f.stat().st_size for f in shipped.iterdir() if f.is_file())
    assert size <= 60e6
    metadata = read_metadata(shipped)
    assert metadata["weights_dtype"] == "float16"
    assert "lineup train" in metadata["training_command"]
    world = metadata["data_fingerprint"]["world"]
    assert (world["seed"], world["identities"], world["images_per_identity"]) == (1001, 2000, 12)
    assert metadata["eval_report"] == "eval/"


def test_its_evaluation_reports_sit_beside_it(shipped):
    for protocol in PROTOCOLS:
        report = json.loads((shipped / "eval" / f"{protocol}.json").read_text(encoding="utf-8"))
        assert report["protocol"] == protocol
        assert set(report["overall"]) >= {"R@1", "R@5", "R@10", "mAP", "mINP", "mSD"}
        assert all(0.0 <= report["overall"][k] <= 1.0 for k in ("R@1", "mAP"))
        assert report["by"]


def test_its_text_rewrite_weight_is_measured_and_its_reports_use_it(shipped):
    from engine.retrieval.encoding.text_rewrite import checkpoint_rewrite_weight

    metadata = read_metadata(shipped)
    weight = checkpoint_rewrite_weight(shipped)
    assert weight == metadata["text_rewrite_weight"] > 0
    sweep = metadata["text_rewrite_calibration"]["world_sweep"]
    assert weight in [row["weight"] for row in sweep] and 0.0 in [row["weight"] for row in sweep]
    for protocol in ("mg-separate", "cross-res", "mg-progressive"):
        report = json.loads((shipped / "eval" / f"{protocol}.json").read_text(encoding="utf-8"))
        assert report["text_rewrite"] == weight


def test_it_has_scenario_tokens_and_its_any_time_report_compares_them(shipped):
    config = load(shipped, device="cpu").config
    assert config.scenarios.enabled and config.vision.stem == "mobilenetv2" and config.fusion.keys == "sequence"
    report = json.loads((shipped / "eval" / "anytime.json").read_text(encoding="utf-8"))
    assert set(report["plain_view"]["by"]) == set(report["by"])
    from engine.retrieval.evidence.likeness import OUTFIT_CHANGE_WEIGHT

    assert report["outfit_change"]["weight"] == OUTFIT_CHANGE_WEIGHT  # measured with the λ that ships


@pytest.mark.slow
def test_it_finds_people_of_an_unseen_world_from_fine_descriptions(shipped, tmp_path):
    """20 identities never seen in training: a UF description ranks its own person's image first for most."""
    from engine.lab.evaluation.encoding import prepared_images
    from engine.lab.world.build import build_world

    manifest = build_world(tmp_path / "w", identities=20, images_per_identity=4, seed=424242)
    records = [json.loads(line) for line in manifest.read_text(encoding="utf-8").splitlines()]
    gallery = [r for r in records if r["modality"] == "rgb" and r["resolution"] == "HR"]
    assert len({r["identity"] for r in gallery}) >= 15
    first = {}
    for record in gallery:
        first.setdefault(record["identity"], record)
    model = load(shipped, device="cpu")
    torch.set_num_threads(1)
    with torch.no_grad():
        images = prepared_images(model, [tmp_path / "w" / r["image"] for r in gallery])
        vectors = model.encode_images(images, "rgb", "UF")
        texts = [r["descriptions"]["UF"] for r in first.values()]
        queries, _ = model.encode_text(texts)
    scores = queries @ vectors.T
    best = scores.argmax(dim=1).tolist()
    hits = sum(gallery[j]["identity"] == identity for j, identity in zip(best, first, strict=True))
    assert hits / len(first) >= 0.6, f"{hits}/{len(first)} rank-1 hits"


def test_checkpoint_info_names_the_command_that_started_its_last_stage_and_its_resumes(shipped):
    from typer.testing import CliRunner

    from lineup.cli import app

    info = json.loads(CliRunner().invoke(app, ["checkpoint", "info", str(shipped), "--json"]).output)
    metadata = read_metadata(shipped)
    assert info["training_command"] == metadata["training_command"] and "--resume" not in info["training_command"]
    assert info["resumed_with"] == metadata.get("resumed_with", [])
    assert all("--resume" in command for command in info["resumed_with"])
