"""The training loop: data → batches → forward → composed losses → AdamW step, with checkpoints, resume,
a time limit, per-epoch validation and a JSON-lines learning curve (docs/methods.md §1.9).

Determinism: every step draws its randomness (sampled texts, augmentation, LR views, masks, g', PCIA
noise, any global-RNG use inside the model; the teacher's crops and their augmentation on a stream of their
own) from generators seeded by (seed, epoch, step), and the identity-balanced sampler is seeded by
(seed, epoch). A resumed run therefore recomputes exactly the steps an uninterrupted run would (same threads
and device). CUDA runs under bf16 autocast (the model's ``device`` decides); CPU runs in float32.
"""

from __future__ import annotations

import math
import os
import random
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import torch

from engine.kernel.progress import ProgressFn, no_progress
from engine.kernel.resources import resource_path
from engine.lab.data.sampler import IdentityBalancedBatches
from engine.lab.train.batches import BatchBuilder
from engine.lab.train.config import RunConfig, TrainConfig, load_run_config
from engine.lab.train.data import DataNeeds, HeldOut, TrainingData, build_training_data
from engine.lab.train.forward import forward_train
from engine.lab.train.losses import compose_losses
from engine.lab.train.optim import build_optimizer, build_scheduler, freeze_all_but
from engine.lab.train.state import (
    NON_IDENTITY_TRAINING_KEYS,
    RunFolder,
    RunFolderError,
    capture_rng,
    restore_rng,
    run_identity,
    seed_everything,
)
from engine.lab.train.stem_weights import StemWeightsError, load_mobilenetv2_weights
from engine.lab.train.teacher import TeacherData, load_teacher
from engine.lab.train.validate import evaluate
from engine.lab.train.warm_start import warm_start
from engine.retrieval.models import ModelConfig, PersonSearchModel, choose_device, create, save
from engine.retrieval.models.stem import MobileNetV2Stem


class TrainingError(RuntimeError):
    """Training cannot go on (e.g. the loss became non-finite)."""


def start_stem(model: PersonSearchModel, weights: str) -> str:
    """Load pretrained stem weights (``training.stem_weights``) into a new run's mobilenetv2 stem."""
    stem = model.backbone.visual.conv1
    if not isinstance(stem, MobileNetV2Stem):
        raise TrainingError(f"'stem_weights' needs vision.stem 'mobilenetv2'; this model's stem is "
                            f"{model.config.vision.stem!r}")
    path = Path(weights)
    if not path.is_absolute() and resource_path(weights).is_file():
        path = resource_path(weights)
    try:
        copied = load_mobilenetv2_weights(stem, path)
    except StemWeightsError as exc:
        raise TrainingError(str(exc)) from None
    return f"stem: {copied} MobileNetV2 tensors from {path}"


@dataclass
class TrainOptions:
    config: str | Path | dict[str, Any]  # model config name/path, run file, or run dict
    data: str  # READER:PATH
    out: Path
    resume: bool = False
    epochs: int | None = None
    max_minutes: float | None = None
    seed: int = 0
    device: str | None = None  # default: CUDA when available
    command: str | None = None  # the command line, stored in the checkpoint metadata
    training_overrides: dict[str, Any] = field(default_factory=dict)  # TrainConfig fields
    init: Path | None = None  # warm start: copy matching weights from this checkpoint (a new run only)
    init_scope: str = "all"  # "backbone": copy only the CLIP-layout backbone tensors (engine.lab.train.warm_start)


@dataclass
class TrainResult:
    out: Path
    model_dir: Path
    status: str  # "completed" | "time_limit" | "already_complete"
    epoch: int  # epochs completed
    global_step: int
    last_losses: dict[str, float]
    last_validation: dict[str, Any] | None


def step_seed(seed: int, epoch: int, step: int, stream: int = 0) -> int:
    """A 63-bit seed for one step, independent of every other (seed, epoch, step); ``stream`` > 0 gives the
    step further independent seeds (1: its teacher crops)."""
    words = np.random.SeedSequence([seed, epoch, step, *([stream] if stream else [])]).generate_state(
        2, dtype=np.uint32)
    return (int(words[0]) << 31) ^ int(words[1])


def resolve_run_config(options: TrainOptions) -> RunConfig:
    run = load_run_config(options.config)
    changes = dict(options.training_overrides)
    if options.epochs is not None:
        changes["epochs"] = options.epochs
    if changes:
        run = RunConfig(run.model, run.training.replace(**changes), run.source)
    return run


def _size_identity_heads(run: RunConfig, data: TrainingData, echo: Callable[[str], None]) -> RunConfig:
    """Uni-AT classifiers get one class per training identity (and per identity × outfit under SAID)."""
    config = run.model
    if not DataNeeds.of(config).reid:
        return run
    scen = config.scenarios
    sized = {"num_person_ids": data.num_identities,
             "num_clothing_ids": data.num_clothing if config.losses.said else scen.num_clothing_ids}
    if sized["num_person_ids"] == scen.num_person_ids and sized["num_clothing_ids"] == scen.num_clothing_ids:
        return run
    echo(f"sizing the Uni-AT classifiers to the data: {sized}")
    return RunConfig(config.with_overrides({"scenarios": sized}), run.training, run.source)


def _recorded_run(folder: RunFolder, current: RunConfig, options: TrainOptions,
                  echo: Callable[[str], None]) -> RunConfig:
    """On resume the run continues with the model config and settings recorded when it started, even if
    the named config file has changed since; ``--epochs`` must still agree (checked with the rest)."""
    stored = folder.read_identity() if folder.root.is_dir() else None
    if stored is None or "model_config" not in stored:
        return current
    try:
        model = ModelConfig.from_dict(stored["model_config"], source=str(folder.run_file))
        recorded = {**stored["training"], **{k: current.training.to_dict()[k] for k in NON_IDENTITY_TRAINING_KEYS}}
        if options.epochs is not None:
            recorded["epochs"] = options.epochs
        recorded.update({k: v for k, v in options.training_overrides.items() if k in NON_IDENTITY_TRAINING_KEYS})
        training = TrainConfig.from_dict(recorded, str(folder.run_file))
    except (ValueError, TypeError) as exc:
        raise RunFolderError(f"cannot resume: {folder.run_file} does not describe a usable run ({exc})") from None
    current_model = current.model.to_dict()
    if DataNeeds.of(current.model).reid:  # the class counts were sized from the data when the run started
        for key in ("num_person_ids", "num_clothing_ids"):
            current_model["scenarios"][key] = getattr(model.scenarios, key)
    changed = current_model != model.to_dict() or {
        k: v for k, v in current.training.to_dict().items() if k not in NON_IDENTITY_TRAINING_KEYS
    } != {k: v for k, v in training.to_dict().items() if k not in NON_IDENTITY_TRAINING_KEYS}
    if changed:
        echo(f"note: {current.source} differs from the config this run started with; "
             "resuming with the recorded one (run.json)")
    return RunConfig(model, training, str(folder.run_file))


def _recorded_held_out(options: TrainOptions, folder: RunFolder) -> HeldOut | None:
    """The validation identities to keep: on resume those of the run's own checkpoint, on a warm start those
    of the ``--init`` checkpoint (used only when it was trained on the same data); None when not recorded."""
    from engine.retrieval.models import read_metadata

    source = folder.model_dir if options.resume else options.init
    if source is None or not Path(source).is_dir():
        return None
    try:
        metadata = read_metadata(source)
    except (OSError, ValueError):
        return None
    identities = metadata.get("validation_identities")
    content = (metadata.get("data_fingerprint") or {}).get("content_sha256")
    if not isinstance(identities, list) or not identities or not content:
        return None
    seed = metadata.get("validation_seed")
    origin = metadata.get("validation_origin") if options.resume else None  # kept as the run recorded it
    return HeldOut(tuple(int(i) for i in identities), int(seed if seed is not None else metadata.get("seed", 0)),
                   content, str(source), origin if isinstance(origin, str) else "")


class Trainer:
    """One run; ``run()`` trains until done or out of time. Build with ``Trainer.prepare``."""

    def __init__(self, options: TrainOptions, run: RunConfig, data: TrainingData, folder: RunFolder,
                 model: PersonSearchModel, echo: Callable[[str], None], teacher: TeacherData | None = None) -> None:
        self.options = options
        self.run_config = run
        self.training: TrainConfig = run.training
        self.data = data
        self.folder = folder
        self.model = model
        self.echo = echo
        self.device = model.device
        self.builder = BatchBuilder(data, run.model, run.training, model.tokenizer)
        self.teacher = teacher
        self.started_with = options.command  # a resumed run keeps the command that started it
        self.resumed_with: list[str] = []
        self.sampler = IdentityBalancedBatches(data.labels, self.training.identities_per_batch,
                                               self.training.samples_per_identity, seed=options.seed)
        self.steps_per_epoch = len(self.sampler)
        if self.training.steps_per_epoch:
            self.steps_per_epoch = min(self.steps_per_epoch, self.training.steps_per_epoch)
        if self.steps_per_epoch < 1:
            raise TrainingError("the data fills no batch; lower identities_per_batch")
        freeze_all_but(model, self.training.trainable)
        self.optimizer = build_optimizer(model, self.training)
        self.scheduler = build_scheduler(self.optimizer, self.training, self.steps_per_epoch)
        self.parameters = [p for group in self.optimizer.param_groups for p in group["params"]]
        self.epoch = 0
        self.step = 0  # next step within the epoch
        self.global_step = 0
        self.last_validation: dict[str, Any] | None = None
        self.last_losses: dict[str, float] = {}

    # ------------------------------------------------------------------------------------- construction
    @classmethod
    def prepare(cls, options: TrainOptions, progress: ProgressFn = no_progress,
                echo: Callable[[str], None] = lambda message: None) -> Trainer:
        run = resolve_run_config(options)
        folder = RunFolder(options.out)
        if options.resume:
            run = _recorded_run(folder, run, options, echo)
        training = run.training
        torch.set_num_threads(training.threads or max(1, os.cpu_count() or 1))
        seed_everything(options.seed)
        data = build_training_data(
            options.data, run.model, seed=options.seed, validation_identities=training.validation_identities,
            queries_per_identity=training.validation_queries_per_identity,
            identities_per_batch=training.identities_per_batch, status=echo,
            validation_seed=training.validation_seed, held_out=_recorded_held_out(options, folder))
        run = _size_identity_heads(run, data, echo)
        teacher = load_teacher(training, run.model)
        if teacher is not None:  # part of what the run trains on: a changed teacher gallery is another run
            data.fingerprint["teacher"] = teacher.summary()
            echo(_teacher_line(teacher))
        folder.prepare(run_identity(run.model.to_dict(), training.to_dict(), data.fingerprint, options.seed),
                       options.resume)
        echo(f"decoding {len(data.paths)} images at {data.image_size} (once)")
        data.load_images(progress)
        model = create(run.model, device=choose_device(options.device))
        model.train()
        warm = None
        if training.stem_weights and not options.resume:  # before --init: a checkpoint's own stem wins
            echo(start_stem(model, training.stem_weights))
        if options.init is not None and not options.resume:
            warm = warm_start(model, options.init, options.init_scope)
            echo(warm.summary())
        trainer = cls(options, run, data, folder, model, echo, teacher)
        if options.resume:
            trainer._restore()
        else:
            folder.append_log({"event": "start", "command": options.command, "seed": options.seed,
                               "config": run.model.name, "training": training.to_dict(),
                               "steps_per_epoch": trainer.steps_per_epoch, "device": str(model.device),
                               "pairs": len(data.pairs), "identities": data.num_identities,
                               "validation_identities": data.validation_identities,
                               "validation_origin": data.validation_origin,
                               "teacher": None if teacher is None else teacher.summary(),
                               "init": None if warm is None else {
                                   "checkpoint": str(warm.path), "scope": options.init_scope,
                                   "loaded": len(warm.loaded), "new": warm.new}})
        return trainer

    def _restore(self) -> None:
        state = self.folder.load_state()
        self.model.load_state_dict(state["model"])
        self.optimizer.load_state_dict(state["optimizer"])
        self.scheduler.load_state_dict(state["scheduler"])
        restore_rng(state["rng"])
        self.epoch, self.step, self.global_step = state["epoch"], state["step"], state["global_step"]
        self.last_validation = state.get("last_validation")
        self.folder.truncate_log(state["log_offset"])
        log = self.folder.read_log()
        self.started_with = next((r.get("command") for r in log if r.get("event") == "start"),
                                 self.options.command)
        self.resumed_with = [r.get("command") for r in log if r.get("event") == "resume"] + [self.options.command]
        self.folder.append_log({"event": "resume", "epoch": self.epoch, "step": self.step,
                                "global_step": self.global_step, "command": self.options.command})
        self.echo(f"resuming at epoch {self.epoch + 1}, step {self.step} (global step {self.global_step})")

    # ---------------------------------------------------------------------------------------- checkpoint
    def save_checkpoint(self) -> None:
        """Model folder (engine.retrieval.models format) and the full training state, each written atomically."""
        metadata = {
            "training_command": self.started_with,
            "resumed_with": self.resumed_with,
            "data_fingerprint": self.data.fingerprint,
            "seed": self.options.seed,
            "training": self.training.to_dict(),
            "epoch": self.epoch,
            "step_in_epoch": self.step,
            "global_step": self.global_step,
            "validation": self.last_validation,
            "validation_identities": self.data.validation_identities,
            "validation_seed": self.data.validation_seed,
            "validation_origin": self.data.validation_origin,
        }
        save(self.model, self.folder.model_dir, extra_metadata=metadata)
        self.folder.save_state({
            "model": {k: v.detach().cpu() for k, v in self.model.state_dict().items()},
            "optimizer": self.optimizer.state_dict(),
            "scheduler": self.scheduler.state_dict(),
            "rng": capture_rng(),
            "epoch": self.epoch,
            "step": self.step,
            "global_step": self.global_step,
            "log_offset": self.folder.log_size(),
            "last_validation": self.last_validation,
        })

    # ---------------------------------------------------------------------------------------------- steps
    def train_step(self, indices: list[int]) -> dict[str, Any]:
        seed = step_seed(self.options.seed, self.epoch, self.step)
        torch.manual_seed(seed)
        rng = random.Random(seed)
        generator = torch.Generator().manual_seed(seed)
        loss_generator = generator if self.device.type == "cpu" else torch.Generator(self.device).manual_seed(seed)
        started = time.perf_counter()
        batch = self.builder.build(indices, rng, generator).to(self.device)
        teacher, teacher_inputs = None, {}
        if self.teacher is not None:  # its own stream: the rest of the step is what it is without the teacher
            teacher_generator = torch.Generator().manual_seed(step_seed(self.options.seed, self.epoch, self.step, 1))
            teacher = self.teacher.draw(self.training.teacher_per_batch, teacher_generator, self.builder.mean,
                                        self.builder.std, self.builder.image_augment).to(self.device)
            teacher_inputs = teacher.forward_kwargs()
        outputs = forward_train(self.model, batch.images, batch.token_ids, **batch.forward_kwargs(), **teacher_inputs)
        losses = compose_losses(outputs, batch, self.model.config, loss_generator, teacher)
        if not torch.isfinite(losses.total):
            raise TrainingError(
                f"the loss became non-finite at epoch {self.epoch + 1}, step {self.step}: {losses.as_floats()}")
        self.optimizer.zero_grad(set_to_none=True)
        losses.total.backward()
        grad_norm = None
        if self.training.grad_clip > 0:
            grad_norm = float(torch.nn.utils.clip_grad_norm_(self.parameters, self.training.grad_clip))
        lr = self.training.lr * self.scheduler.lr_lambdas[0](self.scheduler.last_epoch)
        self.optimizer.step()
        self.scheduler.step()
        record = {"event": "step", "epoch": self.epoch, "step": self.step, "global_step": self.global_step + 1,
                  "loss": float(losses.total.detach()), "terms": losses.as_floats(), "lr": lr,
                  "grad_norm": grad_norm, "seconds": round(time.perf_counter() - started, 4),
                  "images_per_second": round(batch.size / max(1e-9, time.perf_counter() - started), 2)}
        return record

    def validate(self) -> dict[str, Any] | None:
        if self.data.validation is None:
            return None
        return evaluate(self.model, self.data.validation, self.builder)

    # ------------------------------------------------------------------------------------------------ run
    def run(self, progress: ProgressFn = no_progress, on_step: Callable[[dict[str, Any]], None] | None = None,
            started: float | None = None) -> TrainResult:
        started = time.monotonic() if started is None else started
        limit = None if self.options.max_minutes is None else 60.0 * self.options.max_minutes
        epochs = self.training.epochs
        total = epochs * self.steps_per_epoch
        if self.epoch >= epochs:
            self.echo(f"the run in {self.folder.root} has already finished {epochs} epochs")
            return self._result("already_complete")
        progress(self.global_step, total)
        epoch_losses = self._logged_epoch_losses()
        while self.epoch < epochs:
            batches = list(self.sampler.epoch(self.epoch))[: self.steps_per_epoch]
            while self.step < self.steps_per_epoch:
                if limit is not None and time.monotonic() - started >= limit:
                    self.save_checkpoint()
                    self.folder.append_log({"event": "stop", "reason": "max_minutes", "epoch": self.epoch,
                                            "step": self.step, "global_step": self.global_step})
                    self.echo(f"time limit reached: stopped at epoch {self.epoch + 1}, step {self.step}; "
                              f"checkpoint in {self.folder.root} (continue with --resume)")
                    return self._result("time_limit")
                record = self.train_step(batches[self.step])
                self.step += 1
                self.global_step += 1
                self.last_losses = {"loss": record["loss"], **record["terms"]}
                epoch_losses.append(record["loss"])
                self.folder.append_log(record)
                if on_step is not None:
                    on_step(record)
                progress(self.global_step, total)
                if self.global_step % self.training.checkpoint_every == 0 and self.step < self.steps_per_epoch:
                    self.save_checkpoint()
            self.last_validation = self.validate()
            summary = {"event": "epoch", "epoch": self.epoch, "global_step": self.global_step,
                       "mean_loss": float(np.mean(epoch_losses)) if epoch_losses else None,
                       "validation": self.last_validation, "elapsed_seconds": round(time.monotonic() - started, 1)}
            self.folder.append_log(summary)
            self.echo(_epoch_line(self.epoch + 1, epochs, summary))
            self.epoch += 1
            self.step = 0
            epoch_losses = []
            self.save_checkpoint()
        self.folder.append_log({"event": "end", "global_step": self.global_step})
        return self._result("completed")

    def _logged_epoch_losses(self) -> list[float]:
        """Losses of the current epoch's steps already in the log (a resumed epoch's mean covers them)."""
        if self.step == 0:
            return []
        return [r["loss"] for r in self.folder.read_log() if r.get("event") == "step" and r["epoch"] == self.epoch]

    def _result(self, status: str) -> TrainResult:
        return TrainResult(out=self.folder.root, model_dir=self.folder.model_dir, status=status, epoch=self.epoch,
                           global_step=self.global_step, last_losses=self.last_losses,
                           last_validation=self.last_validation)


def _teacher_line(teacher: TeacherData) -> str:
    summary = teacher.summary()
    readings = ", ".join(f"{key} {count}" for key, count in summary["readings"].items())
    clips = ", ".join(clip for source in summary["folders"] for clip in source["clips"])
    return (f"teacher: {summary['crops']} crops from {len(summary['folders'])} galleries ({clips}); readings with "
            f"confidence ≥ {summary['min_confidence']}: {readings}")


def _epoch_line(epoch: int, epochs: int, summary: dict[str, Any]) -> str:
    parts = [f"epoch {epoch}/{epochs}"]
    if summary["mean_loss"] is not None and math.isfinite(summary["mean_loss"]):
        parts.append(f"loss {summary['mean_loss']:.4f}")
    for level, metrics in (summary["validation"] or {}).items():
        parts.append(f"{level} R@1 {100 * metrics['R@1']:.1f}% mAP {100 * metrics['mAP']:.1f}%")
    return " | ".join(parts)


def train(options: TrainOptions, progress: ProgressFn = no_progress,
          echo: Callable[[str], None] = lambda message: None,
          on_step: Callable[[dict[str, Any]], None] | None = None) -> TrainResult:
    """Train (or resume) one run into ``options.out``; see the module docstring."""
    started = time.monotonic()
    if options.command is None:
        options.command = " ".join(sys.argv)
    with RunFolder(options.out).writing():
        trainer = Trainer.prepare(options, progress=progress, echo=echo)
        return trainer.run(progress=progress, on_step=on_step, started=started)
