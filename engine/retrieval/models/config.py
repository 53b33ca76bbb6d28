"""Model configuration as data: ``resources/configs/*.json`` loaded into validated dataclasses.

A config file is either a full config or an overlay ``{"base": NAME, "overrides": {...}}`` (plus optional
``name`` and ``description``) deep-merged onto another config. Unknown keys are an error naming the key.
Every component is switchable so that each ablation row of the four papers is one config (docs/methods.md §1–4).
The ``losses`` section is the switchboard the trainer reads (weights and options of each objective).
"""

from __future__ import annotations

import copy
import dataclasses
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine.kernel import jsonio
from engine.kernel.resources import resource_path
from engine.retrieval.models.coercion import coerce_value
from engine.retrieval.models.names import LEVELS

CLIP_MEAN = (0.48145466, 0.4578275, 0.40821073)
CLIP_STD = (0.26862954, 0.26130258, 0.27577711)
PAPER_TAL_MARGINS = (0.05, 0.075, 0.10, 0.125, 0.15)  # m(g) = 0.05 + 0.10·(g−1)/(G−1), docs/methods.md §1.7 [R]


class ConfigError(ValueError):
    """A model config that cannot be used; the message names the key and the problem."""


@dataclass(frozen=True)
class VisionConfig:
    """Image tower: a patch embedding (ViT) or a conv stem of stride ``patch_size``, then transformer blocks."""

    image_size: tuple[int, int] = (128, 64)  # height, width
    stem: str = "conv"  # "patch" (one strided conv, CLIP) | "conv" (stride-2 3×3 convs) | "mobilenetv2" (§6)
    patch_size: int = 8  # total stride of the stem = patch size
    stem_channels: tuple[int, ...] = (32, 64, 128)  # conv stem only: one entry per stride-2 conv
    width: int = 256
    layers: int = 4
    heads: int = 4
    mlp_ratio: float = 4.0
    modality_embedding: bool = True  # learned offset per modality (rgb, ir, sketch), shared tower
    mean: tuple[float, float, float] = CLIP_MEAN
    std: tuple[float, float, float] = CLIP_STD


@dataclass(frozen=True)
class TextConfig:
    """CLIP text transformer (causal, pooled at the end-of-text token)."""

    context_length: int = 128
    width: int = 256
    layers: int = 4
    heads: int = 4
    mlp_ratio: float = 4.0


@dataclass(frozen=True)
class GranularityConfig:
    """CMAM OE-MVP: one FFN expert per level beside the shared FFN in every visual block (docs/methods.md §1.6)."""

    enabled: bool = False
    expert_widths: tuple[int, ...] = ()  # hidden width per level UC, C, M, F, UF
    image_query_level: str = "UF"  # the expert used for image-side queries (sketch, IR, re-id)


@dataclass(frozen=True)
class GCRConfig:
    """CMAM GCR: shared level classifier and bilinear consistency-matching head (docs/methods.md §1.8)."""

    enabled: bool = False


@dataclass(frozen=True)
class AdapterConfig:
    """FlexiReID AEA-MoE: routed bottleneck adapters parallel to the FFN (docs/methods.md §4)."""

    enabled: bool = False
    routing: str = "top_p"  # "top_p" (AEA) | "top_k" (traditional MoE) | "single" (one MLP adapter)
    num_experts: int = 6
    bottleneck: int = 64
    top_p_threshold: float = 0.4
    top_k: int = 2
    top_k_renormalize: bool = True
    towers: tuple[str, ...] = ("visual", "text")


@dataclass(frozen=True)
class FusionConfig:
    """Query fusion of text, sketch and IR: "cmqf" (FlexiReID), "mean" (no CMQF) or "none"."""

    kind: str = "none"
    layers: int = 1
    heads: int = 4
    mlp_ratio: float = 4.0
    keys: str = "token"  # CMQF keys: "token" (each modality's pooled token) | "sequence" (its token sequence)


@dataclass(frozen=True)
class ResolutionConfig:
    """CRST resolution embedding added to every token after the positional embedding (λ_r = scale)."""

    embedding: bool = False
    scale: float = 1.0


@dataclass(frozen=True)
class CRSTConfig:
    """CRST training-only modules: RCR gated masked grounding and TGR text-guided refinement (docs/methods.md §2)."""

    rcr: bool = False
    tgr: bool = False
    cross_layers: int = 4
    cross_heads: int = 8
    gate_mode: str = "scale"  # "scale": ĥ_k = ρ_k h_k | "attention_bias": log ρ_k added to attention logits
    tgr_heads: int = 8
    tgr_gate: str = "vector"  # "vector" | "scalar"


@dataclass(frozen=True)
class ScenarioConfig:
    """Uni-AT: six scenario CLS tokens, MoAE for them, BN necks and ID classifiers (docs/methods.md §3)."""

    enabled: bool = False
    moae: bool = False
    gate: str = "renormalized"  # "renormalized" (official code: weight 1, no gate gradient) | "softmax" (Eq. 4)
    isolate: bool = True  # patch/CLS tokens do not attend to scenario tokens (retrieval path unchanged)
    num_person_ids: int = 0  # LT classifiers (and ST ones without SAID); 0 = no classifiers
    num_clothing_ids: int = 0  # ST classifiers under SAID


@dataclass(frozen=True)
class AttributeConfig:
    """Per-attribute linear classifiers over the 18 ontology attributes (docs/methods.md §6)."""

    image: bool = False
    text: bool = False


@dataclass(frozen=True)
class LossConfig:
    """Weights and options of the objectives (0 = off); the trainer builds the total from these."""

    temperature: float = 0.02  # SDM / CR-RDA τ (docs/methods.md §2)
    sdm: float = 1.0  # SDM(text, image)
    tal: float = 0.0  # (soft) TAL, CMAM L_stal
    tal_temperature: float = 0.015
    tal_margins: tuple[float, ...] = PAPER_TAL_MARGINS
    pcia: bool = False  # soft cross-identity labels inside TAL
    pcia_threshold: float = 0.6
    pcia_noise: float = 0.1
    pcia_coarse_level: str = "C"
    orthogonality: float = 0.0  # λ1
    orthogonality_absolute: bool = False
    gcr: float = 0.0  # λ2 (L_cls + L_match)
    routing_entropy: float = 0.0  # FlexiReID λ = 0.5
    fusion_sdm: float = 0.0  # Σ over the seven query modes of SDM(f_mode, v_rgb)
    sdm_low_resolution: float = 0.0  # CRST SDM(t, ṽᴸ)
    rcr: float = 0.0
    tgr: float = 0.0
    cr_rda: float = 0.0
    scenario_id: float = 0.0  # Uni-AT identity loss
    said: bool = False
    hdw: bool = False
    attributes: float = 0.0
    query_attributes: float = 0.0  # attribute CE on the sketch/IR query embeddings, colours masked (§4)
    teacher_attributes: float = 0.0  # image heads on real crops against the pixel reader's readings (§6)


@dataclass(frozen=True)
class ModelConfig:
    name: str
    description: str = ""
    embed_dim: int = 256
    quick_gelu: bool = False
    vision: VisionConfig = field(default_factory=VisionConfig)
    text: TextConfig = field(default_factory=TextConfig)
    granularity: GranularityConfig = field(default_factory=GranularityConfig)
    gcr: GCRConfig = field(default_factory=GCRConfig)
    adapters: AdapterConfig = field(default_factory=AdapterConfig)
    fusion: FusionConfig = field(default_factory=FusionConfig)
    resolution: ResolutionConfig = field(default_factory=ResolutionConfig)
    crst: CRSTConfig = field(default_factory=CRSTConfig)
    scenarios: ScenarioConfig = field(default_factory=ScenarioConfig)
    attributes: AttributeConfig = field(default_factory=AttributeConfig)
    losses: LossConfig = field(default_factory=LossConfig)

    def to_dict(self) -> dict[str, Any]:
        return _to_plain(dataclasses.asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any], source: str = "config") -> ModelConfig:
        config = _build(cls, data, source, "")
        validate(config, source)
        return config

    def with_overrides(self, overrides: dict[str, Any]) -> ModelConfig:
        """A new validated config with ``overrides`` (nested dict) deep-merged onto this one."""
        return ModelConfig.from_dict(_deep_merge(self.to_dict(), overrides, "overrides"), f"{self.name}+overrides")


# ----------------------------------------------------------------------------------------------------------
# building and type checking


def _to_plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _to_plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_to_plain(v) for v in value]
    return value


def _build(cls: type, data: Any, source: str, prefix: str) -> Any:
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: {prefix or 'config'} must be an object, got {type(data).__name__}")
    hints = typing.get_type_hints(cls)
    names = {f.name for f in dataclasses.fields(cls)}
    for key in data:
        if key not in names:
            raise ConfigError(f"{source}: unknown key {prefix + key!r} (allowed: {sorted(names)})")
    kwargs = {}
    for f in dataclasses.fields(cls):
        path = prefix + f.name
        if f.name not in data:
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ConfigError(f"{source}: missing required key {path!r}")
            continue
        kind = hints[f.name]
        if dataclasses.is_dataclass(kind):
            kwargs[f.name] = _build(kind, data[f.name], source, path + ".")
        else:
            kwargs[f.name] = coerce_value(data[f.name], kind, path, lambda at: f"{source}: {at!r}", ConfigError)
    return cls(**kwargs)


# ----------------------------------------------------------------------------------------------------------
# validation


def _require(condition: bool, source: str, message: str) -> None:
    if not condition:
        raise ConfigError(f"{source}: {message}")


def _choice(value: str, allowed: tuple[str, ...], source: str, path: str) -> None:
    _require(value in allowed, source, f"{path!r} must be one of {list(allowed)}, got {value!r}")


#: Most blocks or experts a component may stack: each is a Python-built module, so a damaged config asking for
#: millions would hang model construction (the paper-sized config stacks 12).
MAX_STACKED = 256


def _stack(count: int, source: str, path: str) -> None:
    _require(count <= MAX_STACKED, source, f"'{path}' {count} is over the limit of {MAX_STACKED}")


def validate(config: ModelConfig, source: str = "config") -> None:
    """Check ranges, choices and the consistency between components and loss weights."""
    v, t = config.vision, config.text
    for path, count in (("vision.layers", v.layers), ("text.layers", t.layers), ("fusion.layers", config.fusion.layers),
                        ("crst.cross_layers", config.crst.cross_layers),
                        ("adapters.num_experts", config.adapters.num_experts)):
        _stack(count, source, path)
    _require(config.embed_dim > 0, source, "'embed_dim' must be positive")
    _choice(v.stem, ("patch", "conv", "mobilenetv2"), source, "vision.stem")
    _require(v.stem != "mobilenetv2" or v.patch_size == 16, source,
             "'vision.patch_size' must be 16 for the mobilenetv2 stem (its output stride)")
    _require(v.patch_size > 0, source, "'vision.patch_size' must be positive")
    for axis, size in zip(("height", "width"), v.image_size, strict=True):
        _require(
            size > 0 and size % v.patch_size == 0,
            source,
            f"'vision.image_size' {axis} {size} must be a positive multiple of vision.patch_size {v.patch_size}",
        )
    if v.stem == "conv":
        steps = int(math.log2(v.patch_size))
        _require(2**steps == v.patch_size, source, "'vision.patch_size' must be a power of 2 for the conv stem")
        _require(
            len(v.stem_channels) == steps and all(c > 0 for c in v.stem_channels),
            source,
            f"'vision.stem_channels' needs {steps} positive entries (one per stride-2 conv) for patch_size "
            f"{v.patch_size}, got {list(v.stem_channels)}",
        )
    for tower, cfg in (("vision", v), ("text", t)):
        _require(cfg.width > 0 and cfg.layers > 0 and cfg.heads > 0, source, f"'{tower}' sizes must be positive")
        _require(
            cfg.width % cfg.heads == 0, source, f"'{tower}.width' {cfg.width} must divide by heads {cfg.heads}"
        )
        _require(cfg.mlp_ratio > 0, source, f"'{tower}.mlp_ratio' must be positive")
    _require(all(s > 0 for s in v.std), source, "'vision.std' entries must be positive")
    _require(t.context_length >= 8, source, f"'text.context_length' must be at least 8, got {t.context_length}")

    g = config.granularity
    _choice(g.image_query_level, LEVELS, source, "granularity.image_query_level")
    if g.enabled:
        _require(
            len(g.expert_widths) == len(LEVELS) and all(w > 0 for w in g.expert_widths),
            source,
            f"'granularity.expert_widths' needs {len(LEVELS)} positive widths ({', '.join(LEVELS)}), "
            f"got {list(g.expert_widths)}",
        )
    _require(not config.gcr.enabled or g.enabled, source, "'gcr.enabled' needs granularity.enabled (g' pass)")

    a = config.adapters
    _choice(a.routing, ("top_p", "top_k", "single"), source, "adapters.routing")
    if a.enabled:
        _require(a.bottleneck > 0, source, "'adapters.bottleneck' must be positive")
        _require(a.num_experts >= 1, source, "'adapters.num_experts' must be at least 1")
        _require(0 < a.top_p_threshold <= 1, source, "'adapters.top_p_threshold' must lie in (0, 1]")
        if a.routing == "top_k":
            _require(
                1 <= a.top_k <= a.num_experts,
                source,
                f"'adapters.top_k' must lie in 1..{a.num_experts}, got {a.top_k}",
            )
        _require(a.routing != "single" or a.num_experts == 1, source, "routing 'single' needs num_experts 1")
        _require(len(a.towers) > 0, source, "'adapters.towers' must name at least one tower")
        for tower in a.towers:
            _choice(tower, ("visual", "text"), source, "adapters.towers[]")

    f = config.fusion
    _choice(f.kind, ("none", "mean", "cmqf"), source, "fusion.kind")
    _choice(f.keys, ("token", "sequence"), source, "fusion.keys")
    if f.kind == "cmqf":
        _require(f.layers >= 1, source, "'fusion.layers' must be at least 1")
        _require(config.embed_dim % f.heads == 0, source, "'embed_dim' must divide by fusion.heads")

    c = config.crst
    _choice(c.gate_mode, ("scale", "attention_bias"), source, "crst.gate_mode")
    _choice(c.tgr_gate, ("vector", "scalar"), source, "crst.tgr_gate")
    if c.rcr:
        _require(config.resolution.embedding, source, "'crst.rcr' needs resolution.embedding (the gate reads e_r)")
        _require(c.cross_layers >= 1, source, "'crst.cross_layers' must be at least 1")
        _require(config.embed_dim % c.cross_heads == 0, source, "'embed_dim' must divide by crst.cross_heads")
    if c.tgr:
        _require(config.embed_dim % c.tgr_heads == 0, source, "'embed_dim' must divide by crst.tgr_heads")

    s = config.scenarios
    _choice(s.gate, ("renormalized", "softmax"), source, "scenarios.gate")
    _require(not s.moae or s.enabled, source, "'scenarios.moae' needs scenarios.enabled")
    _require(s.num_person_ids >= 0 and s.num_clothing_ids >= 0, source, "scenario id counts must be >= 0")

    loss = config.losses
    for name in (
        "sdm", "tal", "orthogonality", "gcr", "routing_entropy", "fusion_sdm", "sdm_low_resolution",
        "rcr", "tgr", "cr_rda", "scenario_id", "attributes", "query_attributes", "teacher_attributes",
    ):
        _require(getattr(loss, name) >= 0, source, f"'losses.{name}' must be >= 0")
    _require(loss.temperature > 0 and loss.tal_temperature > 0, source, "loss temperatures must be positive")
    _require(
        len(loss.tal_margins) == len(LEVELS), source, f"'losses.tal_margins' needs {len(LEVELS)} entries"
    )
    _choice(loss.pcia_coarse_level, LEVELS, source, "losses.pcia_coarse_level")
    _require(0 <= loss.pcia_threshold <= 1, source, "'losses.pcia_threshold' must lie in [0, 1]")
    _require(loss.pcia_noise >= 0, source, "'losses.pcia_noise' must be >= 0")
    _require(not loss.pcia or loss.tal > 0, source, "'losses.pcia' works inside TAL: set losses.tal > 0")
    needs = [
        (loss.orthogonality > 0, g.enabled, "losses.orthogonality", "granularity.enabled"),
        (loss.gcr > 0, config.gcr.enabled, "losses.gcr", "gcr.enabled"),
        (
            loss.routing_entropy > 0,
            a.enabled and a.routing != "single",
            "losses.routing_entropy",
            "adapters.enabled with routed experts",
        ),
        (loss.fusion_sdm > 0, f.kind != "none", "losses.fusion_sdm", "fusion.kind 'mean' or 'cmqf'"),
        (loss.rcr > 0, c.rcr, "losses.rcr", "crst.rcr"),
        (loss.tgr > 0, c.tgr, "losses.tgr", "crst.tgr"),
        (loss.scenario_id > 0, s.enabled, "losses.scenario_id", "scenarios.enabled (id counts may be set later)"),
        (loss.said or loss.hdw, loss.scenario_id > 0, "losses.said/hdw", "losses.scenario_id > 0"),
        (loss.said and s.num_person_ids > 0, s.num_clothing_ids > 0, "losses.said with person ids",
         "scenarios.num_clothing_ids > 0"),
        (loss.attributes > 0, config.attributes.image or config.attributes.text, "losses.attributes",
         "attributes.image or attributes.text"),
        (loss.query_attributes > 0, config.attributes.image and f.kind != "none", "losses.query_attributes",
         "attributes.image and fusion.kind 'mean' or 'cmqf' (sketch/IR images in the batch)"),
        (loss.teacher_attributes > 0, config.attributes.image, "losses.teacher_attributes", "attributes.image"),
    ]
    for active, available, what, requirement in needs:
        _require(not active or available, source, f"'{what}' needs {requirement}")


# ----------------------------------------------------------------------------------------------------------
# files and overlays

OVERLAY_KEYS = {"base", "overrides", "name", "description"}


def _deep_merge(base: dict[str, Any], overrides: dict[str, Any], source: str) -> dict[str, Any]:
    if not isinstance(overrides, dict):
        raise ConfigError(f"{source}: 'overrides' must be an object")
    merged = copy.deepcopy(base)
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _deep_merge(merged[key], value, source)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def config_path(name: str | Path, relative_to: Path | None = None) -> Path:
    """The file of a config given by path, or by name in ``relative_to`` or the shipped ``configs/``."""
    candidate = Path(name)
    if candidate.suffix == ".json" and (candidate.is_absolute() or candidate.exists()):
        if not candidate.exists():
            raise FileNotFoundError(f"model config not found: {candidate}")
        return candidate
    if relative_to is not None:
        local = relative_to / (candidate.name if candidate.suffix == ".json" else f"{candidate.name}.json")
        if local.exists():
            return local
    stem = candidate.stem if candidate.suffix == ".json" else str(name)
    try:
        return resource_path("configs", f"{stem}.json")
    except FileNotFoundError:
        raise FileNotFoundError(
            f"model config {str(name)!r} not found (looked for a file and for resources/configs/{stem}.json)"
        ) from None


def _resolve(path: Path, seen: tuple[Path, ...]) -> dict[str, Any]:
    path = path.resolve()
    if path in seen:
        chain = " -> ".join(p.name for p in (*seen, path))
        raise ConfigError(f"config overlays form a cycle: {chain}")
    try:
        data = jsonio.read(path)
    except jsonio.JsonInputError as exc:  # not JSON, not UTF-8, nested too deep, too large: named
        raise ConfigError(str(exc)) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config must be a JSON object")
    if "base" not in data:
        data.setdefault("name", path.stem)
        return data
    unknown = set(data) - OVERLAY_KEYS
    if unknown:
        raise ConfigError(f"{path}: unknown overlay key {sorted(unknown)[0]!r} (allowed: {sorted(OVERLAY_KEYS)})")
    if not isinstance(data["base"], str):
        raise ConfigError(f"{path}: 'base' must be a config name")
    base = _resolve(config_path(data["base"], path.parent), (*seen, path))
    merged = _deep_merge(base, data.get("overrides", {}), str(path))
    merged["name"] = data.get("name", path.stem)
    if "description" in data:
        merged["description"] = data["description"]
    return merged


def load_config(source: str | Path | dict[str, Any] | ModelConfig) -> ModelConfig:
    """Load a config by shipped name (``"default"``), by path, from a dict, or pass a ``ModelConfig`` through."""
    if isinstance(source, ModelConfig):
        return source
    if isinstance(source, dict):
        return ModelConfig.from_dict(source, source="config dict")
    path = config_path(source)
    return ModelConfig.from_dict(_resolve(path, ()), source=str(path))


def shipped_config_names() -> list[str]:
    """Names of the configs in ``resources/configs/``."""
    return sorted(p.stem for p in resource_path("configs").glob("*.json"))
