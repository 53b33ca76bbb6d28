"""The query side of a model, as the search session needs it (no import of ``engine.retrieval.models`` here).

``engine.retrieval.encoding.model_encoder.ModelQueryEncoder`` implements it over a ``PersonSearchModel`` with
``encode_text`` (+ the GCR level logits and the attribute parser for ``level_and_source``) and ``fuse``; tests
use small fakes."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


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
