"""A tiny world and a tiny training run, for the training tests."""

from __future__ import annotations

import copy
from pathlib import Path

TINY_MODEL = {  # a complete config (independent of the shipped ones) with every component on
    "name": "train-tiny",
    "embed_dim": 32,
    "vision": {"image_size": [32, 16], "stem": "conv", "patch_size": 8, "stem_channels": [8, 16, 16], "width": 32,
               "layers": 1, "heads": 2, "mlp_ratio": 2.0, "modality_embedding": True},
    "text": {"context_length": 128, "width": 32, "layers": 1, "heads": 2, "mlp_ratio": 2.0},
    "granularity": {"enabled": True, "expert_widths": [8, 8, 16, 16, 32], "image_query_level": "UF"},
    "gcr": {"enabled": True},
    "adapters": {"enabled": True, "routing": "top_p", "num_experts": 4, "bottleneck": 8, "top_p_threshold": 0.4,
                 "towers": ["visual", "text"]},
    "fusion": {"kind": "cmqf", "layers": 1, "heads": 2, "mlp_ratio": 2.0},
    "resolution": {"embedding": True},
    "crst": {"rcr": True, "tgr": True, "cross_layers": 1, "cross_heads": 2, "tgr_heads": 2},
    "scenarios": {"enabled": True, "moae": True, "num_person_ids": 0, "num_clothing_ids": 0},
    "attributes": {"image": True, "text": True},
    "losses": {"temperature": 0.02, "sdm": 1.0, "tal": 1.0, "pcia": True, "orthogonality": 1.0, "gcr": 1.0,
               "routing_entropy": 0.5, "fusion_sdm": 1.0, "sdm_low_resolution": 1.0, "rcr": 1.0, "tgr": 1.0,
               "cr_rda": 1.0, "scenario_id": 1.0, "said": True, "hdw": True, "attributes": 1.0},
}

TINY_TRAINING = {"epochs": 2, "identities_per_batch": 2, "samples_per_identity": 2, "validation_identities": 2,
                 "checkpoint_every": 3, "lr": 1e-3, "threads": 1}


def tiny_run(model_overrides: dict | None = None, **training) -> dict:
    """A run dict: the tiny config (with ``model_overrides`` merged in) and short training settings."""
    model = copy.deepcopy(TINY_MODEL)
    for key, value in (model_overrides or {}).items():
        if isinstance(value, dict) and isinstance(model.get(key), dict):
            model[key] = {**model[key], **value}
        else:
            model[key] = value
    return {"model": model, "training": {**TINY_TRAINING, **training}}


def build_tiny_world(root: Path) -> Path:
    """12 identities × 8 images (a sketch, RGB and IR images over two outfits each)."""
    from engine.lab.world.build import build_world

    build_world(root, identities=12, images_per_identity=8, seed=3, workers=1)
    return root
