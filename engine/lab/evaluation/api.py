"""``evaluate(model, source, protocol)``: one call for the CLI, the trainer's validation and the ablations.

Report (JSON-serialisable): ``{"protocol", "source", "overall", "by", "notes", …}`` where ``overall`` and
every ``by`` entry hold R@1, R@5, R@10, mAP, mINP, mSD as fractions in [0, 1] (null when no query could
be scored) and ``queries``; protocol-specific fields are described in ``world_protocols`` and ``t2i``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import torch

from engine.ingest.datasets import DatasetIndex
from engine.kernel.keep_rules import DEFAULT_RHO
from engine.kernel.progress import ProgressFn, no_progress
from engine.lab.evaluation import world_protocols
from engine.lab.evaluation.appearance_rank import sketch
from engine.lab.evaluation.errors import EvaluationError
from engine.lab.evaluation.levels import LEVEL_MODES
from engine.lab.evaluation.reid import reid
from engine.lab.evaluation.sources import is_dataset_spec, read_dataset_spec, world_benchmark
from engine.lab.evaluation.t2i import text_to_image
from engine.lab.evaluation.world_protocols import TEXT_CHOICES
from engine.retrieval.encoding.text_rewrite import check_rewrite_weight

#: world protocol → the benchmark file it reads
WORLD_PROTOCOLS: dict[str, str] = {
    "mg-separate": "granularity",
    "mg-progressive": "granularity",
    "modes": "modalities",
    "cross-res": "cross_resolution",
    "anytime": "anytime",
}
DATASET_PROTOCOLS: tuple[str, ...] = ("t2i", "reid", "sketch")
PROTOCOLS: tuple[str, ...] = (*WORLD_PROTOCOLS, *DATASET_PROTOCOLS)
#: Protocols that rank by the shipped appearance network alone: the checkpoint is not used (``model`` may be None).
CHECKPOINT_FREE: frozenset[str] = frozenset({"sketch"})


def default_level(protocol: str) -> str:
    """``given`` where the benchmark labels query levels (worlds), ``auto`` on real datasets (§1.9)."""
    return "auto" if protocol in DATASET_PROTOCOLS else "given"


def check_options(protocol: str, level: str | None, rho: float, batch_size: int, texts: str = "generated") -> str:
    """Validate the options; returns the level mode to use."""
    if protocol not in PROTOCOLS:
        raise EvaluationError(f"unknown protocol {protocol!r}; protocols: {list(PROTOCOLS)}")
    if texts not in TEXT_CHOICES:
        raise EvaluationError(f"texts must be one of {list(TEXT_CHOICES)}, got {texts!r}")
    if texts != "generated" and protocol != "mg-separate":
        raise EvaluationError(f"--texts {texts} is a choice of the mg-separate protocol, not of {protocol!r}")
    if level is not None and level not in LEVEL_MODES:
        raise EvaluationError(f"level must be one of {list(LEVEL_MODES)}, got {level!r}")
    if not 0 < rho <= 1:
        raise EvaluationError(f"rho must lie in (0, 1], got {rho}")
    if batch_size < 1:
        raise EvaluationError(f"batch size must be at least 1, got {batch_size}")
    return level or default_level(protocol)


def check_text_rewrite(weight: float) -> float:
    """The text rewrite weight as a float in [0, 1]; ``EvaluationError`` otherwise."""
    try:
        return check_rewrite_weight(weight)
    except ValueError as exc:
        raise EvaluationError(str(exc)) from None


def check_source(protocol: str, on_world: bool) -> None:
    """Error unless ``protocol`` runs on this kind of source (a world, or a real dataset)."""
    if on_world and protocol not in WORLD_PROTOCOLS:
        raise EvaluationError(
            f"protocol {protocol!r} runs on a real dataset (--data READER:PATH); "
            f"on a world use {list(WORLD_PROTOCOLS)}"
        )
    if not on_world and protocol not in DATASET_PROTOCOLS:
        raise EvaluationError(
            f"protocol {protocol!r} runs on a world (--world DIR); "
            f"on a real dataset use {list(DATASET_PROTOCOLS)}"
        )


@contextlib.contextmanager
def _eval_mode(model) -> Iterator[None]:
    """Eval mode for the run (dropout off, experts deterministic), the previous mode restored after."""
    if not isinstance(model, torch.nn.Module):
        yield
        return
    was_training = model.training
    model.eval()
    try:
        yield
    finally:
        model.train(was_training)


def evaluate_benchmark(
    model,
    benchmark: Mapping[str, Any],
    protocol: str,
    *,
    level: str | None = None,
    rho: float = DEFAULT_RHO,
    batch_size: int = 64,
    progress: ProgressFn = no_progress,
    texts: str = "generated",
    text_rewrite: float = 0.0,
) -> dict[str, Any]:
    """Run a world protocol on an already loaded benchmark (``engine.lab.world.benchmarks.load_benchmark``)."""
    level = check_options(protocol, level, rho, batch_size, texts)
    check_source(protocol, on_world=True)
    expected = WORLD_PROTOCOLS[protocol]
    if benchmark.get("benchmark") != expected:
        raise EvaluationError(
            f"protocol {protocol!r} needs the {expected!r} benchmark, got {benchmark.get('benchmark')!r}"
        )
    with _eval_mode(model):
        if protocol == "mg-separate":
            part = world_protocols.mg_separate(model, benchmark, level, batch_size, progress, texts, text_rewrite)
        elif protocol == "mg-progressive":
            part = world_protocols.mg_progressive(model, benchmark, level, rho, batch_size, progress, text_rewrite)
        elif protocol == "modes":
            part = world_protocols.modes(model, benchmark, level, batch_size, progress, text_rewrite)
        elif protocol == "cross-res":
            part = world_protocols.cross_resolution(model, benchmark, level, batch_size, progress, text_rewrite)
        else:
            part = world_protocols.anytime(model, benchmark, batch_size, progress)
    return {"protocol": protocol, **part}


def evaluate(
    model,
    source: Path | str | DatasetIndex,
    protocol: str,
    *,
    level: str | None = None,
    rho: float = DEFAULT_RHO,
    batch_size: int = 64,
    split: str = "test",
    benchmarks_dir: Path | str | None = None,
    seed: int = 0,
    progress: ProgressFn = no_progress,
    texts: str = "generated",
    text_rewrite: float = 0.0,
    attribute_weight: float | None = None,
) -> dict[str, Any]:
    """Evaluate ``model`` with ``protocol`` on a world folder or a real dataset.

    ``source``: a world folder (world protocols; benchmark files built on demand in ``benchmarks_dir``,
    default WORLD/benchmarks, with ``seed``), a ``READER:PATH`` string or a ``DatasetIndex`` (``t2i`` on
    ``split``; ``reid`` on a Market-1501 or SYSU-MM01 index, ``engine.lab.evaluation.reid``; ``sketch`` on a
    PKU-Sketch index, ``engine.lab.evaluation.appearance_rank``, which needs no ``model``). ``level``: ``given``
    or ``auto`` (default per protocol, see ``default_level``); ``rho`` the
    progressive keep rate; ``texts`` the mg-separate text sets (``generated``, ``paraphrased``, ``both``);
    ``progress(done, total)`` is called while images are encoded. ``text_rewrite``: the weight of each text
    query's rewrite in the generator's words (``engine.retrieval.encoding.text_rewrite``; 0 = the text alone), recorded
    in the report. ``attribute_weight``: w of ``t2i``'s footage ranking (default: the shipped checkpoint's weight
    for footage galleries; ``engine.lab.evaluation.footage_text``).
    """
    level = check_options(protocol, level, rho, batch_size, texts)
    text_rewrite = check_text_rewrite(text_rewrite)
    if isinstance(source, DatasetIndex) or (isinstance(source, str) and is_dataset_spec(source)):
        check_source(protocol, on_world=False)
        dataset = source if isinstance(source, DatasetIndex) else read_dataset_spec(source)
        with _eval_mode(model):
            if protocol == "reid":
                part = reid(model, dataset, batch_size, progress)
            elif protocol == "sketch":
                part = sketch(dataset, batch_size, progress)
            else:
                part = text_to_image(model, dataset, level, split, batch_size, progress, text_rewrite,
                                     attribute_weight=attribute_weight)
        described = {"data": source if isinstance(source, str) else str(dataset.root), "reader": dataset.name}
        return {"protocol": protocol, "source": described, "text_rewrite": text_rewrite, **part}
    check_source(protocol, on_world=True)
    if isinstance(source, str) and source.lower().startswith("world:") and not Path(source).exists():
        source = source.partition(":")[2]  # the world reader's READER:PATH spelling
    benchmark, built = world_benchmark(Path(source), WORLD_PROTOCOLS[protocol], benchmarks_dir, seed)
    report = evaluate_benchmark(
        model, benchmark, protocol, level=level, rho=rho, batch_size=batch_size, progress=progress, texts=texts,
        text_rewrite=text_rewrite,
    )
    described = {
        "world": benchmark["world"],
        "benchmark": WORLD_PROTOCOLS[protocol],
        "benchmark_seed": benchmark.get("seed"),
        "benchmarks_built_now": built,
    }
    return {"protocol": protocol, "source": described, "text_rewrite": text_rewrite,
            **{k: v for k, v in report.items() if k != "protocol"}}
