"""Detectors by name: ``make_detector("auto")`` (YOLOX-Nano), ``"yolox"``, ``"fast"``, ``"hog"``, ``"fused"``,
``"onnx"`` or a path to an ``.onnx`` file."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.detection.darknet import FastDetector
from engine.detection.detectors import HogDetector, OnnxDetector, PersonDetector
from engine.detection.errors import DetectorError
from engine.detection.motion import FusedDetector
from engine.detection.yolox import YoloxDetector


def _yolox(path: str | Path | None = None, **options: Any) -> PersonDetector:
    return YoloxDetector(path, **options)


DETECTORS: dict[str, Callable[..., PersonDetector]] = {"auto": _yolox, "yolox": _yolox, "fast": FastDetector,
                                                       "hog": HogDetector, "fused": FusedDetector, "onnx": OnnxDetector}


def make_detector(spec: str = "auto", **options: Any) -> PersonDetector:
    """A detector from a registered name (``"auto"``: YOLOX-Nano) or a path to an ``.onnx`` file (its
    ``layout`` option picks ``OnnxDetector`` or, for ``"yolox"``, ``YoloxDetector``); ``options`` go to its
    constructor (options it does not take are an error)."""
    try:
        if isinstance(spec, str) and spec.lower().endswith(".onnx"):
            if options.get("layout") == "yolox":
                options = {k: v for k, v in options.items() if k != "layout"}
                return _yolox(spec, **options)
            return OnnxDetector(spec, **options)
        factory = DETECTORS.get(spec)
        if factory is None:
            raise DetectorError(f"unknown detector {spec!r}; use one of {sorted(DETECTORS)} or a path to an .onnx "
                                "file")
        return factory(**options)
    except TypeError as exc:
        raise DetectorError(f"detector {spec!r}: {exc}") from None
