"""Uni-AT scenario experts and heads (docs/methods.md §3; official code AT-ReID ``model/moae.py``, ``model/uniat.py``).

Six scenario CLS tokens [DT-ST, DT-LT, NT-ST, NT-LT, AD-ST, AD-LT]. In every block their FFN is the
MoAE: five attribute layers {DT, NT, AD, ST, LT}, each an up-layer a^in: d → h and a down-layer a^out:
h → d (initialised from the block's fc1/fc2). Scenario s with modality attribute A and clothing attribute
B has two experts a^out_B(act(a^in_A(x))) and a^out_A(act(a^in_B(x))); a per-scenario bias-free gate
Linear(d → 2) with softmax keeps the top-1 expert. Its weight is renormalised to 1 (official code: the gate
then gets no gradient) or kept as the softmax probability (Eq. 4, differentiable).
Heads: per scenario a BatchNorm1d neck (bias frozen) and a bias-free classifier; ST heads classify
clothing ids under SAID, person ids otherwise; LT heads classify person ids. The re-id feature is the BN
output of the scenario's CLS.
"""

from __future__ import annotations

import torch
from torch import nn

from engine.retrieval.models.names import SCENARIOS

ATTRIBUTE_LAYERS: tuple[str, ...] = ("DT", "NT", "AD", "ST", "LT")


def scenario_attributes(scenario: str) -> tuple[str, str]:
    """(modality attribute, clothing attribute) of a scenario name such as "NT-LT"."""
    if scenario not in SCENARIOS:
        raise ValueError(f"scenario must be one of {list(SCENARIOS)}, got {scenario!r}")
    modality, clothing = scenario.split("-")
    return modality, clothing


class AttributeExperts(nn.Module):
    """MoAE for the six scenario tokens x [B, 6, d] → (y [B, 6, d], gate probabilities [B, 6, 2])."""

    def __init__(self, width: int, hidden: int, act_layer: type[nn.Module], gate: str = "renormalized") -> None:
        super().__init__()
        if gate not in ("renormalized", "softmax"):
            raise ValueError(f"gate must be 'renormalized' or 'softmax', got {gate!r}")
        self.gate_kind = gate
        self.up = nn.ModuleDict({a: nn.Linear(width, hidden) for a in ATTRIBUTE_LAYERS})
        self.down = nn.ModuleDict({a: nn.Linear(hidden, width) for a in ATTRIBUTE_LAYERS})
        self.act = act_layer()
        self.gate_weight = nn.Parameter(torch.empty(len(SCENARIOS), 2, width))
        nn.init.normal_(self.gate_weight, std=width**-0.5)

    @torch.no_grad()
    def initialise_from(self, fc1: nn.Linear, fc2: nn.Linear) -> None:
        """Copy the block's FFN (fc1 → every up-layer, fc2 → every down-layer), as Uni-AT does."""
        for layer in ATTRIBUTE_LAYERS:
            self.up[layer].weight.copy_(fc1.weight)
            self.up[layer].bias.copy_(fc1.bias)
            self.down[layer].weight.copy_(fc2.weight)
            self.down[layer].bias.copy_(fc2.bias)

    def expert(self, x: torch.Tensor, up_layer: str, down_layer: str) -> torch.Tensor:
        """a^out_{down}(act(a^in_{up}(x)))."""
        return self.down[down_layer](self.act(self.up[up_layer](x)))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if x.dim() != 3 or x.shape[1] != len(SCENARIOS):
            raise ValueError(f"scenario tokens must be [B, {len(SCENARIOS)}, d], got {tuple(x.shape)}")
        probs = torch.softmax(torch.einsum("bsd,sed->bse", x, self.gate_weight.to(x.dtype)).float(), dim=-1)
        rows = torch.arange(x.shape[0], device=x.device)
        outputs = []
        for s, scenario in enumerate(SCENARIOS):
            modality, clothing = scenario_attributes(scenario)
            token = x[:, s]
            candidates = torch.stack(
                [self.expert(token, modality, clothing), self.expert(token, clothing, modality)], dim=1
            )
            top = probs[:, s].argmax(dim=-1)
            weight = probs[:, s].gather(1, top.unsqueeze(1))
            if self.gate_kind == "renormalized":
                weight = weight / weight.sum(dim=1, keepdim=True)
            outputs.append(weight.to(x.dtype) * candidates[rows, top])
        return torch.stack(outputs, dim=1), probs


class ScenarioHeads(nn.Module):
    """BN neck per scenario and, when id counts are known, a bias-free ID classifier per scenario."""

    def __init__(self, width: int, num_person_ids: int, num_clothing_ids: int, st_classifies_clothing: bool) -> None:
        super().__init__()
        self.necks = nn.ModuleList(nn.BatchNorm1d(width) for _ in SCENARIOS)
        for neck in self.necks:
            neck.bias.requires_grad_(False)
        self.classifiers: nn.ModuleList | None = None
        if num_person_ids > 0:
            sizes = []
            for scenario in SCENARIOS:
                clothing_head = scenario.endswith("ST") and st_classifies_clothing
                sizes.append(num_clothing_ids if clothing_head else num_person_ids)
            self.classifiers = nn.ModuleList(nn.Linear(width, n, bias=False) for n in sizes)
            for head in self.classifiers:
                nn.init.normal_(head.weight, std=0.001)

    def forward(self, tokens: torch.Tensor) -> tuple[torch.Tensor, list[torch.Tensor] | None]:
        """BN features [B, 6, d] and per-scenario logits (``None`` without classifiers)."""
        features = torch.stack([neck(tokens[:, s].float()) for s, neck in enumerate(self.necks)], dim=1)
        if self.classifiers is None:
            return features, None
        return features, [head(features[:, s]) for s, head in enumerate(self.classifiers)]
