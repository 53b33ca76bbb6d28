"""The parts of the app's state driven from plain Python, without Qt: ``SearchControls`` (filters and working
state), ``MarkBook`` (marks and notes), ``StepHistory`` with ``StepMoves`` (sessions, undo, the step on view)
and ``GalleryPlacement``, each saying what changed through ``Events``. The scenarios run here and once more
in a fresh interpreter that must never load PySide6 (nor the Qt-bound jobs and workers)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import numpy as np

from app.state.case_session import ActionRefused, CaseSession
from app.state.events import Events
from app.state.gallery_placement import GalleryPlacement
from app.state.marks import MarkBook
from app.state.search_controls import SearchControls
from app.state.step_history import StepHistory
from app.state.step_moves import StepMoves
from app.state.working_state import Filters, WorkingState
from app.store import CaseStore
from app.store.from_engine import gallery_identity, step_input
from engine.index import Gallery
from engine.retrieval.encoding.views import gallery_views
from engine.retrieval.search import QueryInputError, StepQuery
from engine.retrieval.search.opening import open_search

ROOT = Path(__file__).resolve().parents[1]
DIM, N = 8, 24


class Recorder:
    """Every event, as (name, *args)."""

    def __init__(self, events: Events) -> None:
        self.seen: list[tuple] = []
        events.connect(lambda name, *args: self.seen.append((name, *args)))

    def names(self) -> list[str]:
        names = [entry[0] for entry in self.seen]
        self.seen.clear()
        return names


class PlainGalleries:
    """What the parts read of a ``GallerySession``: the gallery, its identity, the version searched and a
    factory of fresh sessions (find-similar only: no encoder)."""

    def __init__(self, gallery: Gallery) -> None:
        self.gallery, self.encoder, self.identity, self.scope = gallery, None, gallery_identity(gallery), None

    def session_factory(self, rho: float, *, whole: bool = False):
        return lambda: open_search(self.gallery, None, rho=rho)


def make_gallery(folder: Path) -> Gallery:
    rng = np.random.default_rng(5)
    views = gallery_views(DIM)
    vectors = {view: rng.standard_normal((N, DIM)).astype(np.float32) for view in views}
    for view in views:
        vectors[view] /= np.linalg.norm(vectors[view], axis=1, keepdims=True)
    items = [{"id": f"i{k:02d}", "source": "walk.mp4", "frame": k, "camera": f"cam{k % 2}"} for k in range(N)]
    gallery = Gallery.create(folder / "gallery", views, "ckpt-plain")
    gallery.add(items, vectors)
    return gallery


def open_case(folder: Path, title: str) -> tuple[Events, Recorder, CaseSession]:
    events = Events()
    seen = Recorder(events)
    cases = CaseSession(events)
    cases.use_store(CaseStore.open(folder / "cases.db", actor="tester"), owned=True)
    cases.load(cases.create(title))
    return events, seen, cases


def filters_scenario(folder: Path) -> None:
    events, seen, cases = open_case(folder, "Filters")
    controls = SearchControls(cases, events)
    controls.load()
    assert seen.seen == [("filters_changed", Filters()), ("working_state_changed", WorkingState())]
    seen.names()
    assert controls.set_filters(["cam1"], (0, 10))
    assert seen.seen == [("filters_changed", Filters(frozenset({"cam1"}), (0.0, 10.0)))]
    seen.names()
    stored = cases.store.load_case(cases.case_id).working_state
    assert stored["filters"] == {"cameras": ["cam1"], "time_range": [0.0, 10.0]}
    assert not controls.set_filters(time_range=(10, 0))  # refused like a step query's filters
    (name, problem), = seen.seen
    assert name == "error" and isinstance(problem, QueryInputError) and "starts after it ends" in str(problem)
    seen.names()
    controls.reset()
    assert controls.working == WorkingState() and seen.names() == ["filters_changed", "working_state_changed"]
    cases.reload()
    controls.load()  # the case's own controls come back
    assert controls.filters.cameras == frozenset({"cam1"}) and seen.names() == ["filters_changed",
                                                                                 "working_state_changed"]
    cases.close_store()


def steps_and_marks_scenario(folder: Path) -> None:
    events, seen, cases = open_case(folder, "Steps")
    galleries = PlainGalleries(make_gallery(folder))
    placement = GalleryPlacement(cases, galleries, events)
    placement.place(None, None)  # the current version, recorded in the case now
    assert cases.gallery_id is not None and len(cases.case.galleries) == 1
    steps = StepHistory(events)
    idle = lambda: None  # noqa: E731 - no job runs
    moves = StepMoves(cases, galleries, placement, steps, idle, events, rho=0.5)
    book = MarkBook(cases, galleries, steps, idle, events)
    seen.names()

    moves.activate_head()  # the start: a fresh session on the whole gallery
    (name, start), = seen.seen
    assert name == "session_changed" and start is steps.session and start.steps == ()
    seen.names()

    assert book.mark_many(["i01", "i02"], "rejected") == 2
    assert seen.seen == [("case_changed", cases.case), ("marks_changed", {"i01": "rejected", "i02": "rejected"})]
    assert steps.session.rejected == ("i01", "i02")  # applied to the live session once stored
    seen.names()
    assert book.mark_many(["zz"], "confirmed") == 0
    assert [(n, type(e)) for n, e in seen.seen] == [("error", ActionRefused)]
    seen.names()

    def busy() -> None:
        raise ActionRefused("Searching: wait for it to finish or cancel it")

    assert MarkBook(cases, galleries, steps, busy, events).mark_many(["i03"], "confirmed") == 0
    assert "Searching" in str(seen.seen[0][1]) and cases.marks() == {"i01": "rejected", "i02": "rejected"}
    seen.names()
    note = book.add_note("seen near the gate", item_id="i05")
    assert note is not None and seen.names() == ["case_changed"]
    assert book.edit_note(note, "seen at the gate") and seen.names() == ["case_changed"]

    session = galleries.session_factory(0.5)()  # a step as the search job runs and records it
    result = session.step(StepQuery(example="i00", k=6))
    step_id = cases.store.record_step(cases.case_id, step_input(result, cases.gallery_id))
    steps.record(SimpleNamespace(step_id=step_id, result=result, session=session))
    cases.reload()
    steps.select(step_id)
    assert seen.seen == [("selected_step_changed", step_id)] and steps.result(step_id) is result
    seen.names()
    moves.activate_head()  # the session kept after the head step, with the case's marks
    (name, kept), = seen.seen
    assert name == "session_changed" and len(kept.steps) == 1 and kept.rejected == ("i01", "i02")
    seen.names()

    moves.select_step(999)
    assert seen.seen == [("error", "The case has no step 999")] and steps.selected == step_id
    seen.names()
    assert moves.undo_step()
    assert seen.names() == ["case_changed", "session_changed", "selected_step_changed"]
    assert cases.head_step_id is None and steps.selected is None and steps.session.steps == ()
    assert not moves.undo_step() and seen.seen == [("error", "There is no step to undo")]
    cases.close_store()


def test_search_controls_keep_the_cases_filters_and_say_so(tmp_path):
    filters_scenario(tmp_path)


def test_marks_steps_and_moves_report_each_change_in_order(tmp_path):
    steps_and_marks_scenario(tmp_path)


def test_the_parts_run_without_qt(tmp_path):
    script = textwrap.dedent(f"""
        import sys
        from pathlib import Path
        sys.path.insert(0, {str(ROOT / "tests")!r})
        import test_state_parts as parts
        for name in ("filters", "steps"):
            (Path({str(tmp_path)!r}) / name).mkdir()
        parts.filters_scenario(Path({str(tmp_path)!r}) / "filters")
        parts.steps_and_marks_scenario(Path({str(tmp_path)!r}) / "steps")
        loaded = sorted(m for m in sys.modules if m.split(".")[0] == "PySide6" or m in ("app.jobs", "app.workers"))
        assert not loaded, loaded
        print("plain")
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == "plain"
