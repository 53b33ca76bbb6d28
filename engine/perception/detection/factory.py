"""Detectors by name: ``make_detector("auto")`` (YOLOX-Nano), ``"yolox"``, ``"fast"``, ``"hog"``, ``"fused"``,
``"onnx"`` or a path to an ``.onnx`` file, and the shipped OpenVINO person detectors by their short names
(``engine.perception.detection.openvino_ssd.SSD_DETECTORS``: ``"retail-0013"``, ``"adas-0002"``, ``"person-0200"``).
``DETECTORS`` is the one registry: the CLI's ``--detector`` help is made from it (``detector_choices``)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from engine.perception.detection.darknet import FastDetector
from engine.perception.detection.detectors import HogDetector, OnnxDetector, PersonDetector
from engine.perception.detection.errors import DetectorError
from engine.perception.detection.motion import FusedDetector
from engine.perception.detection.openvino_ssd import SSD_DETECTORS, OpenVinoSsdDetector
from engine.perception.detection.yolox import YoloxDetector


def _yolox(path: str | Path | None = None, **options: Any) -> PersonDetector:
    return YoloxDetector(path, **options)


def _openvino(name: str) -> Callable[..., PersonDetector]:
    def build(**options: Any) -> PersonDetector:
        return OpenVinoSsdDetector(name, **options)

    build.__doc__ = SSD_DETECTORS[name].summary
    return build


DETECTORS: dict[str, Callable[..., PersonDetector]] = {
    "auto": _yolox, "yolox": _yolox, "fast": FastDetector, "hog": HogDetector, "fused": FusedDetector,
    "onnx": OnnxDetector, **{name: _openvino(name) for name in SSD_DETECTORS}}

#: The registered names whose detectors tile large frames (they take a ``tiles`` option).
TILED: frozenset[str] = frozenset({"auto", "yolox", *SSD_DETECTORS})

_ABOUT: dict[str, str] = {
    "auto": "the default: the shipped YOLOX-Nano; for ingest with a background model on videos for silhouettes",
    "yolox": "the shipped YOLOX-Nano, people and carried bags",
    "fast": "Yolo-Fastest, person-only, quicker, less thorough",
    "hog": "HOG + linear SVM",
    "fused": "background subtraction + HOG, for fixed cameras",
    **{name: spec.summary for name, spec in SSD_DETECTORS.items()},
}


def detector_help() -> str:
    """One line per registered name for ``--detector`` help, made from ``DETECTORS``."""
    names = [f"{name} ({_ABOUT[name]})" if name in _ABOUT else name for name in DETECTORS if name != "onnx"]
    return f"{', '.join(names)}, or a path to a local ONNX detector (see --onnx-layout)."


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
