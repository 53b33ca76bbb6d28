"""Training settings as data, and the run file that pairs them with a model config.

``--config C`` names either a model config (``resources/configs/C.json`` or a JSON path; the training
settings are then the defaults below) or a *run file*: a JSON object with ``model`` (a config name, path
or inline config), optional ``model_overrides`` (deep-merged onto it) and ``training`` (fields of
``TrainConfig``). Defaults follow docs/methods.md §1.9/§2/§6: AdamW, new modules at a higher learning rate,
linear warm-up then cosine (or multistep ×0.1), gradient clipping, identity-balanced P×K batches.
"""

from __future__ import annotations

import dataclasses
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.kernel import jsonio
from engine.retrieval.models import ModelConfig, load_config
from engine.retrieval.models.coercion import coerce_value
from engine.retrieval.models.config import ConfigError, config_path

RUN_FILE_KEYS = frozenset({"model", "model_overrides", "training"})
#: What the pixel reader reads that is one ontology value of the model's heads (``teacher_attributes``);
#: hat_type is left out: the reader tells a hat from none, not which hat.
TEACHER_KEYS = ("top_color", "bottom_color", "hair_color", "hat_color", "top_length", "bottom_length")


class TrainConfigError(ValueError):
    """Training settings that cannot be used; the message names the key and the problem."""


@dataclass(frozen=True)
class TrainConfig:
    """Everything the trainer reads besides the model config (all overridable in a run file)."""

    epochs: int = 30
    steps_per_epoch: int = 0  # 0 = one pass over the training identities; N = validate/checkpoint every N steps
    identities_per_batch: int = 16  # P
    samples_per_identity: int = 4  # K (batch = P × K text–image pairs)
    optimizer: str = "adamw"  # "adamw" | "adam"
    lr: float = 5e-4  # parameters in open_clip's CLIP layout ("pretrained" group)
    new_lr_multiplier: float = 2.0  # every other parameter (experts, adapters, heads, …): lr × this
    weight_decay: float = 0.05  # not applied to biases, norms, embeddings and other 1-D parameters
    betas: tuple[float, float] = (0.9, 0.999)
    warmup_epochs: float = 1.0  # linear warm-up from warmup_start_factor × lr
    warmup_start_factor: float = 0.1
    schedule: str = "cosine"  # "cosine" | "multistep" | "constant" (after warm-up)
    min_lr_factor: float = 0.01  # cosine end value, as a share of lr
    milestones: tuple[float, ...] = (10.0, 25.0)  # multistep: epochs at which lr is multiplied by gamma
    gamma: float = 0.1
    grad_clip: float = 5.0  # max global gradient norm (0 = off)
    checkpoint_every: int = 200  # steps between checkpoints (and at every epoch end)
    validation_identities: int = 50  # held-out identities (never trained on); 0 = no validation
    validation_seed: int | None = None  # seed of the held-out draw; None = the run's seed. A run started with
    # --init from a checkpoint trained on the same data holds out that checkpoint's identities instead
    validation_queries_per_identity: int = 2  # text queries per held-out identity and level
    level_sizes: str = "range"  # world texts: "range" = uniform count within the level, "upper" = its maximum
    text_augment: float = 0.5  # share of texts that get the docs/methods.md §1.7 word masking/replacement/removal
    text_pick: float = 0.2  # per-word pick probability of that augmentation
    image_augment: bool = True  # flip, pad + crop, random erasing (docs/methods.md §1.7)
    realism: float = 0.0  # chance an RGB or IR training image gets the camera-realism chain (engine.lab.data.realism;
    # IR without its colour steps, sketches never); 0 = off, the earlier behaviour
    low_resolution_factors: tuple[int, ...] = (2, 4, 8)  # CRST views: mild, mid, ultra LR
    low_resolution_reference: str = "source"  # factors divide the image's own size ("source": the world's
    # mild/mid/ultra sizes, as evaluated) or the model's input size ("input", the earlier behaviour)
    text_positives: str = "outfit"  # text–image matches: same identity and outfit ("outfit", the rule the
    # evaluation states for text) or any image of the identity ("identity", the earlier behaviour)
    reid_samples_per_modality: int = 2  # Uni-AT: RGB and IR images per batch identity
    threads: int = 0  # torch CPU threads; 0 = all cores
    trainable: tuple[str, ...] = ()  # name prefixes (* = one dotted part) to train, the rest frozen; () = all
    stem_weights: str = ""  # a new run's mobilenetv2 stem starts from this file (relative: under resources/
    # first); a stem in the --init checkpoint replaces it
    teacher_data: tuple[str, ...] = ()  # ingested footage galleries whose pixel readings teach the image attribute
    # heads (losses.teacher_attributes; engine.lab.train.teacher); () = off
    teacher_per_batch: int = 32  # teacher crops per step
    teacher_min_confidence: float = 0.5  # readings below this confidence are not taught
    teacher_attributes: tuple[str, ...] = ("top_color", "bottom_color", "hair_color")  # keys taught (TEACHER_KEYS)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self)}

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "training") -> TrainConfig:
        if not isinstance(data, dict):
            raise TrainConfigError(f"{source}: 'training' must be an object, got {type(data).__name__}")
        hints = typing.get_type_hints(cls)
        names = [f.name for f in dataclasses.fields(cls)]
        kwargs = {}
        for key, value in data.items():
            if key not in names:
                raise TrainConfigError(f"{source}: unknown training key {key!r} (allowed: {sorted(names)})")
            kwargs[key] = coerce_value(value, hints[key], key, lambda at: f"{source}: training.{at}", TrainConfigError)
        config = cls(**kwargs)
        config.validate(source)
        return config

    def replace(self, **changes: Any) -> TrainConfig:
        config = dataclasses.replace(self, **changes)
        config.validate("training")
        return config

    @property
    def batch_size(self) -> int:
        return self.identities_per_batch * self.samples_per_identity

    def validate(self, source: str = "training") -> None:
        def need(condition: bool, message: str) -> None:
            if not condition:
                raise TrainConfigError(f"{source}: {message}")

        need(self.epochs >= 1, f"'epochs' must be ≥ 1, got {self.epochs}")
        need(self.steps_per_epoch >= 0, "'steps_per_epoch' must be ≥ 0 (0 = one pass over the identities)")
        need(self.identities_per_batch >= 2, "'identities_per_batch' must be ≥ 2 (SDM needs negatives)")
        need(self.samples_per_identity >= 1, "'samples_per_identity' must be ≥ 1")
        need(self.optimizer in ("adamw", "adam"), f"'optimizer' must be 'adamw' or 'adam', got {self.optimizer!r}")
        need(self.lr > 0 and self.new_lr_multiplier > 0, "'lr' and 'new_lr_multiplier' must be positive")
        need(self.weight_decay >= 0, "'weight_decay' must be ≥ 0")
        need(all(0 <= b < 1 for b in self.betas), "'betas' must lie in [0, 1)")
        need(self.warmup_epochs >= 0, "'warmup_epochs' must be ≥ 0")
        need(0 < self.warmup_start_factor <= 1, "'warmup_start_factor' must lie in (0, 1]")
        need(self.schedule in ("cosine", "multistep", "constant"),
             f"'schedule' must be 'cosine', 'multistep' or 'constant', got {self.schedule!r}")
        need(0 <= self.min_lr_factor <= 1, "'min_lr_factor' must lie in [0, 1]")
        need(list(self.milestones) == sorted(self.milestones) and all(m > 0 for m in self.milestones),
             "'milestones' must be increasing positive epochs")
        need(0 < self.gamma <= 1, "'gamma' must lie in (0, 1]")
        need(self.grad_clip >= 0, "'grad_clip' must be ≥ 0 (0 = off)")
        need(self.checkpoint_every >= 1, "'checkpoint_every' must be ≥ 1")
        need(self.validation_identities >= 0, "'validation_identities' must be ≥ 0")
        need(self.validation_queries_per_identity >= 1, "'validation_queries_per_identity' must be ≥ 1")
        need(self.level_sizes in ("range", "upper"),
             f"'level_sizes' must be 'range' or 'upper', got {self.level_sizes!r}")
        need(0 <= self.text_augment <= 1 and 0 <= self.text_pick <= 1,
             "'text_augment' and 'text_pick' must lie in [0, 1]")
        need(0 <= self.realism <= 1, f"'realism' must lie in [0, 1] (a probability), got {self.realism}")
        need(len(self.low_resolution_factors) == 3 and all(f >= 2 for f in self.low_resolution_factors),
             "'low_resolution_factors' needs three factors ≥ 2 (mild, mid, ultra LR)")
        need(self.reid_samples_per_modality >= 1, "'reid_samples_per_modality' must be ≥ 1")
        need(self.low_resolution_reference in ("source", "input"),
             f"'low_resolution_reference' must be 'source' or 'input', got {self.low_resolution_reference!r}")
        need(self.text_positives in ("outfit", "identity"),
             f"'text_positives' must be 'outfit' or 'identity', got {self.text_positives!r}")
        need(self.threads >= 0, "'threads' must be ≥ 0")
        need(all(prefix.strip() for prefix in self.trainable), "'trainable' prefixes must not be empty")
        need(all(part == "*" or "*" not in part for entry in self.trainable for part in entry.split(".")),
             f"'trainable' entries may use * only as a whole dotted part (blocks.*.adapters), got {self.trainable}")
        need(all(folder.strip() for folder in self.teacher_data) and len(set(self.teacher_data)) == len(
            self.teacher_data), "'teacher_data' must list distinct, non-empty gallery folders")
        need(self.teacher_per_batch >= 1, f"'teacher_per_batch' must be ≥ 1, got {self.teacher_per_batch}")
        need(0 < self.teacher_min_confidence <= 1,
             f"'teacher_min_confidence' must lie in (0, 1], got {self.teacher_min_confidence}")
        need(bool(self.teacher_attributes) and set(self.teacher_attributes) <= set(TEACHER_KEYS)
             and len(set(self.teacher_attributes)) == len(self.teacher_attributes),
             f"'teacher_attributes' must be distinct keys of {list(TEACHER_KEYS)}, got {list(self.teacher_attributes)}")


def _plain(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else value


@dataclass(frozen=True)
class RunConfig:
    """The model config and the training settings of one run."""

    model: ModelConfig
    training: TrainConfig
    source: str


def _read_json(path: Path) -> Any:
    try:
        return jsonio.read(path)
    except jsonio.JsonInputError as exc:
        raise TrainConfigError(str(exc)) from None


def _deep_merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_run_config(source: str | Path | dict[str, Any]) -> RunConfig:
    """A model config name/path, a run-file path, or a run dict → ``RunConfig`` (errors name the problem)."""
    if isinstance(source, dict):
        data, origin, base_dir = source, "run config", None
    else:
        try:
            path = config_path(source)
        except FileNotFoundError as exc:
            raise TrainConfigError(str(exc)) from None
        data, origin, base_dir = _read_json(path), str(path), path.parent
        if not isinstance(data, dict) or not ({"model", "training"} & set(data)):
            return RunConfig(_load_model(path, origin), TrainConfig(), origin)
    unknown = set(data) - RUN_FILE_KEYS
    if unknown:
        raise TrainConfigError(
            f"{origin}: unknown run-file key {sorted(unknown)[0]!r} (allowed: {sorted(RUN_FILE_KEYS)})")
    if "model" not in data:
        raise TrainConfigError(f"{origin}: a run file needs 'model' (a config name, path or object)")
    model_source = data["model"]
    if isinstance(model_source, str) and base_dir is not None:
        local = base_dir / model_source
        if local.suffix == ".json" and local.exists():
            model_source = local
    model = _load_model(model_source, origin)
    overrides = data.get("model_overrides", {})
    if overrides:
        if not isinstance(overrides, dict):
            raise TrainConfigError(f"{origin}: 'model_overrides' must be an object")
        try:
            model = ModelConfig.from_dict(_deep_merge(model.to_dict(), overrides), source=f"{origin} model_overrides")
        except ConfigError as exc:
            raise TrainConfigError(str(exc)) from None
    return RunConfig(model, TrainConfig.from_dict(data.get("training", {}), origin), origin)


def _load_model(source: Any, origin: str) -> ModelConfig:
    try:
        return load_config(source)
    except (ConfigError, FileNotFoundError) as exc:
        raise TrainConfigError(f"{origin}: model config: {exc}") from None
