"""One way to assemble a search, taken by ``lineup search`` and by the app: a checkpoint's query encoder that
carries the checkpoint's attribute weight and text rewrite weight (``query_encoder``), and a session over a
gallery (``open_search``).

The weight w of a step's attribute term is the first one given of: the step's, the session's, the one the
gallery recorded at ingest (``Gallery.ranking``), the checkpoint's (``QueryEncoder.attribute_weight``), the
default (``engine.retrieval.search.session``)."""

from __future__ import annotations

from pathlib import Path

from engine.index import Gallery
from engine.kernel.keep_rules import DEFAULT_RHO
from engine.retrieval.encoding.model_encoder import ModelQueryEncoder
from engine.retrieval.encoding.text_rewrite import checkpoint_rewrite_weight
from engine.retrieval.evidence.ranking import checkpoint_attribute_weight
from engine.retrieval.search.encoder import QueryEncoder
from engine.retrieval.search.errors import QueryInputError
from engine.retrieval.search.session import RelevanceFn, SearchSession


def query_encoder(model, checkpoint: Path | str | None, *, level_rule: str = "parser") -> ModelQueryEncoder:
    """The query encoder of ``model``, loaded from ``checkpoint`` (None: the shipped one), with the attribute
    weight and the text rewrite weight that checkpoint records; an unreadable weight is a ``QueryInputError``."""
    try:
        weight = checkpoint_attribute_weight(checkpoint)
        rewrite = checkpoint_rewrite_weight(checkpoint)
    except ValueError as exc:
        raise QueryInputError(str(exc)) from None
    return ModelQueryEncoder(model, level_rule=level_rule, attribute_weight=weight, text_rewrite=rewrite)


def open_search(gallery: Gallery, encoder: QueryEncoder | None, *, attribute_weight: float | None = None,
                rho: float = DEFAULT_RHO, target_identity: str | None = None,
                relevance: RelevanceFn | None = None, item_limit: int | None = None) -> SearchSession:
    """A step-less search session on ``gallery`` with ``encoder`` (None: find-similar only); ``attribute_weight``
    is the session's w (None: the gallery's, else the checkpoint's, else the default); ``item_limit``: search
    only the first items (a gallery version, ``engine.index.versions``)."""
    return SearchSession(gallery, encoder, rho, relevance=relevance, target_identity=target_identity,
                         attribute_weight=attribute_weight, item_limit=item_limit)
