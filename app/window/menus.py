"""The main window's menu bar (``WindowMenus``): Case, Gallery, Search, View and Help, each action calling one
of the window's parts (``app.window.case_actions``, ``export_actions``, ``gallery_actions``, ``step_actions``).
Every action with a key is listed by the shortcuts sheet (Help → Keyboard shortcuts) with the keys focused
widgets answer to (``shortcut_rows``)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMainWindow, QMenu, QMenuBar

from app.state import AppState
from app.state.follow import duration
from app.views.results_model import OUTFIT_CHANGE_TIP
from app.views.shortcuts_sheet import WIDGET_KEYS, action_rows
from app.views.sightings_timeline import KEYS as SIGHTINGS_KEYS
from app.window.case_actions import CaseActions
from app.window.export_actions import ReportExport
from app.window.gallery_actions import GalleryActions
from app.window.messages import Messages
from app.window.panes import Panes
from app.window.step_actions import StepActions

#: The actions other parts enable, trigger or test, by their attribute names (the window exposes them too).
ACTION_NAMES = ("new_case_action", "open_case_action", "rename_case_action", "note_action", "export_action",
                "open_gallery_action", "new_gallery_action", "ingest_action", "ingest_crops_action",
                "gallery_info_action", "find_similar_action", "find_across_outfits_action", "follow_action",
                "target_action",
                "restore_action", "rerun_grown_action", "cancel_action", "shortcuts_action")


def add_action(owner: QMainWindow, menu: QMenu, text: str, slot: Callable[[], object], shortcut=None) -> QAction:
    """An action of ``owner`` in ``menu`` that calls ``slot()`` (``shortcut``: a key sequence or its text)."""
    action = QAction(text, owner)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    action.triggered.connect(lambda _checked=False: slot())
    menu.addAction(action)
    return action


class WindowMenus:
    """Fills ``window``'s menu bar with actions on the window's parts; ``panes`` are its widgets, ``reset_layout``
    and ``show_shortcuts`` the window's own View and Help actions. The actions named in ``ACTION_NAMES`` are
    attributes."""

    def __init__(self, window: QMainWindow, panes: Panes, state: AppState, messages: Messages, *,
                 cases: CaseActions, export: ReportExport, galleries: GalleryActions, steps: StepActions,
                 reset_layout: Callable[[], None], show_shortcuts: Callable[[], object]) -> None:
        self.messages = messages
        bar = window.menuBar()
        case = bar.addMenu("&Case")
        self.new_case_action = add_action(window, case, "&New case…", cases.new_case, QKeySequence.StandardKey.New)
        self.open_case_action = add_action(window, case, "&Open case…", cases.open_case,
                                           QKeySequence.StandardKey.Open)
        self.rename_case_action = add_action(window, case, "&Rename case…", cases.rename_case, "F2")
        self.note_action = add_action(window, case, "Add &note…", cases.add_note, "Ctrl+Shift+N")
        case.addSeparator()
        self.export_action = add_action(window, case, "&Export report…", export.export_report, "Ctrl+E")
        self.export_action.setToolTip("Write the case report (PDF or HTML, faces optionally blurred) with its "
                                      "manifest (Ctrl+E)")
        case.addSeparator()
        add_action(window, case, "&Quit", window.close, QKeySequence.StandardKey.Quit)

        gallery = bar.addMenu("&Gallery")
        self.open_gallery_action = add_action(window, gallery, "&Open gallery…", galleries.open_gallery, "Ctrl+G")
        self.new_gallery_action = add_action(window, gallery, "&New gallery…", galleries.new_gallery,
                                             "Ctrl+Shift+G")
        self.new_gallery_action.setToolTip("Make a gallery from footage, a folder of person crops or a built world "
                                           "(an ingest queue in the background, with progress and cancel)")
        self.ingest_action = add_action(window, gallery, "&Ingest footage…", galleries.ingest_footage, "Ctrl+I")
        self.ingest_crops_action = add_action(window, gallery, "Ingest a folder of &person crops…",
                                              galleries.ingest_crops)
        gallery.addSeparator()
        self.gallery_info_action = add_action(window, gallery, "Gallery &information", galleries.show_gallery_info)
        self.gallery_info_action.setToolTip("The open gallery's items, the networks its searches rank by and the "
                                            "attribute evidence it holds")

        search = bar.addMenu("&Search")
        search.addAction(panes.query_panel.search_action)
        search.addAction(panes.timeline.undo_action)
        search.addAction(panes.timeline.branch_action)
        self.find_similar_action = add_action(window, search, "Find &similar to the selected item",
                                              steps.find_similar_selected, "F")
        self.find_similar_action.setToolTip("Next step ranks by likeness to the selected item (F)")
        panes.results.addAction(self.find_similar_action)
        panes.detail.similar_button.setText("Find similar  (F)")
        self.find_across_outfits_action = add_action(window, search, "Find similar, &clothes may have changed",
                                                     steps.find_similar_across_outfits_selected, "Shift+F")
        self.find_across_outfits_action.setToolTip(OUTFIT_CHANGE_TIP)
        panes.results.addAction(self.find_across_outfits_action)
        self.follow_action = add_action(window, search, "F&ollow to next camera", steps.follow_selected,
                                        "Ctrl+Shift+F")
        self.follow_action.setToolTip("Next step looks for the selected confirmed sighting's person on the other "
                                      f"cameras, {duration(steps.follow_window)} before and after, over the whole "
                                      f"gallery (Ctrl+Shift+F)")
        panes.results.addAction(self.follow_action)
        self.target_action = add_action(window, search, "Ground-truth &identity…", steps.choose_target_identity)
        self.target_action.setToolTip("Trainers: score the next steps against a known identity of a built world")
        search.addSeparator()
        self.restore_action = add_action(window, search, "&Re-run the case's steps", state.restore_session)
        self.rerun_grown_action = add_action(window, search, "Re-run the path on the &grown gallery",
                                             state.rerun_on_grown_gallery)
        self.rerun_grown_action.setToolTip("The gallery grew since this path was searched: run its steps again on "
                                           "every item, as a new branch from the start")
        self.rerun_grown_action.setEnabled(False)
        state.gallery_version_changed.connect(self.offer_grown_rerun)
        self.cancel_action = add_action(window, search, "&Cancel running job", state.cancel, "Esc")

        view = bar.addMenu("&View")
        focus_query = add_action(window, view, "Focus &query", panes.query_panel.text_edit.setFocus, "Ctrl+1")
        focus_query.setShortcuts([QKeySequence("Ctrl+1"), QKeySequence("Ctrl+L")])
        add_action(window, view, "Focus &results", panes.results.grid.setFocus, "Ctrl+2")
        add_action(window, view, "Focus s&teps", lambda: panes.focus_tab(panes.timeline), "Ctrl+3")
        add_action(window, view, "&Notes", lambda: panes.focus_tab(panes.notes), "Ctrl+4")
        add_action(window, view, "Focus si&ghtings", panes.focus_sightings, "Ctrl+5")
        add_action(window, view, "Whole &gallery (before step 1)", lambda: state.select_step(None), "Ctrl+Home")
        add_action(window, view, "&Dismiss message", panes.banner.hide, "Ctrl+D")
        add_action(window, view, "Reset &layout", reset_layout)

        help_menu = bar.addMenu("&Help")
        self.shortcuts_action = add_action(window, help_menu, "&Keyboard shortcuts…", show_shortcuts, "F1")

    def offer_grown_rerun(self, searched) -> None:
        """Say which gallery version the case's path searches when the gallery has grown since, and enable the
        re-run on the grown gallery (``searched``: an ``app.state.gallery_versions.SearchedVersion`` or None)."""
        self.rerun_grown_action.setEnabled(searched is not None)
        if searched is not None:
            self.messages.notice(searched.offer())

    def set_busy(self, busy: bool) -> None:
        """While a job runs: cancel on, and off what would start another job or change the case."""
        self.cancel_action.setEnabled(busy)
        for action in (self.ingest_action, self.ingest_crops_action, self.open_gallery_action, self.new_case_action,
                       self.open_case_action):
            action.setEnabled(not busy)

    def set_case_open(self, open_: bool) -> None:
        """Enable the actions that need an open case."""
        for action in (self.rename_case_action, self.note_action, self.export_action):
            action.setEnabled(open_)


def shortcut_rows(bar: QMenuBar) -> list[tuple[str, str]]:
    """Every shortcut of the menus in ``bar``, then the keys focused widgets answer to (the shortcuts sheet)."""
    actions = [action for top in bar.actions() for action in top.menu().actions()]
    return action_rows(actions) + list(WIDGET_KEYS) + list(SIGHTINGS_KEYS)
