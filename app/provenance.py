"""Which networks and which attribute evidence a ranking rests on, in the words the app and its reports use.

One registry for the detail pane (``app.views.detail``), the window's gallery summary and the case report
(``app.report``), so each names a network or an evidence source the same way (docs/pretrained-models.md):

- ``SOURCE_LABELS``: each attribute evidence source of ``engine.index.evidence_table.SOURCES`` as an
  investigator reads it, and ``SOURCE_NOTES``: what each one is (the attribute network by its version);
- ``view_network(gallery, view)``: the fingerprint of the network whose vectors a searched view holds
  (``Gallery.view_model``: a shipped OpenVINO network or the user's ONNX file), None for the checkpoint's own
  views; ``network_name`` names it: the shipped network's version, or the ONNX file's name;
- ``similarity_line``, ``gallery_summary`` and ``licence_line``: the sentences built from them.

Qt-free and free of the case store: reports and views both import it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path, PurePath
from typing import Any

from engine.index.evidence_table import META_FILE, SOURCES, folder_of
from engine.kernel import jsonio
from engine.perception.appearance.views import APPEARANCE_GREY_VIEW, APPEARANCE_VIEW, APPEARANCE_VIEWS
from engine.perception.pretrained.registry import ATTRIBUTE_NETWORK, RELEASE, SHIPPED, shipped
from engine.retrieval.encoding.views import (
    BIOMETRICS_VIEW,
    IMAGE_QUERY_VIEW,
)
from engine.retrieval.evidence.wording import SOURCE_LABELS as WORDED_SOURCES

#: Each evidence source as the app and the report label it (worded once, engine side, for the console too).
SOURCE_LABELS: dict[str, str] = WORDED_SOURCES
#: What each source is, for a legend.
SOURCE_NOTES: dict[str, str] = {
    "pixels": "colours measured in the crop",
    "model": "the checkpoint's attribute heads",
    "objects": "bags and other objects the detector found with the person",
    "pretrained": shipped(ATTRIBUTE_NETWORK).version,
}
if set(SOURCE_LABELS) != set(SOURCES) or set(SOURCE_NOTES) != set(SOURCES):  # a new source needs its words here
    raise RuntimeError(f"app.provenance labels {sorted(SOURCE_LABELS)}, the evidence table has {sorted(SOURCES)}")

LICENCE = "Apache License 2.0"
CHECKPOINT = "the checkpoint's model"


def source_label(source: str) -> str:
    """An evidence source as the app shows it (an unknown name as it is)."""
    return SOURCE_LABELS.get(source, source)


def view_network(gallery, view: str | None) -> dict[str, Any] | None:
    """The fingerprint of the network whose vectors ``view`` holds in ``gallery`` (``Gallery.view_model``), or
    None when the checkpoint made it. A clothes-may-have-changed step (``biometrics``) ranks by ``rgb``."""
    if gallery is None or not view:
        return None
    return gallery.view_model(IMAGE_QUERY_VIEW if view == BIOMETRICS_VIEW else view)


def is_shipped(model: Mapping[str, Any] | None) -> bool:
    """Whether ``model`` is one of the networks Lineup ships (``engine.perception.pretrained.registry``)."""
    return bool(model) and model.get("kind") == "openvino" and model.get("name") in SHIPPED


def network_name(model: Mapping[str, Any] | None) -> str:
    """A shipped network's version ("person-reidentification-retail-0287 (FP32, Intel Open Model Zoo 2023.0)"),
    a user's ONNX file by its name, or the checkpoint's model (None)."""
    if not model:
        return CHECKPOINT
    if model.get("kind") == "openvino":
        return str(model.get("version") or model.get("name") or "an unnamed shipped network")
    file = model.get("file")
    return PurePath(str(file)).name if file else "an unnamed network"


def network_phrase(model: Mapping[str, Any] | None) -> str:
    """The network as a sentence names it: "the re-identification network …", "your re-identification network
    my-reid.onnx" or "the checkpoint's model"."""
    if not model:
        return CHECKPOINT
    whose = "the" if model.get("kind") == "openvino" else "your"
    return f"{whose} re-identification network {network_name(model)}"


def similarity_line(model: Mapping[str, Any] | None, view: str | None) -> str:
    """One sentence saying which network's vectors a step's similarity compares (the detail pane)."""
    grey = " on grey copies of the query and the crops" if model and APPEARANCE_VIEWS.get(view or "") else ""
    return f"Similarity from {network_phrase(model)}{grey}."


def evidence_sources(gallery_root: str | Path | None) -> tuple[str, ...] | None:
    """The attribute evidence sources the gallery's evidence table holds, in ``SOURCES`` order (reads its small
    ``evidence.json`` only): () when it has none, None when the table cannot be read."""
    if gallery_root is None:
        return ()
    path = folder_of(gallery_root) / META_FILE
    try:
        held = jsonio.read(path, expect=dict)["sources"]
    except FileNotFoundError:
        return ()
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return tuple(source for source in SOURCES if source in held)


def sources_text(sources: Iterable[str] | None) -> str:
    """Evidence sources as a list of labels ("pixels, model heads, attribute network person-attributes-…")."""
    if sources is None:
        return "unreadable"
    names = [source_label(s) + (f" {SOURCE_NOTES[s]}" if s == "pretrained" else "") for s in sources]
    return ", ".join(names) if names else "none stored"


def gallery_summary(gallery) -> list[str]:
    """Lines describing an open gallery: its items, the network find similar (and sketch and IR) rank by, and
    the attribute evidence it holds."""
    views = gallery.views
    lines = [f"Gallery {Path(gallery.root).name}: {len(gallery):,} items"]
    if APPEARANCE_VIEW in views:
        lines.append(f"Find similar ranks by {network_phrase(gallery.view_model(APPEARANCE_VIEW))}")
    else:
        lines.append(f"Find similar ranks by {CHECKPOINT}")
    if APPEARANCE_GREY_VIEW in views:
        lines.append(f"Sketch and IR queries rank by {network_phrase(gallery.view_model(APPEARANCE_GREY_VIEW))} "
                     "on grey copies")
    lines.append(f"Attribute evidence: {sources_text(evidence_sources(gallery.root))}")
    return lines


def licence_line(names: Iterable[str]) -> str:
    """The notice for shipped networks a case or report used (``names``: Open Model Zoo names)."""
    used = "; ".join(dict.fromkeys(names))
    return (f"{used}: {RELEASE}, shipped unmodified; copyright Intel Corporation, licensed under the {LICENCE} "
            "(Apache-2.0).")
