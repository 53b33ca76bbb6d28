"""A checkpoint stand-in for ingest tests whose vectors depend on the crop's size only: through its views,
crops of the same size (whatever they show) are the nearest."""

from __future__ import annotations

import numpy as np


class SizeEncoder:
    """The same unit vector (height, width, 30) in every one of ``views``."""

    def __init__(self, views: tuple[str, ...] = ("rgb",)) -> None:
        self.views = {view: 3 for view in views}
        self.fingerprint = "size-encoder"

    def __call__(self, crops, modalities, resolutions):
        rows = np.array([[c.shape[0], c.shape[1], 30.0] for c in crops], np.float32)
        rows /= np.linalg.norm(rows, axis=1, keepdims=True)
        return {view: rows.copy() for view in self.views}
