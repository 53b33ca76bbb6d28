"""The training pass of ``PersonSearchModel`` (``engine.retrieval.models.model``): ``forward_train(model, …)``
returns a dict of everything the losses need — embeddings per level and modality, the fusion, CRST,
re-identification and routing outputs (see its docstring). It runs the model's public passes (``visual_pass``,
``text_pass``, ``view_pass``) and its heads with gradients; the model itself holds no training code."""

from __future__ import annotations

from typing import Any

import torch
import torch.nn.functional as F

from engine.lab.losses.crst import IGNORE_INDEX
from engine.retrieval.models.fusion import mode_modalities
from engine.retrieval.models.model import PersonSearchModel
from engine.retrieval.models.names import FUSION_MODES, LEVELS, MODALITIES, RESOLUTIONS, index_tensor
from engine.retrieval.models.passes import IndexInput, TextInput, TextPass


def forward_train(
    model: PersonSearchModel,
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
    teacher_images: torch.Tensor | None = None,
    teacher_resolution: IndexInput = "hr",
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
    - Teacher (``losses.teacher_attributes``): ``teacher_images`` [Bt, …] RGB crops of real footage at
      ``teacher_resolution``, read by the image tower (the image query level's expert) and attribute heads.

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
    block of [Br, 6, 2]; ``attribute_logits_image`` / ``attribute_logits_text`` {key: [B, values]};
    ``attribute_logits_teacher`` {key: [Bt, values]} of the teacher crops.
    """
    with model.autocast():
        out = _forward_train(
            model, images, text, levels, modality, resolution, hr_images, mlm_ids, mlm_labels, sketch, ir,
            query_resolution, mismatch_levels, reid_images, reid_modality, reid_resolution,
        )
        if teacher_images is not None and model.image_attributes is not None:
            teacher = model.view_pass(teacher_images, "rgb", None, teacher_resolution)
            out["attribute_logits_teacher"] = model.image_attributes(teacher.embedding)
    return _to_float(out)


def _forward_train(
    model: PersonSearchModel, images, text, levels, modality, resolution, hr_images, mlm_ids, mlm_labels, sketch, ir,
    query_resolution, mismatch_levels, reid_images, reid_modality, reid_resolution,
) -> dict[str, Any]:
    cfg = model.config
    images = model.checked_images(images)
    batch, device = images.shape[0], model.device
    ids = model.text_ids(text)
    if ids.shape[0] != batch:
        raise ValueError(f"images have {batch} rows but text has {ids.shape[0]}")
    if cfg.granularity.enabled and levels is None:
        raise ValueError("levels are required in training: the image runs the expert of its text's level")
    level_index = model.level_indices(levels, batch)
    modality_index = index_tensor(modality, MODALITIES, batch, device, "modality")
    resolution_index = index_tensor(resolution, RESOLUTIONS, batch, device, "resolution")
    query_level = model.level_indices(None, batch)

    # one visual pass over every segment: main, g' (GCR), HR (CRST), sketch and IR (FlexiReID)
    segments: list[tuple[str, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]] = [
        ("main", images, modality_index, level_index, resolution_index)
    ]
    use_gcr = model.consistency_matcher is not None and cfg.losses.gcr > 0
    if use_gcr:
        if mismatch_levels is None:
            shift = torch.randint(1, len(LEVELS), (batch,), device=device)
            mismatch_levels = (level_index + shift) % len(LEVELS)
        mismatch_levels = index_tensor(mismatch_levels, LEVELS, batch, device, "mismatch_levels")
        if bool((mismatch_levels == level_index).any()):
            raise ValueError("mismatch_levels must differ from levels in every row")
        segments.append(("mismatch", images, modality_index, mismatch_levels, resolution_index))
    if hr_images is not None:
        hr_images = model.checked_images(hr_images, "hr_images")
        if hr_images.shape[0] != batch:
            raise ValueError(f"hr_images must have {batch} rows, got {hr_images.shape[0]}")
        hr_index = torch.zeros_like(resolution_index)
        segments.append(("hr", hr_images, modality_index, level_index, hr_index))
    query_res = index_tensor(query_resolution, RESOLUTIONS, batch, device, "query_resolution")
    for name, query in (("sketch", sketch), ("ir", ir)):
        if query is not None:
            query = model.checked_images(query, name)
            if query.shape[0] != batch:
                raise ValueError(f"{name} must have {batch} rows, got {query.shape[0]}")
            code = torch.full_like(modality_index, MODALITIES.index(name))
            segments.append((name, query, code, query_level, query_res))
    collect = None
    if cfg.granularity.enabled and cfg.losses.orthogonality > 0:
        collect = torch.zeros(batch * len(segments), dtype=torch.bool, device=device)
        collect[:batch] = True
    visual = model.visual_pass(
        torch.cat([s[1] for s in segments]),
        torch.cat([s[2] for s in segments]),
        torch.cat([s[3] for s in segments]),
        torch.cat([s[4] for s in segments]),
        collect=collect,
    )
    names = [s[0] for s in segments]
    embedding = dict(zip(names, visual.embedding.split(batch), strict=True))
    tokens = dict(zip(names, visual.tokens.split(batch), strict=True))

    text_pass = model.text_pass(ids)
    image_raw, text_raw = embedding["main"], text_pass.embedding
    out: dict[str, Any] = {
        "image_embeds": F.normalize(image_raw, dim=-1),
        "text_embeds": F.normalize(text_raw, dim=-1),
        "image_features": image_raw,
        "text_features": text_raw,
        "logit_scale": model.backbone.logit_scale.exp(),
        "levels": level_index,
    }
    if visual.routing.expert_means:
        out["expert_means"] = visual.routing.expert_means
    if model.level_classifier is not None:
        out["image_level_logits"] = model.level_classifier(image_raw)
        out["text_level_logits"] = model.level_classifier(text_raw)
        out["match_logits"] = model.consistency_matcher(image_raw, text_raw)
        if use_gcr:
            out["mismatch_logits"] = model.consistency_matcher(embedding["mismatch"], text_raw)
            out["mismatch_levels"] = mismatch_levels
    router = _router_probs_by_segment(visual.routing.router_probs, batch, len(segments), names)
    if router or text_pass.routing.router_probs:
        out["router_probs"] = router + text_pass.routing.router_probs

    _fusion_outputs(model, out, embedding, text_raw, tokens, text_pass)
    _crst_outputs(model, out, embedding, tokens, text_pass, resolution_index, mlm_ids, mlm_labels)
    if reid_images is not None and model.scenario_heads is not None:
        _reid_outputs(model, out, reid_images, reid_modality, reid_resolution)
    if model.image_attributes is not None:
        out["attribute_logits_image"] = model.image_attributes(image_raw)
    if model.text_attributes is not None:
        out["attribute_logits_text"] = model.text_attributes(text_raw)
    return out


def _fusion_outputs(model: PersonSearchModel, out: dict[str, Any], embedding: dict[str, torch.Tensor],
                    text_raw: torch.Tensor, tokens: dict[str, torch.Tensor], text_pass: TextPass) -> None:
    for name in ("sketch", "ir"):
        if name in embedding:
            out[f"{name}_embeds"] = F.normalize(embedding[name], dim=-1)
            if model.image_attributes is not None and model.config.losses.query_attributes > 0:
                out[f"attribute_logits_{name}"] = model.image_attributes(embedding[name])
    if model.fusion is None or not ({"sketch", "ir"} & set(embedding)):
        return
    available = {"text"} | ({"sketch", "ir"} & set(embedding))
    modes = [m for m in FUSION_MODES if mode_modalities(m) <= available]
    sequences = None
    if model.fusion.keys == "sequence":
        sequences = {"text": (model.project_text_tokens(text_pass), text_pass.valid)}
        for name in {"sketch", "ir"} & set(embedding):
            sequences[name] = model.visual_sequence(tokens[name])
        for name in {"sketch", "ir"} - set(embedding):
            sequences[name] = sequences["text"]  # never attended: the modality is absent from every mode
    given = (text_raw, embedding.get("sketch", text_raw), embedding.get("ir", text_raw))
    # mean fusion reads pooled vectors only and takes no sequences
    fused = model.fusion.all_modes(*given, modes=modes, sequences=sequences) if sequences is not None else (
        model.fusion.all_modes(*given, modes=modes))
    out["fused"] = {mode: F.normalize(v, dim=-1) for mode, v in fused.items()}


def _crst_outputs(
    model: PersonSearchModel,
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
    if model.refinement is not None:
        refined = model.refinement(embedding["main"], model.project_text_tokens(text_pass), text_pass.valid)
        out["image_embeds_refined"] = F.normalize(refined, dim=-1)
    if model.masked_grounding is None or mlm_ids is None:
        return
    if mlm_labels is None:
        raise ValueError("mlm_ids need mlm_labels (original ids at masked positions, -100 elsewhere)")
    masked_ids = model.text_ids(mlm_ids)
    mlm_labels = mlm_labels.to(model.device)
    if masked_ids.shape != mlm_labels.shape or masked_ids.shape[0] != embedding["main"].shape[0]:
        raise ValueError(
            f"mlm_ids {tuple(masked_ids.shape)} and mlm_labels {tuple(mlm_labels.shape)} must match [B, L]"
        )
    masked = mlm_labels != IGNORE_INDEX
    masked_text = model.text_pass(masked_ids)
    if bool(masked[:, masked_text.valid.shape[1] :].any()):
        raise ValueError("mlm_labels mark positions after the end-of-text token")
    masked = masked[:, : masked_text.valid.shape[1]]
    visual_tokens = tokens["main"]
    reliability = model.reliability_gate(
        visual_tokens, model.resolution_embedding.vectors(resolution_index).to(visual_tokens.dtype)
    )
    out["reliability"] = reliability
    out["mlm_logits"] = model.masked_grounding(
        model.project_text_tokens(masked_text), visual_tokens @ model.backbone.visual.proj, reliability, masked
    )
    out["mlm_targets"] = mlm_labels[:, : masked.shape[1]][masked]
    out["mlm_mask"] = mlm_labels != IGNORE_INDEX


def _reid_outputs(
    model: PersonSearchModel, out: dict[str, Any], images: torch.Tensor, modality: IndexInput, resolution: IndexInput
) -> None:
    images = model.checked_images(images, "reid_images")
    batch = images.shape[0]
    reid = model.visual_pass(
        images,
        index_tensor(modality, MODALITIES, batch, model.device, "reid_modality"),
        model.level_indices(None, batch),
        index_tensor(resolution, RESOLUTIONS, batch, model.device, "reid_resolution"),
        scenarios=True,
    )
    features, logits = model.scenario_heads(reid.scenario)
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
