"""Report content (app/report/content.py) collected from a case with three chain steps, a sketch and an IR
still, confirmed and rejected marks and notes, on a tiny gallery of synthetic person crops. The builder
``report_case`` is shared by the other report tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
import pytest

from app.report import collect_content
from app.store import CaseStore, StepInput
from app.store.from_engine import gallery_identity
from engine.gallery import Gallery
from engine.hashing import sha256_file

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
        for item in confirmed:
            store.mark(case, gallery_id, item, "confirmed", "same bag" if item == kept3[0] else None)
        store.mark(case, gallery_id, kept3[1], "rejected")
        store.add_note(case, "Seen leaving by the north exit.")
        store.add_note(case, "Sketch drawn from the witness account.", step_id=s2)
    return ReportCase(db, case, gallery_id, gallery.root, sketch, ir, tuple(steps), confirmed, (kept3[1],))


@pytest.fixture
def built(tmp_path):
    return report_case(tmp_path)


def collect(built: ReportCase, **options):
    with CaseStore.open(built.db) as store:
        return collect_content(store, built.case_id, **options), store.load_case(built.case_id)


def test_the_chain_lists_each_step_with_its_level_counts_and_rule(built):
    content, state = collect(built)
    assert [s.number for s in content.chain] == [1, 2, 3]
    assert [s.step_id for s in content.chain] == list(built.steps)
    first, second, third = content.chain
    assert (first.candidates_before, first.candidates_after) == (N_ITEMS, 12)
    assert (second.candidates_before, second.candidates_after, second.query_kind) == (12, 6, "text+sketch")
    assert (third.candidates_before, third.candidates_after, third.keep_rule) == (6, 3, "rho")
    assert (first.level, first.level_source, second.level, second.level_source) == ("C", "parser", "M", "override")
    assert second.level_overridden and not first.level_overridden
    assert third.filters["cameras"] == ["c0", "c1", "c2"]
    assert second.histogram["relevant"] is not None and first.histogram["relevant"] is None
    assert second.cut_score == pytest.approx(min(state.step(built.steps[1]).kept_scores))
    assert content.steps_off_chain == 0 and content.chain_ok and not content.warnings


def test_query_images_and_evidence_carry_the_original_hashes(built):
    content, state = collect(built)
    by_kind = {image.kind: image for image in content.query_images}
    assert set(by_kind) == {"sketch", "ir"}
    assert by_kind["sketch"].sha256 == sha256_file(built.sketch) and by_kind["sketch"].steps == (2,)
    assert by_kind["ir"].sha256 == sha256_file(built.ir) and by_kind["ir"].steps == (3,)
    assert all(image.intact and image.image is not None for image in content.query_images)
    kinds = [e.kind for e in content.evidence]
    assert sorted(kinds) == ["crop", "crop", "gallery", "ir", "sketch"]
    gallery = Gallery.open(built.gallery_root, check_indexes=False)
    for entry in content.evidence:
        if entry.kind == "crop":
            item = gallery.item(entry.label.removeprefix("item "))
            assert entry.sha256 == item.crop_sha256 == sha256_file(Path(entry.path))
        elif entry.kind == "gallery":
            assert entry.sha256 == state.galleries[0].gallery_fingerprint
        else:
            assert entry.sha256 == sha256_file(Path(entry.path))


def test_confirmed_results_have_thumbnail_camera_time_and_last_score(built):
    content, state = collect(built)
    by_id = {r.item_id: r for r in content.confirmed}
    assert set(by_id) == set(built.confirmed) and content.rejected_count == 1
    gallery = Gallery.open(built.gallery_root, check_indexes=False)
    last, dropped = by_id[built.confirmed[0]], by_id[built.confirmed[1]]
    assert last.score_step == 3 and dropped.score_step == 2
    step3 = state.step(built.steps[2])
    assert last.score == pytest.approx(step3.kept_scores[step3.kept_ids.index(last.item_id)])
    for result in content.confirmed:
        item = gallery.item(result.item_id)
        assert (result.camera, result.time) == (item.camera, item.time)
        assert result.thumbnail is not None and result.thumbnail.png.startswith(b"\x89PNG")
        assert result.thumbnail.blurred is None
    assert last.note == "same bag"


def test_notes_and_audit_trail(built):
    content, _ = collect(built)
    with CaseStore.open(built.db) as store:
        trail = store.audit_trail(built.case_id)
    assert [(n.about, n.text) for n in content.notes] == [
        ("case", "Seen leaving by the north exit."), ("step 2", "Sketch drawn from the witness account.")]
    assert [(a.seq, a.action, a.hash) for a in content.audit] == [(e.seq, e.action, e.hash) for e in trail]
    assert content.audit_head.hash == trail[-1].hash and content.audit_first_hash == trail[0].hash
    assert "confirmed" in content.audit[-4].summary


def test_an_undone_step_leaves_the_chain_and_a_missing_gallery_is_a_warning(built, tmp_path):
    with CaseStore.open(built.db) as store:
        store.undo_step(built.case_id)
    content, _ = collect(built)
    assert [s.number for s in content.chain] == [1, 2] and content.steps_off_chain == 1
    assert {i.kind: i.steps for i in content.query_images}["ir"] == ()
    built.gallery_root.rename(tmp_path / "moved")
    content, _ = collect(built)
    assert any("cannot be opened" in w for w in content.warnings)
    assert content.galleries[0].state == "unavailable"
    assert all(r.thumbnail is None and r.camera is None for r in content.confirmed)
    assert [e.kind for e in content.evidence].count("crop") == 0
