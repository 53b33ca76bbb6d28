"""Text → person on a real dataset ranked as a footage search ranks it (docs/pretrained-models.md, "What ranks a
footage search"): each test image gets the evidence ingest computes for footage — the pixel reader
(GrabCut silhouette), the checkpoint's attribute heads and the pretrained attribute network — stored in a
temporary evidence table, and each caption ranks the images by

    score = similarity + w · agreement(parsed attributes, evidence)

with the footage reliabilities (``engine.retrieval.evidence.reliability``) and every source, exactly the
``AttributeTerm`` a search step builds on a footage gallery. ``w`` is the checkpoint's weight for footage
galleries (``checkpoint_attribute_weight``). Rankings reported: the footage ranking, attributes alone
(similarity only breaks ties) and the checkpoint's similarity alone.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from engine.index import evidence_table as store
from engine.kernel.progress import ProgressFn, no_progress
from engine.lab.evaluation.errors import EvaluationError
from engine.lab.evaluation.scoring import block, score
from engine.perception.attributes.pretrained import AttributeNetwork
from engine.retrieval.evidence.items import compute_evidence
from engine.retrieval.evidence.ranking import DEFAULT_SOURCES, AttributeTerm, GalleryEvidence
from engine.retrieval.evidence.reliability import for_domain
from engine.retrieval.text.parser import parse

FOOTAGE_RANKING = "footage ranking"
ATTRIBUTES_ONLY = "attributes only"
SIMILARITY_ONLY = "checkpoint similarity"
TIE_BREAK = 1e-4  # similarity's share in the attributes-only ranking: it only orders equal agreements
READ_BATCH = 64


def _read(path: Path) -> np.ndarray:
    data = np.fromfile(path, dtype=np.uint8) if path.is_file() else None
    image = None if data is None or not data.size else cv2.imdecode(data, cv2.IMREAD_COLOR)
    if image is None:
        raise EvaluationError(f"image {path} is missing or cannot be decoded")
    return image


def gallery_evidence(model, paths: Sequence[Path], folder: Path, progress: ProgressFn = no_progress,
                     network: AttributeNetwork | None = None) -> GalleryEvidence:
    """The evidence of every image (as ingest computes it for footage) in a table under ``folder``."""
    network = network or AttributeNetwork()
    ids = [f"{i:08d}" for i in range(len(paths))]
    for start in range(0, len(paths), READ_BATCH):
        part = list(paths[start : start + READ_BATCH])
        records = compute_evidence([_read(Path(p)) for p in part], model=model, network=network)
        store.append(folder, ids[start : start + len(part)], records)
        progress(start + len(part), len(paths))
    return GalleryEvidence(store.EvidenceTable.read(folder), ids)


def rank_captions(captions: Sequence[str], similarity: np.ndarray, evidence: GalleryEvidence,
                  weight: float) -> dict[str, np.ndarray]:
    """Scores [captions, images] of the three rankings (see the module docstring)."""
    reliability = for_domain("footage")
    rows = np.arange(similarity.shape[1])
    agreement = np.zeros_like(similarity, dtype=np.float64)
    for q, caption in enumerate(captions):
        stated = tuple(parse(caption).attributes.items())
        if stated:
            term = AttributeTerm(stated, 1.0, DEFAULT_SOURCES, (), evidence, reliability=reliability)
            agreement[q] = term.scores(rows)[0]
    similarity = np.asarray(similarity, dtype=np.float64)
    return {FOOTAGE_RANKING: similarity + weight * agreement, ATTRIBUTES_ONLY: agreement + TIE_BREAK * similarity,
            SIMILARITY_ONLY: similarity}


def footage_blocks(model, captions: Sequence[str], paths: Sequence[Path], similarity: np.ndarray,
                   relevance: np.ndarray, weight: float, progress: ProgressFn = no_progress) -> dict[str, Any]:
    """The report blocks of the three rankings, plus what ranked them."""
    with tempfile.TemporaryDirectory(prefix="lineup-t2i-evidence-") as folder:
        evidence = gallery_evidence(model, paths, Path(folder), progress)
        scores = rank_captions(captions, similarity, evidence, weight)
    stated = sum(bool(parse(c).attributes) for c in captions)
    return {
        "by": {name: block(score(value, relevance)) for name, value in scores.items()},
        "ranking": {"rule": "similarity + w · agreement over every evidence source, footage reliabilities",
                    "attribute_weight": weight, "sources": list(DEFAULT_SOURCES),
                    "attribute_network": AttributeNetwork.describe(),
                    "captions_with_attributes": stated},
    }
