"""Progressive cross-identity alignment: soft labels from attribute overlap (docs/methods.md §1.7, CMAM PCIA).

Batch representation of attribute sets: a B×18 int64 tensor of *value codes*, one column per ontology
attribute in canonical order (``ATTRIBUTE_KEYS``); the entry is the index of the value in that
attribute's value list, or ``UNSTATED`` (−1). The set 𝒜(T) of §1.7 is {(slot, value) : code ≥ 0}.
``encode_attribute_sets`` builds it from {key: value} dicts (canonical names, dependent colours of an
absent item dropped as in ``ONTOLOGY.counted``) or from sets of global ids (``attribute_id``).

  r_ij = |𝒜(T_i) ∩ 𝒜(T_j^fine)| / |𝒜(T_i)|,  S_ij = r_ij·1[r_ij ≥ θ] for coarse queries (g_i ≤ g_coarse),
  S̃ = clip(S + σ ε, 0, 1) with noise only where S > 0,  L^{t2i} = max(Y, S̃),  L^{i2t} = max(Yᵀ, S̃ᵀ).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

from engine.kernel.ontology import ATTRIBUTE_KEYS, LEVELS, ONTOLOGY
from engine.lab.losses._checks import (
    LossInputError,
    require_dim,
    require_len,
    require_positive,
    same_label_matrix,
)
from engine.lab.losses.tal import TAL_TAU, level_margins, soft_tal_loss

UNSTATED = -1
PCIA_THETA = 0.6
PCIA_SIGMA = 0.1
COARSE_MAX_LEVEL = LEVELS.index("C")

_VALUE_COUNTS = tuple(len(ONTOLOGY.attributes[key]) for key in ATTRIBUTE_KEYS)
_OFFSETS = tuple(sum(_VALUE_COUNTS[:slot]) for slot in range(len(ATTRIBUTE_KEYS)))
N_ATTRIBUTE_IDS = sum(_VALUE_COUNTS)


def attribute_id(key: str, value: str) -> int:
    """Global (slot, value) id: offset of the slot plus the value's index (0..N_ATTRIBUTE_IDS−1)."""
    ONTOLOGY.validate({key: value})
    slot = ATTRIBUTE_KEYS.index(key)
    return _OFFSETS[slot] + ONTOLOGY.attributes[key].index(value)


def _slot_of_id(global_id: int) -> tuple[int, int]:
    if not 0 <= global_id < N_ATTRIBUTE_IDS:
        raise LossInputError(f"attribute id {global_id} outside 0..{N_ATTRIBUTE_IDS - 1}")
    for slot in range(len(ATTRIBUTE_KEYS) - 1, -1, -1):
        if global_id >= _OFFSETS[slot]:
            return slot, global_id - _OFFSETS[slot]
    raise AssertionError("unreachable")


def encode_attributes(attributes: Mapping[str, str] | Iterable[int]) -> list[int]:
    """One attribute set → 18 value codes (−1 where unstated). Accepts a dict or global ids."""
    codes = [UNSTATED] * len(ATTRIBUTE_KEYS)
    if isinstance(attributes, Mapping):
        ONTOLOGY.validate(attributes)
        for key, value in ONTOLOGY.counted(attributes).items():
            codes[ATTRIBUTE_KEYS.index(key)] = ONTOLOGY.attributes[key].index(value)
        return codes
    for global_id in attributes:
        slot, value = _slot_of_id(int(global_id))
        if codes[slot] not in (UNSTATED, value):
            raise LossInputError(f"attribute ids give two values for {ATTRIBUTE_KEYS[slot]!r}")
        codes[slot] = value
    return codes


def encode_attribute_sets(items: Sequence[Mapping[str, str] | Iterable[int]]) -> torch.Tensor:
    """A batch of attribute sets → B×18 int64 value codes (see module docstring)."""
    return torch.tensor([encode_attributes(item) for item in items], dtype=torch.long).reshape(
        -1, len(ATTRIBUTE_KEYS)
    )


def _check_codes(name: str, codes: torch.Tensor) -> None:
    require_dim(name, codes, 2)
    if codes.shape[1] != len(ATTRIBUTE_KEYS) or codes.dtype.is_floating_point:
        raise LossInputError(
            f"{name} must be an integer B×{len(ATTRIBUTE_KEYS)} code tensor, got "
            f"{tuple(codes.shape)} {codes.dtype}"
        )
    limits = torch.tensor(_VALUE_COUNTS, device=codes.device)
    if bool(((codes < UNSTATED) | (codes >= limits)).any()):
        raise LossInputError(f"{name} holds a value code outside its attribute's range (or below −1)")


def attribute_overlap(query_codes: torch.Tensor, fine_codes: torch.Tensor) -> torch.Tensor:
    """r_ij = share of query i's stated (slot, value) pairs that column j's finest set also states.

    Rows with an empty query set get r = 0.
    """
    _check_codes("query_codes", query_codes)
    _check_codes("fine_codes", fine_codes)
    stated = query_codes != UNSTATED
    shared = (query_codes.unsqueeze(1) == fine_codes.unsqueeze(0)) & stated.unsqueeze(1)
    n_stated = stated.sum(dim=1, keepdim=True).clamp_min(1)
    return shared.sum(dim=2).to(torch.get_default_dtype()) / n_stated


@dataclass(frozen=True)
class SoftLabels:
    t2i: torch.Tensor  # L^{t2i} = max(Y, S̃), rows texts, columns images
    i2t: torch.Tensor  # L^{i2t} = max(Yᵀ, S̃ᵀ)
    soft: torch.Tensor  # S̃ (zero for fine queries and below θ)


def pcia_soft_labels(
    identities: torch.Tensor,
    query_codes: torch.Tensor,
    fine_codes: torch.Tensor,
    levels: torch.Tensor,
    theta: float = PCIA_THETA,
    sigma: float = PCIA_SIGMA,
    coarse_max_level: int = COARSE_MAX_LEVEL,
    generator: torch.Generator | None = None,
    image_identities: torch.Tensor | None = None,
) -> SoftLabels:
    """Soft cross-identity labels (docs/methods.md §1.7).

    ``identities``: text (row) identities; ``image_identities``: column identities (default the same).
    ``query_codes``: B×18 codes of each text; ``fine_codes``: B×18 codes of the finest text of each
    column's identity; ``levels``: 0-based level of each text (UC=0). Only rows with
    ``levels ≤ coarse_max_level`` (default C) get soft labels. ``sigma=0`` turns the noise off.
    """
    require_dim("identities", identities, 1)
    n_rows = identities.shape[0]
    image_identities = identities if image_identities is None else image_identities
    require_dim("image_identities", image_identities, 1)
    _check_codes("query_codes", query_codes)
    _check_codes("fine_codes", fine_codes)
    if query_codes.shape[0] != n_rows or fine_codes.shape[0] != image_identities.shape[0]:
        raise LossInputError("query_codes must have one row per text and fine_codes one row per image")
    require_len("levels", levels, n_rows)
    if levels.dtype.is_floating_point or levels.dtype == torch.bool:
        raise LossInputError(f"levels must be integer level indices (UC=0), got dtype {levels.dtype}")
    if not 0 <= theta <= 1:
        raise LossInputError(f"theta must lie in [0, 1], got {theta}")
    if sigma < 0:
        raise LossInputError(f"sigma must be ≥ 0, got {sigma}")

    overlap = attribute_overlap(query_codes, fine_codes)
    coarse_rows = (levels <= coarse_max_level).unsqueeze(1)
    soft = torch.where((overlap >= theta) & coarse_rows, overlap, torch.zeros_like(overlap))
    if sigma > 0:
        noise = torch.randn(soft.shape, generator=generator, dtype=soft.dtype, device=soft.device)
        soft = torch.where(soft > 0, (soft + sigma * noise).clamp(0.0, 1.0), soft)
    same = same_label_matrix(identities, image_identities).to(soft.dtype)
    return SoftLabels(t2i=torch.maximum(same, soft), i2t=torch.maximum(same.t(), soft.t()), soft=soft)


def pcia_tal_loss(
    text_features: torch.Tensor,
    image_features: torch.Tensor,
    identities: torch.Tensor,
    query_codes: torch.Tensor,
    fine_codes: torch.Tensor,
    levels: torch.Tensor,
    tau: float = TAL_TAU,
    theta: float = PCIA_THETA,
    sigma: float = PCIA_SIGMA,
    coarse_max_level: int = COARSE_MAX_LEVEL,
    reduction: str = "sum",
    generator: torch.Generator | None = None,
) -> torch.Tensor:
    """L_stal on a paired batch: M = T Vᵀ (L2-normalised), PCIA labels, margins m(g_i) (docs/methods.md §1.7)."""
    require_dim("text_features", text_features, 2)
    require_dim("image_features", image_features, 2)
    if text_features.shape != image_features.shape:
        raise LossInputError(
            f"text_features {tuple(text_features.shape)} and image_features "
            f"{tuple(image_features.shape)} must have the same shape"
        )
    require_positive("tau", tau)
    labels = pcia_soft_labels(
        identities, query_codes, fine_codes, levels, theta, sigma, coarse_max_level, generator
    )
    similarity = F.normalize(text_features, dim=1) @ F.normalize(image_features, dim=1).t()
    margins = level_margins(levels, n_levels=len(LEVELS)).to(similarity.dtype)
    return soft_tal_loss(similarity, labels.t2i, labels.i2t, margins, tau, reduction)
