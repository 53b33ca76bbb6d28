"""A user's re-identification network (an ONNX file) as a crop encoder, run through OpenCV's DNN module.

The file must take one float input ``[B, 3, H, W]`` with H and W fixed and give one output ``[B, D]``. The
layout is read from the file (``onnx``). A fixed B is filled batch by batch (the last one padded); a dynamic B
is used when OpenCV runs a batch of two as it runs each crop alone (checked on loading), else crops go one at
a time (OpenCV cannot re-shape some exports). The normalisation (``engine.perception.appearance.normalisation``) is the
user's to set. Outputs are checked (2-D, finite, non-zero) and L2-normalised.

The fingerprint a gallery records for the view (``fingerprint``): the file's SHA-256, the normalisation and
the input size (and, for information only, the file's path and the dimension). ``same_model`` compares two.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from engine.kernel.hashing import sha256_file
from engine.perception.appearance.errors import AppearanceModelError
from engine.perception.appearance.normalisation import Normalisation

DEFAULT_BATCH = 32
_FLOAT = 1  # onnx TensorProto.FLOAT
COMPARED_KEYS: tuple[str, ...] = ("file_sha256", "normalisation", "input_size")


@dataclass(frozen=True)
class InputLayout:
    """What the file says about its input: a fixed batch (or None when dynamic), height and width."""

    name: str
    batch: int | None
    height: int
    width: int


def _dims(value_info) -> list[int | str | None]:
    """Each dimension of a graph input/output: an int, a symbolic name, or None when unknown."""
    tensor = value_info.type.tensor_type
    if not tensor.HasField("shape"):
        return []
    out: list[int | str | None] = []
    for dim in tensor.shape.dim:
        if dim.HasField("dim_value") and dim.dim_value > 0:
            out.append(int(dim.dim_value))
        elif dim.HasField("dim_param"):
            out.append(dim.dim_param)
        else:
            out.append(None)
    return out


def read_layout(path: Path) -> InputLayout:
    """The input layout of the ONNX file at ``path``; ``AppearanceModelError`` naming the file otherwise."""
    import onnx

    try:
        model = onnx.load(str(path), load_external_data=False)
    except Exception as exc:  # noqa: BLE001 - protobuf raises its own DecodeError, or others on garbage
        raise AppearanceModelError(f"appearance model {path} is not an ONNX file ({type(exc).__name__}: {exc})") \
            from None
    graph = model.graph
    constants = {init.name for init in graph.initializer}
    inputs = [value for value in graph.input if value.name not in constants]
    if len(inputs) != 1:
        raise AppearanceModelError(f"appearance model {path} has {len(inputs)} inputs; Lineup needs exactly one "
                                   "image input [B, 3, H, W]")
    if len(graph.output) < 1:
        raise AppearanceModelError(f"appearance model {path} has no output")
    image = inputs[0]
    if image.type.tensor_type.elem_type != _FLOAT:
        raise AppearanceModelError(f"appearance model {path}: input {image.name!r} is not float32 "
                                   f"(element type {image.type.tensor_type.elem_type})")
    dims = _dims(image)
    if len(dims) != 4:
        raise AppearanceModelError(f"appearance model {path}: input {image.name!r} has rank {len(dims)} "
                                   f"({dims}); Lineup needs [B, 3, H, W]")
    batch, channels, height, width = dims
    if channels != 3:
        raise AppearanceModelError(f"appearance model {path}: input {image.name!r} has {channels} channels; "
                                   "Lineup needs 3 (a colour image [B, 3, H, W])")
    if not isinstance(height, int) or not isinstance(width, int):
        raise AppearanceModelError(f"appearance model {path}: input {image.name!r} has no fixed height and width "
                                   f"({dims}); export it with a fixed input size such as 256×128")
    out_dims = _dims(graph.output[0])
    if out_dims and len(out_dims) != 2:
        raise AppearanceModelError(f"appearance model {path}: output {graph.output[0].name!r} is {len(out_dims)}-D "
                                   f"({out_dims}); Lineup needs [B, D] (one vector per crop)")
    return InputLayout(image.name, batch if isinstance(batch, int) else None, height, width)


def check_crop(crop: object, index: int, what: str) -> None:
    """``AppearanceModelError`` naming ``what`` and the crop unless it is a non-empty BGR uint8 image."""
    if not isinstance(crop, np.ndarray) or crop.ndim != 3 or crop.shape[2] != 3 or crop.dtype != np.uint8 \
            or 0 in crop.shape:
        shape = getattr(crop, "shape", type(crop).__name__)
        raise AppearanceModelError(f"{what}: crop {index} must be a non-empty BGR uint8 image [H, W, 3], got {shape}")


def same_model(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    """Whether two view fingerprints name the same file with the same normalisation and input size."""
    if a is None or b is None:
        return a is b
    return all(a.get(key) == b.get(key) for key in COMPARED_KEYS)


class AppearanceNetwork:
    """An ONNX re-identification network: ``encode(crops)`` → float32 unit vectors ``[N, D]``."""

    def __init__(self, path: str | Path, normalisation: Normalisation | None = None,
                 batch_size: int = DEFAULT_BATCH) -> None:
        path = Path(path)
        if not path.is_file():
            raise AppearanceModelError(f"appearance model {path} does not exist (or is not a file)")
        if batch_size < 1:
            raise AppearanceModelError(f"appearance batch size must be at least 1, got {batch_size}")
        self.path = path
        self.normalisation = normalisation or Normalisation()
        self.layout = read_layout(path)
        self.batch_size = self.layout.batch or batch_size
        self.net = self._load()
        self.sha256 = sha256_file(path)
        probe = self._forward(np.full((1, self.layout.height, self.layout.width, 3), 127, np.uint8), 0)
        self.dim = int(probe.shape[1])
        if self.layout.batch is None and batch_size > 1 and not self._batches_agree():
            self.batch_size = 1
            self.net = self._load()

    def _load(self):
        try:
            return cv2.dnn.readNetFromONNX(str(self.path))
        except cv2.error as exc:
            raise AppearanceModelError(f"OpenCV cannot load appearance model {self.path}: {_short(exc)}") from None

    def _batches_agree(self) -> bool:
        """Whether a batch of two gives what each crop gives alone (OpenCV's log is silenced meanwhile)."""
        rng = np.random.default_rng(0)
        pair = rng.integers(0, 256, (2, self.layout.height, self.layout.width, 3), dtype=np.uint8)
        level = cv2.utils.logging.getLogLevel()
        cv2.utils.logging.setLogLevel(cv2.utils.logging.LOG_LEVEL_SILENT)
        try:
            together = self._forward(pair, 0)
            alone = np.concatenate([self._forward(pair[i : i + 1], i) for i in range(2)])
        except AppearanceModelError:
            return False
        finally:
            cv2.utils.logging.setLogLevel(level)
        return bool(np.allclose(together, alone, rtol=1e-3, atol=1e-4))

    @property
    def fingerprint(self) -> dict[str, Any]:
        return {"kind": "onnx", "file": str(self.path.resolve()), "file_sha256": self.sha256,
                "normalisation": self.normalisation.to_dict(),
                "input_size": [self.layout.height, self.layout.width], "dim": self.dim}

    def _blob(self, crops: Sequence[np.ndarray], start: int) -> np.ndarray:
        height, width = self.layout.height, self.layout.width
        norm = self.normalisation
        rows = np.empty((len(crops), height, width, 3), np.float32)
        for index, crop in enumerate(crops):
            check_crop(crop, start + index, f"appearance model {self.path}")
            resized = crop if crop.shape[:2] == (height, width) else \
                cv2.resize(crop, (width, height), interpolation=cv2.INTER_LINEAR)
            rows[index] = cv2.cvtColor(resized, cv2.COLOR_BGR2RGB) if norm.order == "rgb" else resized
        rows /= np.float32(norm.divide)
        rows -= np.asarray(norm.mean, np.float32)
        rows /= np.asarray(norm.std, np.float32)
        return np.ascontiguousarray(rows.transpose(0, 3, 1, 2))

    def _forward(self, crops: Sequence[np.ndarray] | np.ndarray, start: int) -> np.ndarray:
        """Raw outputs ``[n, D]`` of one network batch (padded to a fixed batch), checked."""
        count = len(crops)
        blob = self._blob(crops, start)
        fixed = self.layout.batch
        if fixed is not None and count < fixed:
            blob = np.concatenate([blob, np.repeat(blob[-1:], fixed - count, axis=0)])
        try:
            self.net.setInput(blob)
            out = np.asarray(self.net.forward())
        except cv2.error as exc:
            raise AppearanceModelError(f"appearance model {self.path} cannot take crops {start}..{start + count - 1} "
                                       f"(input {list(blob.shape)}): {_short(exc)}") from None
        if out.ndim != 2:
            raise AppearanceModelError(f"appearance model {self.path} gives a {out.ndim}-D output {list(out.shape)}; "
                                       "Lineup needs [B, D] (one vector per crop)")
        if out.shape[0] != blob.shape[0]:
            raise AppearanceModelError(f"appearance model {self.path} gives {out.shape[0]} vectors for a batch of "
                                       f"{blob.shape[0]} crops")
        out = out[:count].astype(np.float32, copy=False)
        bad = ~np.isfinite(out).all(axis=1)
        if bad.any():
            raise AppearanceModelError(f"appearance model {self.path} gives NaN or infinite values for crop "
                                       f"{start + int(np.flatnonzero(bad)[0])}")
        return out

    def encode(self, crops: Sequence[np.ndarray]) -> np.ndarray:
        """Unit vectors ``[N, D]`` of BGR uint8 crops (any size: each is resized to the network's input)."""
        if not len(crops):
            return np.zeros((0, self.dim), np.float32)
        blocks = []
        for start in range(0, len(crops), self.batch_size):
            out = self._forward(crops[start : start + self.batch_size], start)
            if out.shape[1] != self.dim:
                raise AppearanceModelError(f"appearance model {self.path} gave {out.shape[1]}-dimensional vectors, "
                                           f"{self.dim} before")
            norms = np.linalg.norm(out, axis=1, keepdims=True)
            zero = np.flatnonzero(norms[:, 0] == 0)
            if zero.size:
                raise AppearanceModelError(f"appearance model {self.path} gives an all-zero vector for crop "
                                           f"{start + int(zero[0])}")
            blocks.append(out / norms)
        return np.concatenate(blocks)


def _short(exc: cv2.error) -> str:
    text = str(exc).strip().splitlines()
    return text[-1] if text else type(exc).__name__
