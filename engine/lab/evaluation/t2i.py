"""Standard text-to-image person search on a real dataset's test split (IRRA style, docs/methods.md §5).

Every caption of every test image is a query; every test image is in the gallery, without camera or
junk filtering; a gallery image is positive iff its identity equals the query's. Ranking is the stable
descending sort of ``engine.retrieval.metrics``. Real datasets carry no level labels, so ``given`` searches the
config's ``image_query_level`` view and ``auto`` (the default here) the classifier's ĝ (docs/methods.md §1.9).

``ranking="footage"`` (the default) ranks as a search on a footage gallery does: the checkpoint's similarity
plus the footage weight times the agreement of the parsed caption with every evidence source, including the
pretrained attribute network (``engine.lab.evaluation.footage_text``); ``overall`` is that ranking and ``by``
also holds attributes alone and the checkpoint's similarity alone. ``ranking="model"``: the similarity only.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from engine.ingest.datasets import DatasetIndex
from engine.kernel.ontology import LEVELS
from engine.kernel.progress import ProgressFn, no_progress
from engine.lab.evaluation.encoding import encode_texts
from engine.lab.evaluation.errors import EvaluationError
from engine.lab.evaluation.footage_text import FOOTAGE_RANKING, footage_blocks
from engine.lab.evaluation.levels import gallery_views, image_query_level, query_levels, similarity_by_level
from engine.lab.evaluation.scoring import block, score
from engine.retrieval.evidence.ranking import checkpoint_attribute_weight

RANKINGS: tuple[str, ...] = ("footage", "model")


def text_to_image(
    model,
    dataset: DatasetIndex,
    level: str = "auto",
    split: str = "test",
    batch_size: int = 64,
    progress: ProgressFn = no_progress,
    text_rewrite: float = 0.0,
    ranking: str = "footage",
    attribute_weight: float | None = None,
) -> dict[str, Any]:
    """Report part of the t2i protocol on ``dataset``'s ``split`` (``attribute_weight``: w of the footage
    ranking, default the shipped checkpoint's weight for footage galleries)."""
    if ranking not in RANKINGS:
        raise EvaluationError(f"t2i ranking must be one of {list(RANKINGS)}, got {ranking!r}")
    try:
        test = dataset.split(split)
    except ValueError as exc:
        raise EvaluationError(str(exc)) from None
    gallery = [s for s in test.samples if s.modality == "rgb"]
    captions = [(caption, sample.identity) for sample in gallery for caption in sample.captions]
    if not captions:
        raise EvaluationError(
            f"dataset {dataset.name!r} at {dataset.root} has no captions in split {split!r}; "
            "t2i needs a text-person-search dataset (cuhk-pedes, icfg-pedes, rstpreid, ufine6926)"
        )
    texts = encode_texts(model, [c for c, _ in captions], batch_size, text_rewrite=text_rewrite)
    fallback = image_query_level(model)
    used, notes = query_levels([None] * len(captions), texts.level_logits, level, fallback)
    if level == "given":
        notes.append(
            f"level given: the dataset has no level labels; every query searched the {fallback} view"
        )
    views = gallery_views(
        model, [s.image for s in gallery], set(used), "rgb", ["hr"] * len(gallery), batch_size, progress
    )
    similarity = similarity_by_level(texts.vectors, used, views)
    query_ids = np.array([identity for _, identity in captions])
    gallery_ids = np.array([s.identity for s in gallery])
    relevance = query_ids[:, None] == gallery_ids[None, :]
    if texts.truncated_batches:
        notes.append(
            f"descriptions longer than the text context were truncated ({texts.truncated_batches} "
            "text batches)"
        )
    report = {
        "level": level,
        "dataset": dataset.name,
        "split": split,
        "queries": len(captions),
        "gallery": len(gallery),
        "overall": block(score(similarity, relevance)),
        "by": {},
        "notes": notes,
    }
    if level == "auto" and texts.level_logits is not None:
        report["levels_used"] = {lv: used.count(lv) for lv in LEVELS if lv in used}
    if ranking == "footage":
        weight = attribute_weight if attribute_weight is not None else checkpoint_attribute_weight(None, "footage")
        part = footage_blocks(model, [c for c, _ in captions], [s.image for s in gallery], similarity, relevance,
                              weight, progress)
        report.update(overall=part["by"][FOOTAGE_RANKING], by=part["by"], ranking=part["ranking"])
    return report
