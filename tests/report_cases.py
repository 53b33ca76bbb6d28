"""A case with steps, marks and evidence in a case database, and reading a report back, for the report tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from app.report import collect_content
from app.store import CaseStore, StepInput
from app.store.from_engine import gallery_identity
from engine.index import Gallery

N_ITEMS = 24
CAMERAS = ("c0", "c1", "c2")


def person_crop(k: int, height: int = 128, width: int = 48) -> np.ndarray:
    """A standing figure: textured head on top, coloured torso and legs (no real face)."""
    rng = np.random.default_rng(k)
    image = np.full((height, width, 3), (205, 210, 215), dtype=np.uint8)
    head = rng.integers(60, 200, (height // 6, width // 2, 3), dtype=np.uint8)
    image[2:2 + head.shape[0], width // 4:width // 4 + head.shape[1]] = head
    image[height // 5:height * 3 // 5, width // 6:width * 5 // 6] = ((40 * k) % 255, 90, 160)
    image[height * 3 // 5:, width // 4:width * 3 // 4] = (60, 60, (25 * k) % 255)
    return image


def png_file(path: Path, image: np.ndarray) -> Path:
    ok, data = cv2.imencode(".png", image)
    assert ok
    path.write_bytes(data.tobytes())
    return path


@dataclass
class ReportCase:
    db: Path
    case_id: int
    gallery_id: int
    gallery_root: Path
    sketch: Path
    ir: Path
    steps: tuple[int, ...]
    confirmed: tuple[str, ...]
    rejected: tuple[str, ...]


def make_gallery(root: Path) -> Gallery:
    gallery = Gallery.create(root, {"rgb": 8}, "ckpt-report")
    rng = np.random.default_rng(1)
    items = []
    for k in range(N_ITEMS):
        ok, data = cv2.imencode(".png", person_crop(k))
        relative, _ = gallery.put_crop(data.tobytes(), ".png")
        items.append({"id": f"{CAMERAS[k % 3]}/item{k:03d}", "source": "walk.mp4", "frame": k,
                      "time": 60.0 + 7.5 * k, "camera": CAMERAS[k % 3], "identity": f"p{k % 4}", "crop": relative})
    vectors = rng.standard_normal((N_ITEMS, 8)).astype(np.float32)
    gallery.add(items, {"rgb": vectors / np.linalg.norm(vectors, axis=1, keepdims=True)})
    return gallery


def chain_step(gallery_id: int, ids: list[str], keep: int, seed: int, **extra) -> tuple[StepInput, list[str]]:
    """A step ranking ``ids`` with random scores and keeping the best ``keep``; returns it and the kept ids."""
    rng = np.random.default_rng(seed)
    scores = rng.uniform(-0.1, 0.7, len(ids)).astype(np.float32)
    order = np.argsort(-scores, kind="stable")[:keep]
    kept = [ids[i] for i in order]
    fields = dict(gallery_id=gallery_id, query_kind="text", view="text", keep_rule="k", keep_value=keep, k=keep,
                  candidates_before=len(ids), kept_ids=tuple(kept), kept_scores=tuple(scores[order].tolist()),
                  scores=scores, seconds=0.02)
    fields.update(extra)
    return StepInput(**fields), kept


def report_case(tmp_path: Path, *, extra_steps: int = 0) -> ReportCase:
    """A case with three steps (text; text+sketch with ground truth; IR with a camera filter and a ρ rule), the
    sketch and IR stills as evidence, two confirmed items (one only kept by step 2), one rejected, two notes.
    ``extra_steps`` adds further text steps that keep everything (a long chain)."""
    gallery = make_gallery(tmp_path / "gallery")
    sketch = png_file(tmp_path / "sketch.png", cv2.line(np.full((96, 48, 3), 255, np.uint8), (24, 8), (24, 90),
                                                        (0, 0, 0), 2))
    ir = png_file(tmp_path / "ir.png", np.tile(np.linspace(0, 255, 48, dtype=np.uint8), (96, 1)))
    db = tmp_path / "cases.sqlite"
    with CaseStore.open(db, actor="examiner") as store:
        case = store.create_case("Grey hoodie at the station", "Reported 14:05; two camera views.")
        gallery_id = store.add_gallery(case, **gallery_identity(gallery))
        first, kept1 = chain_step(gallery_id, list(gallery.ids), 12, 1, query_text="man in a grey hoodie",
                                  level="C", level_source="parser")
        s1 = store.record_step(case, first)
        relevant = np.array(["p1" in gallery.item(i).identity for i in kept1])
        second, kept2 = chain_step(gallery_id, kept1, 6, 2, query_kind="text+sketch",
                                   query_text="man in a grey hoodie, black backpack", level="M",
                                   level_source="override", sketch=sketch, relevant=relevant)
        s2 = store.record_step(case, second)
        third, kept3 = chain_step(gallery_id, kept2, 3, 3, query_kind="ir", view="ir", ir=ir, keep_rule="rho",
                                  keep_value=0.5, filters={"cameras": ["c0", "c1", "c2"], "time_range": [0.0, None]})
        s3 = store.record_step(case, third)
        steps = [s1, s2, s3]
        kept = kept3
        for extra in range(extra_steps):
            step, kept = chain_step(gallery_id, kept, len(kept), 10 + extra, query_text=f"refinement {extra + 1}")
            steps.append(store.record_step(case, step))
        dropped = next(i for i in kept2 if i not in kept3)
        confirmed = (kept3[0], dropped)
        # the first confirmed at step 3 with its score and rank there, as the app records it; the second as a
        # mark made before marks kept their step
        store.mark(case, gallery_id, kept3[0], "confirmed", "same bag", **mark_context(store, case, s3, kept3[0]))
        store.mark(case, gallery_id, dropped, "confirmed")
        store.mark(case, gallery_id, kept3[1], "rejected", **mark_context(store, case, s3, kept3[1]))
        store.add_note(case, "Seen leaving by the north exit.")
        store.add_note(case, "Sketch drawn from the witness account.", step_id=s2)
    return ReportCase(db, case, gallery_id, gallery.root, sketch, ir, tuple(steps), confirmed, (kept3[1],))


def mark_context(store: CaseStore, case_id: int, step_id: int, item_id: str) -> dict:
    """The step, score and rank (1 = best) an item is marked at, as ``app.state.marks.mark_context`` gives them."""
    step = store.load_case(case_id).step(step_id)
    if item_id not in step.kept_ids:
        return {"step_id": step_id, "score": None, "rank": None}
    index = step.kept_ids.index(item_id)
    return {"step_id": step_id, "score": float(step.kept_scores[index]), "rank": index + 1}


@dataclass
class TreeCase:
    """``report_case`` grown into a tree: step 3 undone, "3a" recorded in its place, "2b" branched from step 1,
    the head back on "3a"; an item confirmed at "3a" by a second examiner; the first note edited."""

    built: ReportCase
    labels: dict[int, str]  # step id → label
    confirmed_at_3a: str
    second_examiner: str


def tree_case(tmp_path: Path) -> TreeCase:
    built = report_case(tmp_path)
    s1, s2, s3 = built.steps
    with CaseStore.open(built.db, actor="examiner") as store:
        case = built.case_id
        state = store.load_case(case)
        store.undo_step(case)
        kept2 = list(state.step(s2).kept_ids)
        step, kept = chain_step(built.gallery_id, kept2, 4, 21, query_text="grey hoodie, no backpack", level="M",
                                level_source="parser", filters={"cameras": ["c1"], "time_range": [60.0, 200.0]})
        s4 = store.record_step(case, step)
        store.branch_from(case, s1)
        step, _ = chain_step(built.gallery_id, list(state.step(s1).kept_ids), 5, 22, query_kind="example",
                             example_item=kept[0], view="rgb", keep_rule="threshold", keep_value=0.1)
        s5 = store.record_step(case, step)
        store.branch_from(case, s4)
        note = next(n for n in state.notes if n.step_id is None)
        store.edit_note(case, note.id, "Seen leaving by the north exit at 14:20.")
    second = "second-examiner"
    target = next(i for i in kept if i not in built.confirmed)
    with CaseStore.open(built.db, actor=second) as store:
        store.mark(built.case_id, built.gallery_id, target, "confirmed", **mark_context(store, built.case_id, s4,
                                                                                         target))
    labels = {s1: "1", s2: "2", s3: "3", s4: "3a", s5: "2b"}
    return TreeCase(built, labels, target, second)


def many_steps_case(tmp_path: Path, steps: int = 50) -> ReportCase:
    """``report_case`` with ``steps`` steps in all, every fifth one undone and searched again (a long tree)."""
    built = report_case(tmp_path, extra_steps=0)
    with CaseStore.open(built.db, actor="examiner") as store:
        kept = list(store.load_case(built.case_id).step(built.steps[-1]).kept_ids)
        recorded = len(built.steps)
        extra = 0
        while recorded < steps:
            step, _ = chain_step(built.gallery_id, kept, len(kept), 100 + extra, query_text=f"refinement {extra}")
            store.record_step(built.case_id, step)
            recorded, extra = recorded + 1, extra + 1
            if extra % 5 == 0 and recorded < steps:
                store.undo_step(built.case_id)
    return built


def collect(built: ReportCase, **options):
    with CaseStore.open(built.db) as store:
        return collect_content(store, built.case_id, **options), store.load_case(built.case_id)
