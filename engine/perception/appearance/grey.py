"""The colourless side of an appearance network: the ``appearance:grey`` view and the vector of a sketch or IR
query image (``engine.retrieval.encoding.views``; measured in docs/real-footage.md, "Sketch and infrared on footage").

A sketch or an infrared image shows no colours, so comparing it with the colour vectors of the ``appearance``
view mostly compares colours that are not there. Both sides are therefore converted to grey (repeated over
three channels, the network's input stays BGR) and run through the same network: ``appearance_views`` gives a
batch of crops' vectors for every view of ``APPEARANCE_VIEWS`` (ingest, ``lineup gallery rebuild
--appearance``), ``encode_query`` the unit vector of one or more query images, and ``query_network`` loads the
network a gallery's recorded fingerprint names (a shipped one by name; a user's ONNX file from its recorded
path, refused when the file is missing or its SHA-256 changed), once per process.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import cv2
import numpy as np

from engine.perception.appearance.errors import AppearanceModelError
from engine.perception.appearance.network import AppearanceNetwork, same_model
from engine.perception.appearance.normalisation import Normalisation
from engine.perception.appearance.shipped import network_of_record
from engine.perception.appearance.views import APPEARANCE_VIEWS

_NETWORKS: dict[tuple, Any] = {}


def grey_bgr(image: np.ndarray, *, order: str = "bgr") -> np.ndarray:
    """A colour uint8 image ``[H, W, 3]`` (channel ``order`` bgr or rgb) or a grey one ``[H, W]`` as a 3-channel
    grey BGR image (every channel the luminance)."""
    if not isinstance(image, np.ndarray) or image.dtype != np.uint8 or not (
            image.ndim == 2 or (image.ndim == 3 and image.shape[2] == 3)):
        shape = getattr(image, "shape", type(image).__name__)
        raise AppearanceModelError(f"a grey view needs a uint8 image [H, W, 3] or [H, W], got {shape}")
    if image.ndim == 3:
        image = cv2.cvtColor(image, cv2.COLOR_RGB2GRAY if order == "rgb" else cv2.COLOR_BGR2GRAY)
    return cv2.cvtColor(image, cv2.COLOR_GRAY2BGR)


def appearance_views(network, crops: Sequence[np.ndarray], views: Iterable[str] = tuple(APPEARANCE_VIEWS)
                     ) -> dict[str, np.ndarray]:
    """``{view: unit vectors [N, D]}`` of BGR uint8 crops for each of ``views`` (names of ``APPEARANCE_VIEWS``)."""
    out = {}
    for view in views:
        if view not in APPEARANCE_VIEWS:
            raise AppearanceModelError(f"{view!r} is not an appearance view ({', '.join(APPEARANCE_VIEWS)})")
        out[view] = network.encode([grey_bgr(crop) for crop in crops] if APPEARANCE_VIEWS[view] else crops)
    return out


def encode_query(network, images: Sequence[np.ndarray], *, order: str = "rgb") -> np.ndarray:
    """The unit vector ``[D]`` of query images (a sketch and/or an IR image; channel ``order`` rgb as
    ``engine.retrieval.search.query.load_image`` gives them): each in grey through ``network``, averaged."""
    if not len(images):
        raise AppearanceModelError("a grey query vector needs at least one image")
    vectors = network.encode([grey_bgr(image, order=order) for image in images])
    mean = vectors.mean(axis=0)
    norm = float(np.linalg.norm(mean))
    if not np.isfinite(mean).all() or norm == 0:
        raise AppearanceModelError("the appearance network gives an unusable vector for the query image")
    return (mean / norm).astype(np.float32)


def query_network(recorded: Mapping[str, Any] | None, view: str):
    """The network that made a gallery's ``view`` (its recorded fingerprint), loaded once per process."""
    if not recorded:
        raise AppearanceModelError(f"the gallery records no network for its {view!r} view")
    key = (recorded.get("kind"), recorded.get("name"), recorded.get("file"), recorded.get("file_sha256"),
           str(recorded.get("normalisation")), str(recorded.get("input_size")))
    if key not in _NETWORKS:
        _NETWORKS[key] = _load(dict(recorded), view)
    return _NETWORKS[key]


def _load(recorded: dict[str, Any], view: str):
    shipped = network_of_record(recorded)
    if shipped is not None:
        if shipped.sha256 != recorded.get("file_sha256"):
            raise AppearanceModelError(f"the gallery's {view!r} view was made by another release of "
                                       f"{recorded.get('name')} (SHA-256 {str(recorded.get('file_sha256'))[:16]}…)")
        return shipped
    if recorded.get("kind") != "onnx" or not recorded.get("file"):
        raise AppearanceModelError(f"the gallery's {view!r} view was made by {recorded.get('name') or 'a network'} "
                                   f"({recorded.get('kind')!r}), which this Lineup cannot load to encode a query")
    norm = recorded.get("normalisation") or {}
    try:
        normalisation = Normalisation(order=norm["order"], divide=float(norm["divide"]), mean=tuple(norm["mean"]),
                                      std=tuple(norm["std"]))
    except (KeyError, TypeError, ValueError):
        raise AppearanceModelError(f"the gallery's {view!r} view records an unreadable normalisation {norm!r}") \
            from None
    network = AppearanceNetwork(recorded["file"], normalisation)
    if not same_model(recorded, network.fingerprint):
        raise AppearanceModelError(f"the gallery's {view!r} view was made by {recorded['file']} with SHA-256 "
                                   f"{str(recorded.get('file_sha256'))[:16]}…; the file there now is another model "
                                   f"(SHA-256 {network.sha256[:16]}…)")
    return network
