"""What the five protocols on a world's benchmark files share (``engine.lab.evaluation.world_protocols``): the
report type, the benchmark's relevance rule, its items' image paths and model resolution labels, the check that a
list is not empty, the truncated-text notes and the RGB HR gallery encoded in the views a protocol needs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import torch

from engine.kernel.progress import ProgressFn
from engine.lab.evaluation.encoding import model_resolution
from engine.lab.evaluation.errors import EvaluationError
from engine.lab.evaluation.levels import gallery_views
from engine.lab.world.benchmarks import RELEVANCE

Report = dict[str, Any]


def relevance_rule(bench: Mapping[str, Any]) -> str:
    """The rule the benchmark file states, else (a benchmark assembled in memory) its kind's rule."""
    rule = bench.get("relevance", RELEVANCE.get(bench.get("benchmark")))
    if not isinstance(rule, str):
        raise EvaluationError(f"benchmark {bench.get('benchmark')!r} of {bench.get('world')} states no relevance rule")
    return rule


def item_paths(bench: Mapping[str, Any], items: Sequence[Mapping[str, Any]]) -> list[Path]:
    """The image file of each item, under the benchmark's world."""
    world = Path(bench["world"])
    return [world / item["image"] for item in items]


def item_resolutions(items: Sequence[Mapping[str, Any]]) -> list[str]:
    """Each item's resolution as the model's label."""
    return [model_resolution(item["resolution"]) for item in items]


def require(rows: Sequence[Any], what: str, bench: Mapping[str, Any]) -> None:
    """An error naming the benchmark when ``rows`` is empty."""
    if not rows:
        raise EvaluationError(f"benchmark {bench.get('benchmark')!r} of {bench.get('world')} has no {what}")


def text_notes(truncated_batches: int, where: str = "") -> list[str]:
    """The report's note on truncated descriptions (none when nothing was truncated)."""
    if not truncated_batches:
        return []
    where = f" {where}" if where else ""
    return [
        f"descriptions longer than the text context were truncated{where} ({truncated_batches} text batches)"
    ]


def rgb_gallery(
    model, bench, levels: set[str], batch_size: int, progress: ProgressFn
) -> dict[str, torch.Tensor]:
    """The RGB gallery's vectors in each of ``levels``' views (level → [G, D])."""
    gallery = bench["gallery"]
    require(gallery, "gallery items", bench)
    return gallery_views(
        model, item_paths(bench, gallery), levels, "rgb", item_resolutions(gallery), batch_size, progress
    )
