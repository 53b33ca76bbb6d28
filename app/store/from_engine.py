"""Engine objects → store inputs: a ``StepResult`` becomes a ``StepInput``, a ``Gallery`` its identity.

Reads only the engine objects' public attributes, so importing this module loads no more of the engine than the
step schema the store builds on.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from app.store.codec import chunks
from app.store.evidence import EvidenceSource
from app.store.state import StepInput
from engine.kernel.step_schema import step_values

if TYPE_CHECKING:
    from engine.index import Gallery
    from engine.retrieval.search import StepResult


def gallery_fingerprint(gallery: Gallery) -> str:
    """SHA-256 over the model fingerprint, the views, every item id in row order and the content chain head of
    the items computed now from their stored records and vectors (``Gallery.fingerprint(from_files=True)``):
    equal to the current version's recorded fingerprint (``engine.index.versions``) while nothing changed,
    different after any add or remove and after any item's record or vectors changed behind the gallery's back
    (docs/hardening.md, "Content-bound gallery fingerprints")."""
    return gallery.fingerprint(from_files=True)


def gallery_identity(gallery: Gallery) -> dict[str, Any]:
    """Keyword arguments for ``CaseStore.add_gallery`` (after ``case_id``): the gallery's current version."""
    version = gallery.version
    return {"path": str(gallery.root.resolve()), "gallery_fingerprint": version.fingerprint,
            "model_fingerprint": gallery.model_fingerprint, "item_count": version.items,
            "version": version.version}


def _image(value: Any, what: str) -> Any:
    """A query image as the store takes it: the file path as given, or PNG bytes for an in-memory RGB array."""
    if value is None or not isinstance(value, np.ndarray):
        return value
    import cv2

    image = value if value.ndim == 2 else cv2.cvtColor(value, cv2.COLOR_RGB2BGR)
    ok, encoded = cv2.imencode(".png", image)
    if not ok:
        raise ValueError(f"the {what} image (shape {value.shape}) could not be encoded as PNG")
    return EvidenceSource.from_bytes(encoded.tobytes(), ".png")


def ids_of_rows(item_ids: Sequence[str], rows: np.ndarray) -> tuple[str, ...]:
    """The ids of gallery ``rows`` in their order. Many rows are read as one run of the id sequence (a gallery's
    id column decodes a run a block at a time, about thirty times faster than id by id), few one by one."""
    rows = np.asarray(rows, dtype=np.int64)
    if rows.shape[0] <= max(64, len(item_ids) // 16):
        return tuple(item_ids[int(row)] for row in rows)
    low, high = int(rows.min()), int(rows.max()) + 1
    run = list(item_ids[low:high])
    ids: list[str] = []
    for chunk in chunks(rows - low):  # a few milliseconds in C at a time (app.store.codec)
        ids.extend(run[row] for row in chunk.tolist())
    return tuple(ids)


def step_input(result: StepResult, gallery_id: int, question: dict[str, Any] | None = None) -> StepInput:
    """The store's record of an engine step: its fields (``StepResult.record``, the level source as the search
    transcript writes it), its query images, its kept items best first and the witness question before it."""
    kept_mask = np.isin(result.rows, result.kept, assume_unique=True)
    best_first = result.order[kept_mask[result.order]]
    return StepInput(
        **step_values(result.record(), StepInput),
        gallery_id=gallery_id,
        sketch=_image(result.query.sketch, "sketch"),
        ir=_image(result.query.ir, "IR"),
        kept_ids=ids_of_rows(result.item_ids, result.rows[best_first]),
        kept_scores=np.asarray(result.scores[best_first], dtype=np.float32),
        scores=result.scores,
        relevant=result.relevant,
        question=question,
    )
