"""PersonSearchModel: one open_clip CLIP with the components of the four papers, each chosen by config.

Towers: open_clip's ``CLIP`` (its VisionTransformer and text transformer), blocks replaced by
``LineupBlock`` so pretrained names stay. Visual token layout: [CLS, patches…, (six scenario tokens)];
every token gets the positional embedding, then the modality offset and λ_r e_r (CRST). Scenario tokens are
appended only for re-identification passes unless ``scenarios.isolate`` is false; when isolated, ordinary
tokens do not attend to them, so retrieval vectors do not depend on them.

Inference surface (DESIGN "The model"): ``encode_text``, ``encode_images``, ``encode_images_all_levels``,
``fuse``, ``encode_reid``; every vector L2-normalised, computed without gradients, bf16 autocast on CUDA.
Training: ``forward_train`` returns a dict of everything the losses need (see its docstring).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F
from open_clip.model import CLIP, CLIPTextCfg, CLIPVisionCfg
from open_clip.transformer import QuickGELU
from torch import nn

from engine.models.attributes import AttributeHeads
from engine.models.blocks import LineupBlock, Routing
from engine.models.config import ModelConfig
from engine.models.crst import MaskedGrounding, ReliabilityGate, ResolutionEmbedding, TextGuidedRefinement
from engine.models.device import autocast_for
from engine.models.fusion import MeanFusion, QueryFusion, mode_modalities
from engine.models.gcr import ConsistencyMatcher, GranularityClassifier
from engine.models.names import FUSION_MODES, LEVELS, MODALITIES, RESOLUTIONS, SCENARIOS, index_tensor
from engine.models.scenarios import ScenarioHeads
from engine.models.stem import ConvStem
from engine.models.tokenizer import Tokenizer

IGNORE_INDEX = -100
TextInput = str | Sequence[str] | torch.Tensor
IndexInput = str | int | Sequence[str | int] | torch.Tensor


@dataclass
class VisualPass:
    embedding: torch.Tensor  # [B, D] projected CLS (not normalised)
    tokens: torch.Tensor  # [B, 1 + patches, d] after ln_post (CLS first)
    scenario: torch.Tensor | None  # [B, 6, d] after ln_post
    routing: Routing


@dataclass
class TextPass:
    embedding: torch.Tensor  # [B, D] projected end-of-text token (not normalised)
    hidden: torch.Tensor  # [B, L', w] after ln_final; L' = last end-of-text position + 1 in the batch
    valid: torch.Tensor  # [B, L'] bool, tokens up to and including end-of-text
    routing: Routing


class PersonSearchModel(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        cfg_v, cfg_t = config.vision, config.text
        self.tokenizer = Tokenizer(cfg_t.context_length)
        act_layer: type[nn.Module] = QuickGELU if config.quick_gelu else nn.GELU
        self.backbone = CLIP(
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
                vocab_size=self.tokenizer.vocab_size,
                width=cfg_t.width,
                heads=cfg_t.heads,
                layers=cfg_t.layers,
                mlp_ratio=cfg_t.mlp_ratio,
            ),
            quick_gelu=config.quick_gelu,
        )
        #: parameter names in open_clip's CLIP layout (pretrained weights load into these)
        self.clip_parameter_names: frozenset[str] = frozenset(
            f"backbone.{name}" for name, _ in self.backbone.named_parameters()
        )
        visual = self.backbone.visual
        if cfg_v.stem == "conv":
            visual.conv1 = ConvStem(cfg_v.stem_channels, cfg_v.width)
            self.clip_parameter_names = frozenset(n for n in self.clip_parameter_names if ".conv1." not in n)
        self._replace_blocks(act_layer)

        width = cfg_v.width
        dim = config.embed_dim
        self.modality_embedding = nn.Embedding(len(MODALITIES), width) if cfg_v.modality_embedding else None
        if self.modality_embedding is not None:
            nn.init.zeros_(self.modality_embedding.weight)
        self.resolution_embedding = (
            ResolutionEmbedding(len(RESOLUTIONS), width, config.resolution.scale)
            if config.resolution.embedding
            else None
        )
        scen = config.scenarios
        if scen.enabled:
            self.scenario_tokens = nn.Parameter(visual.class_embedding.detach().clone().repeat(len(SCENARIOS), 1))
            self.scenario_positions = nn.Parameter(
                visual.positional_embedding.detach()[:1].clone().repeat(len(SCENARIOS), 1)
            )
            self.scenario_heads = ScenarioHeads(
                width, scen.num_person_ids, scen.num_clothing_ids, st_classifies_clothing=config.losses.said
            )
        else:
            self.scenario_tokens = self.scenario_positions = None
            self.scenario_heads = None
        if config.gcr.enabled:
            self.level_classifier = GranularityClassifier(dim, len(LEVELS))
            self.consistency_matcher = ConsistencyMatcher(dim)
        else:
            self.level_classifier = self.consistency_matcher = None
        fusion = config.fusion
        if fusion.kind == "cmqf":
            self.fusion = QueryFusion(dim, fusion.heads, fusion.layers, fusion.mlp_ratio, act_layer)
        elif fusion.kind == "mean":
            self.fusion = MeanFusion()
        else:
            self.fusion = None
        crst = config.crst
        if crst.rcr:
            self.reliability_gate = ReliabilityGate(width)
            self.masked_grounding = MaskedGrounding(
                dim, self.tokenizer.vocab_size, crst.cross_layers, crst.cross_heads, crst.gate_mode, act_layer
            )
        else:
            self.reliability_gate = self.masked_grounding = None
        self.refinement = TextGuidedRefinement(dim, crst.tgr_heads, crst.tgr_gate) if crst.tgr else None
        self.image_attributes = AttributeHeads(dim) if config.attributes.image else None
        self.text_attributes = AttributeHeads(dim) if config.attributes.text else None
        self.eval()

    # ------------------------------------------------------------------------------------------------------
    # construction helpers

    def _replace_blocks(self, act_layer: type[nn.Module]) -> None:
        cfg = self.config
        adapters = cfg.adapters if cfg.adapters.enabled else None
        for tower, resblocks, tower_cfg in (
            ("visual", self.backbone.visual.transformer.resblocks, cfg.vision),
            ("text", self.backbone.transformer.resblocks, cfg.text),
        ):
            for index, old in enumerate(resblocks):
                block = LineupBlock(
                    tower_cfg.width,
                    tower_cfg.heads,
                    tower_cfg.mlp_ratio,
                    act_layer,
                    expert_widths=cfg.granularity.expert_widths
                    if tower == "visual" and cfg.granularity.enabled
                    else (),
                    adapters=adapters if adapters is not None and tower in adapters.towers else None,
                    scenario_experts=tower == "visual" and cfg.scenarios.moae,
                    scenario_gate=cfg.scenarios.gate,
                )
                block.load_state_dict(old.state_dict(), strict=False)
                block.initialise_new_components()
                resblocks[index] = block

    def initialise_new_components(self) -> None:
        """Re-derive components that the papers initialise from pretrained ones (after loading a backbone)."""
        for block in self.visual_blocks:
            block.initialise_new_components()
        if self.scenario_tokens is not None:
            with torch.no_grad():
                visual = self.backbone.visual
                self.scenario_tokens.copy_(visual.class_embedding.detach().expand_as(self.scenario_tokens))
                self.scenario_positions.copy_(visual.positional_embedding.detach()[:1].expand_as(self.scenario_positions))

    @property
    def visual_blocks(self) -> list[LineupBlock]:
        return list(self.backbone.visual.transformer.resblocks)

    @property
    def text_blocks(self) -> list[LineupBlock]:
        return list(self.backbone.transformer.resblocks)

    @property
    def device(self) -> torch.device:
        return self.backbone.logit_scale.device

    def parameter_groups(self) -> dict[str, list[nn.Parameter]]:
        """"pretrained" (open_clip CLIP layout, loaded by ``load_backbone_weights``) and "new" parameters."""
        groups: dict[str, list[nn.Parameter]] = {"pretrained": [], "new": []}
        for name, param in self.named_parameters():
            groups["pretrained" if name in self.clip_parameter_names else "new"].append(param)
        return groups

    # ------------------------------------------------------------------------------------------------------
    # input handling

    def _text_ids(self, text: TextInput) -> torch.Tensor:
        if isinstance(text, torch.Tensor):
            if text.dim() != 2 or text.dtype != torch.long:
                raise ValueError(f"token ids must be a LongTensor [B, L], got {text.dtype} {tuple(text.shape)}")
            if text.shape[1] > self.config.text.context_length:
                raise ValueError(
                    f"token ids have length {text.shape[1]} > context length {self.config.text.context_length}"
                )
            return text.to(self.device)
        if isinstance(text, str):
            text = [text]
        return self.tokenizer(list(text)).to(self.device)

    def _images(self, images: torch.Tensor, what: str = "images") -> torch.Tensor:
        if not isinstance(images, torch.Tensor) or images.dim() != 4 or images.shape[1] != 3:
            shape = tuple(images.shape) if isinstance(images, torch.Tensor) else type(images).__name__
            raise ValueError(f"{what} must be a float tensor [B, 3, H, W], got {shape}")
        expected = tuple(self.config.vision.image_size)
        if tuple(images.shape[-2:]) != expected:
            raise ValueError(
                f"{what} are {tuple(images.shape[-2:])} (H, W) but the model takes {expected}; "
                "use model.prepare_images()"
            )
        if not images.dtype.is_floating_point:
            raise ValueError(f"{what} must be normalised floats (see prepare_images), got dtype {images.dtype}")
        return images.to(self.device, dtype=torch.float32)

    def prepare_images(self, images: torch.Tensor) -> torch.Tensor:
        """uint8 [B, 3, h, w] (0–255) or float in [0, 1] → resized to the model size and normalised."""
        if images.dim() == 3:
            images = images.unsqueeze(0)
        if images.dim() != 4 or images.shape[1] != 3:
            raise ValueError(f"images must be [B, 3, H, W], got {tuple(images.shape)}")
        x = images.float() / 255.0 if images.dtype == torch.uint8 else images.float()
        size = tuple(self.config.vision.image_size)
        if tuple(x.shape[-2:]) != size:
            x = F.interpolate(x, size=size, mode="bicubic", align_corners=False, antialias=True).clamp(0, 1)
        mean = torch.tensor(self.config.vision.mean, dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
        std = torch.tensor(self.config.vision.std, dtype=x.dtype, device=x.device).view(1, 3, 1, 1)
        return ((x - mean) / std).to(self.device)

    def _levels(self, level: IndexInput | None, batch: int) -> torch.Tensor:
        if level is None:
            level = self.config.granularity.image_query_level
        return index_tensor(level, LEVELS, batch, self.device, "level")

    # ------------------------------------------------------------------------------------------------------
    # towers

    def _visual_pass(
        self,
        images: torch.Tensor,
        modality: torch.Tensor,
        level: torch.Tensor,
        resolution: torch.Tensor,
        scenarios: bool = False,
        collect: torch.Tensor | None = None,
    ) -> VisualPass:
        visual = self.backbone.visual
        x = visual.conv1(images.to(visual.positional_embedding.dtype))
        x = x.flatten(2).transpose(1, 2)
        cls = (visual.class_embedding + visual.positional_embedding[0]).to(x.dtype).expand(x.shape[0], 1, -1)
        x = torch.cat([cls, x + visual.positional_embedding[1:].to(x.dtype)], dim=1)
        offset = torch.zeros_like(x[:, :1])
        if self.modality_embedding is not None:
            offset = offset + self.modality_embedding(modality).unsqueeze(1)
        if self.resolution_embedding is not None:
            offset = offset + self.resolution_embedding(resolution)
        x = x + offset
        num_main = x.shape[1]
        attn_mask = None
        use_scenarios = self.scenario_tokens is not None and (scenarios or not self.config.scenarios.isolate)
        if use_scenarios:
            extra = (self.scenario_tokens + self.scenario_positions).to(x.dtype).expand(x.shape[0], -1, -1)
            x = torch.cat([x, extra + offset], dim=1)
            if self.config.scenarios.isolate:
                attn_mask = torch.zeros(x.shape[1], x.shape[1], dtype=x.dtype, device=x.device)
                attn_mask[:num_main, num_main:] = float("-inf")
        x = visual.ln_pre(x)
        routing = Routing(
            levels=level if self.config.granularity.enabled else None,
            collect=collect,
            num_scenario=len(SCENARIOS) if use_scenarios else 0,
        )
        for block in self.visual_blocks:
            x = block(x, attn_mask=attn_mask, routing=routing)
        x = visual.ln_post(x)
        tokens = x[:, :num_main]
        return VisualPass(
            embedding=tokens[:, 0] @ visual.proj,
            tokens=tokens,
            scenario=x[:, num_main:] if use_scenarios else None,
            routing=routing,
        )

    def _text_pass(self, ids: torch.Tensor) -> TextPass:
        """Causal text transformer over the ids, cut after the batch's last end-of-text token (the causal mask
        makes the cut exact: no kept position attends to a later one)."""
        clip = self.backbone
        eot = self.tokenizer.eot_positions(ids)
        length = int(eot.max()) + 1
        ids = ids[:, :length]
        valid = torch.arange(length, device=ids.device).unsqueeze(0) <= eot.unsqueeze(1)
        x = clip.token_embedding(ids) + clip.positional_embedding[:length]
        attn_mask = clip.attn_mask[:length, :length].to(x.dtype)
        routing = Routing(token_valid=valid)
        for block in self.text_blocks:
            x = block(x, attn_mask=attn_mask, routing=routing)
        x = clip.ln_final(x)
        pooled = x[torch.arange(ids.shape[0], device=ids.device), eot]
        return TextPass(embedding=pooled @ clip.text_projection, hidden=x, valid=valid, routing=routing)

    def _project_text_tokens(self, text: TextPass) -> torch.Tensor:
        return text.hidden @ self.backbone.text_projection

    def _autocast(self):
        return autocast_for(self.device)

    # ------------------------------------------------------------------------------------------------------
    # inference surface

    @torch.no_grad()
    def encode_text(self, texts: TextInput) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(unit vectors [B, D], level logits [B, G] from the GCR classifier or ``None`` without GCR)."""
        ids = self._text_ids(texts)
        with self._autocast():
            text = self._text_pass(ids)
            logits = self.level_classifier(text.embedding) if self.level_classifier is not None else None
        return F.normalize(text.embedding.float(), dim=-1), None if logits is None else logits.float()

    @torch.no_grad()
    def encode_images(
        self,
        images: torch.Tensor,
        modality: IndexInput = "rgb",
        level: IndexInput | None = None,
        resolution: IndexInput = "hr",
    ) -> torch.Tensor:
        """Unit vectors [B, D] of normalised images [B, 3, H, W] for one view (level expert, modality, resolution).

        ``level`` defaults to ``granularity.image_query_level`` (the view image queries use).
        """
        return F.normalize(self._view_pass(images, modality, level, resolution).embedding.float(), dim=-1)

    def _view_pass(
        self, images: torch.Tensor, modality: IndexInput, level: IndexInput | None, resolution: IndexInput
    ) -> VisualPass:
        """One visual pass of a batch for a single view (modality, level expert, resolution), under autocast."""
        images = self._images(images)
        batch = images.shape[0]
        with self._autocast():
            return self._visual_pass(
                images,
                index_tensor(modality, MODALITIES, batch, self.device, "modality"),
                self._levels(level, batch),
                index_tensor(resolution, RESOLUTIONS, batch, self.device, "resolution"),
            )

    @torch.no_grad()
    def encode_images_all_levels(
        self, images: torch.Tensor, modality: IndexInput = "rgb", resolution: IndexInput = "hr"
    ) -> torch.Tensor:
        """Unit vectors [B, G, D]: one gallery view per level (identical views without granularity experts)."""
        images = self._images(images)
        batch, count = images.shape[0], len(LEVELS)
        modality_index = index_tensor(modality, MODALITIES, batch, self.device, "modality")
        resolution_index = index_tensor(resolution, RESOLUTIONS, batch, self.device, "resolution")
        if not self.config.granularity.enabled:
            single = self.encode_images(images, modality_index, 0, resolution_index)
            return single.unsqueeze(1).expand(-1, count, -1).contiguous()
        levels = torch.arange(count, device=self.device).repeat_interleave(batch)  # level-major: slices per expert
        with self._autocast():
            out = self._visual_pass(
                images.repeat(count, 1, 1, 1),
                modality_index.repeat(count),
                levels,
                resolution_index.repeat(count),
            )
        return F.normalize(out.embedding.float(), dim=-1).view(count, batch, -1).transpose(0, 1).contiguous()

    @torch.no_grad()
    def image_attribute_logits(
        self,
        images: torch.Tensor,
        modality: IndexInput = "rgb",
        level: IndexInput | None = None,
        resolution: IndexInput = "hr",
    ) -> dict[str, torch.Tensor]:
        """Attribute logits {key: [B, values]} from the image attribute heads."""
        if self.image_attributes is None:
            raise RuntimeError("this model has no image attribute heads (config attributes.image is false)")
        out = self._view_pass(images, modality, level, resolution)
        with self._autocast():
            logits = self.image_attributes(out.embedding)
        return {k: v.float() for k, v in logits.items()}

    @torch.no_grad()
    def fuse(
        self,
        text: TextInput | None = None,
        sketch: torch.Tensor | None = None,
        ir: torch.Tensor | None = None,
        resolution: IndexInput = "hr",
    ) -> torch.Tensor:
        """One unit query vector [B, D] per row from any non-empty combination of text, sketch and IR images."""
        if self.fusion is None:
            raise RuntimeError("this model has no query fusion (config fusion.kind is 'none')")
        with self._autocast():
            embeds = self._query_embeddings(text, sketch, ir, resolution)
            fused = self.fusion(**embeds)
        return F.normalize(fused.float(), dim=-1)

    def _query_embeddings(
        self, text: TextInput | None, sketch: torch.Tensor | None, ir: torch.Tensor | None, resolution: IndexInput
    ) -> dict[str, torch.Tensor | None]:
        out: dict[str, torch.Tensor | None] = {"text": None, "sketch": None, "ir": None}
        if text is not None:
            out["text"] = self._text_pass(self._text_ids(text)).embedding
        for name, images in (("sketch", sketch), ("ir", ir)):
            if images is None:
                continue
            images = self._images(images, name)
            batch = images.shape[0]
            out[name] = self._visual_pass(
                images,
                index_tensor(name, MODALITIES, batch, self.device, "modality"),
                self._levels(None, batch),
                index_tensor(resolution, RESOLUTIONS, batch, self.device, "resolution"),
            ).embedding
        sizes = {name: x.shape[0] for name, x in out.items() if x is not None}
        if not sizes:
            raise ValueError("fuse needs at least one of text, sketch, ir")
        if len(set(sizes.values())) != 1:
            raise ValueError(f"text, sketch and ir must have the same number of rows, got {sizes}")
        return out

    @torch.no_grad()
    def encode_reid(
        self,
        images: torch.Tensor,
        scenario: str,
        modality: IndexInput | None = None,
        resolution: IndexInput = "hr",
    ) -> torch.Tensor:
        """Unit vectors [B, d]: the BN-neck output of the scenario's CLS token (Uni-AT test feature).

        ``modality`` defaults to "ir" for NT scenarios and "rgb" otherwise.
        """
        if self.scenario_heads is None:
            raise RuntimeError("this model has no scenario tokens (config scenarios.enabled is false)")
        if scenario not in SCENARIOS:
            raise ValueError(f"scenario must be one of {list(SCENARIOS)}, got {scenario!r}")
        if modality is None:
            modality = "ir" if scenario.startswith("NT") else "rgb"
        images = self._images(images)
        batch = images.shape[0]
        with self._autocast():
            out = self._visual_pass(
                images,
                index_tensor(modality, MODALITIES, batch, self.device, "modality"),
                self._levels(None, batch),
                index_tensor(resolution, RESOLUTIONS, batch, self.device, "resolution"),
                scenarios=True,
            )
            features, _ = self.scenario_heads(out.scenario)
        return F.normalize(features[:, SCENARIOS.index(scenario)].float(), dim=-1)

    # ------------------------------------------------------------------------------------------------------
    # training

    def forward(self, *args: Any, **kwargs: Any) -> dict[str, Any]:
        return self.forward_train(*args, **kwargs)

    def forward_train(
        self,
        images: torch.Tensor,
        text: TextInput,
        *,
        levels: IndexInput | None = None,
        modality: IndexInput = "rgb",
        resolution: IndexInput = "hr",
        hr_images: torch.Tensor | None = None,
        mlm_ids: torch.Tensor | None = None,
        mlm_labels: torch.Tensor | None = None,
        sketch: torch.Tensor | None = None,
        ir: torch.Tensor | None = None,
        query_resolution: IndexInput = "hr",
        mismatch_levels: torch.Tensor | None = None,
        reid_images: torch.Tensor | None = None,
        reid_modality: IndexInput = "rgb",
        reid_resolution: IndexInput = "hr",
    ) -> dict[str, Any]:
        """One training step's forward. Inputs (B pairs of image and text of the same identity):

        - ``images`` [B, 3, H, W] normalised, ``text`` strings or ids [B, L]; ``levels`` the text's level per
          sample (needed with granularity experts; the image runs expert ``levels``); ``modality`` and
          ``resolution`` of ``images`` (with ``hr_images`` these are the low-resolution views).
        - CRST: ``hr_images`` the high-resolution counterparts; ``mlm_ids`` masked token ids and ``mlm_labels``
          (original id at masked positions, −100 elsewhere) for RCR.
        - FlexiReID: ``sketch`` and/or ``ir`` query images [B, …] of the same identities (``query_resolution``).
        - CMAM GCR: ``mismatch_levels`` g' per sample (drawn uniformly from the other levels when omitted).
        - Uni-AT: ``reid_images`` [Br, …] with ``reid_modality`` per sample (rgb/ir).

        Returns (present when the component is on and its inputs were given; all float32):
        ``image_embeds``, ``text_embeds`` [B, D] unit; ``image_features``, ``text_features`` [B, D] raw;
        ``logit_scale``; ``levels``; ``expert_means`` list per visual block of [B, G, d] (when
        losses.orthogonality > 0); ``image_level_logits``, ``text_level_logits`` [B, G], ``match_logits``,
        ``mismatch_logits`` [B], ``mismatch_levels`` [B] (GCR); ``router_probs`` list per MoE block of
        [tokens, n] (visual blocks over the main, sketch and IR images, then text blocks; text padding and the
        g'/HR re-runs excluded); ``sketch_embeds``, ``ir_embeds``
        [B, D] unit and ``fused`` {mode: [B, D] unit} for the modes the given inputs allow;
        ``image_embeds_hr`` [B, D] unit, ``image_embeds_refined`` [B, D] unit (TGR ṽᴸ, else absent);
        ``mlm_logits`` [M, V] at the masked positions, ``mlm_targets`` [M], ``mlm_mask`` [B, L] bool,
        ``reliability`` [B, N] (RCR); ``reid_features`` [Br, 6, d] (BN outputs), ``reid_tokens`` [Br, 6, d]
        (before BN), ``reid_logits`` list of 6 [Br, classes] when classifiers exist, ``scenario_gates`` list per
        block of [Br, 6, 2]; ``attribute_logits_image`` / ``attribute_logits_text`` {key: [B, values]}.
        """
        with self._autocast():
            out = self._forward_train(
                images, text, levels, modality, resolution, hr_images, mlm_ids, mlm_labels, sketch, ir,
                query_resolution, mismatch_levels, reid_images, reid_modality, reid_resolution,
            )
        return _to_float(out)

    def _forward_train(
        self, images, text, levels, modality, resolution, hr_images, mlm_ids, mlm_labels, sketch, ir,
        query_resolution, mismatch_levels, reid_images, reid_modality, reid_resolution,
    ) -> dict[str, Any]:
        cfg = self.config
        images = self._images(images)
        batch, device = images.shape[0], self.device
        ids = self._text_ids(text)
        if ids.shape[0] != batch:
            raise ValueError(f"images have {batch} rows but text has {ids.shape[0]}")
        if cfg.granularity.enabled and levels is None:
            raise ValueError("levels are required in training: the image runs the expert of its text's level")
        level_index = self._levels(levels, batch)
        modality_index = index_tensor(modality, MODALITIES, batch, device, "modality")
        resolution_index = index_tensor(resolution, RESOLUTIONS, batch, device, "resolution")
        query_level = self._levels(None, batch)

        # one visual pass over every segment: main, g' (GCR), HR (CRST), sketch and IR (FlexiReID)
        segments: list[tuple[str, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]] = [
            ("main", images, modality_index, level_index, resolution_index)
        ]
        use_gcr = self.consistency_matcher is not None and cfg.losses.gcr > 0
        if use_gcr:
            if mismatch_levels is None:
                shift = torch.randint(1, len(LEVELS), (batch,), device=device)
                mismatch_levels = (level_index + shift) % len(LEVELS)
            mismatch_levels = index_tensor(mismatch_levels, LEVELS, batch, device, "mismatch_levels")
            if bool((mismatch_levels == level_index).any()):
                raise ValueError("mismatch_levels must differ from levels in every row")
            segments.append(("mismatch", images, modality_index, mismatch_levels, resolution_index))
        if hr_images is not None:
            hr_images = self._images(hr_images, "hr_images")
            if hr_images.shape[0] != batch:
                raise ValueError(f"hr_images must have {batch} rows, got {hr_images.shape[0]}")
            hr_index = torch.zeros_like(resolution_index)
            segments.append(("hr", hr_images, modality_index, level_index, hr_index))
        query_res = index_tensor(query_resolution, RESOLUTIONS, batch, device, "query_resolution")
        for name, query in (("sketch", sketch), ("ir", ir)):
            if query is not None:
                query = self._images(query, name)
                if query.shape[0] != batch:
                    raise ValueError(f"{name} must have {batch} rows, got {query.shape[0]}")
                code = torch.full_like(modality_index, MODALITIES.index(name))
                segments.append((name, query, code, query_level, query_res))
        collect = None
        if cfg.granularity.enabled and cfg.losses.orthogonality > 0:
            collect = torch.zeros(batch * len(segments), dtype=torch.bool, device=device)
            collect[:batch] = True
        visual = self._visual_pass(
            torch.cat([s[1] for s in segments]),
            torch.cat([s[2] for s in segments]),
            torch.cat([s[3] for s in segments]),
            torch.cat([s[4] for s in segments]),
            collect=collect,
        )
        names = [s[0] for s in segments]
        embedding = dict(zip(names, visual.embedding.split(batch), strict=True))
        tokens = dict(zip(names, visual.tokens.split(batch), strict=True))

        text_pass = self._text_pass(ids)
        image_raw, text_raw = embedding["main"], text_pass.embedding
        out: dict[str, Any] = {
            "image_embeds": F.normalize(image_raw, dim=-1),
            "text_embeds": F.normalize(text_raw, dim=-1),
            "image_features": image_raw,
            "text_features": text_raw,
            "logit_scale": self.backbone.logit_scale.exp(),
            "levels": level_index,
        }
        if visual.routing.expert_means:
            out["expert_means"] = visual.routing.expert_means
        if self.level_classifier is not None:
            out["image_level_logits"] = self.level_classifier(image_raw)
            out["text_level_logits"] = self.level_classifier(text_raw)
            out["match_logits"] = self.consistency_matcher(image_raw, text_raw)
            if use_gcr:
                out["mismatch_logits"] = self.consistency_matcher(embedding["mismatch"], text_raw)
                out["mismatch_levels"] = mismatch_levels
        router = _router_probs_by_segment(visual.routing.router_probs, batch, len(segments), names)
        if router or text_pass.routing.router_probs:
            out["router_probs"] = router + text_pass.routing.router_probs

        self._fusion_outputs(out, embedding, text_raw)
        self._crst_outputs(out, embedding, tokens, text_pass, resolution_index, mlm_ids, mlm_labels)
        if reid_images is not None and self.scenario_heads is not None:
            self._reid_outputs(out, reid_images, reid_modality, reid_resolution)
        if self.image_attributes is not None:
            out["attribute_logits_image"] = self.image_attributes(image_raw)
        if self.text_attributes is not None:
            out["attribute_logits_text"] = self.text_attributes(text_raw)
        return out

    def _fusion_outputs(self, out: dict[str, Any], embedding: dict[str, torch.Tensor], text_raw: torch.Tensor) -> None:
        for name in ("sketch", "ir"):
            if name in embedding:
                out[f"{name}_embeds"] = F.normalize(embedding[name], dim=-1)
        if self.fusion is None or not ({"sketch", "ir"} & set(embedding)):
            return
        available = {"text"} | ({"sketch", "ir"} & set(embedding))
        modes = [m for m in FUSION_MODES if mode_modalities(m) <= available]
        fused = self.fusion.all_modes(
            text_raw, embedding.get("sketch", text_raw), embedding.get("ir", text_raw), modes=modes
        )
        out["fused"] = {mode: F.normalize(v, dim=-1) for mode, v in fused.items()}

    def _crst_outputs(
        self,
        out: dict[str, Any],
        embedding: dict[str, torch.Tensor],
        tokens: dict[str, torch.Tensor],
        text_pass: TextPass,
        resolution_index: torch.Tensor,
        mlm_ids: torch.Tensor | None,
        mlm_labels: torch.Tensor | None,
    ) -> None:
        if "hr" in embedding:
            out["image_embeds_hr"] = F.normalize(embedding["hr"], dim=-1)
        if self.refinement is not None:
            refined = self.refinement(embedding["main"], self._project_text_tokens(text_pass), text_pass.valid)
            out["image_embeds_refined"] = F.normalize(refined, dim=-1)
        if self.masked_grounding is None or mlm_ids is None:
            return
        if mlm_labels is None:
            raise ValueError("mlm_ids need mlm_labels (original ids at masked positions, -100 elsewhere)")
        masked_ids = self._text_ids(mlm_ids)
        mlm_labels = mlm_labels.to(self.device)
        if masked_ids.shape != mlm_labels.shape or masked_ids.shape[0] != embedding["main"].shape[0]:
            raise ValueError(
                f"mlm_ids {tuple(masked_ids.shape)} and mlm_labels {tuple(mlm_labels.shape)} must match [B, L]"
            )
        masked = mlm_labels != IGNORE_INDEX
        masked_text = self._text_pass(masked_ids)
        if bool(masked[:, masked_text.valid.shape[1] :].any()):
            raise ValueError("mlm_labels mark positions after the end-of-text token")
        masked = masked[:, : masked_text.valid.shape[1]]
        visual_tokens = tokens["main"]
        reliability = self.reliability_gate(
            visual_tokens, self.resolution_embedding.vectors(resolution_index).to(visual_tokens.dtype)
        )
        out["reliability"] = reliability
        out["mlm_logits"] = self.masked_grounding(
            self._project_text_tokens(masked_text), visual_tokens @ self.backbone.visual.proj, reliability, masked
        )
        out["mlm_targets"] = mlm_labels[:, : masked.shape[1]][masked]
        out["mlm_mask"] = mlm_labels != IGNORE_INDEX

    def _reid_outputs(
        self, out: dict[str, Any], images: torch.Tensor, modality: IndexInput, resolution: IndexInput
    ) -> None:
        images = self._images(images, "reid_images")
        batch = images.shape[0]
        reid = self._visual_pass(
            images,
            index_tensor(modality, MODALITIES, batch, self.device, "reid_modality"),
            self._levels(None, batch),
            index_tensor(resolution, RESOLUTIONS, batch, self.device, "reid_resolution"),
            scenarios=True,
        )
        features, logits = self.scenario_heads(reid.scenario)
        out["reid_tokens"] = reid.scenario
        out["reid_features"] = features
        if logits is not None:
            out["reid_logits"] = logits
        if reid.routing.scenario_gates:
            out["scenario_gates"] = reid.routing.scenario_gates


def _router_probs_by_segment(
    probs: list[torch.Tensor], batch: int, segments: int, names: list[str]
) -> list[torch.Tensor]:
    """Router probabilities of the ordinary segments (the g' and HR re-runs of the same images are left out)."""
    keep = [i for i, name in enumerate(names) if name in ("main", "sketch", "ir")]
    if len(keep) == segments:
        return probs
    out = []
    for layer in probs:
        per_segment = layer.view(segments, batch, -1, layer.shape[-1])
        out.append(per_segment[keep].reshape(-1, layer.shape[-1]))
    return out


def _to_float(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.float() if value.dtype in (torch.bfloat16, torch.float16) else value
    if isinstance(value, dict):
        return {k: _to_float(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_to_float(v) for v in value]
    return value
