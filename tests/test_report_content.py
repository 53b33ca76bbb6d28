"""Report content (app/report/content.py) collected from a case with three chain steps, a sketch and an IR
still, confirmed and rejected marks and notes, on a tiny gallery of synthetic person crops. The builder
``report_case`` is shared by the other report tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from report_cases import (
    N_ITEMS,
    collect,
    report_case,
)

from app.store import CaseStore
from engine.index import Gallery
from engine.kernel.hashing import sha256_file


@pytest.fixture
def built(tmp_path):
    return report_case(tmp_path)


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
    assert by_kind["sketch"].sha256 == sha256_file(built.sketch) and by_kind["sketch"].steps == ("2",)
    assert by_kind["ir"].sha256 == sha256_file(built.ir) and by_kind["ir"].steps == ("3",)
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


def test_confirmed_results_carry_the_step_score_rank_and_examiner_they_were_confirmed_at(built):
    content, state = collect(built)
    by_id = {r.item_id: r for r in content.confirmed}
    assert set(by_id) == set(built.confirmed) and content.rejected_count == 1
    gallery = Gallery.open(built.gallery_root, check_indexes=False)
    at_step, unrecorded = by_id[built.confirmed[0]], by_id[built.confirmed[1]]
    step3 = state.step(built.steps[2])
    rank = step3.kept_ids.index(at_step.item_id)
    assert (at_step.step_label, at_step.rank, at_step.kept) == ("3", rank + 1, 3)
    assert at_step.score == pytest.approx(step3.kept_scores[rank]) and at_step.examiner == "examiner"
    assert at_step.step_query == "IR image" and at_step.recorded
    # a mark without its step stays without one: no score is taken from a step that happened to keep the item
    assert not unrecorded.recorded and (unrecorded.step_label, unrecorded.score, unrecorded.rank) == (None,) * 3
    assert unrecorded.examiner == "examiner"
    for result in content.confirmed:
        item = gallery.item(result.item_id)
        assert (result.camera, result.time, result.source, result.frame) == (item.camera, item.time, item.source,
                                                                             item.frame)
        assert result.thumbnail is not None and result.thumbnail.png.startswith(b"\x89PNG")
        assert result.thumbnail.blurred is None
    assert at_step.note == "same bag"


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
    assert [(s.label, s.undone) for s in content.steps] == [("1", False), ("2", False), ("3", True)]
    assert {i.kind: i.steps for i in content.query_images}["ir"] == ("3",)  # the undone step still used it
    built.gallery_root.rename(tmp_path / "moved")
    content, _ = collect(built)
    assert any("cannot be opened" in w for w in content.warnings)
    assert content.galleries[0].state == "unavailable"
    assert all(r.thumbnail is None and r.camera is None for r in content.confirmed)
    assert [e.kind for e in content.evidence].count("crop") == 0


def test_a_clothes_may_have_changed_step_says_what_ranked_it_and_how_far_to_trust_it():
    from app.report import text

    said = text.searched_view("biometrics", None)
    assert "clothes may have changed" in said and "not evidence of identity" in said and "gender" in said
    assert text.searched_view("reid:DT-LT", "DT-LT") == "reid:DT-LT (scenario DT-LT)"
    assert text.searched_view("rgb", None) == "rgb"


def test_a_step_that_scored_the_whole_gallery_again_says_so_in_its_candidates():
    from app.report import text

    assert text.candidates(2100, 0, 100) == "2,100 → 100"
    assert text.candidates(2100, 1900, 100, whole_gallery=True) == \
        "2,100 (the whole gallery again) (1,900 filtered out) → 100"
