"""Footage → gallery items: decode, detect persons, track, keep a few sharp crops per track, hash, estimate
the resolution level, encode with the model, append to a gallery folder (docs/architecture.md).

    from engine.ingest import IngestOptions, ModelEncoder, ingest
    summary = ingest("footage/", "gallery/", ModelEncoder(model), options=IngestOptions(stride=2))
    print("\\n".join(summary.lines()))
"""

from engine.ingest.encoder import (
    DEFAULT_REID_SCENARIOS,
    Encoder,
    ModelEncoder,
    parse_scenarios,
)
from engine.ingest.errors import DetectorError, IngestError, SourceSkipped
from engine.ingest.options import IngestOptions, item_id
from engine.ingest.pipeline import ingest
from engine.ingest.summary import IngestSummary, SourceReport
from engine.ingest.tracking import TrackerSettings
from engine.perception.detection.detectors import (
    CARRIED_OBJECT_CLASSES,
    CarriedObjects,
    Detections,
    HogDetector,
    OnnxDetector,
    PersonDetector,
    parse_size,
)
from engine.perception.detection.factory import DETECTORS, make_detector
from engine.perception.detection.motion import FusedDetector
from engine.retrieval.encoding.resolution import level_of_height

__all__ = [
    "CARRIED_OBJECT_CLASSES",
    "DEFAULT_REID_SCENARIOS",
    "DETECTORS",
    "CarriedObjects",
    "DetectorError",
    "Detections",
    "Encoder",
    "FusedDetector",
    "HogDetector",
    "IngestError",
    "IngestOptions",
    "IngestSummary",
    "ModelEncoder",
    "OnnxDetector",
    "PersonDetector",
    "SourceReport",
    "SourceSkipped",
    "TrackerSettings",
    "ingest",
    "item_id",
    "level_of_height",
    "make_detector",
    "parse_scenarios",
    "parse_size",
]
