"""Create, save and load models. A checkpoint is one folder:

    config.json        the fully resolved model config
    weights.safetensors
    metadata.json      training command, data fingerprint, evaluation report path, and whatever else is given

Saving writes a temporary sibling folder and swaps it into place, so a reader never sees half a checkpoint.

``model_fingerprint`` is SHA-256 over the resolved config JSON and every weight tensor's bytes in name order:
a gallery records the fingerprint of the model that encoded it and refuses vectors from any other model.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import torch
from safetensors import safe_open
from safetensors.torch import load_file, save_file

from engine.kernel import jsonio
from engine.kernel.timefmt import utc_stamp
from engine.retrieval.models.config import ModelConfig, load_config
from engine.retrieval.models.device import choose_device
from engine.retrieval.models.model import PersonSearchModel

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "weights.safetensors"
METADATA_FILE = "metadata.json"
FORMAT = "lineup-checkpoint/1"


class CheckpointError(ValueError):
    """A checkpoint folder that is incomplete or does not match its config."""


def create(
    config: str | Path | dict[str, Any] | ModelConfig = "default", device: str | torch.device | None = None
) -> PersonSearchModel:
    """A freshly initialised model for a config (name, path, dict or ``ModelConfig``), in eval mode on ``device``
    (CUDA when available unless given)."""
    model = PersonSearchModel(load_config(config))
    return model.to(choose_device(device))


def save(
    model: PersonSearchModel,
    path: str | Path,
    extra_metadata: dict[str, Any] | None = None,
    weights_dtype: torch.dtype | None = None,
) -> Path:
    """Write ``model`` as a checkpoint folder at ``path`` (replacing one that is there) and return the path.

    ``extra_metadata`` typically holds ``training_command``, ``data_fingerprint`` and ``eval_report``.
    ``weights_dtype`` (e.g. ``torch.float16``) stores floating-point weights in that type to halve a shipped
    checkpoint; ``load`` casts them back to the model's parameter type.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    metadata: dict[str, Any] = {
        "format": FORMAT,
        "config_name": model.config.name,
        "created": utc_stamp(),
        "parameters": sum(p.numel() for p in model.parameters()),
        "training_command": None,
        "data_fingerprint": None,
        "eval_report": None,
    }
    metadata.update(extra_metadata or {})
    if weights_dtype is not None:
        metadata["weights_dtype"] = str(weights_dtype).removeprefix("torch.")
    try:
        metadata_text = json.dumps(metadata, indent=2, sort_keys=True, ensure_ascii=False)
    except TypeError as exc:
        raise ValueError(f"extra_metadata must be JSON-serialisable: {exc}") from exc
    state = {k: v.detach().to("cpu").contiguous() for k, v in model.state_dict().items()}
    if weights_dtype is not None:
        state = {k: v.to(weights_dtype) if v.is_floating_point() else v for k, v in state.items()}
    staging = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    try:
        (staging / CONFIG_FILE).write_text(json.dumps(model.config.to_dict(), indent=2) + "\n", encoding="utf-8")
        save_file(state, str(staging / WEIGHTS_FILE), metadata={"format": FORMAT})
        (staging / METADATA_FILE).write_text(metadata_text + "\n", encoding="utf-8")
        previous = None
        if path.exists():
            previous = path.parent / f".{path.name}.old-{os.getpid()}"
            os.replace(path, previous)
        os.replace(staging, path)
        if previous is not None:
            shutil.rmtree(previous, ignore_errors=True)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return path


def model_fingerprint(model: PersonSearchModel) -> str:
    """SHA-256 of the model's config and weights (see the module docstring)."""
    digest = hashlib.sha256(json.dumps(model.config.to_dict(), sort_keys=True).encode())
    for name, tensor in sorted(model.state_dict().items()):
        flat = tensor.detach().to("cpu").contiguous().reshape(-1)
        digest.update(f"{name}:{tensor.dtype}:{tuple(tensor.shape)}\n".encode())
        digest.update(flat.view(torch.uint8).numpy().tobytes() if flat.numel() else b"")
    return digest.hexdigest()


def read_metadata(path: str | Path) -> dict[str, Any]:
    """The metadata.json of a checkpoint folder (a JSON object; ``CheckpointError`` naming the file otherwise)."""
    file = checkpoint_file(Path(path), METADATA_FILE)
    metadata = _read_json(file)
    if not isinstance(metadata, dict):
        raise CheckpointError(f"{file} is corrupt: expected a JSON object, got {type(metadata).__name__}")
    return metadata


def _read_json(file: Path) -> Any:
    try:
        return jsonio.read(file)
    except jsonio.JsonInputError as exc:  # "FILE is corrupt: invalid JSON (...)", or nested too deep, too large
        problem = str(exc).removeprefix(f"{file}: ").replace("not valid JSON", "invalid JSON", 1)
        raise CheckpointError(f"{file} is corrupt: {problem}") from None


def read_weights(weights_file: Path) -> dict[str, torch.Tensor]:
    """The tensors of a weights file; ``CheckpointError`` naming the file when it is truncated or corrupt, or
    when a floating-point tensor holds NaN or infinite values."""
    try:
        state = load_file(str(weights_file))
    except OSError:
        raise
    except Exception as exc:  # safetensors raises its own error types (SafetensorError) for corrupt files
        raise CheckpointError(f"{weights_file} is corrupt or truncated: {exc}") from None
    damaged = sorted(name for name, tensor in state.items()
                     if tensor.is_floating_point() and not bool(torch.isfinite(tensor).all()))
    if damaged:  # refused here, not later as NaN scores or evidence (docs/hardening.md)
        raise CheckpointError(f"{weights_file} holds NaN or infinite weights in {len(damaged)} tensor(s) "
                              f"(e.g. {damaged[:3]}): the checkpoint is damaged")
    return state


def stored_shapes(weights_file: Path) -> dict[str, tuple[int, ...]]:
    """Name → shape of every tensor in a weights file, read from its header alone (no tensor is loaded)."""
    try:
        with safe_open(str(weights_file), framework="pt") as stored:
            return {name: tuple(stored.get_slice(name).get_shape()) for name in stored.keys()}  # noqa: SIM118
    except OSError:
        raise
    except Exception as exc:  # SafetensorError for a damaged header
        raise CheckpointError(f"{weights_file} is corrupt or truncated: {exc}") from None


def _mismatch(expected: dict[str, tuple[int, ...]], stored: dict[str, tuple[int, ...]]) -> str | None:
    missing = sorted(set(expected) - set(stored))
    unexpected = sorted(set(stored) - set(expected))
    wrong = sorted(k for k in set(expected) & set(stored) if expected[k] != stored[k])
    parts = []
    if missing:
        parts.append(f"missing {len(missing)} (e.g. {missing[:3]})")
    if unexpected:
        parts.append(f"unexpected {len(unexpected)} (e.g. {unexpected[:3]})")
    if wrong:
        parts.append(f"shape mismatch {len(wrong)} (e.g. {wrong[:3]})")
    return "; ".join(parts) or None


def load(path: str | Path, device: str | torch.device | None = None) -> PersonSearchModel:
    """The model stored in a checkpoint folder, in eval mode on ``device`` (CUDA when available unless given).

    The config is first built without memory (PyTorch's meta device) and its tensor shapes compared with the
    weights file's header, so a config that does not match its weights (a damaged or hostile ``config.json``
    declaring a huge model) is refused before any memory is allocated for it."""
    path = Path(path)
    config_file = checkpoint_file(path, CONFIG_FILE)
    weights_file = checkpoint_file(path, WEIGHTS_FILE)
    config = ModelConfig.from_dict(_read_json(config_file), source=str(config_file))
    try:
        with torch.device("meta"):
            skeleton = PersonSearchModel(config)
    except (RuntimeError, ValueError, OverflowError) as exc:  # sizes PyTorch cannot even describe
        raise CheckpointError(f"{config_file} describes a model that cannot be built: {exc}") from None
    expected = {name: tuple(tensor.shape) for name, tensor in skeleton.state_dict().items()}
    problem = _mismatch(expected, stored_shapes(weights_file))
    if problem:
        raise CheckpointError(f"{weights_file} does not match its config: {problem}")
    model = PersonSearchModel(config)
    state = read_weights(weights_file)
    problem = _mismatch(expected, {name: tuple(tensor.shape) for name, tensor in state.items()})
    if problem:
        raise CheckpointError(f"{weights_file} does not match its config: {problem}")
    try:
        model.load_state_dict(state, strict=True)
    except RuntimeError as exc:  # a dtype that cannot be copied into the model (e.g. bool weights)
        raise CheckpointError(f"{weights_file} cannot be loaded into its config's model: {exc}") from None
    return model.to(choose_device(device)).eval()


def checkpoint_file(path: Path, name: str) -> Path:
    """``name`` in checkpoint folder ``path``; an error names what is missing."""
    if not path.is_dir():
        raise FileNotFoundError(f"checkpoint folder not found: {path}")
    file = path / name
    if not file.is_file():
        raise CheckpointError(f"checkpoint {path} is incomplete: {name} is missing")
    return file


def export_checkpoint(source: str | Path, destination: str | Path, *, weights_dtype: torch.dtype | None = None,
                      extra_metadata: dict[str, Any] | None = None) -> Path:
    """Copy checkpoint ``source`` to ``destination`` (atomically), optionally storing its weights in
    ``weights_dtype`` (fp16 halves a shipped checkpoint); the source's metadata is kept, ``extra_metadata``
    added, and the exported copy records where it came from."""
    source = Path(source)
    model = load(source, device="cpu")
    metadata = read_metadata(source)
    for key in ("format", "created", "parameters", "weights_dtype"):
        metadata.pop(key, None)
    metadata["exported_from"] = str(source)
    metadata.update(extra_metadata or {})
    return save(model, destination, extra_metadata=metadata, weights_dtype=weights_dtype)
