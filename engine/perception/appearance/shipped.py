"""A shipped re-identification network (Intel Open Model Zoo OSNet, OpenVINO IR; ``engine.perception.pretrained``) as
the
``appearance`` view's encoder: the same interface as a user's ONNX network (``engine.perception.appearance.network``).

Crops are resized to the network's 256×128 input (BGR, 0–255: its normalisation is inside the graph), run in
batches and L2-normalised. The fingerprint a gallery records names the network, its precision and release,
the SHA-256 of its weights and its input size; ``same_model`` compares those as it does for ONNX files.

``appearance_network(spec)`` is the one factory: a preset (``fast`` 0288, ``balanced`` 0287, ``accurate``
0277) or an Open Model Zoo name gives the shipped network, a path to an ``.onnx`` file a user's network.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from engine.perception.appearance.errors import AppearanceModelError
from engine.perception.appearance.network import AppearanceNetwork, check_crop
from engine.perception.appearance.normalisation import Normalisation
from engine.perception.pretrained import PretrainedModelError, load_shipped
from engine.perception.pretrained.registry import APPEARANCE_PRESETS, REID, SHIPPED

DEFAULT_BATCH = 32
#: What the recorded fingerprint says of the input: the graph takes BGR 0–255 and normalises inside.
IN_GRAPH = {"order": "bgr", "divide": 1.0, "mean": "in the graph", "std": "in the graph"}


def to_blob(crops: Sequence[np.ndarray], height: int, width: int, what: str) -> np.ndarray:
    """BGR uint8 crops → float32 ``[N, 3, height, width]`` (each resized; no normalisation)."""
    blob = np.empty((len(crops), 3, height, width), np.float32)
    for index, crop in enumerate(crops):
        check_crop(crop, index, what)
        resized = crop if crop.shape[:2] == (height, width) else \
            cv2.resize(crop, (width, height), interpolation=cv2.INTER_LINEAR)
        blob[index] = resized.transpose(2, 0, 1)
    return blob


class ShippedAppearanceNetwork:
    """A shipped re-id network: ``encode(crops)`` → float32 unit vectors ``[N, 256]``."""

    def __init__(self, name: str = "balanced", *, batch_size: int = DEFAULT_BATCH, threads: int | None = None,
                 device: str = "CPU") -> None:
        if isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1:
            raise AppearanceModelError(f"appearance batch size must be a positive integer, got {batch_size!r}")
        try:
            self.model, self.net = load_shipped(name, threads=threads, device=device)
        except PretrainedModelError as exc:
            raise AppearanceModelError(str(exc)) from None
        if self.model.task != REID:
            raise AppearanceModelError(f"{self.model.name} is a {self.model.task} network, not a re-identification "
                                       f"one; use one of {sorted(APPEARANCE_PRESETS)}")
        self.batch_size = batch_size
        self.path = self.net.xml
        self.sha256 = self.model.bin_sha256
        self.normalisation = Normalisation(order="bgr", divide=1.0, mean=(0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0))
        self.dim = int(self.net.infer(np.zeros((1, 3, *self.net.input_size), np.float32))[self.model.outputs[0]]
                       .shape[1])

    @property
    def fingerprint(self) -> dict[str, Any]:
        return {"kind": "openvino", "name": self.model.name, "precision": self.model.precision,
                "version": self.model.version, "file": self.model.name, "file_sha256": self.sha256,
                "normalisation": IN_GRAPH, "input_size": list(self.net.input_size), "dim": self.dim,
                "trained_on": self.model.trained_on}

    def describe(self) -> str:
        return self.model.version

    def encode(self, crops: Sequence[np.ndarray]) -> np.ndarray:
        """Unit vectors ``[N, D]`` of BGR uint8 crops (any size)."""
        if not len(crops):
            return np.zeros((0, self.dim), np.float32)
        height, width = self.net.input_size
        blocks = []
        for start in range(0, len(crops), self.batch_size):
            part = crops[start : start + self.batch_size]
            out = self.net.infer(to_blob(part, height, width, self.model.name))[self.model.outputs[0]]
            out = out.reshape(len(part), -1)
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            bad = np.flatnonzero(~np.isfinite(out).all(axis=1) | (norms[:, 0] == 0))
            if bad.size:
                raise AppearanceModelError(f"{self.model.name} gives an unusable vector for crop {start + int(bad[0])}")
            blocks.append((out / norms).astype(np.float32))
        return np.concatenate(blocks)


def is_shipped_spec(spec: str) -> bool:
    return spec in APPEARANCE_PRESETS or (spec in SHIPPED and SHIPPED[spec].task == REID)


def appearance_network(spec: str | Path, normalisation: Normalisation | None = None, *, threads: int | None = None):
    """The appearance encoder ``spec`` names: a preset or shipped name, or a path to a user's ``.onnx`` file."""
    text = str(spec)
    if is_shipped_spec(text):
        if normalisation is not None and normalisation != Normalisation():
            raise AppearanceModelError(f"--appearance-norm applies to your own ONNX network; the shipped {text!r} "
                                       "normalises inside its graph")
        return ShippedAppearanceNetwork(text, threads=threads)
    if text.lower().endswith(".onnx"):
        return AppearanceNetwork(text, normalisation)
    raise AppearanceModelError(f"appearance model {text!r}: use a preset ({', '.join(APPEARANCE_PRESETS)}), a "
                               "shipped re-identification network's name, or a path to an .onnx file")


def network_of_record(recorded: dict[str, Any] | None, *, threads: int | None = None):
    """The shipped network a gallery's recorded ``appearance`` fingerprint names (None: not a shipped one)."""
    if not recorded or recorded.get("kind") != "openvino" or recorded.get("name") not in SHIPPED:
        return None
    return ShippedAppearanceNetwork(recorded["name"], threads=threads)
