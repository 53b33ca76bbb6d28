"""The model's two towers: open_clip's ``CLIP`` built from a ``ModelConfig``, its patch embedding replaced by a
convolutional stem when the config asks (docs/methods.md §6), and every transformer block replaced by
``LineupBlock`` with the components the config switches on (granularity experts, adapters, scenario experts),
keeping open_clip's parameter names so pretrained weights load."""

from __future__ import annotations

from open_clip.model import CLIP, CLIPTextCfg, CLIPVisionCfg
from torch import nn

from engine.retrieval.models.blocks import LineupBlock
from engine.retrieval.models.config import ModelConfig
from engine.retrieval.models.stem import ConvStem, MobileNetV2Stem


def build_backbone(config: ModelConfig, vocab_size: int, act_layer: type[nn.Module]) -> tuple[CLIP, frozenset[str]]:
    """The towers for ``config`` and the names of their parameters in open_clip's layout (those a pretrained
    CLIP checkpoint fills; a replaced stem's are left out)."""
    cfg_v, cfg_t = config.vision, config.text
    backbone = CLIP(
        embed_dim=config.embed_dim,
        vision_cfg=CLIPVisionCfg(
            layers=cfg_v.layers,
            width=cfg_v.width,
            head_width=cfg_v.width // cfg_v.heads,
            mlp_ratio=cfg_v.mlp_ratio,
            patch_size=cfg_v.patch_size,
            image_size=tuple(cfg_v.image_size),
        ),
        text_cfg=CLIPTextCfg(
            context_length=cfg_t.context_length,
            vocab_size=vocab_size,
            width=cfg_t.width,
            heads=cfg_t.heads,
            layers=cfg_t.layers,
            mlp_ratio=cfg_t.mlp_ratio,
        ),
        quick_gelu=config.quick_gelu,
    )
    names = frozenset(f"backbone.{name}" for name, _ in backbone.named_parameters())
    if cfg_v.stem in ("conv", "mobilenetv2"):
        backbone.visual.conv1 = (ConvStem(cfg_v.stem_channels, cfg_v.width) if cfg_v.stem == "conv"
                                 else MobileNetV2Stem(cfg_v.width))
        names = frozenset(n for n in names if ".conv1." not in n)
    _replace_blocks(backbone, config, act_layer)
    return backbone, names


def _replace_blocks(backbone: CLIP, config: ModelConfig, act_layer: type[nn.Module]) -> None:
    adapters = config.adapters if config.adapters.enabled else None
    for tower, resblocks, tower_cfg in (
        ("visual", backbone.visual.transformer.resblocks, config.vision),
        ("text", backbone.transformer.resblocks, config.text),
    ):
        for index, old in enumerate(resblocks):
            block = LineupBlock(
                tower_cfg.width,
                tower_cfg.heads,
                tower_cfg.mlp_ratio,
                act_layer,
                expert_widths=config.granularity.expert_widths if tower == "visual" and config.granularity.enabled
                else (),
                adapters=adapters if adapters is not None and tower in adapters.towers else None,
                scenario_experts=tower == "visual" and config.scenarios.moae,
                scenario_gate=config.scenarios.gate,
            )
            block.load_state_dict(old.state_dict(), strict=False)
            block.initialise_new_components()
            resblocks[index] = block
