"""Person and carried-object detectors: HOG, a user's ONNX file, YOLOX-Nano, the fast Darknet net and the
motion-fused detector, built by name with ``make_detector``; ingest and the carried-object attributes use them."""

from engine.perception.detection.detectors import (
           CarriedObjects,
           Detections,
           HogDetector,
           OnnxDetector,
           PersonDetector,
           parse_size,
)
from engine.perception.detection.errors import DetectorError
from engine.perception.detection.factory import DETECTORS, make_detector

__all__ = ["DETECTORS", "CarriedObjects", "DetectorError", "Detections", "HogDetector", "OnnxDetector",
           "PersonDetector", "make_detector", "parse_size"]
