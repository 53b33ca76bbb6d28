"""What the main window's menus, buttons and keys do (``WindowActions``, mixed into ``app.main_window
.MainWindow``): cases (new, open, rename, note, export), the step actions that need the window (apply a
dragged cut, undo and branch with their messages, find similar to the selected item, ground truth) and
galleries (open one, make a new one from queued sources, ingest footage or crops into the open one).

Each asks what it needs in a dialog when not told (tests and demo scripts pass it), then acts through the
``AppState`` or starts a background job on its ``JobRunner`` (``state.jobs``); the window never runs work
itself.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QApplication, QFileDialog, QInputDialog, QMessageBox

from app.jobs import ExportReportJob, IngestFootageJob
from app.state import KeepRule
from app.state.gallery_versions import case_gallery_path
from app.state.ingest_queue import IngestQueue
from app.views.case_list import choose_case
from app.views.export_dialog import ask_export
from app.views.file_filters import footage_filter
from app.views.new_gallery_dialog import NewGalleryDialog
from app.views.notes_panel import ask_note
from app.workers import WorkerHandle


class WindowActions:
    """See the module docstring (``MainWindow`` provides the views, ``state``, ``models`` and the messages)."""

    #: Asked when a cut would fall above confirmed items: (items, rule) -> "keep" | "clear" | "cancel".
    ask_confirmed_cut: Callable[[list[tuple[str, float]], KeepRule], str]

    def new_case(self, title: str | None = None) -> int | None:
        if title is None:
            title, ok = QInputDialog.getText(self, "New case", "Case title:")
            if not ok:
                return None
        if not title.strip():
            self.show_error("A case needs a title")
            return None
        return self.state.new_case(title.strip())

    def open_case(self, case_id: int | None = None) -> bool:
        if case_id is None:
            cases = self.state.cases()
            if not cases:
                self.show_error("The case database has no cases yet: create one with Case → New case")
                return False
            case_id = choose_case(cases, self.state.case_id, self)
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
            self.show_error("Open or create a case first")
            return False
        if title is None:
            title, ok = QInputDialog.getText(self, "Rename case", "Case title:", text=self.state.case.case.title)
            if not ok:
                return False
        return self.state.rename_case(title.strip())

    def add_note(self, text: str | None = None) -> int | None:
        if self.state.case is None:
            self.show_error("Open or create a case first")
            return None
        item_id = self.detail.item_id()
        if text is None:
            about = f" about {self.item_label(item_id)}" if item_id else ""
            text = ask_note(self, "Add note", f"Note{about}:")
            if text is None:
                return None
        if not text.strip():
            self.show_error("A note needs some text")
            return None
        return self.state.add_note(text.strip(), item_id=item_id, step_id=self.state.selected_step_id)

    def edit_note(self, note_id: int | None = None, text: str | None = None) -> bool:
        """Change a note's text (the notes panel's selected one when not told; asks for the text when not
        told) through ``AppState.edit_note``, which keeps the earlier text in the case's audit trail."""
        if self.state.case is None:
            self.show_error("Open or create a case first")
            return False
        note_id = self.notes.selected_note_id() if note_id is None else note_id
        note = None if note_id is None else self.notes.note(note_id)
        if note is None:
            self.show_error("Select a note in the Notes tab to edit it")
            return False
        if text is None:
            text = ask_note(self, "Edit note", "Note:", note.text)
            if text is None:
                return False
        if not text.strip():
            self.show_error("A note needs some text")
            return False
        if text.strip() == note.text:
            return True
        if not self.state.edit_note(note_id, text.strip()):
            return False
        self.notes.select_note(note_id)
        return True

    def export_report(self, path: str | Path | None = None, blur_faces: bool | None = None) -> WorkerHandle | None:
        """Write the open case's report (PDF or HTML by the file's ending) and its manifest as a background job
        (``ExportReportJob``: progress and cancel in the status bar); asks where (and whether to blur faces) when
        not told. Returns the job's handle (its ``result`` is the ``ReportResult``), or None when nothing
        started."""
        state = self.state
        if state.case is None or state.store is None:
            self.show_error("Open or create a case first")
            return None
        if self.busy:
            self.show_error(state.jobs.refusal())
            return None
        if path is None:
            safe = "".join(c if c.isalnum() or c in "-_" else "-" for c in state.case.case.title).strip("-")
            answer = ask_export(Path.home() / f"{safe or 'case'}-report.pdf", self)
            if answer is None:
                return None
            path, chosen_blur = answer
            blur_faces = chosen_blur if blur_faces is None else blur_faces

        def written(result) -> None:
            pages = "" if result.pages is None else f", {result.pages} pages"
            self.show_notice(f"Report written: {result.report_path}{pages} (manifest {result.manifest_path.name}; "
                             f"check it with `lineup report verify`)")

        job = ExportReportJob(state.store.path, state.case_id, path, blur_faces=bool(blur_faces))
        return state.jobs.start(job, written)

    def apply_cut(self, threshold: float) -> WorkerHandle | None:
        """Run the shown step again keeping scores ≥ ``threshold`` (the cut dragged on its plot). A cut above
        confirmed items asks first: keep them (confirmed items are always kept), clear their marks, or cancel."""
        step_id = self.state.selected_step_id
        if step_id is None or self.state.step_result(step_id) is None:
            self.show_error("Choose a step searched in this session to apply a cut to")
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
        label = self.step_label(step_id)
        handle = self.state.rerun_with_keep(step_id, rule)
        if handle is not None:
            self.show_message(f"Step {label} runs again keeping {rule.describe()}; the next step keeps its own rule")
        return handle

    def _ask_confirmed_cut(self, below: list[tuple[str, float]], rule: KeepRule) -> str:
        box = self.confirmed_cut_box(below, rule)
        box.exec()
        clicked = box.clickedButton()
        return "keep" if clicked is box.keep_button else "clear" if clicked is box.clear_button else "cancel"

    def confirmed_cut_box(self, below: list[tuple[str, float]], rule: KeepRule) -> QMessageBox:
        """The question ``_ask_confirmed_cut`` asks: the items named by camera and time, their ids in the
        details and the tooltip; ``keep_button`` and ``clear_button`` on the box."""
        names = ", ".join(f"{self.item_label(item)} ({score:.3f})" for item, score in below[:5])
        more = f" and {len(below) - 5} more" if len(below) > 5 else ""
        box = QMessageBox(QMessageBox.Icon.Warning, "Confirmed items below the cut",
                          f"{rule.describe().capitalize()} falls above {len(below)} confirmed "
                          f"item{'s' if len(below) != 1 else ''}: {names}{more}.", parent=self)
        box.setInformativeText("Confirmed items are kept whatever the rule. Keep them, or clear their marks so "
                               "the cut drops them?")
        ids = "\n".join(f"{self.item_label(item)}: {item}" for item, _score in below)
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
            identity, ok = QInputDialog.getText(self, "Ground truth", "Identity of the person sought in this "
                                                "built world (empty: none):", text=current)
            if not ok:
                return False
        return self.state.set_target_identity(identity.strip() or None)

    def find_similar_selected(self, outfit_changed: bool = False) -> None:
        """Find similar to the item in focus (the detail pane's when it has focus, else the results' current);
        ``outfit_changed``: the person may have changed clothes (ranks by biometrics)."""
        in_detail = self.detail.isAncestorOf(QApplication.focusWidget()) if QApplication.focusWidget() else False
        item_id = (self.detail.item_id() if in_detail else None) or self.results.current_id() or self.detail.item_id()
        if not item_id:
            self.show_error("Select an item in the results first")
            return
        self.state.find_similar(item_id, outfit_changed=outfit_changed)

    def find_similar_across_outfits_selected(self) -> None:
        self.find_similar_selected(outfit_changed=True)

    def open_gallery(self, path: str | Path | None = None) -> WorkerHandle | None:
        if path is None:
            path = QFileDialog.getExistingDirectory(self, "Open gallery folder")
            if not path:
                return None
        factory = None if self.models is None else self.models.query_encoder
        handle = self.state.load_gallery(path, factory)
        if handle is not None:
            handle.result.connect(lambda _value: self._gallery_opened())
        return handle

    def _gallery_opened(self) -> None:
        """After the state took the new gallery (and cleared the last gallery's banner): say what it lacks."""
        if self.models is None:
            self.show_notice("No checkpoint was given: only find-similar searches work on this gallery. "
                             "Start with `lineup app --checkpoint PATH` for text, sketch and IR queries.")
        self.restore_if_needed()

    def new_gallery(self) -> NewGalleryDialog:
        """Gallery → New gallery…: the dialog that queues footage, crop folders or built worlds for a new gallery
        (``IngestQueue`` on the state's job runner); the gallery opens when its queue is done. One dialog and
        one queue per window, shown again when asked again."""
        dialog = getattr(self, "_new_gallery_dialog", None)
        if dialog is None:
            queue = IngestQueue(self.state.jobs, self.models, parent=self)
            dialog = NewGalleryDialog(queue, self)
            dialog.gallery_ready.connect(self.open_gallery)
            self._new_gallery_dialog = dialog
        if self.models is None:
            dialog.status_label.setText("Ingest needs a model: start with `lineup app --checkpoint PATH`")
        dialog.show()
        dialog.raise_()
        return dialog

    def open_case_gallery(self, skip: Callable[[Path], bool] | None = None) -> WorkerHandle | bool | None:
        """Open the gallery the open case goes on with (its head step's; relaunch reopens the last case with its
        own gallery, and the state then finds the version its steps searched). None: the case has no gallery,
        or ``skip(folder)`` says the caller opens it (the demo gallery); False: the gallery is missing (the
        banner says so)."""
        case = self.state.case
        folder = case_gallery_path(case)
        if folder is None or (skip is not None and skip(folder)):
            return None
        if not (folder / "gallery.json").is_file():
            self.show_error(f"Case {case.case.title!r} searched the gallery {folder}, which is missing (moved or "
                            f"deleted): open it from where it is now with Gallery → Open gallery…")
            return False
        return self.open_gallery(folder)

    def ingest_crops(self, source: str | Path | None = None) -> WorkerHandle | None:
        """Ingest a folder of ready person crops (every image is one person; ``engine.ingest.crops``)."""
        if source is None and self.state.gallery is not None and self.models is not None and not self.busy:
            source = QFileDialog.getExistingDirectory(self, "A folder of person crops")
            if not source:
                return None
        return self.ingest_footage(source, crops=True)

    def ingest_footage(self, source: str | Path | None = None, crops: bool = False) -> WorkerHandle | None:
        """Ingest a video or a folder of footage (``crops``: a folder of person crops) into the current gallery
        (``IngestFootageJob``), then reopen it."""
        gallery = self.state.gallery
        if gallery is None:
            self.show_error("Open a gallery first: footage is ingested into the current gallery")
            return None
        if self.models is None:
            self.show_error("Ingest needs the gallery's model: start with `lineup app --checkpoint PATH`")
            return None
        if self.busy:
            self.show_error(self.state.jobs.refusal())
            return None
        if source is None:
            source, _ = QFileDialog.getOpenFileName(self, "Ingest a video or an image", "", footage_filter())
            if not source:
                source = QFileDialog.getExistingDirectory(self, "…or a folder of footage / images")
            if not source:
                return None
        root = Path(gallery.root)

        def done(summary) -> None:
            totals = summary.totals()
            self.show_message(f"Ingest: {totals.get('items_added', 0):,} items added to {root.name}")

        job = IngestFootageJob(source, root, self.models, crops=crops)
        return self.state.jobs.start(job, done, then=lambda _summary: self.open_gallery(root))

    def undo_step(self) -> bool:
        head = self.state.head_step_id
        label = None if head is None else self.step_label(head)
        if not self.state.undo_step():
            return False
        self.show_message(f"Step {label} undone (kept in the case, greyed). {self.timeline.next_step_text()}")
        return True

    def branch_from(self, step_id: int | None) -> bool:
        """"Branch here": the next step continues from ``step_id``; says so at once."""
        if not self.state.branch_from(step_id):
            return False
        where = "the whole gallery" if step_id is None else f"step {self.step_label(step_id)}"
        self.show_message(f"Branch from {where}: the next search starts a new branch there; the later steps "
                          f"are kept")
        return True
