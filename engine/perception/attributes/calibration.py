"""The shipped footage calibration (``resources/calibration/footage_calibration.json``), read once: the attribute
network's Platt scaling (``engine.perception.attributes.pretrained``) and how far each evidence source is to be
trusted per key (``engine.retrieval.evidence.reliability``). Both were measured on hand-labelled real crops by
``bench/calibrate_sources.py``."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from engine.kernel import jsonio
from engine.kernel.resources import resource_path

CALIBRATION = ("calibration", "footage_calibration.json")


@lru_cache(maxsize=1)
def footage_calibration() -> tuple[str, dict[str, Any]]:
    """(where, content) of the shipped footage calibration file (``CALIBRATION``; content {} when none ships)."""
    try:
        path = resource_path(*CALIBRATION)
    except FileNotFoundError:
        return "no calibration", {}
    return str(path), jsonio.read(path, expect=dict)
