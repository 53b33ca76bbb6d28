"""Time of one training step of a config (batch as configured: P identities × K images) and images/s.

Builds a small world in a temporary folder (enough identities for one batch), then runs the trainer's
own pieces — batch assembly, forward, loss composition, backward, clipping, optimiser step — and reports
the median over ``--steps`` timed steps after one warm-up step, split by phase.

Run: ``.venv/bin/python bench/train_step.py [--config default] [--steps 2] [--device cpu] [--threads N]``.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

import torch

from engine.lab.train.batches import BatchBuilder
from engine.lab.train.config import load_run_config
from engine.lab.train.data import build_training_data
from engine.lab.train.forward import forward_train
from engine.lab.train.losses import compose_losses
from engine.lab.train.optim import build_optimizer
from engine.lab.world.build import build_world
from engine.retrieval.models import choose_device, create


def _sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="default", help="config name, JSON path or run file")
    parser.add_argument("--steps", type=int, default=2, help="timed steps (after one warm-up step)")
    parser.add_argument("--device", default=None, help="cpu, cuda, … (default: CUDA when available)")
    parser.add_argument("--threads", type=int, default=0, help="torch CPU threads (0 = all cores)")
    args = parser.parse_args()

    run = load_run_config(args.config)
    training = run.training
    torch.set_num_threads(args.threads or os.cpu_count() or 1)
    device = choose_device(args.device)
    with tempfile.TemporaryDirectory(prefix="lineup-bench-") as tmp:
        world = Path(tmp) / "world"
        build_world(world, identities=training.identities_per_batch + 2, images_per_identity=8, seed=0,
                    workers=1)
        data = build_training_data(f"world:{world}", run.model, seed=0, validation_identities=0,
                                   queries_per_identity=1, identities_per_batch=training.identities_per_batch)
    # the images are decoded before the temporary world goes away
        data.load_images()
    config = run.model
    if config.scenarios.enabled and config.losses.scenario_id > 0:
        config = config.with_overrides({"scenarios": {"num_person_ids": data.num_identities,
                                                      "num_clothing_ids": data.num_clothing}})
    torch.manual_seed(0)
    model = create(config, device=device).train()
    builder = BatchBuilder(data, config, training, model.tokenizer)
    optimizer = build_optimizer(model, training)
    parameters = [p for group in optimizer.param_groups for p in group["params"]]
    by_label: dict[int, list[int]] = {}
    for index, pair in enumerate(data.pairs):
        by_label.setdefault(pair.label, []).append(index)
    labels = sorted(by_label)[: training.identities_per_batch]
    indices = [by_label[label][k % len(by_label[label])] for label in labels
               for k in range(training.samples_per_identity)]

    phases: dict[str, list[float]] = {"batch": [], "forward": [], "backward": [], "optimizer": [], "total": []}
    for step in range(args.steps + 1):
        generator = torch.Generator().manual_seed(step)
        start = time.perf_counter()
        batch = builder.build(indices, random.Random(step), generator).to(device)
        t_batch = time.perf_counter()
        outputs = forward_train(model, batch.images, batch.token_ids, **batch.forward_kwargs())
        losses = compose_losses(outputs, batch, config, generator if device.type == "cpu" else None)
        _sync(device)
        t_forward = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        losses.total.backward()
        _sync(device)
        t_backward = time.perf_counter()
        if training.grad_clip > 0:
            torch.nn.utils.clip_grad_norm_(parameters, training.grad_clip)
        optimizer.step()
        _sync(device)
        end = time.perf_counter()
        if step == 0:
            continue  # warm-up
        for name, value in (("batch", t_batch - start), ("forward", t_forward - t_batch),
                            ("backward", t_backward - t_forward), ("optimizer", end - t_backward),
                            ("total", end - start)):
            phases[name].append(value)

    median = {name: statistics.median(values) for name, values in phases.items()}
    size = batch.size
    print(f"config {config.name}: batch {size} ({training.identities_per_batch}×{training.samples_per_identity}), "
          f"device {device}, threads {torch.get_num_threads()}, {sum(p.numel() for p in parameters) / 1e6:.1f} M "
          f"trainable parameters, loss terms {list(losses.terms)}")
    print(f"one training step: {median['total']:.3f} s  ({size / median['total']:.1f} img/s)  "
          + "  ".join(f"{name} {median[name]:.3f} s" for name in ("batch", "forward", "backward", "optimizer")))


if __name__ == "__main__":
    main()
