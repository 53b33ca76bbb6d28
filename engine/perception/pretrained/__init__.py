"""Pretrained person networks that ship with Lineup: Intel Open Model Zoo models in OpenVINO IR
(re-identification, person attributes, person and face detectors), their registry and one loader for them
(docs/pretrained-models.md).

- ``engine.perception.pretrained.registry``: every shipped file by name (task, precision, input, outputs, SHA-256,
  training data), the appearance presets ``fast`` / ``balanced`` / ``accurate``;
- ``engine.perception.pretrained.runtime``: ``IRModel``, an IR network compiled for the CPU (or another OpenVINO
  device) with its input layout checked and named errors for a missing, truncated or mismatched file.
"""

from engine.perception.pretrained.errors import PretrainedModelError
from engine.perception.pretrained.registry import APPEARANCE_PRESETS, SHIPPED, ShippedModel, shipped
from engine.perception.pretrained.runtime import IRModel, load_shipped

__all__ = ["APPEARANCE_PRESETS", "IRModel", "PretrainedModelError", "SHIPPED", "ShippedModel", "load_shipped",
           "shipped"]
