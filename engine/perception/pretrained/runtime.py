"""One loader for OpenVINO IR networks (``.xml`` graph + ``.bin`` weights beside it), shipped or a user's.

``IRModel(xml, expected_input=(3, H, W), outputs=(...))`` reads the graph, checks that it has one image input
``[N, 3, H, W]`` of the expected size and the named outputs, makes the batch dimension dynamic (so any number
of crops runs in one call; detectors keep a batch of one) and compiles it for ``device`` (``CPU`` by default)
with ``threads`` inference threads (default: OpenVINO's own choice). ``infer(batch)`` takes float32
``[N, 3, H, W]`` and returns the outputs by name as float32 arrays.

Errors name the file: a missing ``.xml`` or ``.bin``; a file the runtime cannot parse (truncated, not IR); a
shipped file whose SHA-256 differs from the registry's (``load_shipped``: truncated or altered); an input or
output that is not the one expected; a batch of the wrong shape.

Telemetry: ``import openvino`` also imports its model-conversion tools, which set up the
``openvino-telemetry`` package's one session at import time: with no consent file in the user's home that
session counts as consenting, writes a client id and usage counts under ``~/intel`` and sends events when a
conversion runs. Lineup opts out before the first import: it installs the package's session itself, without
consent, sender or files (``_opt_out_of_telemetry``), so the conversion tools find it and never make their own.
Nothing is written to the home folder and nothing can be sent; ``telemetry_consent()`` reports the state and
the tests check both (docs/pretrained-models.md).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from engine.kernel.hashing import sha256_file
from engine.perception.pretrained.errors import PretrainedModelError
from engine.perception.pretrained.registry import ShippedModel, shipped

DEFAULT_DEVICE = "CPU"
_LOCK = threading.Lock()
_CORE: Any = None
_CHECKED: dict[tuple[str, int, int], bool] = {}
_LOADED: dict[tuple, IRModel] = {}
_LOAD_LOCK = threading.Lock()


def _opt_out_of_telemetry() -> None:
    """Install OpenVINO's telemetry session before ``import openvino`` does, without consent: no files under
    the home folder, no sender (see the module docstring). A session someone made earlier is told no."""
    try:
        from openvino_telemetry import main as telemetry
    except ImportError:  # the package is optional for the runtime: nothing to opt out of
        return
    session = getattr(telemetry.Telemetry, "_SingletonMetaClass__single_instance", None)
    if session is None:
        session = object.__new__(telemetry.Telemetry)
        session.tid, session.sender = None, None
        telemetry.Telemetry._SingletonMetaClass__single_instance = session
    session.consent = False


_opt_out_of_telemetry()
# Imported here, after the opt-out, rather than at first use: the import initialises a native extension while
# holding the interpreter lock for a noticeable moment, which must happen when the app starts, not in a worker
# thread while the window is drawing (tests/test_app_heartbeat.py).
import openvino  # noqa: E402


def _core():
    """The process's one ``openvino.Core`` (made on first use)."""
    global _CORE
    with _LOCK:
        if _CORE is None:
            _CORE = openvino.Core()
        return _CORE


def _short(exc: BaseException) -> str:
    lines = [line.strip() for line in str(exc).strip().splitlines() if line.strip()]
    return lines[-1] if lines else type(exc).__name__


class IRModel:
    """An IR network compiled for inference (see the module docstring)."""

    def __init__(self, xml: str | Path, *, expected_input: tuple[int, int, int] | None = None,
                 outputs: Sequence[str] = (), dynamic_batch: bool = True, threads: int | None = None,
                 device: str = DEFAULT_DEVICE, label: str | None = None) -> None:
        xml = Path(xml)
        self.xml = xml
        self.bin = xml.with_suffix(".bin")
        self.label = label or xml.stem
        if xml.suffix.lower() != ".xml":
            raise PretrainedModelError(f"network {xml}: an OpenVINO IR graph is an .xml file (with its .bin beside "
                                       "it)")
        if not xml.is_file():
            raise PretrainedModelError(f"network {xml} does not exist (or is not a file)")
        if not self.bin.is_file():
            raise PretrainedModelError(f"network {xml}: its weights {self.bin.name} are missing beside it")
        if threads is not None and (isinstance(threads, bool) or not isinstance(threads, int) or threads < 1):
            raise PretrainedModelError(f"network {xml}: threads must be a positive integer, got {threads!r}")
        core = _core()
        try:
            model = core.read_model(str(xml), str(self.bin))
        except Exception as exc:  # noqa: BLE001 - the runtime raises its own RuntimeError subclasses
            raise PretrainedModelError(f"network {xml} cannot be read (truncated, or not OpenVINO IR): "
                                       f"{_short(exc)}") from None
        inputs = list(model.inputs)
        if len(inputs) != 1:
            raise PretrainedModelError(f"network {xml} has {len(inputs)} inputs; Lineup needs one image input "
                                       "[N, 3, H, W]")
        port = inputs[0]
        shape = port.get_partial_shape()
        if shape.rank.is_dynamic or shape.rank.get_length() != 4:
            raise PretrainedModelError(f"network {xml}: input {port.any_name!r} has shape {shape}; Lineup needs "
                                       "[N, 3, H, W]")
        dims = [d.get_length() if d.is_static else None for d in shape]
        if dims[1] != 3 or dims[2] is None or dims[3] is None:
            raise PretrainedModelError(f"network {xml}: input {port.any_name!r} has shape {shape}; Lineup needs "
                                       "three channels and a fixed height and width")
        self.input_name = port.any_name
        self.input_size = (int(dims[2]), int(dims[3]))
        if expected_input is not None and (3, *self.input_size) != tuple(expected_input):
            raise PretrainedModelError(f"network {xml}: input is [3, {self.input_size[0]}, {self.input_size[1]}], "
                                       f"expected {list(expected_input)} (another network than the one named?)")
        names = {name for out in model.outputs for name in out.get_names()}
        missing = [name for name in outputs if name not in names]
        if missing:
            raise PretrainedModelError(f"network {xml} has no output {missing[0]!r} (it has {sorted(names)}): "
                                       "another network than the one named?")
        self.output_names = tuple(outputs) or tuple(out.any_name for out in model.outputs)
        self.dynamic_batch = dynamic_batch
        if dynamic_batch and dims[0] != -1:
            try:
                model.reshape({self.input_name: [-1, 3, *self.input_size]})
            except Exception as exc:  # noqa: BLE001
                raise PretrainedModelError(f"network {xml}: its batch size cannot be made dynamic: {_short(exc)}") \
                    from None
        config = {} if threads is None else {"INFERENCE_NUM_THREADS": threads}
        try:
            self.compiled = core.compile_model(model, device, config)
        except Exception as exc:  # noqa: BLE001
            raise PretrainedModelError(f"network {xml} cannot be compiled for {device}: {_short(exc)}") from None
        self._request_lock = threading.Lock()

    def infer(self, batch: np.ndarray) -> dict[str, np.ndarray]:
        """Outputs by name for a float32 batch ``[N, 3, H, W]`` (BGR, 0–255)."""
        batch = np.asarray(batch)
        height, width = self.input_size
        fixed = None if self.dynamic_batch else 1
        if batch.ndim != 4 or batch.shape[1:] != (3, height, width) or batch.shape[0] < 1 or \
                (fixed is not None and batch.shape[0] != fixed):
            need = f"[{'N' if fixed is None else fixed}, 3, {height}, {width}]"
            raise PretrainedModelError(f"network {self.label}: a batch must be {need}, got {list(batch.shape)}")
        data = np.ascontiguousarray(batch, dtype=np.float32)
        try:
            with self._request_lock:
                result = self.compiled(data)
                out = {name: np.array(result[self.compiled.output(name)], dtype=np.float32)
                       for name in self.output_names}
        except Exception as exc:  # noqa: BLE001
            raise PretrainedModelError(f"network {self.label} failed on a batch {list(batch.shape)}: "
                                       f"{_short(exc)}") from None
        for name, value in out.items():
            if value.shape[0] != batch.shape[0] and not (value.ndim == 4 and value.shape[:2] == (1, 1)):
                raise PretrainedModelError(f"network {self.label}: output {name!r} has {value.shape[0]} rows for "
                                           f"{batch.shape[0]} inputs")
        return out


def telemetry_consent() -> bool | None:
    """Whether OpenVINO's telemetry session in this process may send (None: the package is absent or no
    session exists). Lineup's own opt-out session says False."""
    import sys

    package = sys.modules.get("openvino_telemetry.main")
    telemetry = getattr(package, "Telemetry", None)
    session = getattr(telemetry, "_SingletonMetaClass__single_instance", None)
    return None if session is None else bool(getattr(session, "consent", False))


def verify_shipped(model: ShippedModel) -> Path:
    """The shipped ``.xml`` after checking both files against the registry's SHA-256 (once per process and
    file state); ``PretrainedModelError`` naming the file that is missing, truncated or altered."""
    try:
        xml = model.xml
    except FileNotFoundError:
        raise PretrainedModelError(f"the shipped network {model.version} is missing from resources/models/openvino "
                                   "(reinstall Lineup)") from None
    for path, digest in ((xml, model.xml_sha256), (xml.with_suffix(".bin"), model.bin_sha256)):
        if not path.is_file():
            raise PretrainedModelError(f"the shipped network {model.version}: {path} is missing (reinstall Lineup)")
        stat = path.stat()
        key = (str(path), stat.st_size, stat.st_mtime_ns)
        if key not in _CHECKED:
            _CHECKED[key] = sha256_file(path) == digest
        if not _CHECKED[key]:
            raise PretrainedModelError(f"the shipped network {model.version}: {path} is truncated or altered (its "
                                       f"SHA-256 is not {digest[:16]}…; reinstall Lineup)")
    return xml


def load_shipped(name: str, *, threads: int | None = None, device: str = DEFAULT_DEVICE,
                 dynamic_batch: bool | None = None) -> tuple[ShippedModel, IRModel]:
    """A shipped network by name (or appearance preset), checked and compiled. Compiled once per process and
    setting (compiling takes a second or two; an ``IRModel`` is safe to share between threads): later calls
    check the files again (cheap while they are unchanged) and return the same network."""
    model = shipped(name)
    xml = verify_shipped(model)
    batch = model.task in ("reid", "attributes") if dynamic_batch is None else dynamic_batch
    key = (model.name, threads, device, batch)
    with _LOAD_LOCK:
        network = _LOADED.get(key)
        if network is None:
            network = IRModel(xml, expected_input=model.input, outputs=model.outputs, dynamic_batch=batch,
                              threads=threads, device=device, label=model.name)
            _LOADED[key] = network
    return model, network


def device_of(requested: str | None) -> str:
    """The OpenVINO device for a torch-style ``--device`` value: ``CPU`` unless a GPU plugin is asked for by
    name (``GPU``) or set in ``LINEUP_OPENVINO_DEVICE``; CUDA devices run the torch model, these networks stay on
    the CPU."""
    if requested and requested.upper().startswith("GPU"):
        return requested.upper()
    return os.environ.get("LINEUP_OPENVINO_DEVICE", DEFAULT_DEVICE)
