"""The main window's menu bar: Case, Gallery, Search, View and Help. Every action with a key is listed by the
shortcuts sheet (Help → Keyboard shortcuts) with the keys focused widgets answer to (``shortcut_rows``)."""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtGui import QAction, QKeySequence

from app.views.results_model import OUTFIT_CHANGE_TIP
from app.views.shortcuts_sheet import WIDGET_KEYS, action_rows


def add_action(window, menu, text: str, slot: Callable[[], object], shortcut=None) -> QAction:
    """An action of ``window`` in ``menu`` that calls ``slot()`` (``shortcut``: a key sequence or its text)."""
    action = QAction(text, window)
    if shortcut is not None:
        action.setShortcut(QKeySequence(shortcut))
    action.triggered.connect(lambda _checked=False: slot())
    menu.addAction(action)
    return action


def build_menus(window) -> None:
    """Fill ``window``'s menu bar; the actions other parts enable or trigger become attributes of ``window``
    (``new_case_action``, ``export_action``, ``ingest_action``, ``cancel_action``, …)."""
    menu = window.menuBar()
    case = menu.addMenu("&Case")
    window.new_case_action = add_action(window, case, "&New case…", window.new_case, QKeySequence.StandardKey.New)
    window.open_case_action = add_action(window, case, "&Open case…", window.open_case,
                                         QKeySequence.StandardKey.Open)
    window.rename_case_action = add_action(window, case, "&Rename case…", window.rename_case, "F2")
    window.note_action = add_action(window, case, "Add &note…", window.add_note, "Ctrl+Shift+N")
    case.addSeparator()
    window.export_action = add_action(window, case, "&Export report…", window.export_report, "Ctrl+E")
    window.export_action.setToolTip("Write the case report (PDF or HTML, faces optionally blurred) with its "
                                    "manifest (Ctrl+E)")
    case.addSeparator()
    add_action(window, case, "&Quit", window.close, QKeySequence.StandardKey.Quit)

    gallery = menu.addMenu("&Gallery")
    window.open_gallery_action = add_action(window, gallery, "&Open gallery…", window.open_gallery, "Ctrl+G")
    window.new_gallery_action = add_action(window, gallery, "&New gallery…", window.new_gallery, "Ctrl+Shift+G")
    window.new_gallery_action.setToolTip("Make a gallery from footage, a folder of person crops or a built world "
                                         "(an ingest queue in the background, with progress and cancel)")
    window.ingest_action = add_action(window, gallery, "&Ingest footage…", window.ingest_footage, "Ctrl+I")
    window.ingest_crops_action = add_action(window, gallery, "Ingest a folder of &person crops…",
                                            window.ingest_crops)
    gallery.addSeparator()
    window.gallery_info_action = add_action(window, gallery, "Gallery &information", window.show_gallery_info)
    window.gallery_info_action.setToolTip("The open gallery's items, the networks its searches rank by and the "
                                          "attribute evidence it holds")

    search = menu.addMenu("&Search")
    search.addAction(window.query_panel.search_action)
    search.addAction(window.timeline.undo_action)
    search.addAction(window.timeline.branch_action)
    window.find_similar_action = add_action(window, search, "Find &similar to the selected item",
                                            window.find_similar_selected, "F")
    window.find_similar_action.setToolTip("Next step ranks by likeness to the selected item (F)")
    window.results.addAction(window.find_similar_action)
    window.detail.similar_button.setText("Find similar  (F)")
    window.find_across_outfits_action = add_action(window, search, "Find similar, &clothes may have changed",
                                                   window.find_similar_across_outfits_selected, "Shift+F")
    window.find_across_outfits_action.setToolTip(OUTFIT_CHANGE_TIP)
    window.results.addAction(window.find_across_outfits_action)
    window.target_action = add_action(window, search, "Ground-truth &identity…", window.choose_target_identity)
    window.target_action.setToolTip("Trainers: score the next steps against a known identity of a built world")
    search.addSeparator()
    window.restore_action = add_action(window, search, "&Re-run the case's steps", window.state.restore_session)
    window.rerun_grown_action = add_action(window, search, "Re-run the path on the &grown gallery",
                                           window.state.rerun_on_grown_gallery)
    window.rerun_grown_action.setToolTip("The gallery grew since this path was searched: run its steps again on "
                                         "every item, as a new branch from the start")
    window.rerun_grown_action.setEnabled(False)
    window.state.gallery_version_changed.connect(lambda searched: offer_grown_rerun(window, searched))
    window.cancel_action = add_action(window, search, "&Cancel running job", window.cancel_job, "Esc")

    view = menu.addMenu("&View")
    focus_query = add_action(window, view, "Focus &query", window.query_panel.text_edit.setFocus, "Ctrl+1")
    focus_query.setShortcuts([QKeySequence("Ctrl+1"), QKeySequence("Ctrl+L")])
    add_action(window, view, "Focus &results", window.results.grid.setFocus, "Ctrl+2")
    add_action(window, view, "Focus s&teps", lambda: _focus_tab(window, window.timeline), "Ctrl+3")
    add_action(window, view, "&Notes", lambda: _focus_tab(window, window.notes), "Ctrl+4")
    add_action(window, view, "Whole &gallery (before step 1)", lambda: window.state.select_step(None), "Ctrl+Home")
    add_action(window, view, "&Dismiss message", window.banner.hide, "Ctrl+D")
    add_action(window, view, "Reset &layout", window.reset_layout)

    help_menu = menu.addMenu("&Help")
    window.shortcuts_action = add_action(window, help_menu, "&Keyboard shortcuts…", window.show_shortcuts, "F1")


def offer_grown_rerun(window, searched) -> None:
    """Say which gallery version the case's path searches when the gallery has grown since, and enable the
    re-run on the grown gallery (``searched``: an ``app.state.gallery_versions.SearchedVersion`` or None)."""
    window.rerun_grown_action.setEnabled(searched is not None)
    if searched is not None:
        window.show_notice(searched.offer())


def _focus_tab(window, panel) -> None:
    """Bring the side tab ``panel`` (the step timeline or the notes) forward and focus its list."""
    window.side_tabs.setCurrentWidget(panel)
    panel.list.setFocus()


def shortcut_rows(window) -> list[tuple[str, str]]:
    """Every shortcut of ``window``'s menus, then the keys focused widgets answer to (the shortcuts sheet)."""
    actions = [action for top in window.menuBar().actions() for action in top.menu().actions()]
    return action_rows(actions) + list(WIDGET_KEYS)
