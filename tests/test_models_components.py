"""Which papers' components a config switches on, the components note of ``checkpoint export`` and
``checkpoint info``."""

import json

import pytest
from typer.testing import CliRunner

from engine.retrieval.models import create, read_metadata, save
from engine.retrieval.models.components import NAMES, ComponentNoteError, component_note, components
from engine.retrieval.models.config import ModelConfig
from lineup.cli import app

TINY = {
    "name": "tiny-components", "embed_dim": 32,
    "vision": {"image_size": [32, 16], "stem": "conv", "patch_size": 8, "stem_channels": [8, 8, 8], "width": 32,
               "layers": 1, "heads": 2},
    "text": {"context_length": 48, "width": 32, "layers": 1, "heads": 2},
    "granularity": {"enabled": True, "expert_widths": [8, 8, 16, 16, 32]},
    "gcr": {"enabled": False}, "adapters": {"enabled": False}, "fusion": {"kind": "cmqf", "heads": 2},
    "crst": {"rcr": False, "tgr": False}, "scenarios": {"enabled": False, "moae": False},
    "losses": {"orthogonality": 0.0, "gcr": 0.0, "pcia": True, "tal": 1.0, "cr_rda": 0.0, "hdw": False},
}


def test_components_read_from_the_config():
    rows = {r["name"]: r for r in components(ModelConfig.from_dict(TINY), {"GCR": "it cost 3 points"})}
    assert list(rows) == list(NAMES)
    on = {name for name, row in rows.items() if row["on"]}
    assert on == {"experts", "PCIA", "CMQF"}
    assert rows["GCR"]["why_off"] == "it cost 3 points" and rows["TGR"]["why_off"] is None
    assert "why_off" not in rows["experts"] and rows["experts"]["why_on"] is None and "why_on" not in rows["GCR"]
    kept = {r["name"]: r for r in components(ModelConfig.from_dict(TINY), {"CMQF": "fuses best"})}
    assert kept["CMQF"]["why_on"] == "fuses best" and kept["experts"]["why_on"] is None
    full = ModelConfig.from_dict({**TINY, "gcr": {"enabled": True}, "scenarios": {"enabled": True, "moae": True},
                                  "losses": {**TINY["losses"], "gcr": 1.0, "hdw": True, "scenario_id": 1.0}})
    on_full = {r["name"] for r in components(full) if r["on"]}
    assert {"GCR", "scenario tokens", "MoAE", "HDW"} <= on_full
    # a loss weight of 0 leaves the component off even when its module exists
    no_gcr_loss = ModelConfig.from_dict({**TINY, "gcr": {"enabled": True}})
    assert not next(r for r in components(no_gcr_loss) if r["name"] == "GCR")["on"]


def test_component_note_and_its_errors():
    note = component_note(ModelConfig.from_dict(TINY), {"GCR": "measured worse", "CMQF": "kept: fuses best"})
    assert note["on"] == ["experts", "PCIA", "CMQF"] and note["off"]["GCR"] == "measured worse"
    assert note["why_on"] == {"CMQF": "kept: fuses best"}  # a reason is filed under what the config says
    assert set(note["off"]) == set(NAMES) - set(note["on"])
    with pytest.raises(ComponentNoteError, match=r"note.json: unknown components \['warp drive'\]"):
        component_note(ModelConfig.from_dict(TINY), {"warp drive": "x"}, "note.json")
    with pytest.raises(ComponentNoteError, match="the reason for 'GCR' must be a non-empty text"):
        component_note(ModelConfig.from_dict(TINY), {"GCR": ""})
    with pytest.raises(ComponentNoteError, match="expected an object"):
        component_note(ModelConfig.from_dict(TINY), ["GCR"])


def test_export_writes_the_note_and_info_shows_it(tmp_path):
    source = save(create(TINY, device="cpu"), tmp_path / "run")
    note = tmp_path / "why.json"
    note.write_text(json.dumps({"GCR": "cost 3 points of mAP", "CMQF": "fused queries beat text alone"}))
    runner = CliRunner()
    result = runner.invoke(app, ["checkpoint", "export", str(source), str(tmp_path / "out"), "--components", str(note)])
    assert result.exit_code == 0, result.output
    assert read_metadata(tmp_path / "out")["components"]["off"]["GCR"] == "cost 3 points of mAP"
    info = runner.invoke(app, ["checkpoint", "info", str(tmp_path / "out"), "--json"])
    rows = {r["name"]: r for r in json.loads(info.stdout)["components"]}
    assert rows["GCR"]["why_off"] == "cost 3 points of mAP" and rows["CMQF"]["on"]
    assert rows["CMQF"]["why_on"] == "fused queries beat text alone" and rows["experts"]["why_on"] is None
    table = runner.invoke(app, ["checkpoint", "info", str(tmp_path / "out")])
    assert "why: cost 3 points of mAP" in table.stdout and "not recorded" in table.stdout
    assert "why: fused queries beat text alone" in table.stdout
    bad = tmp_path / "bad.json"
    bad.write_text("{")
    failed = runner.invoke(app, ["checkpoint", "export", str(source), str(tmp_path / "x"), "--components", str(bad)])
    assert failed.exit_code == 2 and "bad.json: not valid JSON" in failed.output and "Traceback" not in failed.output
    bad.write_text(json.dumps({"GRC": "typo"}))
    failed = runner.invoke(app, ["checkpoint", "export", str(source), str(tmp_path / "x"), "--components", str(bad)])
    assert failed.exit_code == 2 and "unknown components ['GRC']" in failed.output


def test_the_shipped_checkpoint_says_why_its_components_are_off():
    runner = CliRunner()
    info = runner.invoke(app, ["checkpoint", "info", "--json"])
    assert info.exit_code == 0, info.output
    rows = json.loads(info.stdout)["components"]
    off = [r for r in rows if not r["on"]]
    assert {r["name"] for r in rows if r["on"]} == {"experts", "adapters", "CMQF", "scenario tokens"}
    assert off and all(r["why_off"] and "docs/ablations/" in r["why_off"] for r in off)
    kept = {r["name"]: r["why_on"] for r in rows if r["on"]}
    assert all(kept[name] and "docs/ablations/flexireid.md" in kept[name] for name in ("adapters", "CMQF"))


def test_info_reads_a_malformed_components_note_without_failing(tmp_path):
    source = save(create(TINY, device="cpu"), tmp_path / "run")
    metadata_file = source / "metadata.json"
    metadata = json.loads(metadata_file.read_text())
    metadata["components"] = {"on": ["CMQF"], "off": ["GCR"], "why_on": "everything"}
    metadata_file.write_text(json.dumps(metadata))
    info = CliRunner().invoke(app, ["checkpoint", "info", str(source), "--json"])
    assert info.exit_code == 0, info.output
    rows = {r["name"]: r for r in json.loads(info.stdout)["components"]}
    assert rows["GCR"]["why_off"] is None and rows["CMQF"]["why_on"] is None
