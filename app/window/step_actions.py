"""``StepActions``: the step actions that need the window: apply a cut dragged on the plot (asking first when it
falls above confirmed items), undo and branch with their messages, find similar to the item in focus, follow the
sighting of the confirmed item in focus to the next camera, and the ground-truth identity. Each acts through the
``AppState``; refusals are said through the window's ``Messages``."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtWidgets import QApplication, QInputDialog, QMessageBox, QWidget

from app.state import AppState, KeepRule
from app.state.follow import FOLLOW_WINDOW, NotASighting, confirmed_sighting, duration
from app.state.item_label import item_label
from app.state.timeline_rows import step_label
from app.views.detail import DetailPane
from app.views.distribution import DistributionPanel
from app.views.results import ResultsView
from app.views.timeline import StepTimeline
from app.window.messages import Messages
from app.workers import WorkerHandle


class StepActions:
    """Step actions on ``state`` from the window's views; dialogs open over ``parent``."""

    def __init__(self, parent: QWidget, state: AppState, messages: Messages, *, results: ResultsView,
                 detail: DetailPane, distribution: DistributionPanel, timeline: StepTimeline) -> None:
        self.parent = parent
        self.state = state
        self.messages = messages
        self.results = results
        self.detail = detail
        self.distribution = distribution
        self.timeline = timeline
        #: Seconds before and after a sighting that "Follow to next camera" looks in.
        self.follow_window = FOLLOW_WINDOW
        #: Asked when a cut would fall above confirmed items: (items, rule) -> "keep" | "clear" | "cancel".
        self.ask_confirmed_cut: Callable[[list[tuple[str, float]], KeepRule], str] = self._ask_confirmed_cut

    def apply_cut(self, threshold: float) -> WorkerHandle | None:
        """Run the shown step again keeping scores ≥ ``threshold`` (the cut dragged on its plot). A cut above
        confirmed items asks first: keep them (confirmed items are always kept), clear their marks, or cancel."""
        step_id = self.state.selected_step_id
        if step_id is None or self.state.step_result(step_id) is None:
            self.messages.error("Choose a step searched in this session to apply a cut to")
            return None
        rule = KeepRule("threshold", float(threshold))
        below = self.state.confirmed_below(step_id, rule)
        if below:
            choice = self.ask_confirmed_cut(below, rule)
            if choice == "cancel":
                self.distribution.reset_cut()
                self.results.set_preview_threshold(None)
                return None
            if choice == "clear" and not self.state.mark_many([item for item, _ in below], "cleared"):
                return None
        label = step_label(self.state.case, step_id)
        handle = self.state.rerun_with_keep(step_id, rule)
        if handle is not None:
            self.messages.message(f"Step {label} runs again keeping {rule.describe()}; the next step keeps its "
                                  f"own rule")
        return handle

    def _ask_confirmed_cut(self, below: list[tuple[str, float]], rule: KeepRule) -> str:
        box = self.confirmed_cut_box(below, rule)
        box.exec()
        clicked = box.clickedButton()
        return "keep" if clicked is box.keep_button else "clear" if clicked is box.clear_button else "cancel"

    def confirmed_cut_box(self, below: list[tuple[str, float]], rule: KeepRule) -> QMessageBox:
        """The question ``_ask_confirmed_cut`` asks: the items named by camera and time, their ids in the
        details and the tooltip; ``keep_button`` and ``clear_button`` on the box."""
        gallery = self.state.gallery
        names = ", ".join(f"{item_label(gallery, item)} ({score:.3f})" for item, score in below[:5])
        more = f" and {len(below) - 5} more" if len(below) > 5 else ""
        box = QMessageBox(QMessageBox.Icon.Warning, "Confirmed items below the cut",
                          f"{rule.describe().capitalize()} falls above {len(below)} confirmed "
                          f"item{'s' if len(below) != 1 else ''}: {names}{more}.", parent=self.parent)
        box.setInformativeText("Confirmed items are kept whatever the rule. Keep them, or clear their marks so "
                               "the cut drops them?")
        ids = "\n".join(f"{item_label(gallery, item)}: {item}" for item, _score in below)
        box.setDetailedText(f"Item ids:\n{ids}")
        box.setToolTip(ids)
        box.keep_button = box.addButton("Keep confirmed items", QMessageBox.ButtonRole.AcceptRole)
        box.clear_button = box.addButton("Clear their marks and cut them", QMessageBox.ButtonRole.DestructiveRole)
        box.addButton(QMessageBox.StandardButton.Cancel)
        box.setDefaultButton(box.keep_button)
        return box

    def choose_target_identity(self, identity: str | None = None) -> bool:
        """Ask for (or take) the ground-truth identity; an empty answer clears it."""
        if identity is None:
            current = self.state.target_identity or ""
            identity, ok = QInputDialog.getText(self.parent, "Ground truth", "Identity of the person sought in "
                                                "this built world (empty: none):", text=current)
            if not ok:
                return False
        return self.state.set_target_identity(identity.strip() or None)

    def item_in_focus(self) -> str | None:
        """The detail pane's item when it has focus, else the results' current, else the detail pane's."""
        in_detail = self.detail.isAncestorOf(QApplication.focusWidget()) if QApplication.focusWidget() else False
        return (self.detail.item_id() if in_detail else None) or self.results.current_id() or self.detail.item_id()

    def set_follow_window(self, seconds: float) -> None:
        """The seconds before and after a followed sighting that the next follow searches."""
        self.follow_window = float(seconds)

    def follow_selected(self) -> WorkerHandle | None:
        """Follow the sighting of the confirmed item in focus (``follow_item``)."""
        return self.follow_item(self.item_in_focus())

    def follow_item(self, item_id: str | None) -> WorkerHandle | None:
        """Follow the sighting of confirmed item ``item_id`` (the case's confirmed items grouped by camera and
        time) to the gallery's other cameras within ``follow_window`` seconds before and after it."""
        try:
            sighting = confirmed_sighting(self.state.gallery, self.state.marks, item_id)
        except NotASighting as exc:
            self.messages.error(str(exc))
            return None
        handle = self.state.follow_sighting(sighting, self.follow_window)
        if handle is not None:
            self.messages.message(f"Following {item_label(self.state.gallery, sighting.best)} to the other cameras, "
                                  f"{duration(self.follow_window)} before and after")
        return handle

    def find_similar_selected(self, outfit_changed: bool = False) -> None:
        """Find similar to the item in focus (``item_in_focus``); ``outfit_changed``: the person may have changed
        clothes (ranks by biometrics)."""
        item_id = self.item_in_focus()
        if not item_id:
            self.messages.error("Select an item in the results first")
            return
        self.state.find_similar(item_id, outfit_changed=outfit_changed)

    def find_similar_across_outfits_selected(self) -> None:
        self.find_similar_selected(outfit_changed=True)

    def undo_step(self) -> bool:
        head = self.state.head_step_id
        label = None if head is None else step_label(self.state.case, head)
        if not self.state.undo_step():
            return False
        self.messages.message(f"Step {label} undone (kept in the case, greyed). {self.timeline.next_step_text()}")
        return True

    def branch_from(self, step_id: int | None) -> bool:
        """"Branch here": the next step continues from ``step_id``; says so at once."""
        if not self.state.branch_from(step_id):
            return False
        where = "the whole gallery" if step_id is None else f"step {step_label(self.state.case, step_id)}"
        self.messages.message(f"Branch from {where}: the next search starts a new branch there; the later steps "
                              f"are kept")
        return True
