"""``WitnessQuestions``: the question to ask the witness next, for ``AppState`` (docs/methods.md §10).

Each step's keys the description has not stated are ranked off the UI thread (``engine.retrieval.search.
questions.questions_by_condition``: under every viewing condition of the witness prior at once), by the search
job after a step, by the re-run job after a reopened case's path has run (its head step), and for an older step
the analyst selects (``pending``: the window computes it in a worker). This part keeps each step's rankings and
offers the best question after the step on view, ranked for how the witness saw the person (the case's
``WorkingState.witness_saw``, saved with it; switching it re-ranks at once, no search), less the keys the witness
said "don't know" to on this branch.

Answers act only after the head step, where the next search continues from: after an older step the questions
are shown read-only, with a note naming the step the search continues from (branch there to ask them). An
answer clicked is remembered until the next step runs with its sentence appended, and that step records the
question, its gain, the condition it was ranked for and the answer (``StepInput.question``; ``answer`` None when
the analyst ran a step of their own while a question was shown). "Don't know" hides the key on the branch: it is
recorded, under ``unknown``, with the next step, and read back from every step on the active path, so a
reopened case keeps it.

A plain object (no Qt); says ``questions_changed`` through its ``Events`` (``app.state.events``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from app.state.case_session import CaseSession
from app.state.events import Events
from app.state.replay import path_to
from app.state.timeline_rows import step_label
from engine.kernel.ontology import ONTOLOGY
from engine.kernel.witness_prior import ORDINARY, UnknownConditionError, load_prior

if TYPE_CHECKING:
    from app.state.search_controls import SearchControls
    from app.state.step_history import StepHistory
    from engine.retrieval.search import SearchSession

#: Answer buttons offered under a question: the commonest values among the candidates.
ANSWERS = 3

#: A step's rankings: viewing condition (``WitnessPrior.choices``) → questions, best first.
Rankings = Mapping[str, Sequence[dict[str, Any]]]


def question_sentence(question: dict[str, Any], candidates: int | None) -> str:
    """"Was the top red, blue or black? — 41 % / 32 % / 18 % of the 210 candidates" (the shares of the values the
    question names)."""
    shares = list(question.get("values", {}).values())[:ANSWERS]
    if not shares:
        return question["question"]
    figures = " / ".join(f"{round(100 * share)} %" for share in shares)
    of = "" if candidates is None else f" of the {candidates:,} candidate{'s' if candidates != 1 else ''}"
    return f"{question['question']} — {figures}{of}"


def rank_after(session: SearchSession) -> dict[str, tuple[dict[str, Any], ...]]:
    """Every open key ranked after ``session``'s last step under every viewing condition (for a worker)."""
    from engine.retrieval.search.questions import questions_by_condition

    return questions_by_condition(session, top=None)


@dataclass(frozen=True)
class PendingRanking:
    """A step on view whose questions are not ranked yet: ``rank_after(session)`` in a worker, then
    ``WitnessQuestions.adopt_at(key, …)``."""

    key: tuple[int, int]  # (case id, step id)
    session: SearchSession  # a session ending at that step


class WitnessQuestions:
    """See the module docstring. ``steps``: the step on view and the sessions kept after steps (without it the
    head step is on view); ``controls``: where the viewing condition is kept with the case (without it,
    ordinary viewing for this run)."""

    def __init__(self, cases: CaseSession, events: Events, steps: StepHistory | None = None,
                 controls: SearchControls | None = None) -> None:
        self.cases, self.events, self.steps, self.controls = cases, events, steps, controls
        self._ranked: dict[tuple[int, int], dict[str, tuple[dict[str, Any], ...]]] = {}  # (case, step) → rankings
        self._unknown: dict[tuple[int, int | None], list[str]] = {}  # (case, step) → keys not known after it
        self._answer: tuple[str, str] | None = None  # (key, value) clicked, until the next step runs
        self._condition = ORDINARY  # without controls

    # ------------------------------------------------------------------------------ the viewing condition

    @property
    def condition(self) -> str:
        """How the witness saw the person (one of ``choices()``), as kept with the open case."""
        return self._condition if self.controls is None else self.controls.working.witness_saw

    @staticmethod
    def choices() -> list[tuple[str, str]]:
        """(name, short label) of every viewing condition of the witness prior, ordinary viewing first."""
        prior = load_prior()
        return [(name, prior.label(name)) for name in prior.choices]

    def set_condition(self, name: str) -> bool:
        """The witness saw the person as ``name`` says: the questions re-rank now (the rankings are kept per
        condition) and the case keeps it for its next steps and when it is reopened."""
        try:
            load_prior().condition_name(name)
        except UnknownConditionError as exc:
            self.events.emit("error", exc)
            return False
        if self.controls is None:
            self._condition = name
        else:
            self.controls.set_witness_saw(name)
        self.events.emit("questions_changed", None)
        return True

    # ------------------------------------------------------------------------------ steps and rankings

    def _head(self) -> tuple[int, int | None] | None:
        case = self.cases.case
        return None if case is None else (case.case.id, case.case.head_step_id)

    def viewed(self) -> int | None:
        """The step whose questions are on offer: the step on view (the head without ``steps``)."""
        case = self.cases.case
        if case is None:
            return None
        step_id = case.case.head_step_id if self.steps is None else self.steps.selected
        return step_id if step_id is not None and self.cases.step(step_id) is not None else None

    def read_only(self) -> bool:
        """The step on view is not the head: its questions are shown, not answered (the next search continues
        from the head)."""
        head, viewed = self._head(), self.viewed()
        return head is not None and viewed is not None and viewed != head[1]

    def note(self) -> str:
        """Why the questions on offer cannot be answered ("" when they can)."""
        if not self.read_only():
            return ""
        case = self.cases.case
        head = case.case.head_step_id
        where = "the start" if head is None else f"step {step_label(case, head)}"
        viewed = step_label(case, self.viewed())
        return (f"After step {viewed}, shown only: the next search continues from {where}. Branch from step "
                f"{viewed} to ask these.")

    def adopt(self, step_id: int, questions: Rankings) -> None:
        """The rankings the search job computed after step ``step_id`` of the open case; the answer given is
        spent."""
        head = self._head()
        self._answer = None
        if head is not None:
            self.adopt_at((head[0], step_id), questions)
        else:
            self.events.emit("questions_changed", None)

    def adopt_many(self, rankings: Mapping[int, Rankings]) -> None:
        """Rankings after several steps of the open case (a re-run path's head)."""
        head = self._head()
        if head is not None:
            for step_id, questions in rankings.items():
                self._ranked[(head[0], step_id)] = {k: tuple(v) for k, v in questions.items()}
        self.events.emit("questions_changed", None)

    def adopt_at(self, key: tuple[int, int], questions: Rankings) -> None:
        """Rankings after step ``key[1]`` of case ``key[0]`` (computed in a worker for a step on view)."""
        self._ranked[key] = {k: tuple(v) for k, v in questions.items()}
        self.events.emit("questions_changed", None)

    def pending(self) -> PendingRanking | None:
        """The step on view when its questions are not ranked yet and a session kept after it can rank them
        (None otherwise: ranked already, no step, or its path must be re-run first)."""
        head, viewed = self._head(), self.viewed()
        if head is None or viewed is None or (head[0], viewed) in self._ranked or self.steps is None:
            return None
        session = self.steps.snapshots.get(viewed)
        return None if session is None else PendingRanking((head[0], viewed), session)

    def hidden(self, step_id: int | None = None) -> frozenset[str]:
        """Keys the witness did not know on the branch of ``step_id`` (default the head): on the active path
        (recorded with its steps, and since its head) for a step on it, else on the path to that step."""
        head = self._head()
        if head is None:
            return frozenset()
        case = self.cases.case
        if step_id is None or step_id in case.active_path:
            keys = set(self._unknown.get(head, ()))
            steps = case.active_steps
        else:
            keys, steps = set(), [case.step(i) for i in path_to(case, step_id)]
        for step in steps:
            keys.update((step.question or {}).get("unknown", ()))
        return frozenset(keys)

    def ranked(self) -> tuple[dict[str, Any], ...]:
        """The ranking after the step on view, for the witness's viewing condition, less the hidden keys (empty
        before a step, or while it is not ranked in this run of the app)."""
        head, viewed = self._head(), self.viewed()
        if head is None or viewed is None:
            return ()
        rankings = self._ranked.get((head[0], viewed), {})
        hidden = self.hidden(viewed)
        return tuple(q for q in rankings.get(self.condition, ()) if q["key"] not in hidden)

    def current(self) -> dict[str, Any] | None:
        """The question to ask now, or None."""
        ranked = self.ranked()
        return ranked[0] if ranked else None

    def sentence(self) -> str:
        """The current question as shown under the query box ("" without one)."""
        question = self.current()
        if question is None:
            return ""
        return question_sentence(question, self.cases.case.step(self.viewed()).candidates_after)

    def answers(self) -> list[str]:
        """The values offered as one-click answers to the current question."""
        question = self.current()
        return [] if question is None else list(question.get("values", {}))[:ANSWERS]

    # ------------------------------------------------------------------------------ answers

    def answer(self, key: str, value: str) -> bool:
        """The witness answered ``key = value`` to the current question (the next step records it)."""
        question = self.current()
        if self.read_only():
            self.events.emit("error", self.note())
            return False
        if question is None or question["key"] != key or not ONTOLOGY.is_valid(key, value):
            self.events.emit("error", f"{key} = {value} does not answer the question on screen")
            return False
        self._answer = (key, value)
        return True

    def dont_know(self, key: str) -> bool:
        """The witness does not know ``key``: it is not asked again on this branch."""
        head = self._head()
        if head is None or key not in ONTOLOGY.attributes:
            self.events.emit("error", f"cannot hide {key!r}: no case is open or it is not an attribute")
            return False
        if self.read_only():
            self.events.emit("error", self.note())
            return False
        unknown = self._unknown.setdefault(head, [])
        if key not in unknown:
            unknown.append(key)
        if self._answer is not None and self._answer[0] == key:
            self._answer = None
        self.events.emit("questions_changed", None)
        return True

    def record_for_step(self) -> dict[str, Any] | None:
        """What the next step records: the question shown after the head (with the condition it was ranked for,
        and the answer clicked, else None) and the keys not known since the head; None when neither."""
        head = self._head()
        question = None if self.read_only() else self.current()
        unknown = [] if head is None else list(self._unknown.get(head, ()))
        if question is None and not unknown:
            return None
        record: dict[str, Any] = {}
        if question is not None:
            answered = self._answer is not None and self._answer[0] == question["key"]
            record.update(key=question["key"], question=question["question"], gain=question["gain"],
                          answer=self._answer[1] if answered else None, condition=self.condition)
        if unknown:
            record["unknown"] = unknown
        return record


__all__ = ["ANSWERS", "PendingRanking", "WitnessQuestions", "question_sentence", "rank_after"]
