"""The query side of a model, as the search session needs it (no import of ``engine.retrieval.models`` here).

``engine.retrieval.encoding.model_encoder.ModelQueryEncoder`` implements it over a ``PersonSearchModel`` with
``encode_text`` (+ the GCR level logits and the attribute parser for ``level_and_source``) and ``fuse``; tests
use small fakes (``FingerprintEncoder`` gives them the gallery check).

Whether an encoder can search a gallery is decided in one place, the encoder's own ``check_gallery``: the
search session, the app's gallery loading and the search console call it and nothing else."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from engine.index import Gallery


@runtime_checkable
class QueryEncoder(Protocol):
    @property
    def fingerprint(self) -> str | None:
        """The checkpoint fingerprint, compared with the gallery's; None skips the check."""

    @property
    def attribute_weight(self) -> float | None:
        """The checkpoint's attribute weight w (score = similarity + w · agreement); None when it states none."""

    def level_and_source(self, text: str) -> tuple[str | None, str]:
        """(granularity level of a description, the rule that gave it: "parser", "classifier" or "none")."""

    def encode_text(self, text: str) -> np.ndarray:
        """Unit query vector [D] of a description, for the ``text:<level>`` views."""

    def encode_fused(self, text: str | None, sketch: np.ndarray | None, ir: np.ndarray | None) -> np.ndarray:
        """Unit query vector [D] from any non-empty mix of text and RGB uint8 images [H, W, 3], for ``rgb``."""

    def check_gallery(self, gallery: Gallery) -> None:
        """Raise ``GalleryMismatchError`` when this encoder cannot search ``gallery`` (another checkpoint built
        it, or its views are not this model's)."""


class FingerprintEncoder:
    """The gallery check of a query encoder that knows its checkpoint only by ``fingerprint``: the gallery must
    record that fingerprint (None skips the check)."""

    fingerprint: str | None = None

    def check_gallery(self, gallery: Gallery) -> None:
        if self.fingerprint is not None:
            gallery.check_model(self.fingerprint)
