"""Which checkpoint to run: the shipped default at ``resources/checkpoints/default`` unless one is given, and
its model loaded for inference."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.kernel import jsonio
from engine.kernel.resources import resource_path
from engine.retrieval.models.checkpoint import load

DEFAULT_CHECKPOINT: tuple[str, ...] = ("checkpoints", "default")


class NoCheckpointError(FileNotFoundError):
    """No checkpoint was given and none is shipped."""


def default_checkpoint() -> Path:
    """The shipped default checkpoint folder, or ``NoCheckpointError`` naming where it was looked for."""
    try:
        return resource_path(*DEFAULT_CHECKPOINT)
    except FileNotFoundError:
        where = resource_path().joinpath(*DEFAULT_CHECKPOINT)
        raise NoCheckpointError(
            f"no default checkpoint is shipped (looked for {where}); train one with `lineup train` "
            "and pass it with --checkpoint PATH"
        ) from None


def load_model(checkpoint: Path | str | None = None, device: str | None = None):
    """The model of ``checkpoint`` (default: the shipped one), in eval mode."""
    path = default_checkpoint() if checkpoint is None else Path(checkpoint)
    return load(path, device=device)


def checkpoint_metadata(checkpoint: str | Path | None) -> tuple[Path | None, dict[str, Any]]:
    """(metadata.json path, its content) of a checkpoint folder (the shipped one for None); {} when there is no
    such checkpoint or its metadata is unreadable — for settings a checkpoint may record (query weights)."""
    if checkpoint is None:
        try:
            checkpoint = default_checkpoint()
        except NoCheckpointError:
            return None, {}
    path = Path(checkpoint) / "metadata.json"
    try:
        metadata = jsonio.read(path)
    except (OSError, ValueError):
        return path, {}
    return path, metadata if isinstance(metadata, dict) else {}
