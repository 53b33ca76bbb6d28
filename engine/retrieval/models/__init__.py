"""The Lineup network: one configurable PersonSearchModel on an open_clip CLIP (docs/methods.md §1.9).

    from engine.retrieval.models import create, load, save, load_backbone_weights
    model = create("default")            # or a path / dict / ModelConfig; CUDA when available
    vectors, level_logits = model.encode_text(["a woman in a red coat"])
"""

from engine.retrieval.models.backbone_weights import BackboneLoadReport, load_backbone_weights, read_clip_state_dict
from engine.retrieval.models.checkpoint import CheckpointError, create, load, model_fingerprint, read_metadata, save
from engine.retrieval.models.config import ConfigError, ModelConfig, load_config, shipped_config_names
from engine.retrieval.models.device import autocast_for, choose_device
from engine.retrieval.models.model import PersonSearchModel
from engine.retrieval.models.names import FUSION_MODES, LEVELS, MODALITIES, RESOLUTIONS, SCENARIOS
from engine.retrieval.models.tokenizer import Tokenizer

__all__ = [
    "FUSION_MODES",
    "LEVELS",
    "MODALITIES",
    "RESOLUTIONS",
    "SCENARIOS",
    "BackboneLoadReport",
    "CheckpointError",
    "ConfigError",
    "ModelConfig",
    "PersonSearchModel",
    "Tokenizer",
    "autocast_for",
    "choose_device",
    "create",
    "load",
    "load_backbone_weights",
    "load_config",
    "model_fingerprint",
    "read_clip_state_dict",
    "read_metadata",
    "save",
    "shipped_config_names",
]
