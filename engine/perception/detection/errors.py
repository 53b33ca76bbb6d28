"""The error a detector raises: it names the detector or file and what is wrong."""

from __future__ import annotations


class DetectorError(ValueError):
    """A detector cannot be built (missing ONNX file, unknown output layout) or its output breaks the contract."""
