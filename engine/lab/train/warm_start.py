"""Warm starts: a training run that begins from a checkpoint's weights instead of a fresh model (a second stage
that adds components, or an ablation whose rows share one trained backbone). ``warm_start`` copies every tensor
whose name and shape match and reports what it copied, left new and skipped."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from engine.retrieval.models.backbone_weights import grouped_names
from engine.retrieval.models.checkpoint import WEIGHTS_FILE, checkpoint_file, read_weights
from engine.retrieval.models.model import PersonSearchModel


@dataclass
class WarmStartReport:
    """What ``warm_start`` copied from a checkpoint into a (possibly differently configured) model."""

    path: Path
    loaded: list[str] = field(default_factory=list)
    new: list[str] = field(default_factory=list)  # model tensors left as initialised (not copied)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (checkpoint key, why)

    def summary(self) -> str:
        lines = [f"warm start from {self.path}: {len(self.loaded)} tensors loaded, {len(self.new)} new, "
                 f"{len(self.skipped)} checkpoint tensors skipped"]
        lines += [f"  new      {pattern}" + (f"  (×{n})" if n > 1 else "") for pattern, n in grouped_names(self.new)]
        lines += [f"  skipped  {key}: {why}" for key, why in self.skipped[:20]]
        if len(self.skipped) > 20:
            lines.append(f"  … and {len(self.skipped) - 20} more skipped")
        return "\n".join(lines)


WARM_START_SCOPES = ("all", "backbone")


def backbone_tensor_names(model: PersonSearchModel) -> frozenset[str]:
    """The model's tensors in open_clip's CLIP layout (embeddings, attention, the shared MLP, projections) and
    its image stem: the part a pretrained backbone gives. Everything the four methods add (granularity and
    scenario experts, adapters, fusion, heads, resolution and modality embeddings) is outside it."""
    stem = {k for k in model.state_dict() if k.startswith("backbone.visual.conv1.")}
    return frozenset(model.clip_parameter_names) | frozenset(stem)


def warm_start(model: PersonSearchModel, path: str | Path, scope: str = "all") -> WarmStartReport:
    """Copy every tensor of checkpoint ``path`` whose name and shape match ``model`` (a second training stage
    that adds components, e.g. query fusion, starts from the first stage's weights). Tensors the checkpoint
    lacks stay as initialised; checkpoint tensors with no match are reported, never silently dropped.

    ``scope="backbone"`` copies only :func:`backbone_tensor_names` (an ablation whose rows add components to one
    trained backbone: every added component starts fresh in every row, as they would from a pretrained CLIP)."""
    if scope not in WARM_START_SCOPES:
        raise ValueError(f"warm-start scope must be one of {WARM_START_SCOPES}, got {scope!r}")
    path = Path(path)
    weights_file = checkpoint_file(path, WEIGHTS_FILE)
    state = read_weights(weights_file)
    report = WarmStartReport(path)
    own = model.state_dict()
    in_scope = backbone_tensor_names(model) if scope == "backbone" else frozenset(own)
    usable = {}
    for key, tensor in state.items():
        if key in own and key not in in_scope:
            report.skipped.append((key, f"outside the {scope} scope"))
        elif key not in own:
            report.skipped.append((key, "not in this model"))
        elif own[key].shape != tensor.shape:
            report.skipped.append((key, f"shape {tuple(tensor.shape)} ≠ model's {tuple(own[key].shape)}"))
        else:
            usable[key] = tensor.to(own[key].dtype)
    report.loaded = sorted(usable)
    report.new = sorted(set(own) - set(usable))
    model.load_state_dict(usable, strict=False)
    return report
