"""Errors ingest raises: each names the input and what is wrong with it."""

from __future__ import annotations

from engine.perception.detection.errors import DetectorError

__all__ = ["DetectorError", "IngestError", "SourceSkipped"]


class IngestError(ValueError):
    """The ingest as a whole cannot run (bad source path, bad options, gallery made by another model)."""


class SourceSkipped(Exception):
    """One source file cannot be read; ingest lists it with ``reason`` and goes on with the rest."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}")
        self.path = path
        self.reason = reason
