"""CRST objectives and the resolution-aware masking policy π_r (docs/methods.md §2).

- L_RCR: masked-token cross-entropy, −(1/|𝓜|) Σ_{m∈𝓜} log p(w_m | Z_m); unmasked positions ignored.
- L_TGR: ‖ṽᴸ/‖ṽᴸ‖ − sg(vᴴ/‖vᴴ‖)‖²₂ = 2 − 2cos (plain MSE as an option), batch mean.
- L_CR-RDA: KL(pᴴ ‖ pᴸ) row-wise with the whole pᴴ detached, text→image and image→text summed;
  ∂L^{T→I}/∂ℓᴸ_ij = (pᴸ_{j→i} − pᴴ_{j→i})/N.
- π_r: 15 % of the eligible tokens are masked; a resolution-dependent share of them (0.70 / 0.60 / 0.45
  / 0.30 for HR / mild / mid / ultra LR) is taken from attribute tokens, the rest from coarse tokens, a
  short group filled from the other; masked positions then become [mask] 80 %, a random token 10 %,
  unchanged 10 % (IRRA).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
import torch.nn.functional as F

from engine.kernel.vocabulary import MODEL_RESOLUTIONS as RESOLUTIONS
from engine.lab.losses._checks import LossInputError, require_dim, require_positive

ATTRIBUTE_SHARE: dict[str, float] = {"hr": 0.70, "mild_lr": 0.60, "mid_lr": 0.45, "ultra_lr": 0.30}
MASK_RATE = 0.15
IGNORE_INDEX = -100


def masked_token_loss(logits: torch.Tensor, target_ids: torch.Tensor, masked: torch.Tensor) -> torch.Tensor:
    """L_RCR: CE over the masked positions only (0 with a gradient path when nothing is masked)."""
    require_dim("logits", logits, 3)
    if target_ids.shape != logits.shape[:2] or masked.shape != logits.shape[:2]:
        raise LossInputError(
            f"target_ids {tuple(target_ids.shape)} and masked {tuple(masked.shape)} must "
            f"match logits' first two axes {tuple(logits.shape[:2])}"
        )
    if masked.dtype != torch.bool:
        raise LossInputError(f"masked must be a bool tensor, got {masked.dtype}")
    if not bool(masked.any()):
        return logits.sum() * 0.0
    return F.cross_entropy(logits[masked], target_ids[masked])


def tgr_loss(refined_lr: torch.Tensor, hr: torch.Tensor, mse: bool = False) -> torch.Tensor:
    """L_TGR = mean_b ‖ṽᴸ/‖ṽᴸ‖ − sg(vᴴ/‖vᴴ‖)‖² (= 2 − 2cos); ``mse=True``: plain MSE to sg(vᴴ)."""
    require_dim("refined_lr", refined_lr, 2)
    if refined_lr.shape != hr.shape:
        raise LossInputError(f"refined_lr {tuple(refined_lr.shape)} and hr {tuple(hr.shape)} must match")
    target = hr.detach()
    if mse:
        return F.mse_loss(refined_lr, target)
    return (F.normalize(refined_lr, dim=1) - F.normalize(target, dim=1)).square().sum(dim=1).mean()


def ranking_distillation_from_logits(hr_logits: torch.Tensor, lr_logits: torch.Tensor) -> torch.Tensor:
    """One direction of CR-RDA: (1/N) Σ_rows KL(softmax(hr) ‖ softmax(lr)), hr fully detached."""
    require_dim("lr_logits", lr_logits, 2)
    if hr_logits.shape != lr_logits.shape:
        raise LossInputError(
            f"hr_logits {tuple(hr_logits.shape)} and lr_logits {tuple(lr_logits.shape)} must match"
        )
    log_p_hr = F.log_softmax(hr_logits.detach(), dim=1)
    log_p_lr = F.log_softmax(lr_logits, dim=1)
    return (log_p_hr.exp() * (log_p_hr - log_p_lr)).sum(dim=1).mean()


def cr_rda_loss(
    text: torch.Tensor, hr_image: torch.Tensor, lr_image: torch.Tensor, tau: float = 0.02
) -> torch.Tensor:
    """L_CR-RDA = L^{T→I} + L^{I→T} on features; logits are cosines / τ (τ = 0.02 [R])."""
    for name, tensor in (("text", text), ("hr_image", hr_image), ("lr_image", lr_image)):
        require_dim(name, tensor, 2)
    if not text.shape == hr_image.shape == lr_image.shape:
        raise LossInputError("text, hr_image and lr_image must have the same shape")
    require_positive("tau", tau)
    text_unit = F.normalize(text, dim=1)
    hr_logits = text_unit @ F.normalize(hr_image, dim=1).detach().t() / tau
    lr_logits = text_unit @ F.normalize(lr_image, dim=1).t() / tau
    return ranking_distillation_from_logits(hr_logits, lr_logits) + ranking_distillation_from_logits(
        hr_logits.t(), lr_logits.t()
    )


@dataclass(frozen=True)
class MaskedTokens:
    input_ids: torch.Tensor  # token ids after replacement
    labels: torch.Tensor  # original id at masked positions, IGNORE_INDEX elsewhere
    masked: torch.Tensor  # bool, the positions in 𝓜
    attribute_masked: torch.Tensor  # bool, the masked positions that are attribute tokens


def _resolution_indices(resolution: str | int | torch.Tensor, batch: int) -> torch.Tensor:
    if isinstance(resolution, str):
        if resolution not in RESOLUTIONS:
            raise LossInputError(f"resolution must be one of {RESOLUTIONS}, got {resolution!r}")
        resolution = RESOLUTIONS.index(resolution)
    index = torch.as_tensor(resolution, dtype=torch.long).reshape(-1)
    if index.numel() == 1:
        index = index.expand(batch)
    if index.numel() != batch:
        raise LossInputError(f"resolution needs one entry or one per sequence ({batch}), got {index.numel()}")
    if bool(((index < 0) | (index >= len(RESOLUTIONS))).any()):
        raise LossInputError(f"resolution indices must lie in 0..{len(RESOLUTIONS) - 1}")
    return index


def _pick_lowest(keys: torch.Tensor, allowed: torch.Tensor, counts: torch.Tensor) -> torch.Tensor:
    """Per row, the ``counts`` allowed positions with the smallest random keys."""
    ranked = torch.where(allowed, keys, torch.full_like(keys, 2.0)).argsort(dim=1, stable=True)
    rank = ranked.argsort(dim=1)
    return allowed & (rank < counts.unsqueeze(1))


def resolution_masking(
    token_ids: torch.Tensor,
    attribute_tokens: torch.Tensor,
    eligible: torch.Tensor,
    resolution: str | int | torch.Tensor,
    mask_token_id: int,
    random_token_range: tuple[int, int],
    generator: torch.Generator | None = None,
    rate: float = MASK_RATE,
    replace_probs: tuple[float, float, float] = (0.8, 0.1, 0.1),
) -> MaskedTokens:
    """π_r over a B×T batch of token ids (docs/methods.md §2 [R]).

    ``attribute_tokens``: bool B×T, the tokens that name attributes (colours, garments, accessories,
    shoes, hair, patterns); ``eligible``: bool B×T, the ordinary tokens that may be masked (not start /
    end / padding). Each row masks round(rate·#eligible) positions (at least one when any is eligible).
    ``resolution``: a name from ``RESOLUTIONS``, an index, or one index per row. Deterministic for a
    given ``generator`` state.
    """
    require_dim("token_ids", token_ids, 2)
    for name, tensor in (("attribute_tokens", attribute_tokens), ("eligible", eligible)):
        if tensor.shape != token_ids.shape or tensor.dtype != torch.bool:
            raise LossInputError(
                f"{name} must be a bool tensor shaped like token_ids {tuple(token_ids.shape)}"
            )
    if not 0 < rate <= 1:
        raise LossInputError(f"rate must lie in (0, 1], got {rate}")
    if len(replace_probs) != 3 or min(replace_probs) < 0 or abs(sum(replace_probs) - 1) > 1e-6:
        raise LossInputError(
            f"replace_probs must be three non-negative numbers summing to 1, got {replace_probs}"
        )
    low, high = random_token_range
    if not 0 <= low < high:
        raise LossInputError(
            f"random_token_range must be (low, high) with 0 ≤ low < high, got {random_token_range}"
        )

    batch = token_ids.shape[0]
    device = token_ids.device
    shares = torch.tensor([ATTRIBUTE_SHARE[name] for name in RESOLUTIONS], dtype=torch.float64)
    share = shares[_resolution_indices(resolution, batch)].to(device)
    attr_ok = attribute_tokens & eligible
    coarse_ok = eligible & ~attribute_tokens
    n_eligible = eligible.sum(dim=1)
    n_mask = torch.floor(rate * n_eligible.double() + 0.5).long()
    n_mask = torch.where(n_eligible > 0, n_mask.clamp_min(1), n_mask)
    n_attr_avail, n_coarse_avail = attr_ok.sum(dim=1), coarse_ok.sum(dim=1)
    n_attr = torch.minimum(torch.floor(share * n_mask + 0.5).long(), n_attr_avail)
    n_coarse = torch.minimum(n_mask - n_attr, n_coarse_avail)
    n_attr = torch.minimum(n_mask - n_coarse, n_attr_avail)

    keys = torch.rand(token_ids.shape, generator=generator, device=device)
    attribute_masked = _pick_lowest(keys, attr_ok, n_attr)
    masked = attribute_masked | _pick_lowest(keys, coarse_ok, n_coarse)

    choice = torch.rand(token_ids.shape, generator=generator, device=device)
    random_ids = torch.randint(low, high, token_ids.shape, generator=generator, device=device)
    to_mask = masked & (choice < replace_probs[0])
    to_random = masked & (choice >= replace_probs[0]) & (choice < replace_probs[0] + replace_probs[1])
    input_ids = torch.where(to_mask, torch.full_like(token_ids, mask_token_id), token_ids)
    input_ids = torch.where(to_random, random_ids.to(token_ids.dtype), input_ids)
    labels = torch.where(masked, token_ids, torch.full_like(token_ids, IGNORE_INDEX))
    return MaskedTokens(input_ids=input_ids, labels=labels, masked=masked, attribute_masked=attribute_masked)
