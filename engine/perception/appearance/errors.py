"""The error a user's appearance network raises: it names the file and what is wrong with it."""

from __future__ import annotations


class AppearanceModelError(ValueError):
    """An appearance model cannot be used: missing file, not ONNX, wrong layout, unusable output, or a gallery
    whose ``appearance`` view another file made."""
