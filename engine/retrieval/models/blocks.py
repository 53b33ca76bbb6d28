"""The transformer block of both towers with the optional components of the four papers.

    H' = H + MSA(LN₁(H))
    H_out = H' + FFN_shared(LN₂(H')) [+ FFN_g(LN₂(H')) (OE-MVP, §1.6)] [+ MoE(LN₂(H')) (AEA-MoE, §4)]

for the ordinary tokens; trailing scenario tokens (Uni-AT, §3) take the MoAE instead of the FFN. The block
subclasses open_clip's ``ResidualAttentionBlock`` so its pretrained parameters keep their names
(ln_1, attn, ln_2, mlp.c_fc, mlp.c_proj); the new components live beside them. Per-pass routing inputs and
the auxiliary outputs the losses need travel in a ``Routing`` object.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from open_clip.transformer import ResidualAttentionBlock
from torch import nn

from engine.retrieval.models.adapters import AdapterMixture
from engine.retrieval.models.config import AdapterConfig
from engine.retrieval.models.granularity import GranularityExperts
from engine.retrieval.models.scenarios import AttributeExperts


@dataclass
class Routing:
    """Routing inputs of one pass through a tower, and what its blocks record for the losses."""

    levels: torch.Tensor | None = None  # [B] granularity level per sample (OE-MVP)
    collect: torch.Tensor | None = None  # [B] bool: run all experts, record token means Ē_g
    num_scenario: int = 0  # trailing scenario tokens (Uni-AT)
    token_valid: torch.Tensor | None = None  # [B, N] bool: tokens whose router probabilities count
    expert_means: list[torch.Tensor] = field(default_factory=list)  # per block [n_collect, G, d]
    router_probs: list[torch.Tensor] = field(default_factory=list)  # per block [tokens, n]
    scenario_gates: list[torch.Tensor] = field(default_factory=list)  # per block [B, 6, 2]


class LineupBlock(ResidualAttentionBlock):
    """open_clip residual attention block + granularity experts + adapter mixture + scenario experts."""

    def __init__(
        self,
        width: int,
        heads: int,
        mlp_ratio: float,
        act_layer: type[nn.Module],
        expert_widths: tuple[int, ...] = (),
        adapters: AdapterConfig | None = None,
        scenario_experts: bool = False,
        scenario_gate: str = "renormalized",
    ) -> None:
        super().__init__(width, heads, mlp_ratio, act_layer=act_layer, batch_first=True)
        self.granularity_experts = GranularityExperts(width, expert_widths, act_layer) if expert_widths else None
        self.adapters = (
            AdapterMixture(
                width,
                adapters.num_experts,
                adapters.bottleneck,
                adapters.routing,
                adapters.top_p_threshold,
                adapters.top_k,
                adapters.top_k_renormalize,
            )
            if adapters is not None
            else None
        )
        hidden = self.mlp.c_fc.out_features
        self.scenario_experts = (
            AttributeExperts(width, hidden, act_layer, scenario_gate) if scenario_experts else None
        )
        self.initialise_new_components()

    def initialise_new_components(self) -> None:
        """Components whose paper initialises them from the block's FFN (Uni-AT attribute layers)."""
        if self.scenario_experts is not None:
            self.scenario_experts.initialise_from(self.mlp.c_fc, self.mlp.c_proj)

    def forward(
        self,
        q_x: torch.Tensor,
        k_x: torch.Tensor | None = None,
        v_x: torch.Tensor | None = None,
        attn_mask: torch.Tensor | None = None,
        routing: Routing | None = None,
    ) -> torch.Tensor:
        if k_x is not None or v_x is not None:
            raise ValueError("LineupBlock is a self-attention block")
        routing = routing if routing is not None else Routing()
        x = q_x + self.ls_1(self.attention(q_x=self.ln_1(q_x), attn_mask=attn_mask))
        y = self.ln_2(x)
        num_scenario = routing.num_scenario
        main = y[:, : y.shape[1] - num_scenario] if num_scenario else y
        out = self.mlp(main)
        if self.granularity_experts is not None:
            if routing.levels is None:
                raise ValueError("this block has granularity experts: the pass needs a level per sample")
            expert_out, means = self.granularity_experts(main, routing.levels, routing.collect)
            out = out + expert_out
            if means is not None:
                routing.expert_means.append(means)
        if self.adapters is not None:
            adapter_out, probs = self.adapters(main)
            out = out + adapter_out
            if probs is not None:
                if routing.token_valid is not None:
                    probs = probs.view(*main.shape[:2], -1)[routing.token_valid]
                routing.router_probs.append(probs)
        if num_scenario:
            scenario_tokens = y[:, -num_scenario:]
            if self.scenario_experts is not None:
                scenario_out, gates = self.scenario_experts(scenario_tokens)
                routing.scenario_gates.append(gates)
            else:
                scenario_out = self.mlp(scenario_tokens)
            out = torch.cat([out, scenario_out.to(out.dtype)], dim=1)
        return x + self.ls_2(out)
