"""``CaseSession``: the case database and the case open in it, for ``AppState`` (docs/architecture.md).

A plain object (no Qt): it opens the store, loads, creates and re-reads cases, writes through the store
and answers what the open case holds (a step, the marks on a gallery, the record of a gallery, the plan to
re-run a path). It raises ``ActionRefused`` (a ``ValueError`` whose message says why and what to do) when an
action needs a store or a case it does not have, and passes the store's own ``ValueError`` through; the
state turns both into its ``error`` message. ``refresh`` re-reads the case and says so through its
``Events`` (``app.state.events``): ``case_changed``, or ``error`` when the store refuses.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.state.events import Events
from app.state.replay import ReplayStep, path_to, replay_plan
from app.store import CaseState, CaseStore, CaseSummary, StepState


class ActionRefused(ValueError):
    """An action the app's state refuses as things stand (no case open, a closed case, a job running)."""


def checked(events: Events, *checks: Callable[[], object]) -> bool:
    """Run ``checks`` in turn; on the first ``ActionRefused`` fire it as an ``error`` event and return False."""
    try:
        for check in checks:
            check()
    except ActionRefused as exc:
        events.emit("error", exc)
        return False
    return True


class CaseSession:
    """See the module docstring. ``gallery_id``: the open case's record of the gallery being searched."""

    def __init__(self, events: Events | None = None) -> None:
        self.events = events or Events()
        self.store: CaseStore | None = None
        self.owns_store = False
        self.case: CaseState | None = None
        self.gallery_id: int | None = None

    @property
    def case_id(self) -> int | None:
        return None if self.case is None else self.case.case.id

    @property
    def head_step_id(self) -> int | None:
        return None if self.case is None else self.case.case.head_step_id

    def require_store(self) -> CaseStore:
        if self.store is None:
            raise ActionRefused("Open a case database first")
        return self.store

    def require_case(self) -> CaseState:
        if self.store is None or self.case is None:
            raise ActionRefused("Open or create a case first")
        return self.case

    def use_store(self, store: CaseStore, *, owned: bool) -> None:
        """Search cases in ``store`` from now on (``owned``: closed by ``close_store``); no case is open."""
        self.forget_case()
        if self.owns_store and self.store is not None and self.store is not store:
            self.store.close()
        self.store, self.owns_store = store, owned

    def close_store(self) -> None:
        if self.owns_store and self.store is not None:
            self.store.close()
        self.store = None

    def cases(self) -> list[CaseSummary]:
        """Summaries of the store's cases (empty without a store)."""
        return [] if self.store is None else self.store.list_cases()

    def create(self, title: str, description: str = "") -> int:
        return self.require_store().create_case(title, description)

    def load(self, case_id: int) -> CaseState:
        """Read ``case_id`` from the store and make it the open case (no gallery recorded yet)."""
        case = self.require_store().load_case(case_id)
        self.forget_case()
        self.case = case
        return case

    def forget_case(self) -> None:
        self.case = None
        self.gallery_id = None

    def reload(self) -> CaseState:
        """Read the open case back from the store (after a write)."""
        self.case = self.require_store().load_case(self.require_case().case.id)
        return self.case

    def refresh(self) -> bool:
        """``reload`` and fire ``case_changed``; False after firing ``error`` with the store's refusal."""
        try:
            self.reload()
        except ValueError as exc:
            self.events.emit("error", exc)
            return False
        self.events.emit("case_changed", self.case)
        return True

    def adopt(self, case: CaseState | None) -> bool:
        """Take ``case`` as read back by a worker when it is still the open case; False otherwise."""
        if case is None or case.case.id != self.case_id:
            return False
        self.case = case
        return True

    def write(self, action: Callable[[CaseStore, int], Any]) -> None:
        """``action(store, case id)`` on the open case, then read the case back."""
        case = self.require_case()
        action(self.store, case.case.id)
        self.reload()

    def step(self, step_id: int) -> StepState | None:
        if self.case is None:
            return None
        try:
            return self.case.step(step_id)
        except KeyError:
            return None

    def marks(self) -> dict[str, str]:
        """{item id: state} of the open case on the current gallery."""
        if self.case is None or self.gallery_id is None:
            return {}
        return {m.item_id: m.state for m in self.case.marks if m.gallery_id == self.gallery_id}

    def known_gallery_id(self, identity: dict[str, Any] | None) -> int | None:
        """The open case's id of the gallery with ``identity`` (path and fingerprint), or None."""
        if self.case is None or identity is None:
            return None
        for use in self.case.galleries:
            if (use.path, use.gallery_fingerprint) == (identity["path"], identity["gallery_fingerprint"]):
                return use.id
        return None

    def register_gallery(self, identity: dict[str, Any]) -> None:
        """Find or record the gallery with ``identity`` in the open case (``gallery_id``). Raises the store's
        ``ValueError`` when it cannot be recorded (a closed case can still view a gallery it knows)."""
        self.gallery_id = self.known_gallery_id(identity)
        if self.gallery_id is not None:
            return
        self.gallery_id = self.require_store().add_gallery(self.require_case().case.id, **identity)
        self.reload()

    def plan(self, head: int | None) -> list[ReplayStep]:
        """The steps to re-run to reach ``head`` on the current gallery, with the marks of their time."""
        if head is None:
            return []
        case = self.require_case()
        audit = self.require_store().audit_trail(case.case.id)
        return replay_plan(case, audit, self.gallery_id, path_to(case, head))

