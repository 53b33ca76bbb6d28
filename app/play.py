"""Replaying a trainer demo script through the real window: each action goes through the
same widgets and signals an analyst's clicks and keys use (the query panel's search button, the grid's
mark keys, the timeline's undo and branch), one at a time, waiting for each step's worker to finish and
then ``pace_ms`` so a class can follow. ``finished(ok, message)`` ends the play; a failed step, an error
message from the app or an action that never completes stops it with the reason.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QElapsedTimer, QItemSelectionModel, QObject, QTimer, Signal

from app.jobs import ExportReportJob
from app.state.play_script import DONT_KNOW, TRUTH, PlayAction, PlayScript
from app.views.results_model import CONFIRMED, REJECTED

#: An action (a search step, an undo that re-runs a chain) that has not finished after this long fails.
ACTION_TIMEOUT_MS = 300_000


class ScriptPlayer(QObject):
    """Plays ``script`` on ``window`` (a ``MainWindow`` with a case and a gallery open)."""

    action_started = Signal(int, str)  # index (0-based), description
    finished = Signal(bool, str)  # ok, message

    def __init__(self, window, script: PlayScript, pace_ms: int | None = None, parent: QObject | None = None):
        super().__init__(parent or window)
        self.window = window
        self.state = window.state
        self.script = script
        self.pace_ms = script.pace_ms if pace_ms is None else pace_ms
        self.index = -1
        self.done = False
        self._waiting = False
        self._errors: list[str] = []
        self._steps_before = 0
        self._last_confirmed: str | None = None  # the best-ranked item of the script's latest confirm
        self._watchdog = QTimer(self)
        self._watchdog.setSingleShot(True)
        self._watchdog.timeout.connect(self._timed_out)
        self.state.error.connect(self._error)
        self.state.busy_changed.connect(self._busy_changed)

    # -------------------------------------------------------------------------------------------- driving

    def start(self) -> None:
        QTimer.singleShot(0, self._next)

    def _next(self) -> None:
        if self.done:
            return
        self.index += 1
        if self.index >= len(self.script.actions):
            self._finish(True, f"played {len(self.script.actions)} actions of “{self.script.title}”")
            return
        action = self.script.actions[self.index]
        if action.kind == "pause":  # a trainer's pause; skipped when playing fast
            QTimer.singleShot(action.count if self.pace_ms else 0, self._next)
            return
        self.action_started.emit(self.index, action.describe())
        self.window.statusBar().showMessage(f"Demo {self.index + 1}/{len(self.script.actions)}: "
                                            f"{action.describe()}", max(self.pace_ms, 1500))
        self._errors.clear()
        try:
            started_job = self._perform(action)
        except PlayError as exc:
            self._finish(False, f"action {self.index + 1} ({action.describe()}): {exc}")
            return
        if self._errors:
            self._finish(False, f"action {self.index + 1} ({action.describe()}): {self._errors[0]}")
        elif started_job or self.state.busy:
            self._waiting = True
            self._watchdog.start(ACTION_TIMEOUT_MS)
        else:
            self._after_action()

    def _busy_changed(self, busy: bool) -> None:
        if busy or not self._waiting or self.done:
            return
        self._waiting = False
        self._watchdog.stop()
        action = self.script.actions[self.index]
        if self._errors:
            self._finish(False, f"action {self.index + 1} ({action.describe()}): {self._errors[0]}")
            return
        if action.kind in ("search", "follow", "answer") and self._step_count() <= self._steps_before:
            self._finish(False, f"action {self.index + 1} ({action.describe()}): the step was not recorded")
            return
        if action.kind == "search" and action.expect is not None:
            try:
                kept = len(self._relevant(kept_only=True))
            except PlayError as exc:
                self._finish(False, f"action {self.index + 1} ({action.describe()}): {exc}")
                return
            if kept < action.expect:
                self._finish(False, f"action {self.index + 1} ({action.describe()}): expected at least "
                                    f"{action.expect} true match(es) kept, the step kept {kept}")
                return
        self._after_action()

    def _after_action(self) -> None:
        QTimer.singleShot(self.pace_ms if self.pace_ms else 0, self._next)

    def _error(self, message: str) -> None:
        if not self.done and self.index >= 0:
            self._errors.append(message)

    def _timed_out(self) -> None:
        self._finish(False, f"action {self.index + 1} did not finish within {ACTION_TIMEOUT_MS // 1000} s")

    def _finish(self, ok: bool, message: str) -> None:
        if self.done:
            return
        self.done = True
        self._watchdog.stop()
        self.state.error.disconnect(self._error)
        self.state.busy_changed.disconnect(self._busy_changed)
        self.finished.emit(ok, message)

    # -------------------------------------------------------------------------------------------- actions

    def _step_count(self) -> int:
        case = self.state.case
        return 0 if case is None else len(case.steps)

    def _perform(self, action: PlayAction) -> bool:
        """Do one action through the window; True when it started a worker to wait for."""
        if action.kind == "search":
            return self._search(action)
        if action.kind in ("confirm", "reject"):
            ids = self._ids_at_ranks(action.ranks)
            self._mark(ids, CONFIRMED if action.kind == "confirm" else REJECTED)
            return False
        if action.kind == "confirm_relevant":
            found, ids = self._relevant_in_top(action.count)
            if found < (action.expect or 0):
                raise PlayError(f"expected at least {action.expect} true match{'es' if action.expect != 1 else ''} "
                                f"among the top {action.count}, found {found} (state \"expect_at_least\": 0 "
                                "when the demo means to show a miss)")
            if action.at_most is not None:
                ids = ids[:action.at_most]
            if ids:
                self._mark(ids, CONFIRMED)
            return False
        if action.kind == "follow":
            return self._follow(action)
        if action.kind == "show":  # the only pane a script shows: the sightings timeline
            self.window.panes.focus_sightings()
            return False
        if action.kind == "note":
            if self.window.add_note(action.text) is None:
                raise PlayError("the note was not saved")
            return False
        if action.kind == "undo":
            self.window.timeline.undo_action.trigger()
            return False
        if action.kind == "branch":
            path = self.state.case.active_path if self.state.case is not None else ()
            if action.count > len(path):
                raise PlayError(f"the active chain has {len(path)} steps, not {action.count}")
            self.window.timeline.branch_requested.emit(path[action.count - 1])
            return False
        if action.kind == "answer":
            return self._answer(action)
        raise PlayError(f"unknown action {action.kind!r}")

    def _answer(self, action: PlayAction) -> bool:
        """Answer the witness question under the query box through its buttons (the true value: the commonest
        value of the key among the target's items); True when the answer started a step."""
        bar = self.window.query_panel.question_bar
        key = bar.key
        if key is None or bar.dont_know_button is None:
            raise PlayError("no witness question is offered (the gallery has no attribute evidence, or no step ran)")
        value = self._true_value(key) if action.text == TRUTH else action.text
        if value is None or action.text == DONT_KNOW:
            bar.dont_know_button.click()
            return False
        self._steps_before = self._step_count()
        button = bar.answer_buttons.get(value)
        if button is not None:
            button.click()
        else:  # the witness names a value the candidates rarely read: said in words, as a typed answer
            bar.answered.emit(key, value)
        return True

    def _true_value(self, key: str) -> str | None:
        gallery, target = self.state.gallery, self.state.target_identity
        if gallery is None or target is None:
            raise PlayError("answering truthfully needs the script's \"target\" identity in a demo world")
        code = gallery.columns.identities.lookup(target)
        rows = [] if code is None else [int(r) for r in (gallery.columns.identity == code).nonzero()[0]]
        values = [v for v in (gallery.item(r).attributes.get(key) for r in rows) if v is not None]
        return max(dict.fromkeys(values), key=values.count) if values else None

    def _search(self, action: PlayAction) -> bool:
        panel = self.window.query_panel
        panel.set_modalities(text=action.text is not None, sketch=action.sketch is not None,
                             ir=action.ir is not None)
        panel.set_text(action.text or "")
        if action.sketch is not None:
            if not panel.sketch.load_file(action.sketch):
                raise PlayError(f"the sketch {action.sketch} could not be loaded")
        else:
            panel.sketch.canvas.clear()
        if action.ir is not None:
            if not panel.ir_zone.load(action.ir):
                raise PlayError(f"the IR image {action.ir} could not be loaded")
        else:
            panel.ir_zone.clear()
        panel.set_level_override(action.level)
        panel.set_keep(action.keep)
        if not panel.search_button.isEnabled():
            raise PlayError(panel.search_button.toolTip() or "searching is not available")
        self._steps_before = self._step_count()
        panel.search_button.click()
        if not panel.warning_box.isHidden():  # a scripted query is meant as written: say why, then run it
            self.window.show_message(f"Script step run as written: {panel.warning.text()}")
            panel.run_anyway_button.click()
        return True

    def _follow(self, action: PlayAction) -> bool:
        """Select the item the script confirmed last and follow its sighting (Search → Follow to next camera)."""
        if self._last_confirmed is None:
            raise PlayError("follow needs an item the script confirmed before it")
        if not self.window.results.select_item(self._last_confirmed):
            raise PlayError(f"the confirmed item {self._last_confirmed} is not in the results grid to follow")
        steps = self.window.steps
        steps.set_follow_window(action.hours * 3600.0)
        self.window.sightings.set_follow_window(action.hours * 3600.0)
        self._steps_before = self._step_count()
        if steps.follow_selected() is None:
            raise PlayError(f"following {self._last_confirmed} did not start (the status bar says why)")
        return True

    def _visible_ids(self) -> list[str]:
        return self.window.results.model.visible_ids()

    def _ids_at_ranks(self, ranks: tuple[int, ...]) -> list[str]:
        ids = self._visible_ids()
        missing = [r for r in ranks if r > len(ids)]
        if missing:
            raise PlayError(f"the grid shows {len(ids)} items; there is no rank {missing[0]}")
        return [ids[r - 1] for r in ranks]

    def _relevant(self, kept_only: bool = False) -> set[str]:
        results = self.window.results.model.results
        if results.relevant is None:
            raise PlayError("this gallery has no ground truth (expectations and confirm_relevant need a demo world)")
        flags = results.relevant if not kept_only or results.kept is None else results.relevant & results.kept
        return {item for item, flag in zip(results.ids, flags, strict=True) if flag}

    def _relevant_in_top(self, count: int) -> tuple[int, list[str]]:
        """(true matches among the top ``count``, those of them not marked yet)."""
        relevant = self._relevant()
        found = [item for item in self._visible_ids()[:count] if item in relevant]
        marked = self.state.marks  # an explicit confirm or reject earlier in the script stands
        return len(found), [item for item in found if item not in marked]

    def _mark(self, ids: list[str], mark: str) -> None:
        """Select the items in the grid and press the mark key, as an analyst would."""
        results = self.window.results
        results.select_item(ids[0])
        selection = results.grid.selectionModel()
        for item in ids[1:]:
            row = results.model.row_of(item)
            selection.select(results.model.index(row), QItemSelectionModel.SelectionFlag.Select)
        results.grid.mark_requested.emit(mark)
        if mark == CONFIRMED:
            self._last_confirmed = ids[0]


class PlayError(RuntimeError):
    """An action that cannot be done on the window as it stands."""


class PlayDirector(QObject):
    """``lineup app --play``: waits until the window has a gallery and is idle, plays the script in a new case,
    then exports the report, saves a screenshot and quits, as asked. ``exit_code`` is 0 after a clean play."""

    POLL_MS = 100

    def __init__(self, window, script: PlayScript, *, report: Path | None = None, screenshot: Path | None = None,
                 quit_after: bool = False, fast: bool = False, blur_faces: bool = False,
                 echo=None, parent: QObject | None = None) -> None:
        super().__init__(parent or window)
        self.window = window
        self.script = script
        self.report = report
        self.screenshot = screenshot
        self.quit_after = quit_after
        self.fast = fast
        self.blur_faces = blur_faces
        self.echo = echo or (lambda text: print(text, flush=True))
        self.exit_code: int | None = None
        self.player: ScriptPlayer | None = None
        self.case_id: int | None = None
        self.started_at = time.monotonic()
        self._poll = QTimer(self)
        self._poll.timeout.connect(self._check_ready)
        window.state.error.connect(self._early_error)

    def start(self) -> None:
        self._poll.start(self.POLL_MS)

    def _early_error(self, message: str) -> None:
        """An error before the play starts (no gallery, demo preparation failed) ends a --quit run."""
        if self.player is None and self.quit_after and self.window.state.gallery is None and not \
                self.window.state.busy:
            self._end(False, f"the demo could not start: {message}")

    def _check_ready(self) -> None:
        state = self.window.state
        if state.gallery is None or state.busy or self.window.busy:
            return
        self._poll.stop()
        self.window.state.error.disconnect(self._early_error)
        self.case_id = state.new_case(self.script.title, self.script.description)
        if self.case_id is None:
            self._end(False, "the demo case could not be created")
            return
        if self.script.target is not None and not state.set_target_identity(self.script.target):
            self._end(False, f"the script's target identity {self.script.target!r} is not in this gallery")
            return
        self.echo(f"playing {self.script.source.name} in case {self.case_id} "
                  f"(gallery ready after {time.monotonic() - self.started_at:.1f} s)")
        self.player = ScriptPlayer(self.window, self.script, pace_ms=0 if self.fast else None, parent=self)
        self.player.action_started.connect(lambda i, text: self.echo(f"  {i + 1}. {text}"))
        self.player.finished.connect(self._played)
        self.player.start()

    def _played(self, ok: bool, message: str) -> None:
        self.echo(("done: " if ok else "stopped: ") + message)
        if ok and self.report is not None:
            self._export_report(self._shoot)
        else:
            self._shoot(ok)

    def _shoot(self, ok: bool) -> None:
        """Save the screenshot when asked, then end."""
        if self.screenshot is None:
            self._end(ok, None)
            return
        waited = QElapsedTimer()
        waited.start()

        def shoot_when_drawn() -> None:  # the grid's thumbnails load in workers: wait for them (at most 10 s)
            if not self.window.results.loader.idle and waited.elapsed() < 10_000:
                QTimer.singleShot(50, shoot_when_drawn)
                return
            self._save_screenshot()
            self._end(ok, None)

        QTimer.singleShot(50, shoot_when_drawn)

    def _export_report(self, then: Callable[[bool], None]) -> None:
        """Export the report as the window's job would (``ExportReportJob`` on the state's runner) and call
        ``then(ok)`` once it has finished and the runner is idle."""
        job = ExportReportJob(self.window.state.store.path, self.case_id, self.report, blur_faces=self.blur_faces)
        written: list = []
        handle = self.window.state.jobs.start(job, written.append)
        if handle is None:
            self.echo(f"the report could not be written: {self.window.state.jobs.refusal()}")
            then(False)
            return
        handle.error.connect(self.echo)
        handle.cancelled.connect(lambda: self.echo(job.cancelled_message))

        def finished() -> None:
            if written:
                result = written[0]
                pages = "" if result.pages is None else f" ({result.pages} pages)"
                self.echo(f"report: {result.report_path}{pages}; manifest {result.manifest_path}")
            then(bool(written))

        handle.finished.connect(finished)  # after the runner's own: it is idle again by then

    def _save_screenshot(self) -> None:
        """The window, and beside it (``NAME-distribution.png``) the distribution panel alone."""
        self.window.repaint()
        panel = self.screenshot.with_name(f"{self.screenshot.stem}-distribution{self.screenshot.suffix}")
        for widget, path in ((self.window, self.screenshot), (self.window.distribution, panel)):
            if widget.grab().save(str(path)):
                self.echo(f"screenshot: {path}")
            else:
                self.echo(f"the screenshot could not be saved to {path}")

    def _end(self, ok: bool, message: str | None) -> None:
        if message:
            self.echo(message)
        self._poll.stop()
        self.exit_code = 0 if ok else 1
        if self.quit_after:
            from PySide6.QtWidgets import QApplication

            QTimer.singleShot(0, lambda: QApplication.instance().exit(self.exit_code))
