"""Evaluation of a model on a world's benchmarks or a real dataset (docs/methods.md §1–5).

    from engine.lab.evaluation import evaluate, load_model
    report = evaluate(load_model("runs/x/checkpoint"), "worlds/bench", "mg-separate")
    report["overall"]["R@1"], report["by"]["UF"]["mAP"]

Protocols on a world: mg-separate, mg-progressive, modes, cross-res, anytime; on a dataset: t2i, reid and
sketch (``engine.lab.evaluation.appearance_rank``: the shipped appearance network, no checkpoint).
"""

from engine.lab.evaluation.api import (
    DATASET_PROTOCOLS,
    PROTOCOLS,
    WORLD_PROTOCOLS,
    default_level,
    evaluate,
    evaluate_benchmark,
)
from engine.lab.evaluation.errors import EvaluationError
from engine.lab.evaluation.render import render
from engine.lab.evaluation.sources import world_benchmark
from engine.retrieval.models.discovery import NoCheckpointError, default_checkpoint, load_model

__all__ = [
    "DATASET_PROTOCOLS",
    "PROTOCOLS",
    "WORLD_PROTOCOLS",
    "EvaluationError",
    "NoCheckpointError",
    "default_checkpoint",
    "default_level",
    "evaluate",
    "evaluate_benchmark",
    "load_model",
    "render",
    "world_benchmark",
]
