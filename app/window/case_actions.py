"""``CaseActions``: what the Case menu does to the case itself: new, open (re-running a reopened case's path),
rename, add a note and edit one. Each asks what it needs in a dialog when not told (tests and demo scripts pass
it), then acts through the ``AppState``; refusals are said through the window's ``Messages``."""

from __future__ import annotations

from PySide6.QtWidgets import QInputDialog, QWidget

from app.state import AppState
from app.state.item_label import item_label
from app.views.case_list import choose_case
from app.views.detail import DetailPane
from app.views.notes_panel import NotesPanel, ask_note
from app.window.messages import Messages


class CaseActions:
    """Case actions on ``state``; dialogs open over ``parent``; a note is about the item in ``detail`` and is
    edited from ``notes``."""

    def __init__(self, parent: QWidget, state: AppState, messages: Messages, detail: DetailPane,
                 notes: NotesPanel) -> None:
        self.parent = parent
        self.state = state
        self.messages = messages
        self.detail = detail
        self.notes = notes

    def new_case(self, title: str | None = None) -> int | None:
        if title is None:
            title, ok = QInputDialog.getText(self.parent, "New case", "Case title:")
            if not ok:
                return None
        if not title.strip():
            self.messages.error("A case needs a title")
            return None
        return self.state.new_case(title.strip())

    def open_case(self, case_id: int | None = None) -> bool:
        if case_id is None:
            cases = self.state.cases()
            if not cases:
                self.messages.error("The case database has no cases yet: create one with Case → New case")
                return False
            case_id = choose_case(cases, self.state.case_id, self.parent)
            if case_id is None:
                return False
        if not self.state.open_case(case_id):
            return False
        self.restore_if_needed()
        return True

    def restore_if_needed(self) -> None:
        """Re-run the open case's active path in a worker when its results are not in memory (a reopened
        case), so the grid and the plot show every candidate again."""
        state = self.state
        head = state.head_step_id
        if (head is not None and state.step_result(head) is None and state.encoder is not None
                and state.gallery_id is not None and not state.busy):
            state.restore_session()

    def rename_case(self, title: str | None = None) -> bool:
        if self.state.case is None:
            self.messages.error("Open or create a case first")
            return False
        if title is None:
            title, ok = QInputDialog.getText(self.parent, "Rename case", "Case title:",
                                             text=self.state.case.case.title)
            if not ok:
                return False
        return self.state.rename_case(title.strip())

    def add_note(self, text: str | None = None) -> int | None:
        if self.state.case is None:
            self.messages.error("Open or create a case first")
            return None
        item_id = self.detail.item_id()
        if text is None:
            about = f" about {item_label(self.state.gallery, item_id)}" if item_id else ""
            text = ask_note(self.parent, "Add note", f"Note{about}:")
            if text is None:
                return None
        if not text.strip():
            self.messages.error("A note needs some text")
            return None
        return self.state.add_note(text.strip(), item_id=item_id, step_id=self.state.selected_step_id)

    def edit_note(self, note_id: int | None = None, text: str | None = None) -> bool:
        """Change a note's text (the notes panel's selected one when not told; asks for the text when not
        told) through ``AppState.edit_note``, which keeps the earlier text in the case's audit trail."""
        if self.state.case is None:
            self.messages.error("Open or create a case first")
            return False
        note_id = self.notes.selected_note_id() if note_id is None else note_id
        note = None if note_id is None else self.notes.note(note_id)
        if note is None:
            self.messages.error("Select a note in the Notes tab to edit it")
            return False
        if text is None:
            text = ask_note(self.parent, "Edit note", "Note:", note.text)
            if text is None:
                return False
        if not text.strip():
            self.messages.error("A note needs some text")
            return False
        if text.strip() == note.text:
            return True
        if not self.state.edit_note(note_id, text.strip()):
            return False
        self.notes.select_note(note_id)
        return True
