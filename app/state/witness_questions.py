"""``WitnessQuestions``: the question to ask the witness next, for ``AppState`` (docs/methods.md §10).

After each step the search job ranks every key the description has not stated (``engine.retrieval.search.
questions``, off the UI thread); this part keeps each step's ranking and offers the best question for the head
step whose key the witness has not said "don't know" to on this branch. An answer clicked is remembered until
the next step runs with its sentence appended, and that step records the question, its gain and the answer
(``StepInput.question``; ``answer`` None when the analyst ran a step of their own while a question was shown).
"Don't know" hides the key on the branch: it is recorded, under ``unknown``, with the next step, and read back
from every step on the active path, so a reopened case keeps it.

A plain object (no Qt); says ``questions_changed`` through its ``Events`` (``app.state.events``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from app.state.case_session import CaseSession
from app.state.events import Events
from engine.kernel.ontology import ONTOLOGY

#: Answer buttons offered under a question: the commonest values among the candidates.
ANSWERS = 3


def question_sentence(question: dict[str, Any], candidates: int | None) -> str:
    """"Was the top red, blue or black? — 41 % / 32 % / 18 % of the 210 candidates" (the shares of the values the
    question names)."""
    shares = list(question.get("values", {}).values())[:ANSWERS]
    if not shares:
        return question["question"]
    figures = " / ".join(f"{round(100 * share)} %" for share in shares)
    of = "" if candidates is None else f" of the {candidates:,} candidate{'s' if candidates != 1 else ''}"
    return f"{question['question']} — {figures}{of}"


class WitnessQuestions:
    """See the module docstring."""

    def __init__(self, cases: CaseSession, events: Events) -> None:
        self.cases, self.events = cases, events
        self._ranked: dict[tuple[int, int], tuple[dict[str, Any], ...]] = {}  # (case, step) → ranking after it
        self._unknown: dict[tuple[int, int | None], list[str]] = {}  # (case, step) → keys not known after it
        self._answer: tuple[str, str] | None = None  # (key, value) clicked, until the next step runs

    def _head(self) -> tuple[int, int | None] | None:
        case = self.cases.case
        return None if case is None else (case.case.id, case.case.head_step_id)

    def adopt(self, step_id: int, questions: Sequence[dict[str, Any]]) -> None:
        """The ranking the job computed after step ``step_id`` of the open case; the answer given is spent."""
        head = self._head()
        if head is not None:
            self._ranked[(head[0], step_id)] = tuple(questions)
        self._answer = None
        self.events.emit("questions_changed", None)

    def hidden(self) -> frozenset[str]:
        """Keys the witness did not know on the active path (recorded with its steps, and since its head)."""
        head = self._head()
        if head is None:
            return frozenset()
        keys = set(self._unknown.get(head, ()))
        case = self.cases.case
        for step in case.active_steps:
            keys.update((step.question or {}).get("unknown", ()))
        return frozenset(keys)

    def ranked(self) -> tuple[dict[str, Any], ...]:
        """The head step's ranking less the hidden keys (empty before a step, or when it was not computed in this
        run of the app)."""
        head = self._head()
        if head is None or head[1] is None:
            return ()
        hidden = self.hidden()
        return tuple(q for q in self._ranked.get(head, ()) if q["key"] not in hidden)

    def current(self) -> dict[str, Any] | None:
        """The question to ask now, or None."""
        ranked = self.ranked()
        return ranked[0] if ranked else None

    def sentence(self) -> str:
        """The current question as shown under the query box ("" without one)."""
        question = self.current()
        if question is None:
            return ""
        step = self.cases.case.step(self.cases.case.case.head_step_id)
        return question_sentence(question, step.candidates_after)

    def answers(self) -> list[str]:
        """The values offered as one-click answers to the current question."""
        question = self.current()
        return [] if question is None else list(question.get("values", {}))[:ANSWERS]

    def answer(self, key: str, value: str) -> bool:
        """The witness answered ``key = value`` to the current question (the next step records it)."""
        question = self.current()
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
        unknown = self._unknown.setdefault(head, [])
        if key not in unknown:
            unknown.append(key)
        if self._answer is not None and self._answer[0] == key:
            self._answer = None
        self.events.emit("questions_changed", None)
        return True

    def record_for_step(self) -> dict[str, Any] | None:
        """What the next step records: the question shown (with the answer clicked, else None) and the keys not
        known since the head; None when neither."""
        head = self._head()
        question = self.current()
        unknown = [] if head is None else list(self._unknown.get(head, ()))
        if question is None and not unknown:
            return None
        record: dict[str, Any] = {}
        if question is not None:
            answered = self._answer is not None and self._answer[0] == question["key"]
            record.update(key=question["key"], question=question["question"], gain=question["gain"],
                          answer=self._answer[1] if answered else None)
        if unknown:
            record["unknown"] = unknown
        return record
