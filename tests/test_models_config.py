"""Model configs as data: shipped files load, overlays resolve, bad input is named."""

import json

import pytest

from engine.retrieval.models.config import ConfigError, ModelConfig, load_config, shipped_config_names

ABLATION_ROWS = {
    "cmam": ["cmam_baseline", "cmam_oemvp", "cmam_oemvp_pcia", "cmam_full"],
    "flexi": ["flexi_mlp_adapter", "flexi_mlp_adapter_cmqf", "flexi_topk", "flexi_topk_cmqf", "flexi_topp",
              "flexi_topp_cmqf"],
    "crst": ["crst_baseline", "crst_full", "crst_no_rcr", "crst_no_tgr", "crst_no_crrda"],
    "uniat": ["uniat_baseline", "uniat_moae", "uniat_moae_said", "uniat_full"],
}


def test_every_shipped_config_loads_and_round_trips():
    names = shipped_config_names()
    assert {"default", "vitb16_paper", "tiny"} <= set(names)
    for rows in ABLATION_ROWS.values():
        assert set(rows) <= set(names)
    for name in names:
        config = load_config(name)
        assert config.name == name
        assert ModelConfig.from_dict(config.to_dict()) == config


def test_default_is_sized_for_the_cpu_and_keeps_long_text():
    config = load_config("default")
    assert config.vision.stem == "conv" and config.vision.patch_size == 8
    assert 192 <= config.vision.width <= 256
    assert config.text.context_length >= 96


def test_paper_config_has_the_paper_dimensions():
    config = load_config("vitb16_paper")
    assert config.vision.image_size == (384, 128) and config.vision.width == 768 and config.vision.patch_size == 16
    assert config.granularity.expert_widths == (192, 384, 768, 1536, 3072)
    assert config.adapters.num_experts == 6 and config.adapters.top_p_threshold == 0.4


def test_ablation_rows_switch_one_thing_at_a_time():
    cmam = [load_config(n) for n in ABLATION_ROWS["cmam"]]
    assert [c.granularity.enabled for c in cmam] == [False, True, True, True]
    assert [c.losses.pcia for c in cmam] == [False, False, True, True]
    assert [c.gcr.enabled for c in cmam] == [False, False, False, True]
    flexi = {n: load_config(n) for n in ABLATION_ROWS["flexi"]}
    assert flexi["flexi_mlp_adapter"].adapters.routing == "single"
    assert flexi["flexi_topk"].adapters.routing == "top_k" and flexi["flexi_topk"].adapters.top_k == 2
    assert flexi["flexi_topp_cmqf"].fusion.kind == "cmqf" and flexi["flexi_topp"].fusion.kind == "mean"
    crst = {n: load_config(n) for n in ABLATION_ROWS["crst"]}
    assert not crst["crst_no_rcr"].crst.rcr and crst["crst_no_rcr"].crst.tgr
    assert not crst["crst_no_tgr"].crst.tgr and crst["crst_no_tgr"].crst.rcr
    assert crst["crst_no_crrda"].losses.cr_rda == 0 and crst["crst_full"].losses.cr_rda > 0
    uniat = [load_config(n) for n in ABLATION_ROWS["uniat"]]
    assert [c.scenarios.moae for c in uniat] == [False, True, True, True]
    assert [(c.losses.said, c.losses.hdw) for c in uniat] == [(False, False), (False, False), (True, False),
                                                              (True, True)]


def test_unknown_keys_are_named(tmp_path):
    data = load_config("tiny").to_dict()
    data["vision"]["widht"] = 3
    with pytest.raises(ConfigError, match="vision.widht"):
        ModelConfig.from_dict(data)
    data = load_config("tiny").to_dict()
    data["colour"] = 1
    with pytest.raises(ConfigError, match="'colour'"):
        ModelConfig.from_dict(data)
    overlay = tmp_path / "bad.json"
    overlay.write_text(json.dumps({"base": "tiny", "overrides": {"crst": {"gate": 1}}}))
    with pytest.raises(ConfigError, match="crst.gate"):
        load_config(overlay)


def test_overlays_resolve_relative_to_their_folder_and_detect_cycles(tmp_path):
    (tmp_path / "small.json").write_text(json.dumps({"base": "tiny", "overrides": {"vision": {"layers": 1}}}))
    (tmp_path / "smaller.json").write_text(
        json.dumps({"base": "small", "description": "x", "overrides": {"text": {"layers": 1}}})
    )
    config = load_config(tmp_path / "smaller.json")
    assert config.name == "smaller" and config.description == "x"
    assert config.vision.layers == 1 and config.text.layers == 1 and config.vision.width == 32
    (tmp_path / "a.json").write_text(json.dumps({"base": "b", "overrides": {}}))
    (tmp_path / "b.json").write_text(json.dumps({"base": "a", "overrides": {}}))
    with pytest.raises(ConfigError, match="cycle"):
        load_config(tmp_path / "a.json")
    (tmp_path / "c.json").write_text(json.dumps({"base": "tiny", "overides": {}}))
    with pytest.raises(ConfigError, match="overides"):
        load_config(tmp_path / "c.json")


def test_types_ranges_and_dependencies_are_checked():
    tiny = load_config("tiny")
    cases = [
        ({"vision": {"layers": "2"}}, "vision.layers"),
        ({"vision": {"image_size": [30, 16]}}, "multiple of vision.patch_size"),
        ({"vision": {"stem_channels": [8, 8]}}, "stem_channels"),
        ({"vision": {"heads": 3}}, "divide by heads"),
        ({"granularity": {"expert_widths": [8, 16]}}, "expert_widths"),
        ({"adapters": {"routing": "top_q"}}, "adapters.routing"),
        ({"gcr": {"enabled": True}, "granularity": {"enabled": False}, "losses": {"orthogonality": 0.0}},
         "gcr.enabled"),
        ({"granularity": {"enabled": False}, "gcr": {"enabled": False}, "losses": {"gcr": 0.0}},
         "losses.orthogonality"),
        ({"crst": {"rcr": False}}, "losses.rcr"),
        ({"resolution": {"embedding": False}}, "crst.rcr"),
        ({"losses": {"tal": 0.0, "pcia": True}}, "losses.pcia"),
        ({"losses": {"sdm": -1.0}}, "losses.sdm"),
        ({"attributes": {"image": False, "text": False}}, "losses.attributes"),
        ({"scenarios": {"num_clothing_ids": 0}}, "num_clothing_ids"),
        ({"quick_gelu": 1}, "quick_gelu"),
    ]
    for overrides, message in cases:
        with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
            tiny.with_overrides(overrides)


def test_missing_config_is_a_file_not_found_error():
    with pytest.raises(FileNotFoundError, match="no_such_config"):
        load_config("no_such_config")
