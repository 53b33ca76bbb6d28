"""Loss composition in one place: forward outputs + batch → named losses and their weighted total.

Each term is an ``engine.lab.losses`` function, weighted by ``config.losses``; a term is present exactly when
its weight is positive and the forward produced its inputs (docs/methods.md §1.9, §2, §3, §4, §6):

  sdm            SDM(t, v) — v is the HR view when CRST views exist                          (§2)
  tal            soft TAL with level margins, PCIA soft labels when ``losses.pcia``         (§1.7)
  orthogonality  L_ortho over the granularity experts                                        (§1.6)
  gcr            L_cls + L_match                                                             (§1.8)
  routing_entropy L_ada of the adapter routers                                               (§4)
  fusion_sdm     Σ over the fused query modes of SDM(f_mode, v_rgb)                          (§4)
  sdm_low_resolution SDM(t, ṽᴸ) (TGR-refined LR view, else the LR view)                      (§2)
  rcr            masked-token CE of the reliability-gated grounding                          (§2)
  tgr            ‖ṽᴸ/‖ṽᴸ‖ − sg(vᴴ/‖vᴴ‖)‖²                                                    (§2)
  cr_rda         HR→LR ranking distillation                                                  (§2)
  scenario_id    Uni-AT identity loss (SAID / HDW per config)                                (§3)
  attributes     mean CE of the attribute heads: image heads on every attribute of the image
                 (world only), text heads on the attributes the text states                 (§6)
  query_attributes  the image heads on the sketch and IR query embeddings, the pair's attributes
                 without its colours (world only)                                           (§4)
  teacher_attributes  the image heads on real footage crops against the pixel reader's confident
                 readings: per taught attribute the confidence-weighted mean CE, averaged over the
                 attributes (engine.lab.train.teacher)                                          (§6)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from engine.kernel.ontology import ATTRIBUTE_KEYS, COLOR_KEYS, LEVELS
from engine.lab.losses.crst import cr_rda_loss, masked_token_loss, tgr_loss
from engine.lab.losses.gcr import reasoning_loss
from engine.lab.losses.orthogonality import orthogonality_loss
from engine.lab.losses.pcia import pcia_soft_labels
from engine.lab.losses.routing import routing_entropy
from engine.lab.losses.sdm import sdm_loss
from engine.lab.losses.tal import soft_tal_loss
from engine.lab.losses.uniat import uniat_id_loss
from engine.lab.train.batches import Batch
from engine.lab.train.teacher import TeacherBatch
from engine.retrieval.models import ModelConfig

TERM_ORDER: tuple[str, ...] = (
    "sdm", "tal", "orthogonality", "gcr", "routing_entropy", "fusion_sdm", "sdm_low_resolution", "rcr",
    "tgr", "cr_rda", "scenario_id", "attributes", "query_attributes", "teacher_attributes",
)


@dataclass
class LossResult:
    terms: dict[str, torch.Tensor]  # unweighted value of each present term
    weights: dict[str, float]
    total: torch.Tensor

    def as_floats(self) -> dict[str, float]:
        return {name: float(value.detach()) for name, value in self.terms.items()}


def _attribute_ce(logits: dict[str, torch.Tensor], targets: torch.Tensor) -> torch.Tensor | None:
    """Mean over attributes (with at least one labelled row) of the per-attribute cross-entropy."""
    losses = []
    for column, key in enumerate(ATTRIBUTE_KEYS):
        target = targets[:, column]
        if bool((target >= 0).any()):
            losses.append(F.cross_entropy(logits[key], target, ignore_index=-100))
    return torch.stack(losses).mean() if losses else None


def teacher_attribute_loss(logits: dict[str, torch.Tensor], targets: torch.Tensor,
                           weights: torch.Tensor) -> torch.Tensor | None:
    """Mean over the attributes with a reading of the confidence-weighted mean cross-entropy: per attribute
    Σ wᵢ·CEᵢ / Σ wᵢ over the rows whose target is set (``targets`` −100 elsewhere, ``weights`` [B, 18])."""
    losses = []
    for column, key in enumerate(ATTRIBUTE_KEYS):
        taught = targets[:, column] >= 0
        if not bool(taught.any()):
            continue
        weight = weights[taught, column].to(logits[key].dtype)
        ce = F.cross_entropy(logits[key][taught], targets[taught, column], reduction="none")
        losses.append((weight * ce).sum() / weight.sum().clamp_min(1e-12))
    return torch.stack(losses).mean() if losses else None


def _without_colours(targets: torch.Tensor) -> torch.Tensor:
    """The image attribute targets with every colour column ignored (a sketch or IR image shows none)."""
    shown = targets.clone()
    shown[:, [ATTRIBUTE_KEYS.index(key) for key in COLOR_KEYS]] = -100
    return shown


def compose_losses(
    outputs: dict[str, Any], batch: Batch, config: ModelConfig, generator: torch.Generator | None = None,
    teacher: TeacherBatch | None = None,
) -> LossResult:
    """Named losses and the weighted total for one step (see the module docstring for each term); ``teacher``:
    the step's teacher crops, whose heads' logits are ``outputs["attribute_logits_teacher"]``."""
    w = config.losses
    tau = w.temperature
    labels = batch.match_labels  # text–image terms follow the run's matching rule (clothing id or identity)
    text = outputs["text_embeds"]
    image_clean = outputs.get("image_embeds_hr", outputs["image_embeds"])
    terms: dict[str, torch.Tensor] = {}
    weights: dict[str, float] = {}

    def add(name: str, weight: float, value: torch.Tensor | None) -> None:
        if weight > 0 and value is not None:
            terms[name] = value
            weights[name] = weight

    if w.sdm > 0:
        add("sdm", w.sdm, sdm_loss(text, image_clean, labels, tau))
    if w.tal > 0:
        similarity = F.normalize(text, dim=1) @ F.normalize(image_clean, dim=1).t()
        if w.pcia:
            soft = pcia_soft_labels(labels, batch.query_codes, batch.fine_codes, batch.levels, w.pcia_threshold,
                                    w.pcia_noise, LEVELS.index(w.pcia_coarse_level), generator)
            t2i, i2t = soft.t2i, soft.i2t
        else:
            t2i = (labels.unsqueeze(1) == labels.unsqueeze(0)).to(similarity.dtype)
            i2t = t2i.t()
        margins = torch.tensor(w.tal_margins, dtype=similarity.dtype, device=similarity.device)[batch.levels]
        add("tal", w.tal, soft_tal_loss(similarity, t2i.to(similarity.dtype), i2t.to(similarity.dtype), margins,
                                        w.tal_temperature))
    if w.orthogonality > 0 and outputs.get("expert_means"):
        add("orthogonality", w.orthogonality, orthogonality_loss(outputs["expert_means"], w.orthogonality_absolute))
    if w.gcr > 0 and "mismatch_logits" in outputs:
        add("gcr", w.gcr, reasoning_loss(outputs["image_level_logits"], outputs["text_level_logits"],
                                         outputs["levels"], outputs["match_logits"], outputs["mismatch_logits"]))
    if w.routing_entropy > 0 and outputs.get("router_probs"):
        add("routing_entropy", w.routing_entropy, routing_entropy(outputs["router_probs"]))
    if w.fusion_sdm > 0 and outputs.get("fused"):
        fused = [sdm_loss(vector, image_clean, labels, tau) for vector in outputs["fused"].values()]
        add("fusion_sdm", w.fusion_sdm, torch.stack(fused).sum())
    if "image_embeds_hr" in outputs:
        low = outputs.get("image_embeds_refined", outputs["image_embeds"])
        add("sdm_low_resolution", w.sdm_low_resolution, sdm_loss(text, low, labels, tau))
        if "image_embeds_refined" in outputs:
            add("tgr", w.tgr, tgr_loss(outputs["image_embeds_refined"], outputs["image_embeds_hr"]))
        add("cr_rda", w.cr_rda, cr_rda_loss(text, outputs["image_embeds_hr"], low, tau))
    if w.rcr > 0 and "mlm_logits" in outputs:
        logits, targets = outputs["mlm_logits"], outputs["mlm_targets"]
        masked = torch.ones(1, targets.shape[0], dtype=torch.bool, device=targets.device)
        add("rcr", w.rcr, masked_token_loss(logits.unsqueeze(0), targets.unsqueeze(0), masked))
    if w.scenario_id > 0 and "reid_logits" in outputs and batch.reid_person is not None:
        add("scenario_id", w.scenario_id, uniat_id_loss(
            outputs["reid_logits"], batch.reid_person, batch.reid_clothing, batch.reid_modality,
            batch.clothing_person, said=w.said, hdw=w.hdw))
    if w.attributes > 0:
        parts = []
        if "attribute_logits_image" in outputs and batch.image_attribute_targets is not None:
            parts.append(_attribute_ce(outputs["attribute_logits_image"], batch.image_attribute_targets))
        if "attribute_logits_text" in outputs:
            parts.append(_attribute_ce(outputs["attribute_logits_text"], batch.text_attribute_targets))
        parts = [p for p in parts if p is not None]
        add("attributes", w.attributes, torch.stack(parts).sum() if parts else None)
    if w.query_attributes > 0 and batch.image_attribute_targets is not None:
        shown = _without_colours(batch.image_attribute_targets)
        parts = [_attribute_ce(outputs[f"attribute_logits_{name}"], shown)
                 for name in ("sketch", "ir") if f"attribute_logits_{name}" in outputs]
        parts = [p for p in parts if p is not None]
        add("query_attributes", w.query_attributes, torch.stack(parts).sum() if parts else None)

    if w.teacher_attributes > 0 and teacher is not None and "attribute_logits_teacher" in outputs:
        add("teacher_attributes", w.teacher_attributes,
            teacher_attribute_loss(outputs["attribute_logits_teacher"], teacher.targets, teacher.weights))

    ordered = {name: terms[name] for name in TERM_ORDER if name in terms}
    if not ordered:
        raise ValueError("no loss term is active: every weight in config.losses is 0 or lacks its inputs")
    total = torch.stack([weights[name] * value for name, value in ordered.items()]).sum()
    return LossResult(ordered, {name: weights[name] for name in ordered}, total)

