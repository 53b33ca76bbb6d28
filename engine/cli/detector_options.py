"""The detector options ``lineup ingest`` and ``lineup detect`` share: their help texts and the detector they make."""

from __future__ import annotations


def _detector_help() -> tuple[str, str, str]:
    """``--detector``, ``--min-score`` and ``--tiles`` help, made from the detector registry
    (``engine.perception.detection.factory.DETECTORS``)."""
    from engine.perception.detection.factory import TILED, detector_help
    from engine.perception.detection.openvino_ssd import SSD_DETECTORS

    scores = ", ".join(f"{name} {spec.min_score:g}" for name, spec in SSD_DETECTORS.items())
    tiled = ", ".join(sorted(TILED - {"auto"}))
    return (detector_help(),
            f"Lowest detection score kept (default: the detector's own; ONNX 0.5, yolox 0.15, fast 0.2, {scores}).",
            f"{tiled}: auto | off | ROWSxCOLUMNS (default auto: yolox tiles frames whose long side is over 3.5× "
            "the network input, i.e. 1080p and up, the OpenVINO detectors by their own rule; off is faster when "
            "people are large in the frame).")


DETECTOR_HELP, MIN_SCORE_HELP, TILES_HELP = _detector_help()
ONNX_LAYOUT_HELP = "ONNX output layout: yolo | yolov8 | ssd | yolox."
ONNX_SIZE_HELP = "ONNX input size, WIDTHxHEIGHT (default 640x640; yolox: the long side of 416x416)."


def detector_from_options(spec: str, layout: str = "yolo", size: str | None = None, person_class: int = 0,
                          min_score: float | None = None, min_person_height: float = 64.0,
                          hog_threshold: float = 0.0, tiles: str | None = None):
    """A detector from the CLI's detector options (options that do not apply to it are left out or refused)."""
    from engine.ingest import DetectorError, make_detector, parse_size
    from engine.perception.detection.factory import TILED

    options: dict = {}
    tiled = spec in TILED or (spec.lower().endswith(".onnx") and layout == "yolox")
    if spec.lower().endswith(".onnx"):
        options = {"layout": layout, "person_class": person_class}
        if layout == "yolox":
            if size is not None:
                options["input_size"] = max(parse_size(size))
        else:
            options["input_size"] = parse_size(size or "640x640")
    elif spec == "hog":
        options = {"min_person_height": min_person_height, "hit_threshold": hog_threshold}
    if min_score is not None:
        if spec == "hog":
            raise DetectorError("--min-score does not apply to the hog detector (use --hog-threshold)")
        options["min_score"] = min_score
    if tiles is not None:
        if not tiled:
            raise DetectorError(f"--tiles applies to the tiling detectors ({', '.join(sorted(TILED))}) only, not "
                                f"to {spec!r}")
        options["tiles"] = tiles
    return make_detector(spec, **options)
