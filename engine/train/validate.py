"""Per-epoch validation on held-out identities: text→image R@1 and mAP per query level (docs/methods.md §5).

Each level's queries search the gallery view of that level (one view per level with granularity
experts); a gallery image is relevant by the run's ``text_positives`` rule, as training counts matches:
its identity and outfit are the query's ("outfit"), or its identity is ("identity"). Metrics from
``engine.metrics.retrieval``, as fractions in [0, 1].
"""

from __future__ import annotations

import torch

from engine.metrics.retrieval import evaluate_retrieval
from engine.models import PersonSearchModel
from engine.ontology import LEVELS
from engine.train.batches import BatchBuilder
from engine.train.data import ValidationSet

BATCH = 128


@torch.no_grad()
def evaluate(model: PersonSearchModel, validation: ValidationSet, builder: BatchBuilder) -> dict[str, dict[str, float]]:
    """{level: {"R@1", "R@5", "mAP", "queries"}} for every query level of ``validation``."""
    was_training = model.training
    model.eval()
    try:
        rows = validation.gallery_rows
        images = [builder.images(rows[i:i + BATCH]) for i in range(0, len(rows), BATCH)]
        results: dict[str, dict[str, float]] = {}
        views: dict[str, torch.Tensor] = {}
        for level, (texts, identities) in validation.queries.items():
            view = level if level in LEVELS else model.config.granularity.image_query_level
            if view not in views:
                views[view] = torch.cat([model.encode_images(x, level=view) for x in images])
            text = torch.cat([model.encode_text(texts[i:i + BATCH])[0] for i in range(0, len(texts), BATCH)])
            similarity = (text @ views[view].t()).cpu().numpy()
            relevance = identities[:, None] == validation.gallery_identities[None, :]
            outfits = validation.query_outfits.get(level)
            if builder.training.text_positives == "outfit" and outfits is not None and (
                    validation.gallery_outfits is not None):
                relevance &= outfits[:, None] == validation.gallery_outfits[None, :]
            report = evaluate_retrieval(similarity, relevance).as_dict(ks=(1, 5))
            results[level] = {"R@1": report["R@1"], "R@5": report["R@5"], "mAP": report["mAP"],
                              "queries": report["queries"]}
        return results
    finally:
        model.train(was_training)
