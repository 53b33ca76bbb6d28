"""Progressive search session (docs/methods.md §1.3; docs/methods.md §1.3).

Step j scores its candidate set C_j exactly (gathered rows × query vector, cost ∝ |C_j|; the first step scans
the whole view contiguously), applies its filters, and keeps the top k_j = ⌈ρ·|C_j|⌉ (or an explicit k, or a
score threshold). C_{j+1} = kept − rejected ∪ confirmed; a step with ``whole_gallery`` (``StepQuery``) scores
every item searched again, less the rejected ones (following a sighting to the next camera, docs/methods.md
§9). Up to the gallery's IVF threshold the FAISS index is not used for steps: a step needs every candidate's
score (for the distribution plot and the final ranking), which an index top-k does not give. Past it (millions
of items) a whole-gallery step's candidates are the index's best ``shortlist`` items, plus the confirmed ones
(``engine.retrieval.search.shortlist``, docs/scaling.md).

Hybrid ranking: a step's score is similarity + w · agreement, the agreement of each candidate's stored attribute
evidence with the attributes the query text states (``engine.retrieval.evidence.agreement``; evidence gathered for the
candidates only); ``require`` turns stated attributes into filters. w: the step's ``attribute_weight``, else
the session's, else the one the gallery recorded at ingest for its domain (``Gallery.ranking``), else the
checkpoint's (the encoder's ``attribute_weight``), else ``DEFAULT_ATTRIBUTE_WEIGHT`` (``weight_origin`` says which).

A find-similar step whose person may have changed clothes (``StepQuery.outfit_changed``) mixes the ``rgb``
view's similarity with the biometric likeness of the stored model evidence (``engine.retrieval.search.outfit_change``).

Sketch and IR steps on a gallery with the ``appearance:grey`` view (footage and crops) are ranked by the
appearance network's vector of the query image in grey (``engine.perception.appearance.grey``; the network the gallery
records for that view), not by the checkpoint; the text of a fused step then enters only through the attribute
term. Built worlds keep the checkpoint's fused vector against ``rgb`` (``engine.retrieval.encoding.views``).

Steps are immutable ``StepResult`` values; ``undo`` pops the last one, ``branch`` copies the first ones into a
new session. Marks (reject/confirm) belong to the session and are copied by ``branch``.
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from engine.index import Gallery, GalleryMismatchError
from engine.kernel.keep_rules import DEFAULT_RHO, check_rho
from engine.kernel.ontology import LEVELS
from engine.perception.appearance.errors import AppearanceModelError
from engine.perception.appearance.grey import encode_query, query_network
from engine.retrieval.encoding.views import route
from engine.retrieval.evidence.agreement import REQUIRE_RATIO
from engine.retrieval.evidence.ranking import (
    DEFAULT_ATTRIBUTE_WEIGHT,
    DEFAULT_SOURCES,
    AttributeTerm,
    check_sources,
    check_weight,
    evidence_for,
)
from engine.retrieval.evidence.reliability import for_domain as reliability_for
from engine.retrieval.search.encoder import QueryEncoder
from engine.retrieval.search.errors import NoCandidatesError, QueryInputError, SessionStateError
from engine.retrieval.search.outfit_change import BiometricTerm, similarity_view
from engine.retrieval.search.query import StepQuery, load_image
from engine.retrieval.search.ranking import FinalRanking, final_ranking
from engine.retrieval.search.selection import keep_mask, members
from engine.retrieval.search.shortlist import SHORTLIST, check_shortlist, shortlist
from engine.retrieval.search.step import StepResult, frozen_array

#: relevance(query, rows) -> bool per row (ground truth for plots and metrics)
RelevanceFn = Callable[[StepQuery, np.ndarray], np.ndarray]


def _session_weight(given: float | None, gallery: Gallery, encoder) -> tuple[float, str]:
    """w and where it comes from: given, else the gallery's recorded weight, else the encoder's, else the default."""
    if given is not None:
        return check_weight(given), "session"
    recorded = gallery.ranking
    if recorded is not None:
        return check_weight(recorded["attribute_weight"]), f"gallery ({recorded['domain']}: {recorded['origin']})"
    from_encoder = None if encoder is None else encoder.attribute_weight
    if from_encoder is not None:
        return check_weight(from_encoder), "checkpoint"
    return DEFAULT_ATTRIBUTE_WEIGHT, "default"


class SearchSession:
    def __init__(
        self,
        gallery: Gallery,
        encoder: QueryEncoder | None = None,
        rho: float = DEFAULT_RHO,
        *,
        relevance: RelevanceFn | None = None,
        target_identity: str | None = None,
        attribute_weight: float | None = None,
        attribute_sources: tuple[str, ...] = DEFAULT_SOURCES,
        require_ratio: float = REQUIRE_RATIO,
        item_limit: int | None = None,
        shortlist: int = SHORTLIST,
    ) -> None:
        """``item_limit``: search only the gallery's first ``item_limit`` items (a gallery version a case
        searched, ``engine.index.versions``: items are only ever appended); None searches every item.
        ``shortlist``: how many items a whole-gallery step takes from the index of a gallery past its IVF
        threshold (``engine.retrieval.search.shortlist``)."""
        if item_limit is not None and (isinstance(item_limit, bool) or not isinstance(item_limit, int | np.integer)
                                       or not 0 < item_limit <= len(gallery)):
            raise QueryInputError(f"item_limit must be a whole number in 1..{len(gallery)} (the gallery's items), "
                                  f"got {item_limit!r}")
        try:
            rho = check_rho(rho)
            self.attribute_weight, self.weight_origin = _session_weight(attribute_weight, gallery, encoder)
            self.attribute_sources = check_sources(attribute_sources)
            self.require_ratio = check_weight(require_ratio, "require_ratio")
            self.shortlist = check_shortlist(shortlist)
        except ValueError as exc:
            raise QueryInputError(str(exc)) from None
        if encoder is not None:
            encoder.check_gallery(gallery)
        self.gallery = gallery
        self.encoder = encoder
        self.rho = float(rho)
        self.relevance = relevance
        self.target_identity = target_identity
        self.item_limit = None if item_limit is None or item_limit == len(gallery) else int(item_limit)
        self._steps: tuple[StepResult, ...] = ()
        self._rejected: dict[str, None] = {}
        self._confirmed: dict[str, None] = {}

    # ------------------------------------------------------------------------------------------------ state

    @property
    def steps(self) -> tuple[StepResult, ...]:
        return self._steps

    @property
    def rejected(self) -> tuple[str, ...]:
        return tuple(self._rejected)

    @property
    def confirmed(self) -> tuple[str, ...]:
        return tuple(self._confirmed)

    def reject(self, item_id: str) -> None:
        """The item is not the person: it leaves the candidate set from the next step on."""
        self.gallery.row(item_id)
        self._confirmed.pop(item_id, None)
        self._rejected[item_id] = None

    def confirm(self, item_id: str) -> None:
        """The item is the person: it stays in every later candidate set and leads the final ranking."""
        self.gallery.row(item_id)
        self._rejected.pop(item_id, None)
        self._confirmed[item_id] = None

    def clear_mark(self, item_id: str) -> None:
        self._rejected.pop(item_id, None)
        self._confirmed.pop(item_id, None)

    def undo(self) -> StepResult:
        """Drop the last step and return it."""
        if not self._steps:
            raise SessionStateError("nothing to undo: the session has no steps")
        last = self._steps[-1]
        self._steps = self._steps[:-1]
        return last

    def branch(self, step_index: int) -> SearchSession:
        """A new session holding steps 0..step_index (and the current marks); this session is unchanged."""
        if not -len(self._steps) <= step_index < len(self._steps):
            raise SessionStateError(f"cannot branch from step {step_index}: the session has {len(self._steps)} steps")
        other = SearchSession.__new__(SearchSession)
        other.__dict__.update(self.__dict__)
        other._steps = self._steps[: step_index % len(self._steps) + 1]
        other._rejected = dict(self._rejected)
        other._confirmed = dict(self._confirmed)
        return other

    @property
    def size(self) -> int:
        """How many items the session searches: the gallery's, or its first ``item_limit``."""
        return len(self.gallery) if self.item_limit is None else self.item_limit

    def _mark_rows(self, marks: dict[str, None]) -> np.ndarray:
        """Rows of marked items within the items searched (a mark on a later item of the gallery is ignored)."""
        if not marks:
            return np.zeros(0, dtype=np.int64)
        rows = np.unique(np.asarray([self.gallery.row(i) for i in marks], dtype=np.int64))
        return rows if self.item_limit is None else rows[rows < self.item_limit]

    def candidates(self, whole_gallery: bool = False) -> np.ndarray | None:
        """Rows the next step will score (ascending), or None for the whole gallery; ``whole_gallery`` (a step
        query's, ``StepQuery.whole_gallery``): every item searched less the rejected ones, as before step 1."""
        rejected = self._mark_rows(self._rejected)
        if not self._steps or whole_gallery:
            if rejected.size == 0 and self.item_limit is None:
                return None
            rows = np.arange(self.size, dtype=np.int64)
        else:
            rows = self._steps[-1].kept
            confirmed = self._mark_rows(self._confirmed)
            if confirmed.size and not members(confirmed, rows).all():
                rows = np.union1d(rows, confirmed)
        return rows[~members(rows, rejected)] if rejected.size else rows

    # ------------------------------------------------------------------------------------------------ steps

    def step(self, query: StepQuery | str) -> StepResult:
        """Run one step (a plain string is a text query) and append it to the session."""
        started = time.perf_counter()
        if isinstance(query, str):
            query = StepQuery(text=query)
        if not isinstance(query, StepQuery):
            raise QueryInputError(f"a step needs a StepQuery or text, got {type(query).__name__}")
        level, level_source, level_rule = self._level(query)
        target = route(has_text=query.text is not None, has_image=query.sketch is not None or query.ir is not None,
                       example=query.example is not None, scenario=query.scenario, level=level,
                       available=self.gallery.views, outfit_changed=query.outfit_changed,
                       example_infrared=self._infrared_example(query))
        biometric = self._biometric_term(query) if target.encoding == "biometrics" else None
        searched = similarity_view(self.gallery.views) if biometric is not None else target.view
        vector = self._query_vector(query, searched, "example" if biometric is not None else target.encoding)
        if self.gallery.uses_shortlist and (not self._steps or query.whole_gallery):
            rows, scores = shortlist(self.gallery, searched, vector, self.shortlist, size=self.size,
                                     rejected=self._mark_rows(self._rejected),
                                     confirmed=self._mark_rows(self._confirmed), allowed=lambda: self._filter(query))
            candidates = rows
        else:
            candidates = self.candidates(query.whole_gallery)
            rows = np.arange(len(self.gallery), dtype=np.int64) if candidates is None else candidates
            scores = self.gallery.scores(searched, vector, candidates)
        if rows.size == 0:
            raise NoCandidatesError("no candidates are left for this step: undo, branch or clear some rejects")
        term = self._attribute_term(query)
        if biometric is not None:
            scores = biometric.scores(rows, scores)
        confirmed = self._mark_rows(self._confirmed)
        pinned = members(rows, confirmed) if confirmed.size else None
        passed = self._filter(query, rows)
        if term.active:
            agreement, failed = term.scores(rows)
            if term.weight:
                scores = (scores + term.weight * agreement).astype(np.float32)
            if failed.any():
                passed = ~failed if passed is None else passed & ~failed
        if passed is not None and pinned is not None:
            passed |= pinned  # confirmed items are never filtered out
        if passed is not None and not passed.all():
            filtered_rows, filtered_scores = rows[~passed], scores[~passed]
            rows, scores = rows[passed], scores[passed]
            pinned = None if pinned is None else pinned[passed]
        else:
            filtered_rows, filtered_scores = rows[:0], scores[:0]
        if rows.size == 0:
            raise NoCandidatesError("the step's camera/time/attribute filters leave no candidates")
        rule, value = self._keep_rule(query)
        kept, k = keep_mask(scores, pinned, **{rule: value})
        result = StepResult(
            index=len(self._steps),
            query=query,
            view=target.view,
            level=level,
            level_source=level_source,
            keep_rule=rule,
            keep_value=float(value),
            k=k,
            rows=frozen_array(rows, np.int64),
            scores=frozen_array(scores, np.float32),
            filtered_rows=frozen_array(filtered_rows, np.int64),
            filtered_scores=frozen_array(filtered_scores, np.float32),
            kept=frozen_array(rows[kept], np.int64),
            relevant=self._relevant(query, rows),
            seconds=time.perf_counter() - started,
            item_ids=self.gallery.ids,
            attribute_term=term if biometric is None else biometric,
            row_of=self.gallery.columns.row_of,
            level_rule=level_rule,
        )
        self._steps = (*self._steps, result)
        return result

    def _level(self, query: StepQuery) -> tuple[str | None, str | None, str | None]:
        """(level, where it came from, the encoder's rule when the encoder gave it)."""
        if query.level is not None:
            return query.level, "override", None
        if query.text is None:
            return None, None, None
        if self.encoder is None:
            raise QueryInputError("text queries need a query encoder (a loaded checkpoint)")
        level, rule = self.encoder.level_and_source(query.text)
        if level is None:
            return LEVELS[0], "default", None
        if level not in LEVELS:
            raise QueryInputError(f"the encoder returned level {level!r}, not one of {list(LEVELS)}")
        return level, "encoder", rule if rule in ("parser", "classifier") else None

    def _biometric_term(self, query: StepQuery) -> BiometricTerm:
        if query.example not in self.gallery:
            raise QueryInputError(f"example item {query.example!r} is not in the gallery {self.gallery.root}")
        return BiometricTerm.of_gallery(self.gallery, evidence_for(self.gallery), query.example)

    def _infrared_example(self, query: StepQuery) -> bool:
        """Whether a find-similar step's example is an infrared item."""
        if query.example is None or query.example not in self.gallery:
            return False
        columns = self.gallery.columns
        code = columns.modalities.lookup("ir")
        return code is not None and int(columns.modality[self.gallery.row(query.example)]) == code

    def _query_vector(self, query: StepQuery, view: str, encoding: str) -> np.ndarray:
        if encoding == "example":
            if query.example not in self.gallery:
                raise QueryInputError(f"example item {query.example!r} is not in the gallery {self.gallery.root}")
            vector = self.gallery.vectors(view, [self.gallery.row(query.example)])[0]
        elif encoding == "appearance":
            images = [load_image(image, what) for image, what in ((query.sketch, "sketch"), (query.ir, "IR"))
                      if image is not None]
            try:
                vector = encode_query(query_network(self.gallery.view_model(view), view), images)
            except AppearanceModelError as exc:
                raise GalleryMismatchError(f"{query.kind} query on {self.gallery.root}: {exc}") from None
        else:
            sketch = None if query.sketch is None else load_image(query.sketch, "sketch")
            ir = None if query.ir is None else load_image(query.ir, "IR")
            if self.encoder is None:
                raise QueryInputError(f"{query.kind} queries need a query encoder (a loaded checkpoint)")
            if encoding == "text":
                vector = self.encoder.encode_text(query.text)
            else:
                vector = self.encoder.encode_fused(query.text, sketch, ir)
        vector = np.asarray(vector, dtype=np.float32).reshape(-1)
        dim = self.gallery.views[view]
        if vector.shape[0] != dim:
            raise GalleryMismatchError(f"the query vector has dimension {vector.shape[0]}, view {view!r} has {dim}: "
                                       f"the checkpoint does not match the gallery")
        norm = float(np.linalg.norm(vector))
        if not np.isfinite(vector).all() or norm == 0:
            raise QueryInputError(f"the encoder returned an unusable vector for the {query.kind} query (NaN or zero)")
        return vector / norm

    def _attribute_term(self, query: StepQuery) -> AttributeTerm:
        """The step's stated attributes (parser), w, sources and requirements over the gallery's evidence."""
        from engine.retrieval.text.parser import parse

        stated = dict(parse(query.text).attributes) if query.text is not None else {}
        required = query.required
        for key, value in required.items():
            if value is None and key not in stated:
                raise QueryInputError(f"require {key}: the query does not state {key}"
                                      + (f" (it states {', '.join(stated)})" if stated else ""))
            if value is not None and stated.setdefault(key, value) != value:
                raise QueryInputError(f"require {key}={value}, but the query says {key}={stated[key]}")
        weight = self.attribute_weight if query.attribute_weight is None else float(query.attribute_weight)
        evidence = evidence_for(self.gallery) if stated else None
        recorded = self.gallery.ranking
        term = AttributeTerm(tuple(stated.items()), weight, self.attribute_sources, tuple(sorted(required)),
                             evidence, self.require_ratio,
                             reliability_for(None if recorded is None else recorded["domain"]))
        if required:
            covered = evidence.covered(self.attribute_sources) if evidence is not None else frozenset()
            missing = sorted(set(required) - covered)
            if missing:
                raise QueryInputError(f"require {', '.join(missing)}: the gallery {self.gallery.root} has no attribute "
                                      f"evidence for it (compute it with `lineup gallery rebuild --attributes`)")
        return term

    def _filter(self, query: StepQuery, rows: np.ndarray | None = None) -> np.ndarray | None:
        """Mask of the rows (None: every item searched) the camera/time filters let through; None without
        filters."""
        if query.cameras is None and query.time_range is None:
            return None
        rows = slice(0, self.size) if rows is None else rows
        passed = np.ones(self.size if isinstance(rows, slice) else rows.size, dtype=bool)
        columns = self.gallery.columns
        if query.cameras is not None:
            codes = [columns.cameras.lookup(name) for name in query.cameras]
            wanted = np.unique(np.asarray([c for c in codes if c is not None], dtype=np.int32))
            passed &= members(columns.camera[rows], wanted)
        if query.time_range is not None:
            start, end = query.time_range
            times = columns.time[rows]
            if start is not None:
                passed &= times >= start
            if end is not None:
                passed &= times <= end
        return passed

    def _keep_rule(self, query: StepQuery) -> tuple[str, float]:
        if query.k is not None:
            return "k", query.k
        if query.threshold is not None:
            return "threshold", query.threshold
        return "rho", query.rho if query.rho is not None else self.rho

    def _relevant(self, query: StepQuery, rows: np.ndarray) -> np.ndarray | None:
        if self.relevance is not None:
            flags = np.asarray(self.relevance(query, rows), dtype=bool)
            if flags.shape != rows.shape:
                raise QueryInputError(f"relevance returned shape {flags.shape} for {rows.size} candidates")
            return frozen_array(flags, bool)
        columns = self.gallery.columns
        target = query.target_identity or self.target_identity
        if target is not None:
            code = columns.identities.lookup(target)
        elif query.example is not None:
            code = int(columns.identity[self.gallery.row(query.example)])
            if code < 0:
                return None
        else:
            return None
        flags = np.zeros(rows.size, dtype=bool) if code is None else columns.identity[rows] == code
        return frozen_array(flags, bool)

    # ------------------------------------------------------------------------------------------------ result

    def final_ranking(self) -> FinalRanking:
        """All gallery items in the order of docs/methods.md §1.3 (see ``engine.retrieval.search.ranking``)."""
        if not self._steps:
            raise SessionStateError("the session has no steps yet")
        return final_ranking(self._steps, self.size, self._mark_rows(self._confirmed), self.gallery.ids)
