"""The query side of a model, as the search session needs it (no import of ``engine.models`` here).

An adapter around ``PersonSearchModel`` implements it with ``encode_text`` (+ the GCR level logits and the
attribute parser for ``level_for``) and ``fuse``; tests use a small fake."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class QueryEncoder(Protocol):
    @property
    def fingerprint(self) -> str | None:
        """The checkpoint fingerprint, compared with the gallery's; None skips the check."""

    def level_for(self, text: str) -> str | None:
        """Granularity level of a description (parser count, classifier when the parser finds nothing)."""

    def encode_text(self, text: str) -> np.ndarray:
        """Unit query vector [D] of a description, for the ``text:<level>`` views."""

    def encode_fused(self, text: str | None, sketch: np.ndarray | None, ir: np.ndarray | None) -> np.ndarray:
        """Unit query vector [D] from any non-empty mix of text and RGB uint8 images [H, W, 3], for ``rgb``."""
