"""Optimiser and learning-rate schedule (docs/methods.md §1.9, §2, §6).

Adam or AdamW over four parameter groups: {pretrained CLIP layout, new modules} × {decayed, not decayed}.
New modules (experts, adapters, fusion, CRST and Uni-AT parts, heads) get ``lr × new_lr_multiplier``
(CMAM: 1e-5 / 2e-5; IRRA: ×5). Biases, norms, embeddings and other 1-D parameters get no weight decay.
Schedule per optimiser step: linear warm-up from ``warmup_start_factor``, then cosine to
``min_lr_factor`` (IRRA/FlexiReID), multistep ×gamma at the milestone epochs (CMAM's "decayed to 10 % at
epochs 10 and 25"), or constant.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable

import torch
from torch import nn

from engine.lab.train.config import TrainConfig, TrainConfigError
from engine.retrieval.models import PersonSearchModel

NO_DECAY_NAMES = ("embedding", "positional", "class_embedding", "logit_scale", "scenario_tokens",
                  "scenario_positions", "stand_ins")


def parameter_groups(model: PersonSearchModel, training: TrainConfig) -> list[dict]:
    """Optimiser groups with their lr and weight decay (frozen parameters are left out)."""
    kind_of = {}
    for kind, params in model.parameter_groups().items():
        for param in params:
            kind_of[id(param)] = kind
    buckets: dict[tuple[str, bool], list[nn.Parameter]] = {}
    for name, param in model.named_parameters():
        if not param.requires_grad:
            continue
        decay = param.ndim >= 2 and not any(part in name for part in NO_DECAY_NAMES)
        buckets.setdefault((kind_of[id(param)], decay), []).append(param)
    groups = []
    for (kind, decay), params in sorted(buckets.items()):
        lr = training.lr * (training.new_lr_multiplier if kind == "new" else 1.0)
        groups.append({"params": params, "lr": lr, "weight_decay": training.weight_decay if decay else 0.0,
                       "name": f"{kind}/{'decay' if decay else 'no_decay'}"})
    return groups


def trainable_matcher(entry: str) -> Callable[[str], bool]:
    """Whether a parameter name falls under one ``trainable`` entry: a name prefix, where a ``*`` part stands for
    any one dotted part (``backbone.visual.transformer.resblocks.*.adapters``: every block's adapters)."""
    if "*" not in entry:
        return lambda name: name.startswith(entry)
    pattern = re.compile(r"\.".join("[^.]+" if part == "*" else re.escape(part) for part in entry.split(".")))
    return lambda name: pattern.match(name) is not None


def freeze_all_but(model: nn.Module, entries: tuple[str, ...]) -> None:
    """Train only the parameters under one of ``entries`` (trainable_matcher; none given: train all). An entry
    that names no parameter is an error naming it, so a typo cannot silently freeze the whole model."""
    if not entries:
        return
    names = [name for name, _ in model.named_parameters()]
    matchers = [trainable_matcher(entry) for entry in entries]
    unused = [entry for entry, match in zip(entries, matchers, strict=True) if not any(map(match, names))]
    if unused:
        roots = sorted({name.split(".")[0] for name in names})
        raise TrainConfigError(f"'trainable' prefixes {unused} name no parameter of this model (its modules: {roots})")
    for name, param in model.named_parameters():
        param.requires_grad_(any(match(name) for match in matchers))
    for module in model.modules():  # a frozen batch norm keeps its running statistics and uses them
        params = list(module.parameters(recurse=False))
        if isinstance(module, nn.modules.batchnorm._BatchNorm) and not any(p.requires_grad for p in params):
            module.register_forward_pre_hook(_hold_in_eval_mode)


def _hold_in_eval_mode(module: nn.Module, _inputs: tuple) -> None:
    module.training = False


def build_optimizer(model: PersonSearchModel, training: TrainConfig) -> torch.optim.Optimizer:
    groups = parameter_groups(model, training)
    if training.optimizer == "adamw":
        return torch.optim.AdamW(groups, lr=training.lr, betas=training.betas)
    return torch.optim.Adam(groups, lr=training.lr, betas=training.betas)


class LearningRateFactor:
    """Multiplier of the base lr after ``step`` optimiser steps (a picklable LambdaLR callable)."""

    def __init__(self, training: TrainConfig, steps_per_epoch: int) -> None:
        self.steps_per_epoch = steps_per_epoch
        self.total = max(1, training.epochs * steps_per_epoch)
        self.warmup = min(self.total, round(training.warmup_epochs * steps_per_epoch))
        self.start = training.warmup_start_factor
        self.schedule = training.schedule
        self.min_factor = training.min_lr_factor
        self.milestones = [round(m * steps_per_epoch) for m in training.milestones]
        self.gamma = training.gamma

    def __call__(self, step: int) -> float:
        if step < self.warmup:
            return self.start + (1.0 - self.start) * step / self.warmup
        if self.schedule == "cosine":
            progress = min(1.0, (step - self.warmup) / max(1, self.total - self.warmup))
            return self.min_factor + (1.0 - self.min_factor) * 0.5 * (1.0 + math.cos(math.pi * progress))
        if self.schedule == "multistep":
            return self.gamma ** sum(step >= m for m in self.milestones)
        return 1.0


def build_scheduler(optimizer: torch.optim.Optimizer, training: TrainConfig,
                    steps_per_epoch: int) -> torch.optim.lr_scheduler.LambdaLR:
    return torch.optim.lr_scheduler.LambdaLR(optimizer, LearningRateFactor(training, steps_per_epoch))
