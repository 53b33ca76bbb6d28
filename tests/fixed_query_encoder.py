"""A query encoder that gives every text the same vector and level, for tests of the ranking around it."""

from __future__ import annotations

import numpy as np

from engine.retrieval.search.encoder import FingerprintEncoder


class FixedQueryEncoder(FingerprintEncoder):
    """Every query is the unit vector e₀ in 4 dimensions at ``level`` (read by the parser); the checkpoint
    fingerprint is "ckpt" and it states no attribute weight unless a test sets one."""

    fingerprint = "ckpt"
    attribute_weight = None
    level = "C"

    def level_for(self, text):
        return self.level

    def level_and_source(self, text):
        return self.level_for(text), "parser"

    def encode_text(self, text):
        return np.array([1.0, 0.0, 0.0, 0.0], np.float32)

    def encode_fused(self, text, sketch, ir):
        return self.encode_text(text)
