"""A case's working state: the search controls the next step will use (camera and time filters, the query's
inputs: which modalities are on, the sketch, the IR image, the level override and the keep rule) and how the
witness saw the person (the viewing condition the witness questions are ranked for), as plain values and as the
JSON the case store keeps (``CaseStore.save_working_state``; docs/architecture.md: the case holds its own search
state, a new case starts clean).

Query images never leave their case: a sketch drawn in the app is kept as a PNG in the case's own evidence
folder and referenced by its sha256 and stored path (the same file a step searched with it refers to), and a
reference is only read back from that folder; an IR image is referenced by its file path. Each step records
what it searched (``StepState.filters`` and its query images); the working state is not evidence.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np

from app.state.query_spec import KeepRule
from app.state.timeline_rows import filters_summary
from app.store import StepState
from app.store.evidence import EvidenceSource, case_folder, sha256_file, store_evidence
from engine.kernel.query_modalities import combinable
from engine.kernel.witness_prior import ORDINARY, UnknownConditionError, load_prior
from engine.retrieval.search import QueryInputError
from engine.retrieval.search.query import load_image

MODALITIES = tuple(m.name for m in combinable())  # what the query panel can switch on
#: How to clear the filters, named wherever they are shown as the reason for an empty step.
CLEAR_FILTERS = "choose “All cameras” and untick “Time” above the results"


@dataclass(frozen=True)
class Filters:
    """Camera and time filters applied to the next step (None = no filter)."""

    cameras: frozenset[str] | None = None
    time_range: tuple[float | None, float | None] | None = None

    @property
    def active(self) -> bool:
        return self.cameras is not None or self.time_range is not None

    def to_json(self) -> dict[str, Any]:
        """The form a step records (``StepState.filters``): ``{"cameras": [...] | None, "time_range": [a, b] |
        None}``."""
        return {"cameras": None if self.cameras is None else sorted(self.cameras),
                "time_range": None if self.time_range is None else list(self.time_range)}

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Filters:
        data = data or {}
        cameras, window = data.get("cameras"), data.get("time_range")
        return cls(None if cameras is None else frozenset(str(c) for c in cameras),
                   None if window is None else (_number(window[0]), _number(window[1])))

    def describe(self) -> str:
        """"camera classroom · from 10 s" (``app.state.timeline_rows.filters_summary``), "" without filters."""
        return filters_summary(self.to_json())


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


@dataclass(frozen=True)
class QueryInputs:
    """The query panel's inputs besides the description: which modalities are on, the sketch (RGB uint8, None
    when blank), the IR image's file, the level override (None: automatic) and the keep rule."""

    modalities: frozenset[str] = frozenset({"text"})
    sketch: np.ndarray | None = field(default=None, compare=False, repr=False)
    ir: str | None = None
    level: str | None = None
    keep: KeepRule = field(default_factory=KeepRule)


@dataclass(frozen=True)
class WorkingState:
    """See the module docstring; ``WorkingState()`` is a new case's clean state."""

    filters: Filters = field(default_factory=Filters)
    inputs: QueryInputs = field(default_factory=QueryInputs)
    #: how the witness saw the person: one of the witness prior's choices (``engine.kernel.witness_prior``)
    witness_saw: str = ORDINARY

    def with_filters(self, filters: Filters) -> WorkingState:
        return replace(self, filters=filters)

    def with_inputs(self, inputs: QueryInputs) -> WorkingState:
        return replace(self, inputs=inputs)

    def with_witness_saw(self, condition: str) -> WorkingState:
        return replace(self, witness_saw=condition)

    def to_json(self, sketch_ref: dict[str, str] | None) -> dict[str, Any]:
        """Plain JSON for the store; ``sketch_ref``: the saved sketch (``save_sketch``), None without one."""
        inputs = self.inputs
        return {"filters": self.filters.to_json(), "modalities": sorted(inputs.modalities),
                "sketch": sketch_ref, "ir": None if inputs.ir is None else {"path": str(inputs.ir)},
                "level": inputs.level, "keep": {"rule": inputs.keep.kind, "value": inputs.keep.value},
                "witness_saw": self.witness_saw}


def save_sketch(sketch: np.ndarray | None, evidence_root: Path, case_id: int) -> dict[str, str] | None:
    """Write the sketch as PNG into the case's evidence folder (by content, as a step's sketch is kept) and
    return its reference ``{"sha256", "stored_path"}``; None for no sketch."""
    if sketch is None:
        return None
    import cv2

    ok, encoded = cv2.imencode(".png", cv2.cvtColor(np.ascontiguousarray(sketch), cv2.COLOR_RGB2BGR))
    if not ok:
        raise ValueError(f"the sketch (shape {sketch.shape}) could not be encoded as PNG")
    source = EvidenceSource.from_bytes(encoded.tobytes(), ".png")
    path = store_evidence(evidence_root, case_id, source)
    return {"sha256": source.sha256, "stored_path": str(path)}


def read_working_state(data: dict[str, Any] | None, evidence_root: Path,
                       case_id: int) -> tuple[WorkingState, dict[str, str] | None, list[str]]:
    """(state, its sketch reference, problems) from a case's stored working state (None: a clean state). A
    sketch is read only from the case's own evidence folder and only when its content still matches; an
    image that cannot be read back is left out and named in ``problems``."""
    if not data:
        return WorkingState(), None, []
    problems: list[str] = []
    try:
        filters = Filters.from_json(data.get("filters"))
    except (TypeError, ValueError, IndexError):
        filters, problems = Filters(), [*problems, "the saved filters could not be read; they were cleared"]
    keep_data = data.get("keep") or {}
    try:
        keep = KeepRule(keep_data.get("rule", "rho"), keep_data.get("value", KeepRule().value))
    except QueryInputError:
        keep = KeepRule()
    sketch, sketch_ref = None, data.get("sketch")
    if sketch_ref:
        sketch = _case_sketch(sketch_ref, evidence_root, case_id)
        if sketch is None:
            sketch_ref = None
            problems.append("the case's saved sketch is missing from its evidence folder")
    ir = (data.get("ir") or {}).get("path")
    if ir is not None and not Path(ir).is_file():
        problems.append(f"the case's IR image {ir} is missing")
        ir = None
    modalities = frozenset(m for m in data.get("modalities", ("text",)) if m in MODALITIES) or frozenset({"text"})
    level = data.get("level")
    inputs = QueryInputs(modalities=modalities, sketch=sketch, ir=ir, level=level if isinstance(level, str) else None,
                         keep=keep)
    saw = data.get("witness_saw", ORDINARY)  # a case saved before the condition existed: ordinary viewing
    try:
        saw = load_prior().condition_name(saw if isinstance(saw, str) else repr(saw))
    except UnknownConditionError as exc:
        saw = ORDINARY
        problems.append(f"the witness's saved viewing condition was reset to ordinary viewing ({exc})")
    return WorkingState(filters, inputs, saw), sketch_ref, problems


def _case_sketch(ref: dict[str, str], evidence_root: Path, case_id: int) -> np.ndarray | None:
    try:
        path = Path(ref["stored_path"])
        if path.parent.resolve() != case_folder(evidence_root, case_id).resolve() or not path.is_file():
            return None
        if sha256_file(path) != ref["sha256"]:
            return None
        return load_image(path, "sketch")
    except (KeyError, TypeError, OSError, QueryInputError):
        return None


def no_candidates_message(reason: str, filters: Filters) -> str:
    """Why a step found nothing, naming the active filters and how to clear them."""
    reason = reason.rstrip(".")
    if not filters.active:
        return f"{reason[:1].upper()}{reason[1:]}."
    return (f"{reason[:1].upper()}{reason[1:]}. Active filters: {filters.describe()}. To clear them, "
            f"{CLEAR_FILTERS} (or change them to include more items).")


def step_header(step: StepState | None, label: str, gallery_size: int | None) -> str:
    """What the step on view did, for the results header: "Step 3 · kept 41 of 210 candidates · filters:
    camera classroom"; "Start · whole gallery, 36 items" before the first step."""
    if step is None:
        return "Start · whole gallery" + ("" if gallery_size is None else f", {gallery_size:,} items")
    text = f"Step {label} · kept {step.candidates_after:,} of {step.candidates_before:,} candidates"
    note = filters_summary(step.filters)
    if not note:
        return text
    removed = f", {step.filtered_out:,} filtered out" if step.filtered_out else ""
    return f"{text} · filters: {note}{removed}"
