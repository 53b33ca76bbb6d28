"""CRST modules (docs/methods.md §2): resolution embedding, RCR reliability gate with gated masked grounding, and
TGR text-guided refinement. Everything except the resolution embedding is used in training only.

- Resolution embedding: x_i ← x_i + λ_r e_r for every token, after the positional embedding.
- RCR gate: ρ_k = sigmoid(w₂ᵀ GELU(W₁ [h_k; e_r] + b₁) + b₂), W₁: 2d → d/4, one scalar per visual token.
- Gated masked grounding (IRRA cross-former shape): Z = CrossAttn(Q = LN(Hᵗ_mask), K = V = ρ ⊙ LN(Hᵛ))
  → transformer → LN → MLM head (Linear, QuickGELU, LN, Linear → vocab). The gate multiplies the
  *normalised* tokens: LN(ρ_k h_k) = LN(h_k) would cancel a per-token scalar. Alternative ("attention_bias"):
  log ρ_k added to the attention logits. Logits are computed only at the masked positions.
- TGR: a = softmax((vᴸW_q)(HᵗW_k)ᵀ/√d_h) HᵗW_v (multi-head), g = sigmoid(W_g [vᴸ; a] + b_g),
  ṽᴸ = vᴸ + g ⊙ W_o a. W_o starts at zero so ṽᴸ = vᴸ at first [R].
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from open_clip.transformer import LayerNorm, QuickGELU, Transformer
from torch import nn


class ResolutionEmbedding(nn.Module):
    """λ_r · e_r per sample, shaped [B, 1, d] to add to every token (zero at initialisation [R])."""

    def __init__(self, num_resolutions: int, width: int, scale: float = 1.0) -> None:
        super().__init__()
        self.embedding = nn.Embedding(num_resolutions, width)
        nn.init.zeros_(self.embedding.weight)
        self.scale = scale

    def vectors(self, resolution: torch.Tensor) -> torch.Tensor:
        """e_r [B, d] (without λ_r)."""
        return self.embedding(resolution)

    def forward(self, resolution: torch.Tensor) -> torch.Tensor:
        return (self.scale * self.embedding(resolution)).unsqueeze(1)


class ReliabilityGate(nn.Module):
    """ρ_k in (0, 1) for each visual token h_k [B, N, d] given the resolution embedding e_r [B, d]."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.fc1 = nn.Linear(2 * width, max(1, width // 4))
        self.act = nn.GELU()
        self.fc2 = nn.Linear(max(1, width // 4), 1)

    def forward(self, tokens: torch.Tensor, resolution_vector: torch.Tensor) -> torch.Tensor:
        e_r = resolution_vector.unsqueeze(1).expand(-1, tokens.shape[1], -1)
        return torch.sigmoid(self.fc2(self.act(self.fc1(torch.cat([tokens, e_r], dim=-1))))).squeeze(-1)


class MaskedGrounding(nn.Module):
    """Reliability-gated cross-former predicting masked text tokens from image tokens (RCR)."""

    def __init__(
        self,
        dim: int,
        vocab_size: int,
        layers: int,
        heads: int,
        gate_mode: str = "scale",
        act_layer: type[nn.Module] = nn.GELU,
    ) -> None:
        super().__init__()
        if gate_mode not in ("scale", "attention_bias"):
            raise ValueError(f"gate_mode must be 'scale' or 'attention_bias', got {gate_mode!r}")
        self.gate_mode = gate_mode
        self.heads = heads
        self.ln_text = LayerNorm(dim)
        self.ln_image = LayerNorm(dim)
        self.cross_attn = nn.MultiheadAttention(dim, heads, batch_first=True)
        self.transformer = Transformer(width=dim, layers=layers, heads=heads, act_layer=act_layer)
        self.ln_post = LayerNorm(dim)
        self.head = nn.Sequential(
            nn.Linear(dim, dim), QuickGELU(), LayerNorm(dim), nn.Linear(dim, vocab_size)
        )

    def forward(
        self,
        text_tokens: torch.Tensor,
        image_tokens: torch.Tensor,
        reliability: torch.Tensor,
        masked: torch.Tensor,
    ) -> torch.Tensor:
        """Vocabulary logits [M, V] at the masked positions (``masked``: bool [B, L]; rows in order)."""
        query = self.ln_text(text_tokens)
        keys = self.ln_image(image_tokens)
        attn_mask = None
        if self.gate_mode == "scale":
            keys = keys * reliability.unsqueeze(-1).to(keys.dtype)
        else:
            bias = torch.log(reliability.float().clamp_min(1e-6)).to(query.dtype)
            attn_mask = bias.unsqueeze(1).expand(-1, query.shape[1], -1).repeat_interleave(self.heads, dim=0)
        z = self.cross_attn(query, keys, keys, need_weights=False, attn_mask=attn_mask)[0]
        z = self.ln_post(self.transformer(z))
        return self.head(z[masked])


class TextGuidedRefinement(nn.Module):
    """ṽᴸ = vᴸ + g ⊙ W_o a with a = multi-head attention of the image vector over the text tokens."""

    def __init__(self, dim: int, heads: int, gate: str = "vector") -> None:
        super().__init__()
        if dim % heads:
            raise ValueError(f"dim {dim} must divide by heads {heads}")
        if gate not in ("vector", "scalar"):
            raise ValueError(f"gate must be 'vector' or 'scalar', got {gate!r}")
        self.heads = heads
        self.q = nn.Linear(dim, dim)
        self.k = nn.Linear(dim, dim)
        self.v = nn.Linear(dim, dim)
        self.gate = nn.Linear(2 * dim, dim if gate == "vector" else 1)
        self.out = nn.Linear(dim, dim)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.out.bias)

    def attend(self, image: torch.Tensor, text_tokens: torch.Tensor, text_valid: torch.Tensor) -> torch.Tensor:
        """a [B, D]: the image query's attention read-out over the valid text tokens (before W_o)."""
        batch, length, dim = text_tokens.shape
        head_dim = dim // self.heads
        q = self.q(image).view(batch, self.heads, 1, head_dim)
        k = self.k(text_tokens).view(batch, length, self.heads, head_dim).transpose(1, 2)
        v = self.v(text_tokens).view(batch, length, self.heads, head_dim).transpose(1, 2)
        mask = text_valid.view(batch, 1, 1, length)
        a = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return a.reshape(batch, dim)

    def forward(self, image: torch.Tensor, text_tokens: torch.Tensor, text_valid: torch.Tensor) -> torch.Tensor:
        a = self.attend(image, text_tokens, text_valid)
        g = torch.sigmoid(self.gate(torch.cat([image, a], dim=-1)))
        return image + g * self.out(a)
