"""What the query panel reads back from the analyst's inputs, before any step runs: the attributes the
description states as the parser reads them (``engine.retrieval.text.parser.parse``, well under a millisecond:
docs/text-conventions.md), the query the panel's inputs make, which kind of gallery view it ranks by and on which
score scale, and why the step may not do what the analyst expects. Plain values: no Qt."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path

import numpy as np

from app.state.engine_terms import APPEARANCE_GREY_VIEW, IMAGE_QUERY_VIEW
from app.state.query_spec import KeepRule, QuerySpec
from engine.kernel.query_modalities import modality
from engine.retrieval.search import QueryInputError
from engine.retrieval.text.parser import ParseResult, parse

__all__ = [
    "ParseResult",
    "QueryInputError",
    "build_spec",
    "query_warnings",
    "read_description",
    "score_scale",
    "spec_view",
]

#: ``counter(text) -> (tokens, context length)`` of the model's tokenizer.
TokenCounter = Callable[[str], tuple[int, int]]


def read_description(text: str) -> ParseResult:
    """The attributes, count, level, spans and missing attributes a description states (never raises on text)."""
    return parse(text)


def spec_view(spec: QuerySpec) -> str:
    """The kind of gallery view a panel query ranks by: text alone searches a ``text:<level>`` view, anything
    with a sketch or IR image the ``rgb`` view, or ``appearance:grey`` where the gallery has it
    (``engine.retrieval.encoding.views``; both on the sketch/IR scale of ``score_scale``)."""
    return "text:" if spec.sketch is None and spec.ir is None else IMAGE_QUERY_VIEW


def score_scale(view: str) -> str:
    """Views whose scores compare: the text views share one scale, the sketch/IR views of a gallery (one per
    gallery: ``appearance:grey`` or ``rgb``) another, every other view has its own."""
    if view.startswith("text:"):
        return "text–image"
    return {IMAGE_QUERY_VIEW: "sketch/IR–image", APPEARANCE_GREY_VIEW: "sketch/IR–image"}.get(view, "find-similar")


def build_spec(modalities: Mapping[str, bool], *, text: str, sketch: np.ndarray | None, ir: str | Path | None,
               level: str | None, keep: KeepRule) -> QuerySpec:
    """The query the panel's inputs make: ``modalities`` says which of text, sketch and IR are on (inputs of a
    modality that is off are ignored: pass them as they stand). Raises ``QueryInputError`` (a readable message)
    when nothing is given."""
    text = text.strip() if modalities["text"] else ""
    spec = QuerySpec(text=text or None, sketch=sketch if modalities["sketch"] else None,
                     ir=ir if modalities["ir"] else None, level=level if modalities["text"] else None, keep=keep)
    if spec.is_empty:
        wanted = [modality(name).prompt for name, enabled in modalities.items() if enabled]
        if not wanted:
            raise QueryInputError("Turn on text, sketch or IR to build a query")
        raise QueryInputError(f"The query is empty: {' or '.join(wanted)}")
    return spec


def _shorten(text: str, limit: int = 40) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def query_warnings(spec: QuerySpec, reading: ParseResult, *, previous_view: str | None = None,
                   token_counter: TokenCounter | None = None) -> list[str]:
    """Why the step may not do what the analyst expects (empty when nothing is wrong): a score threshold read off
    a step of another score scale (``previous_view``: the view the step this one continues from ranked by), a
    description with no recognised attribute (``reading``: what the parser read of it), or one longer than the
    model's context (``token_counter``; None: no model to ask)."""
    warnings = []
    rule = spec.keep
    if rule.kind == "threshold" and previous_view is not None \
            and score_scale(previous_view) != score_scale(spec_view(spec)):
        warnings.append(f"Keep score ≥ {rule.value:g} was read off a {score_scale(previous_view)} step's "
                        f"scores; this {spec.kind} step scores on another scale, so the same number could keep "
                        "almost nothing or everything. Choose a fraction or a count, or run it anyway.")
    if spec.text is not None and spec.sketch is None and spec.ir is None and not reading.attributes:
        warnings.append(f"No attribute is recognised in “{_shorten(spec.text)}”: the step would still rank "
                        f"by the words alone and cut the candidates ({rule.describe()}).")
    if spec.text is not None and token_counter is not None:
        tokens, limit = token_counter(spec.text)
        if tokens > limit:
            warnings.append(f"The description is {tokens:,} tokens long; the model reads only the first "
                            f"{limit}, so the rest is ignored.")
    return warnings
