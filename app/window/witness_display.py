"""``QuestionDisplay``: the witness question in the window (docs/methods.md §10): the question bar under the
query box follows the step on view (``app.state.witness_questions``), its "Seen:" combo sets how the witness saw
the person (the open case keeps it), and an answer clicked joins the description and runs the step.

A step on view whose questions were not ranked in this run (an older step selected, a head reached by undo or
branch) is ranked in a worker (``app.workers.run_in_worker``: the gallery's evidence is read, which can take
longer than the UI thread may be held); selecting another step cancels it and a stale result is dropped. Each
step's rankings are kept per step, under every viewing condition, so choosing another condition re-ranks at
once without a worker.
"""

from __future__ import annotations

from PySide6.QtCore import QTimer

from app.state import AppState
from app.state.witness_questions import PendingRanking, rank_after
from app.views.query_panel import QueryPanel
from app.window.messages import Messages
from app.workers import WorkerHandle, run_in_worker


class QuestionDisplay:
    """Follows ``state``'s witness questions, step on view and case into ``panel``'s question bar."""

    def __init__(self, state: AppState, panel: QueryPanel, messages: Messages) -> None:
        self.state, self.panel, self.messages = state, panel, messages
        self.ranking: WorkerHandle | None = None  # the worker ranking the step on view, while it runs
        self._ranking_key: tuple[int, int] | None = None
        bar = panel.question_bar
        bar.answered.connect(self.answered)
        bar.unknown.connect(state.questions.dont_know)
        bar.condition_chosen.connect(state.questions.set_condition)
        for signal in (state.questions_changed, state.case_changed, state.session_changed,
                       state.selected_step_changed, state.working_state_changed):
            signal.connect(self.refresh)
        self.refresh()

    def refresh(self, _=None) -> None:
        """Show the question on offer after the step on view (ranking it in a worker first when needed)."""
        questions, bar = self.state.questions, self.panel.question_bar
        bar.set_conditions(questions.choices(), questions.condition)
        pending = questions.pending()
        if pending is not None:
            self._rank(pending)
        else:  # the step on view is ranked, or cannot be: a ranking of another step is no longer wanted
            self.cancel()
        question = questions.current()
        bar.show_question(None if question is None else question["key"], questions.sentence(), questions.answers(),
                          questions.note())
        if question is not None:  # scrolled into view once laid out: a short window hides it under the chips
            QTimer.singleShot(0, lambda: self.panel.body_scroll.ensureWidgetVisible(bar, 0, 8))

    def _rank(self, pending: PendingRanking) -> None:
        if self.ranking is not None and self._ranking_key == pending.key:
            return  # already ranking it
        self.cancel()
        key, session = pending.key, pending.session

        def rank(job):
            job.check()
            return rank_after(session)

        def arrived(rankings) -> None:
            if handle is self.ranking:
                self.ranking, self._ranking_key = None, None
                self.state.questions.adopt_at(key, rankings)

        def failed(message: str) -> None:
            if handle is self.ranking:
                self.ranking, self._ranking_key = None, None
                self.messages.error(f"The questions after this step could not be ranked: {message}")

        handle = self.ranking = run_in_worker(rank, on_result=arrived, on_error=failed,
                                              name="Ranking the witness questions")
        self._ranking_key = key

    def cancel(self) -> None:
        """Stop ranking the step on view (its result, should it still arrive, is dropped)."""
        if self.ranking is not None:
            self.ranking.cancel()
        self.ranking, self._ranking_key = None, None

    def answered(self, key: str, value: str) -> None:
        """An answer button: the answer's sentence joins the description and the step runs."""
        if self.state.questions.answer(key, value):
            self.panel.add_attribute(key, value)
            self.panel.request_search(force=True)
