"""Load pretrained open_clip / OpenAI CLIP weights from a local file into the model's backbone.

Accepted files: a state dict saved with ``torch.save`` (optionally under "state_dict", optionally with a
"module." prefix), a ``.safetensors`` file, or an OpenAI TorchScript archive. Keys use open_clip's CLIP layout,
which the model's backbone keeps. Shape differences that have a standard remedy are adapted: the visual
positional embedding is resampled bicubically to the new patch grid (e.g. 14×14 → 24×8 for 384×128), the text
positional embedding is cut or extended by repeating its last row, the token embedding gains the ``<mask>``
row. New components are initialised as the papers say: the CMAM shared FFN *is* the pretrained MLP; Uni-AT
attribute layers copy fc1/fc2; scenario tokens copy the class token and its position; everything else keeps
its fresh initialisation (output layers at zero where noted in its module).
"""

from __future__ import annotations

import math
import re
import warnings
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors.torch import load_file

from engine.retrieval.models.model import PersonSearchModel

_NOT_WEIGHTS = {"input_resolution", "context_length", "vocab_size", "attn_mask"}  # OpenAI archive extras


@dataclass
class BackboneLoadReport:
    path: Path
    loaded: list[str] = field(default_factory=list)  # model keys copied unchanged
    adapted: list[tuple[str, str]] = field(default_factory=list)  # (model key, how it was adapted)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (file key, why it was not used)
    missing_backbone: list[str] = field(default_factory=list)  # CLIP-layout keys the file lacks
    new_components: list[str] = field(default_factory=list)  # keys outside the CLIP layout (initialised)

    def summary(self) -> str:
        lines = [
            f"backbone weights from {self.path}: {len(self.loaded)} tensors loaded, {len(self.adapted)} adapted, "
            f"{len(self.skipped)} file entries skipped, {len(self.missing_backbone)} backbone tensors missing, "
            f"{len(self.new_components)} new-component tensors initialised"
        ]
        for key, how in self.adapted:
            lines.append(f"  adapted  {key}: {how}")
        for key, why in self.skipped:
            lines.append(f"  skipped  {key}: {why}")
        for pattern, count in grouped_names(self.missing_backbone):
            lines.append(f"  MISSING  {pattern}" + (f"  (×{count})" if count > 1 else ""))
        for pattern, count in grouped_names(self.new_components):
            lines.append(f"  new      {pattern}" + (f"  (×{count})" if count > 1 else ""))
        return "\n".join(lines)

    __str__ = summary


def grouped_names(keys: list[str]) -> list[tuple[str, int]]:
    """Collapse block indices (resblocks.3. → resblocks.*.) and count keys per pattern."""
    counts: dict[str, int] = {}
    for key in keys:
        pattern = re.sub(r"\.(\d+)\.", ".*.", key)
        counts[pattern] = counts.get(pattern, 0) + 1
    return sorted(counts.items())


def read_clip_state_dict(path: str | Path) -> dict[str, torch.Tensor]:
    """Tensors of a local CLIP checkpoint file, keys in open_clip's CLIP layout."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"backbone weights not found: {path}")
    try:
        if path.suffix == ".safetensors":
            raw: object = load_file(str(path))
        elif _is_torchscript(path):  # OpenAI releases CLIP as TorchScript archives
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", FutureWarning)  # torch.jit.load is deprecated, still needed
                raw = torch.jit.load(str(path), map_location="cpu").state_dict()
        else:
            raw = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:
        raise ValueError(f"cannot read {path} as a CLIP state dict: {exc}") from exc
    if isinstance(raw, dict) and isinstance(raw.get("state_dict"), dict):
        raw = raw["state_dict"]
    if not isinstance(raw, dict):
        raise ValueError(f"{path} holds a {type(raw).__name__}, not a state dict")
    state = {}
    for key, value in raw.items():
        if isinstance(value, torch.Tensor):
            state[key.removeprefix("module.")] = value
    if not state:
        raise ValueError(f"{path} contains no tensors")
    return state


def _is_torchscript(path: Path) -> bool:
    """A TorchScript archive is a zip holding compiled code (``code/``) next to its constants."""
    if not zipfile.is_zipfile(path):
        return False
    with zipfile.ZipFile(path) as archive:
        return any(name.split("/", 1)[-1].startswith("code/") for name in archive.namelist())


def _resample_visual_positions(source: torch.Tensor, target_shape: torch.Size, grid: tuple[int, int]) -> torch.Tensor:
    """[1 + h·w, d] → [1 + H·W, d]: class position kept, patch grid resampled bicubically."""
    patches = source.shape[0] - 1
    side = int(round(math.sqrt(patches)))
    if side * side != patches:
        raise ValueError(f"cannot infer the patch grid of a positional embedding with {patches} patches")
    cls, grid_pos = source[:1], source[1:]
    grid_pos = grid_pos.reshape(1, side, side, -1).permute(0, 3, 1, 2).float()
    resized = F.interpolate(grid_pos, size=grid, mode="bicubic", align_corners=False)
    resized = resized.permute(0, 2, 3, 1).reshape(grid[0] * grid[1], -1).to(source.dtype)
    out = torch.cat([cls, resized])
    if out.shape != target_shape:
        raise ValueError(f"resampled positions {tuple(out.shape)} do not fit {tuple(target_shape)}")
    return out


def load_backbone_weights(model: PersonSearchModel, path: str | Path) -> BackboneLoadReport:
    """Copy a CLIP checkpoint into ``model.backbone`` (in place) and initialise the new components."""
    source = read_clip_state_dict(path)
    report = BackboneLoadReport(path=Path(path))
    target = model.state_dict()
    cfg_v = model.config.vision
    grid = (cfg_v.image_size[0] // cfg_v.patch_size, cfg_v.image_size[1] // cfg_v.patch_size)
    filled: set[str] = set()
    with torch.no_grad():
        for key, tensor in source.items():
            name = f"backbone.{key}"
            if key in _NOT_WEIGHTS:
                report.skipped.append((key, "not a weight (archive metadata or the fixed causal mask)"))
                continue
            if name not in target:
                report.skipped.append((key, "no such tensor in this model (e.g. replaced by the conv stem)"))
                continue
            want = target[name]
            if tensor.shape == want.shape:
                want.copy_(tensor)
                report.loaded.append(name)
            elif key == "visual.positional_embedding" and tensor.dim() == 2 and tensor.shape[1] == want.shape[1]:
                want.copy_(_resample_visual_positions(tensor, want.shape, grid))
                report.adapted.append((name, f"patch grid resampled to {grid[0]}×{grid[1]} (bicubic)"))
            elif key == "positional_embedding" and tensor.dim() == 2 and tensor.shape[1] == want.shape[1]:
                rows = min(tensor.shape[0], want.shape[0])
                want[:rows].copy_(tensor[:rows])
                if want.shape[0] > rows:
                    want[rows:].copy_(tensor[rows - 1 : rows].expand(want.shape[0] - rows, -1))
                report.adapted.append(
                    (name, f"text context {tensor.shape[0]} → {want.shape[0]} (cut, or last row repeated)")
                )
            elif key == "token_embedding.weight" and tensor.dim() == 2 and tensor.shape[1] == want.shape[1]:
                rows = min(tensor.shape[0], want.shape[0])
                want[:rows].copy_(tensor[:rows])
                report.adapted.append((name, f"first {rows} token rows copied; extra rows (<mask>) initialised"))
            else:
                report.skipped.append((key, f"shape {tuple(tensor.shape)} ≠ model {tuple(want.shape)}"))
                continue
            filled.add(name)
    clip_keys = {k for k in target if k in model.clip_parameter_names}
    report.missing_backbone = sorted(clip_keys - filled)
    report.new_components = sorted(k for k in target if k not in model.clip_parameter_names)
    model.initialise_new_components()
    return report
