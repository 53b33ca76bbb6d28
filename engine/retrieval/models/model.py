"""PersonSearchModel: one open_clip CLIP with the components of the four papers, each chosen by config.

Towers: open_clip's ``CLIP`` (its VisionTransformer and text transformer), blocks replaced by
``LineupBlock`` so pretrained names stay. Visual token layout: [CLS, patches…, (six scenario tokens)];
every token gets the positional embedding, then the modality offset and λ_r e_r (CRST). Scenario tokens are
appended only for re-identification passes unless ``scenarios.isolate`` is false; when isolated, ordinary
tokens do not attend to them, so retrieval vectors do not depend on them.

Inference surface (docs/methods.md §1.9): ``encode_text``, ``encode_images``, ``encode_images_all_levels``,
``fuse``, ``encode_reid``; every vector L2-normalised, computed without gradients, bf16 autocast on CUDA.
The passes those are made of (``visual_pass``, ``text_pass``, ``view_pass`` and the input checks) are public too:
the training pass (``engine.lab.train.forward``) runs them with gradients. The model holds no training code.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from open_clip.transformer import QuickGELU
from torch import nn

from engine.retrieval.models.attributes import AttributeHeads
from engine.retrieval.models.backbone import build_backbone
from engine.retrieval.models.blocks import LineupBlock, Routing
from engine.retrieval.models.config import ModelConfig
from engine.retrieval.models.crst import MaskedGrounding, ReliabilityGate, ResolutionEmbedding, TextGuidedRefinement
from engine.retrieval.models.device import autocast_for
from engine.retrieval.models.fusion import MeanFusion, QueryFusion, Sequences
from engine.retrieval.models.gcr import ConsistencyMatcher, GranularityClassifier
from engine.retrieval.models.names import LEVELS, MODALITIES, RESOLUTIONS, SCENARIOS, index_tensor
from engine.retrieval.models.passes import IndexInput, TextInput, TextPass, VisualPass
from engine.retrieval.models.scenarios import ScenarioHeads
from engine.retrieval.models.tokenizer import Tokenizer


class PersonSearchModel(nn.Module):
    def __init__(self, config: ModelConfig) -> None:
        super().__init__()
        self.config = config
        cfg_v, cfg_t = config.vision, config.text
        self.tokenizer = Tokenizer(cfg_t.context_length)
        act_layer: type[nn.Module] = QuickGELU if config.quick_gelu else nn.GELU
        self.backbone, clip_names = build_backbone(config, self.tokenizer.vocab_size, act_layer)
        #: parameter names in open_clip's CLIP layout (pretrained weights load into these)
        self.clip_parameter_names: frozenset[str] = clip_names
        visual = self.backbone.visual

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
            self.fusion = QueryFusion(dim, fusion.heads, fusion.layers, fusion.mlp_ratio, act_layer, fusion.keys)
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

    def text_ids(self, text: TextInput) -> torch.Tensor:
        """Token ids [B, L] on the model's device: strings tokenised, given ids checked against the context."""
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

    def checked_images(self, images: torch.Tensor, what: str = "images") -> torch.Tensor:
        """Normalised images [B, 3, H, W] of the model's size, as float32 on its device (errors name ``what``)."""
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

    def level_indices(self, level: IndexInput | None, batch: int) -> torch.Tensor:
        """Level indices [B] (``None``: the image query level)."""
        if level is None:
            level = self.config.granularity.image_query_level
        return index_tensor(level, LEVELS, batch, self.device, "level")

    # ------------------------------------------------------------------------------------------------------
    # towers

    def visual_pass(
        self,
        images: torch.Tensor,
        modality: torch.Tensor,
        level: torch.Tensor,
        resolution: torch.Tensor,
        scenarios: bool = False,
        collect: torch.Tensor | None = None,
    ) -> VisualPass:
        """One visual pass over index tensors [B] per row (``scenarios``: append the scenario tokens; ``collect``
        [B] bool: rows whose expert means are kept for the orthogonality loss)."""
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

    def text_pass(self, ids: torch.Tensor) -> TextPass:
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

    def project_text_tokens(self, text: TextPass) -> torch.Tensor:
        return text.hidden @ self.backbone.text_projection

    def visual_sequence(self, tokens: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """(CLS and patch tokens in the joint space [B, 1 + P, D], all valid) for sequence-key fusion."""
        projected = tokens @ self.backbone.visual.proj
        return projected, torch.ones(projected.shape[:2], dtype=torch.bool, device=projected.device)

    def autocast(self):
        """The autocast context the model's passes run under on its device (bf16 on CUDA)."""
        return autocast_for(self.device)

    # ------------------------------------------------------------------------------------------------------
    # inference surface

    @torch.no_grad()
    def encode_text(self, texts: TextInput) -> tuple[torch.Tensor, torch.Tensor | None]:
        """(unit vectors [B, D], level logits [B, G] from the GCR classifier or ``None`` without GCR)."""
        ids = self.text_ids(texts)
        with self.autocast():
            text = self.text_pass(ids)
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
        return F.normalize(self.view_pass(images, modality, level, resolution).embedding.float(), dim=-1)

    def view_pass(
        self, images: torch.Tensor, modality: IndexInput, level: IndexInput | None, resolution: IndexInput
    ) -> VisualPass:
        """One visual pass of a batch for a single view (modality, level expert, resolution), under autocast."""
        images = self.checked_images(images)
        batch = images.shape[0]
        with self.autocast():
            return self.visual_pass(
                images,
                index_tensor(modality, MODALITIES, batch, self.device, "modality"),
                self.level_indices(level, batch),
                index_tensor(resolution, RESOLUTIONS, batch, self.device, "resolution"),
            )

    @torch.no_grad()
    def encode_images_all_levels(
        self, images: torch.Tensor, modality: IndexInput = "rgb", resolution: IndexInput = "hr"
    ) -> torch.Tensor:
        """Unit vectors [B, G, D]: one gallery view per level (identical views without granularity experts)."""
        images = self.checked_images(images)
        batch, count = images.shape[0], len(LEVELS)
        modality_index = index_tensor(modality, MODALITIES, batch, self.device, "modality")
        resolution_index = index_tensor(resolution, RESOLUTIONS, batch, self.device, "resolution")
        if not self.config.granularity.enabled:
            single = self.encode_images(images, modality_index, 0, resolution_index)
            return single.unsqueeze(1).expand(-1, count, -1).contiguous()
        levels = torch.arange(count, device=self.device).repeat_interleave(batch)  # level-major: slices per expert
        with self.autocast():
            out = self.visual_pass(
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
        return self.encode_images_with_attributes(images, modality, level, resolution)[1]

    @torch.no_grad()
    def encode_images_with_attributes(
        self,
        images: torch.Tensor,
        modality: IndexInput = "rgb",
        level: IndexInput | None = None,
        resolution: IndexInput = "hr",
    ) -> tuple[torch.Tensor, dict[str, torch.Tensor]]:
        """``encode_images`` and ``image_attribute_logits`` of one view from a single visual pass."""
        if self.image_attributes is None:
            raise RuntimeError("this model has no image attribute heads (config attributes.image is false)")
        out = self.view_pass(images, modality, level, resolution)
        with self.autocast():
            logits = self.image_attributes(out.embedding)
        return F.normalize(out.embedding.float(), dim=-1), {k: v.float() for k, v in logits.items()}

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
        with self.autocast():
            embeds, sequences = self._query_embeddings(text, sketch, ir, resolution)
            fused = self.fusion(**embeds, sequences=sequences) if sequences is not None else self.fusion(**embeds)
        return F.normalize(fused.float(), dim=-1)

    def _query_embeddings(
        self, text: TextInput | None, sketch: torch.Tensor | None, ir: torch.Tensor | None, resolution: IndexInput
    ) -> tuple[dict[str, torch.Tensor | None], Sequences | None]:
        """(pooled [B, D] per modality or None, their token sequences when the fusion attends over them)."""
        out: dict[str, torch.Tensor | None] = {"text": None, "sketch": None, "ir": None}
        want_sequences = self.fusion is not None and self.fusion.keys == "sequence"
        sequences: Sequences = {}
        if text is not None:
            text_pass = self.text_pass(self.text_ids(text))
            out["text"] = text_pass.embedding
            if want_sequences:
                sequences["text"] = (self.project_text_tokens(text_pass), text_pass.valid)
        for name, images in (("sketch", sketch), ("ir", ir)):
            if images is None:
                continue
            images = self.checked_images(images, name)
            batch = images.shape[0]
            visual = self.visual_pass(
                images,
                index_tensor(name, MODALITIES, batch, self.device, "modality"),
                self.level_indices(None, batch),
                index_tensor(resolution, RESOLUTIONS, batch, self.device, "resolution"),
            )
            out[name] = visual.embedding
            if want_sequences:
                sequences[name] = self.visual_sequence(visual.tokens)
        sizes = {name: x.shape[0] for name, x in out.items() if x is not None}
        if not sizes:
            raise ValueError("fuse needs at least one of text, sketch, ir")
        if len(set(sizes.values())) != 1:
            raise ValueError(f"text, sketch and ir must have the same number of rows, got {sizes}")
        return out, (sequences if want_sequences else None)

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
        images = self.checked_images(images)
        batch = images.shape[0]
        with self.autocast():
            out = self.visual_pass(
                images,
                index_tensor(modality, MODALITIES, batch, self.device, "modality"),
                self.level_indices(None, batch),
                index_tensor(resolution, RESOLUTIONS, batch, self.device, "resolution"),
                scenarios=True,
            )
            features, _ = self.scenario_heads(out.scenario)
        return F.normalize(features[:, SCENARIOS.index(scenario)].float(), dim=-1)
