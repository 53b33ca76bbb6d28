"""``CheckpointModels``: one checkpoint's model and its query and ingest encoders for the app, each made once
(from any thread) and shared by the gallery, search and ingest jobs."""

from __future__ import annotations

import threading
from pathlib import Path

from app.gc_freeze import freeze_long_lived_objects


class CheckpointModels:
    """One checkpoint's model, loaded once on first use (from any thread), and its query and ingest encoders,
    each made once: making one hashes every weight for the model's fingerprint (and the ingest encoder runs a
    probe), work that held the interpreter long enough to stall the window at every ingest and gallery open."""

    def __init__(self, checkpoint: str | Path, device: str | None = "cpu") -> None:
        self.checkpoint = Path(checkpoint)
        self.device = device
        self._model = None
        self._query_encoder = None
        self._ingest_encoder = None
        self._lock = threading.RLock()

    def model(self):
        with self._lock:
            if self._model is None:
                from engine.retrieval.models import load

                self._model = load(self.checkpoint, device=self.device)
                freeze_long_lived_objects()
            return self._model

    def query_encoder(self, _gallery=None):
        """An ``engine.retrieval.search`` query encoder with the checkpoint's attribute weight, made once (the
        ``encoder_factory`` of ``AppState.load_gallery``)."""
        with self._lock:
            if self._query_encoder is None:
                from engine.retrieval.search.opening import query_encoder

                self._query_encoder = query_encoder(self.model(), self.checkpoint)
                freeze_long_lived_objects()  # its tokenizer's tables are long-lived objects too
            return self._query_encoder

    def ingest_encoder(self):
        """The ``engine.ingest`` encoder of the checkpoint's model."""
        with self._lock:
            if self._ingest_encoder is None:
                from engine.ingest import ModelEncoder

                self._ingest_encoder = ModelEncoder(self.model())
                freeze_long_lived_objects()
            return self._ingest_encoder

    def domain_weights(self):
        """The checkpoint's attribute weight per gallery domain (ingest records the gallery's in the gallery)."""
        from engine.retrieval.evidence.ranking import DomainWeights

        return DomainWeights.of_checkpoint(self.checkpoint)
