"""Uni-AT identity objectives: scenario-aware ID loss (SAID) and hierarchical dynamic weighting (HDW)
(docs/methods.md §3; AT-ReID ``loss/said.py``, ``loss/hdw.py``).

Heads, in order, are ``SCENARIOS``. SAID: DT heads see only RGB samples, NT heads only IR samples, AD
heads all; LT heads: CE over person ids; ST heads: CE over clothing ids where the logits of the sample's
*other* outfits of the same person are overwritten with −10. Baseline (``said=False``): every head, all
samples, plain CE over person ids. Without HDW the total is the sum of the per-head means.

HDW: ℓ_i per sample, p_i = exp(−ℓ_i); w_DT = sqrt(1 − mean p over the DT-ST ∪ DT-LT samples), likewise
NT, AD, and w_ST / w_LT over the three ST / LT heads; w^s = (w_tm / max(w_DT, w_NT, w_AD)) ·
(w_ti / max(w_ST, w_LT)) with each max clamped ≥ 1e-6; L = Σ_s Σ_{i∈B_s} w^s ℓ_i / |B|.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch
import torch.nn.functional as F

from engine.kernel.vocabulary import SCENARIOS
from engine.lab.losses._checks import LossInputError, require_dim, require_len

RGB, IR = 0, 1  # modality codes of the samples
OTHER_OUTFIT_LOGIT = -10.0
HDW_MAX_FLOOR = 1e-6


def scenario_samples(scenario: str, modality: torch.Tensor) -> torch.Tensor:
    """Bool mask of the batch samples a scenario head is trained on under SAID."""
    if scenario not in SCENARIOS:
        raise LossInputError(f"scenario must be one of {SCENARIOS}, got {scenario!r}")
    task = scenario.split("-")[0]
    if task == "DT":
        return modality == RGB
    if task == "NT":
        return modality == IR
    return torch.ones_like(modality, dtype=torch.bool)


def other_outfit_mask(
    person_ids: torch.Tensor, clothing_ids: torch.Tensor, clothing_person: torch.Tensor
) -> torch.Tensor:
    """B×C mask: column c is another outfit of sample i's person (same person, different clothing id)."""
    return (clothing_person.unsqueeze(0) == person_ids.unsqueeze(1)) & (
        torch.arange(clothing_person.shape[0], device=clothing_ids.device).unsqueeze(0)
        != clothing_ids.unsqueeze(1)
    )


def _require_classes(name: str, logits: torch.Tensor, targets: torch.Tensor, kind: str) -> None:
    if targets.numel() and int(targets.max()) >= logits.shape[1]:
        raise LossInputError(f"{name} has {logits.shape[1]} columns but a {kind} id is {int(targets.max())}")


def scenario_id_losses(
    head_logits: Sequence[torch.Tensor],
    person_ids: torch.Tensor,
    clothing_ids: torch.Tensor,
    modality: torch.Tensor,
    clothing_person: torch.Tensor,
    said: bool = True,
) -> list[torch.Tensor]:
    """Per-sample CE of each head over the samples it sees (one vector per head, possibly empty).

    ``head_logits``: six B×C_s tensors in ``SCENARIOS`` order (ST heads over clothing ids when
    ``said``); ``clothing_person[c]`` is the person id of clothing id c; ``modality``: RGB=0 / IR=1.
    """
    if len(head_logits) != len(SCENARIOS):
        raise LossInputError(
            f"head_logits needs {len(SCENARIOS)} heads ({', '.join(SCENARIOS)}), got {len(head_logits)}"
        )
    require_dim("person_ids", person_ids, 1)
    batch = person_ids.shape[0]
    require_len("clothing_ids", clothing_ids, batch)
    require_len("modality", modality, batch)
    if bool(((modality != RGB) & (modality != IR)).any()):
        raise LossInputError(f"modality codes must be {RGB} (RGB) or {IR} (IR)")
    require_dim("clothing_person", clothing_person, 1)
    for scenario, logits in zip(SCENARIOS, head_logits, strict=True):
        require_dim(f"head_logits[{scenario}]", logits, 2)
        if logits.shape[0] != batch:
            raise LossInputError(f"head_logits[{scenario}] has {logits.shape[0]} rows for a batch of {batch}")

    if not said:
        for scenario, logits in zip(SCENARIOS, head_logits, strict=True):
            _require_classes(f"head_logits[{scenario}]", logits, person_ids, "person")
        return [F.cross_entropy(logits, person_ids, reduction="none") for logits in head_logits]
    losses = []
    for scenario, logits in zip(SCENARIOS, head_logits, strict=True):
        keep = scenario_samples(scenario, modality)
        logits, pids, cids = logits[keep], person_ids[keep], clothing_ids[keep]
        if scenario.endswith("ST"):
            if logits.shape[1] != clothing_person.shape[0]:
                raise LossInputError(
                    f"head_logits[{scenario}] must have one column per clothing id "
                    f"({clothing_person.shape[0]}), got {logits.shape[1]}"
                )
            logits = logits.masked_fill(other_outfit_mask(pids, cids, clothing_person), OTHER_OUTFIT_LOGIT)
            losses.append(F.cross_entropy(logits, cids, reduction="none"))
        else:
            _require_classes(f"head_logits[{scenario}]", logits, pids, "person")
            losses.append(F.cross_entropy(logits, pids, reduction="none"))
    return losses


def _group_weight(parts: Sequence[torch.Tensor]) -> torch.Tensor | None:
    pooled = torch.cat([torch.exp(-part) for part in parts])
    if pooled.numel() == 0:
        return None
    return torch.sqrt((1.0 - pooled.mean()).clamp_min(1e-12))


def _normalise(weights: dict[str, torch.Tensor | None]) -> dict[str, torch.Tensor]:
    present = [w for w in weights.values() if w is not None]
    top = torch.stack(present).max().clamp_min(HDW_MAX_FLOOR)
    return {name: (w / top if w is not None else None) for name, w in weights.items()}


def hdw_weights(per_head: Sequence[torch.Tensor], detach: bool = False) -> list[torch.Tensor]:
    """w^s per head from per-sample losses (docs/methods.md §3). Groups without samples are left out of the max."""
    if len(per_head) != len(SCENARIOS):
        raise LossInputError(f"per_head needs {len(SCENARIOS)} loss vectors, got {len(per_head)}")
    parts = [loss.detach() if detach else loss for loss in per_head]
    by_name = dict(zip(SCENARIOS, parts, strict=True))
    task_w = _normalise(
        {t: _group_weight([by_name[f"{t}-ST"], by_name[f"{t}-LT"]]) for t in ("DT", "NT", "AD")}
    )
    time_w = _normalise(
        {s: _group_weight([by_name[f"{t}-{s}"] for t in ("DT", "NT", "AD")]) for s in ("ST", "LT")}
    )
    zero = parts[0].new_zeros(())
    weights = []
    for name in SCENARIOS:
        task, time = name.split("-")
        if by_name[name].numel() == 0:
            weights.append(zero)
        else:
            weights.append(task_w[task] * time_w[time])
    return weights


def hdw_loss(per_head: Sequence[torch.Tensor], batch_size: int, detach_weights: bool = False) -> torch.Tensor:
    """L = Σ_s Σ_{i∈B_s} w^s ℓ_i / |B| (|B| = the full batch, docs/methods.md §3)."""
    if batch_size <= 0:
        raise LossInputError(f"batch_size must be positive, got {batch_size}")
    weights = hdw_weights(per_head, detach=detach_weights)
    total = sum(
        (w * loss.sum() for w, loss in zip(weights, per_head, strict=True)), per_head[0].new_zeros(())
    )
    return total / batch_size


def uniat_id_loss(
    head_logits: Sequence[torch.Tensor],
    person_ids: torch.Tensor,
    clothing_ids: torch.Tensor,
    modality: torch.Tensor,
    clothing_person: torch.Tensor,
    said: bool = True,
    hdw: bool = True,
    detach_weights: bool = False,
) -> torch.Tensor:
    """The Uni-AT identity loss: SAID or baseline per-head CE, combined by HDW or by summing head means."""
    per_head = scenario_id_losses(head_logits, person_ids, clothing_ids, modality, clothing_person, said)
    if hdw:
        return hdw_loss(per_head, person_ids.shape[0], detach_weights)
    return sum((loss.mean() if loss.numel() else loss.sum() for loss in per_head), per_head[0].new_zeros(()))
