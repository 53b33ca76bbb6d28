"""Crash-consistent ingest: a real ingest subprocess is stopped at a named point (``engine.kernel.pause_points``) and
killed with SIGKILL there; the resumed ingest leaves no duplicates, every item with its attribute evidence,
indexes in step, ``gallery verify`` agreeing with reality and a working search. Two concurrent `lineup ingest`
runs into one gallery: the second is refused at once and the gallery stays consistent."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest
from footage_fakes import START, FakeEncoder, ForegroundDetector, walkers, write_video
from typer.testing import CliRunner

from engine.index import Gallery
from engine.index import evidence_table as evidence_store
from engine.ingest import IngestOptions, ingest
from engine.ingest.markers import read_marker
from engine.kernel.hashing import sha256_file
from lineup.cli import app

REPO = Path(__file__).parent.parent
OPTIONS = IngestOptions(batch_size=1, samples_per_track=4)  # 8 items, one commit each


@pytest.fixture(scope="module")
def video(tmp_path_factory):
    images, _ = walkers()
    return write_video(tmp_path_factory.mktemp("crash") / f"cam01_{START}.avi", images)


@pytest.fixture(scope="module")
def clean(video, tmp_path_factory):
    """An uninterrupted ingest: the ids and evidence rows every resumed one must end with."""
    root = tmp_path_factory.mktemp("clean") / "g"
    ingest(video, root, FakeEncoder(), ForegroundDetector(), OPTIONS)
    gallery = Gallery.open(root)
    return gallery, evidence_store.EvidenceTable.read(root)


def wait_for(notice: Path, process: subprocess.Popen, limit: float = 120.0) -> None:
    deadline = time.monotonic() + limit
    while not notice.exists():
        assert process.poll() is None, f"the ingest exited with {process.returncode} before its pause point"
        assert time.monotonic() < deadline, "the ingest never reached its pause point"
        time.sleep(0.05)


def killed_at(point: str, args: list[str], tmp_path: Path, script: str | None = None) -> int:
    """Run an ingest (``script``, else ``lineup`` with ``args``) until it stops at ``point``, SIGKILL it there;
    returns its pid."""
    notice = tmp_path / f"paused-{point.replace(':', '_')}"
    env = dict(os.environ, LINEUP_PAUSE_AT=point, LINEUP_PAUSE_NOTICE=str(notice))
    command = [sys.executable, "-c", script] if script else [sys.executable, "-m", "lineup", *args]
    process = subprocess.Popen(command, cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(notice, process)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    return process.pid


def ingest_script(video: Path, root: Path) -> str:
    return textwrap.dedent(f"""
        import sys
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from footage_fakes import FakeEncoder, ForegroundDetector
        from engine.ingest import IngestOptions, ingest
        ingest({str(video)!r}, {str(root)!r}, FakeEncoder(), ForegroundDetector(),
               IngestOptions(batch_size=1, samples_per_track=4))
    """)


def verify_cli(root: Path) -> int:
    return CliRunner().invoke(app, ["gallery", "verify", str(root)]).exit_code


def assert_whole(root: Path, clean) -> None:
    """No duplicates, the clean run's items, every item with the clean run's evidence row, verify clean, and
    every index search over the whole gallery scores like an exact scan."""
    expected, expected_evidence = clean
    gallery = Gallery.open(root)
    assert len(set(gallery.ids)) == len(gallery) and sorted(gallery.ids) == sorted(expected.ids)
    table = evidence_store.EvidenceTable.read(root)
    for item_id in gallery.ids:
        assert item_id in table.row_of, f"item {item_id} has no attribute evidence"
        assert np.array_equal(table.matrix("pixels")[table.row_of[item_id]],
                              expected_evidence.matrix("pixels")[expected_evidence.row_of[item_id]], equal_nan=True)
    assert gallery.verify() == [] and verify_cli(root) == 0
    matrix = gallery.vectors("rgb")
    for row in range(len(gallery)):  # the index answers what an exact scan over the stored vectors answers
        rows, scores = gallery.search("rgb", matrix[row], len(gallery))
        assert sorted(rows.tolist()) == list(range(len(gallery)))
        assert scores == pytest.approx(np.sort(matrix @ matrix[row])[::-1], abs=1e-5)


@pytest.mark.slow
@pytest.mark.parametrize("point, committed, evidence_rows", [
    ("ingest:evidence-written@3", 2, 3),  # a batch's evidence committed, its items not
    ("gallery:batch-committed@3", 3, 3),  # a batch committed, the indexes not saved
    ("gallery:batch-committed@8", 8, 8),  # the last commit, before the indexes were saved
    ("ingest:batch-added@8", 8, 8),  # everything committed, the source's done marker not written
])
def test_ingest_killed_at_a_point_resumes_whole(point, committed, evidence_rows, video, clean, tmp_path):
    root = tmp_path / "g"
    killed_at(point, [], tmp_path, ingest_script(video, root))
    killed = Gallery.open(root)
    assert len(killed) == committed and read_marker(root, sha256_file(video)) is None
    assert len(evidence_store.EvidenceTable.read(root)) == evidence_rows
    if point.startswith("gallery:batch-committed"):  # the indexes lag behind: verify says so, exit 1
        assert {p.kind for p in killed.verify()} >= {"index_count"} and verify_cli(root) == 1
    else:
        assert killed.verify() == []

    summary = ingest(video, root, FakeEncoder(), ForegroundDetector(), OPTIONS)
    report = summary.sources[0]
    assert (report.items_present, report.items_added) == (committed, 8 - committed)
    assert bool(summary.repairs) == point.startswith("gallery:batch-committed")
    assert_whole(root, clean)


@pytest.mark.slow
def test_a_rerun_after_a_kill_before_the_index_save_repairs_the_indexes(video, clean, tmp_path):
    """The issue's probe: killed after the last commit, the rerun adds nothing and must still fix the indexes."""
    root = tmp_path / "g"
    killed_at("gallery:batch-committed@8", [], tmp_path, ingest_script(video, root))
    assert verify_cli(root) == 1
    summary = ingest(video, root, FakeEncoder(), ForegroundDetector(), OPTIONS)
    assert summary.totals()["items_added"] == 0
    assert summary.repairs == ["wrote the indexes of views ['rgb', 'reid:AD-LT', 'appearance', 'appearance:grey'], "
                               "which lagged behind the committed vectors"]
    assert verify_cli(root) == 0


def test_items_without_evidence_are_named_by_verify_and_filled_on_resume(video, clean, tmp_path):
    """A gallery whose items lack evidence rows (written before evidence was committed first): verify names
    them; the next ingest computes their evidence from the stored crops (and source frames)."""
    root = tmp_path / "g"
    ingest(video, root, FakeEncoder(), ForegroundDetector(), OPTIONS)
    gallery = Gallery.open(root)
    table = evidence_store.EvidenceTable.read(root)
    dropped = gallery.ids[2:5]
    kept = [i for i in gallery.ids if i not in dropped]
    evidence_store.rewrite(root, kept, [table.record(table.row_of[i]) for i in kept])
    problems = gallery.verify()
    assert [(p.kind, p.subject) for p in problems] == [("evidence_missing", i) for i in dropped]
    assert verify_cli(root) == 1

    summary = ingest(video, root, FakeEncoder(), ForegroundDetector(), OPTIONS)
    assert summary.sources[0].status == "done before" and summary.totals()["items_added"] == 0
    assert summary.repairs == ["computed the attribute evidence of 3 items that had none, from their stored crops "
                               "(carried-objects evidence cannot be recovered)"]
    filled = evidence_store.EvidenceTable.read(root)
    expected = clean[1]
    for item_id in dropped:
        again = filled.record(filled.row_of[item_id])["pixels"].probabilities
        before = expected.record(expected.row_of[item_id])["pixels"].probabilities
        assert again.keys() == before.keys()
        for key, probabilities in before.items():
            assert again[key] == pytest.approx(probabilities, abs=2e-2), key
    assert Gallery.open(root).verify() == [] and verify_cli(root) == 0


@pytest.mark.slow
def test_a_second_lineup_ingest_into_the_same_gallery_fails_fast(video, tmp_path):
    from engine.retrieval.models import create, save

    checkpoint = save(create("tiny", device="cpu"), tmp_path / "ck")
    root = tmp_path / "g"
    args = ["ingest", str(video), "--gallery", str(root), "--checkpoint", str(checkpoint), "--detector", "hog",
            "--min-person-height", "128", "--samples-per-track", "2", "--batch", "1", "--reid", "none",
            "--device", "cpu"]
    notice = tmp_path / "paused"
    env = dict(os.environ, LINEUP_PAUSE_AT="ingest:batch-added@1", LINEUP_PAUSE_NOTICE=str(notice))
    first = subprocess.Popen([sys.executable, "-m", "lineup", *args], cwd=REPO, env=env,
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(notice, first)
        second = subprocess.run([sys.executable, "-m", "lineup", *args], cwd=REPO, capture_output=True,
                                text=True, timeout=300)
        assert second.returncode == 2
        assert f"error: gallery {root} is being written by process {first.pid} (started " in second.stderr
        assert "Traceback" not in second.stderr
        during = Gallery.open(root)  # readers are not blocked
        assert len(during) == 1
    finally:
        first.send_signal(signal.SIGKILL)
        first.wait(timeout=30)
    assert Gallery.open(root).verify() == [] and verify_cli(root) == 0
    resumed = CliRunner().invoke(app, [*args, "--json"])
    assert resumed.exit_code == 0, resumed.output
    final = Gallery.open(root)
    assert len(final) == 4 and len(set(final.ids)) == 4 and final.verify() == []
    table = evidence_store.EvidenceTable.read(root)
    assert set(final.ids) <= set(table.row_of)
