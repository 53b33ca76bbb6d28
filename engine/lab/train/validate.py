"""Per-epoch validation on held-out identities: text→image R@1 and mAP per query level, and, for runs that
train sketch and IR queries, sketch→image ("S") and IR→image ("IR") (docs/methods.md §5).

Each level's queries search the gallery view of that level (one view per level with granularity
experts); sketch and IR queries (the full-resolution ones) search the image-query view, each encoded as a
query of the modes protocol (through the query fusion when the model has one, alone). A gallery image is
relevant by the run's ``text_positives`` rule, as training counts matches: its identity and outfit are the
query's ("outfit"), or its identity is ("identity"). Metrics from ``engine.retrieval.metrics.retrieval``, as fractions
in [0, 1].
"""

from __future__ import annotations

import numpy as np
import torch

from engine.kernel.ontology import LEVELS
from engine.lab.train.batches import BatchBuilder
from engine.lab.train.data import ValidationSet
from engine.retrieval.metrics.retrieval import evaluate_retrieval
from engine.retrieval.models import PersonSearchModel

BATCH = 128


@torch.no_grad()
def evaluate(model: PersonSearchModel, validation: ValidationSet, builder: BatchBuilder) -> dict[str, dict[str, float]]:
    """{level or mode: {"R@1", "R@5", "mAP", "queries"}} for every query level and image mode of ``validation``."""
    was_training = model.training
    model.eval()
    try:
        rows = validation.gallery_rows
        images = [builder.images(rows[i:i + BATCH]) for i in range(0, len(rows), BATCH)]
        results: dict[str, dict[str, float]] = {}
        views: dict[str, torch.Tensor] = {}

        def gallery(view: str) -> torch.Tensor:
            if view not in views:
                views[view] = torch.cat([model.encode_images(x, level=view) for x in images])
            return views[view]

        image_view = model.config.granularity.image_query_level
        for level, (texts, identities) in validation.queries.items():
            text = torch.cat([model.encode_text(texts[i:i + BATCH])[0] for i in range(0, len(texts), BATCH)])
            similarity = text @ gallery(level if level in LEVELS else image_view).t()
            results[level] = _scores(similarity, identities, validation.query_outfits.get(level), validation, builder)
        for mode, (query_rows, identities, outfits) in validation.image_queries.items():
            modality = "sketch" if mode == "S" else "ir"
            queries = torch.cat([_encode_query_images(model, builder.images(query_rows[i:i + BATCH]), modality)
                                 for i in range(0, len(query_rows), BATCH)])
            results[mode] = _scores(queries @ gallery(image_view).t(), identities, outfits, validation, builder)
        return results
    finally:
        model.train(was_training)


def _encode_query_images(model: PersonSearchModel, images: torch.Tensor, modality: str) -> torch.Tensor:
    """Sketch or IR query vectors as the modes protocol makes them: fused alone, or the plain image encoder."""
    if model.fusion is not None:
        return model.fuse(**{modality: images})
    return model.encode_images(images, modality)


def _scores(similarity: torch.Tensor, identities: np.ndarray, outfits: np.ndarray | None,
            validation: ValidationSet, builder: BatchBuilder) -> dict[str, float]:
    relevance = identities[:, None] == validation.gallery_identities[None, :]
    if builder.training.text_positives == "outfit" and outfits is not None and (
            validation.gallery_outfits is not None):
        relevance &= outfits[:, None] == validation.gallery_outfits[None, :]
    report = evaluate_retrieval(similarity.cpu().numpy(), relevance).as_dict(ks=(1, 5))
    return {"R@1": report["R@1"], "R@5": report["R@5"], "mAP": report["mAP"], "queries": report["queries"]}
