"""Model size and speed on this machine: parameters per component, inference throughput of one gallery view,
the cost of encoding all five level views, text encoding, a training step, and one forward of the paper-scale
config on a batch of 2.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/model_speed.py [--config default] [--batch 64] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402
from torch.utils.flop_counter import FlopCounterMode  # noqa: E402

from engine.lab.train.forward import forward_train  # noqa: E402
from engine.retrieval.models import LEVELS, create, load_config  # noqa: E402

COMPONENTS = (
    ("granularity_experts", "OE-MVP experts"),
    ("adapters", "AEA-MoE adapters"),
    ("scenario_experts", "Uni-AT MoAE"),
    ("scenario_", "Uni-AT tokens/heads"),
    ("masked_grounding", "CRST RCR cross-former + MLM head"),
    ("reliability_gate", "CRST RCR gate"),
    ("refinement", "CRST TGR"),
    ("fusion", "CMQF"),
    ("level_classifier", "GCR"),
    ("consistency_matcher", "GCR"),
    ("attributes", "attribute heads"),
    ("token_embedding", "text token embedding"),
    ("backbone.visual", "visual tower (CLIP layout)"),
    ("backbone.", "text tower (CLIP layout)"),
)


def parameter_breakdown(model: torch.nn.Module) -> dict[str, int]:
    counts: dict[str, int] = defaultdict(int)
    for name, param in model.named_parameters():
        label = next((label for key, label in COMPONENTS if key in name), "other")
        counts[label] += param.numel()
    counts["total"] = sum(p.numel() for p in model.parameters())
    return dict(counts)


def timed(fn, repeats: int) -> float:
    """Best of ``repeats`` wall times after a warm-up (the minimum is the least disturbed by other load)."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def gflops(fn) -> float:
    """Floating-point operations of one call (matmuls, convolutions, attention), in GFLOP."""
    with FlopCounterMode(display=False) as counter:
        fn()
    return counter.get_total_flops() / 1e9


def sample_texts(batch: int) -> list[str]:
    base = (
        "A tall slim young woman with light skin and long blonde hair in a ponytail wears a gray beanie, "
        "a long-sleeved red sweater, a knee-length black skirt and brown boots, carrying a beige shoulder bag."
    )
    return [base] * batch


def bench_config(name: str, batch: int, repeats: int, train_batch: int) -> dict:
    config = load_config(name)
    model = create(config, device="cpu")
    h, w = config.vision.image_size
    images = torch.randn(batch, 3, h, w)
    texts = sample_texts(batch)
    result: dict = {"config": name, "parameters": parameter_breakdown(model), "batch": batch}
    one_view = timed(lambda: model.encode_images(images, level="UF"), repeats)
    result["encode_images_img_per_s"] = batch / one_view
    result["encode_images_gflop_per_img"] = gflops(lambda: model.encode_images(images[:1], level="UF"))
    all_levels = timed(lambda: model.encode_images_all_levels(images), repeats)
    result["encode_all_levels_img_per_s"] = batch / all_levels
    result["all_levels_time_vs_one_view"] = all_levels / one_view
    result["all_levels_gflop_per_img"] = gflops(lambda: model.encode_images_all_levels(images[:1]))
    ids = model.tokenizer(texts)
    text_time = timed(lambda: model.encode_text(ids), repeats)
    result["encode_text_per_s"] = batch / text_time
    result["text_tokens_of_sample"] = model.tokenizer.lengths(texts[:1])[0]
    result["encode_text_gflop"] = gflops(lambda: model.encode_text(ids[:1]))
    result["train_step"] = bench_train(model, train_batch, repeats)
    return result


def bench_train(model, batch: int, repeats: int) -> dict:
    """Forward + backward of a dummy objective touching every output, for the default inputs of each part."""
    config = model.config
    h, w = config.vision.image_size
    images = torch.randn(batch, 3, h, w)
    ids = model.tokenizer(sample_texts(batch))
    levels = torch.arange(batch) % len(LEVELS)
    labels = torch.full_like(ids, -100)
    labels[:, 3:9] = ids[:, 3:9]
    masked_ids = torch.where(labels != -100, torch.full_like(ids, model.tokenizer.mask_id), ids)
    model.train()
    results = {}

    def step(**extra):
        out = forward_train(model, images, ids, levels=levels, **extra)
        total = _touch(out)
        total.backward()
        model.zero_grad(set_to_none=True)

    results["core_img_per_s"] = batch / timed(lambda: step(), repeats)
    results["core_gflop_per_pair"] = gflops(lambda: step()) / batch
    full_inputs = {
        "resolution": "mid_lr",
        "hr_images": images,
        "sketch": images,
        "ir": images,
        "mlm_ids": masked_ids if config.crst.rcr else None,
        "mlm_labels": labels if config.crst.rcr else None,
        "reid_images": images if config.scenarios.enabled else None,
    }
    results["all_parts_img_per_s"] = batch / timed(lambda: step(**full_inputs), repeats)
    results["all_parts_gflop_per_pair"] = gflops(lambda: step(**full_inputs)) / batch
    results["batch"] = batch
    model.eval()
    return results


def _touch(value) -> torch.Tensor:
    if isinstance(value, torch.Tensor):
        return value.float().mean() if value.dtype.is_floating_point and value.requires_grad else torch.zeros(())
    if isinstance(value, dict):
        return sum((_touch(v) for v in value.values()), torch.zeros(()))
    if isinstance(value, list):
        return sum((_touch(v) for v in value), torch.zeros(()))
    return torch.zeros(())


def bench_paper(name: str) -> dict:
    start = time.perf_counter()
    model = create(name, device="cpu")
    built = time.perf_counter() - start
    config = model.config
    h, w = config.vision.image_size
    images = torch.randn(2, 3, h, w)
    start = time.perf_counter()
    vectors = model.encode_images(images, level="M")
    text, level_logits = model.encode_text(sample_texts(2))
    forward = time.perf_counter() - start
    return {
        "config": name,
        "parameters": parameter_breakdown(model),
        "build_s": built,
        "forward_batch2_s": forward,
        "encode_images_gflop_per_img": gflops(lambda: model.encode_images(images[:1], level="M")),
        "image_vectors": list(vectors.shape),
        "text_vectors": list(text.shape),
        "level_logits": list(level_logits.shape) if level_logits is not None else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="default")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--train-batch", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--paper", default="vitb16_paper", help="paper-scale config to build and run ('' to skip)")
    parser.add_argument("--json", default=None, help="also write the results to this file")
    args = parser.parse_args()
    torch.manual_seed(0)
    results = {"threads": torch.get_num_threads(), "load_average_before": os.getloadavg()[0]}
    results["run"] = bench_config(args.config, args.batch, args.repeats, args.train_batch)
    if args.paper:
        results["paper"] = bench_paper(args.paper)
    results["load_average_after"] = os.getloadavg()[0]
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            fh.write(text + "\n")


if __name__ == "__main__":
    main()
