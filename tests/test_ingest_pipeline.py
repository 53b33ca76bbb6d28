"""Ingest end to end on small synthetic footage: rendered world people pasted on a plain background and
moving across the frames of a video written with cv2.VideoWriter (so the true boxes are known), image
folders with sidecars, a built world, corrupt inputs, a killed and resumed ingest, the CLI."""

import json
import math
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import cv2
import numpy as np
import pytest
from footage_fakes import FPS, START, FakeEncoder, ForegroundDetector, walkers, write_video

from engine.index import Gallery, GalleryMismatchError
from engine.ingest import HogDetector, IngestError, IngestOptions, ingest, level_of_height
from engine.ingest.encoder import ModelEncoder
from engine.ingest.markers import read_marker
from engine.ingest.timing import parse_time
from engine.kernel.hashing import sha256_file

T0 = parse_time(START, "test")


def iou(a, b) -> float:
    x1, y1 = max(a[0], b[0]), max(a[1], b[1])
    x2, y2 = min(a[0] + a[2], b[0] + b[2]), min(a[1] + a[3], b[1] + b[3])
    inter = max(0, x2 - x1) * max(0, y2 - y1)
    return inter / (a[2] * a[3] + b[2] * b[3] - inter)


@pytest.fixture(scope="module")
def footage(tmp_path_factory):
    root = tmp_path_factory.mktemp("footage")
    images, truth = walkers()
    video = write_video(root / f"cam01_{START}.avi", images)
    return video, images, truth


@pytest.fixture(scope="module")
def tiny_encoder():
    from engine.retrieval.models import create

    return ModelEncoder(create("tiny", device="cpu"))


@pytest.mark.slow
def test_video_with_hog_and_the_model_records_every_field(footage, tiny_encoder, tmp_path):
    video, _, truth = footage
    seen: list[tuple[int, int]] = []
    summary = ingest(video, tmp_path / "g", tiny_encoder, HogDetector(min_person_height=128),
                     IngestOptions(batch_size=4), progress=lambda done, total: seen.append((done, total)))
    report = summary.sources[0]
    assert (report.status, report.kind, report.camera, report.frames) == ("ingested", "video", "cam01", 16)
    assert report.tracks == 2 and report.detections >= 20
    assert 2 <= report.items_added <= 6 and report.items_present == 0
    assert seen[-1] == (16, 16) and all(done <= total for done, total in seen)
    gallery = Gallery.open(tmp_path / "g")
    # footage gets the shipped re-identification network's views beside the checkpoint's (256-d)
    assert len(gallery) == report.items_added
    assert gallery.views == {**tiny_encoder.views, "appearance": 256, "appearance:grey": 256}
    assert set(gallery.views) == {"text:UC", "text:C", "text:M", "text:F", "text:UF", "rgb", "reid:AD-LT",
                                  "appearance", "appearance:grey"}
    assert gallery.view_model("appearance")["name"] == "person-reidentification-retail-0287"
    for view in gallery.views:
        assert np.allclose(np.linalg.norm(gallery.vectors(view), axis=1), 1, atol=0.01)
    assert np.array_equal(gallery.vectors("rgb"), gallery.vectors("text:UF"))  # tiny's image_query_level
    video_sha = sha256_file(video)
    per_track: dict[int, list[int]] = {}
    for item in gallery.iter_items():
        assert item.source == str(video.resolve()) and item.source_sha256 == video_sha
        assert item.camera == "cam01" and item.modality == "rgb"
        assert item.time == pytest.approx(T0 + item.frame / FPS)
        crop = cv2.imread(str(gallery.root / item.crop))
        assert sha256_file(gallery.root / item.crop) == item.crop_sha256
        assert item.resolution == level_of_height(crop.shape[0])
        assert item.box[3] <= crop.shape[0] <= item.box[3] + 2 and item.box[2] <= crop.shape[1] <= item.box[2] + 2
        cx, cy = item.box[0] + item.box[2] / 2, item.box[1] + item.box[3] / 2
        assert any(x <= cx <= x + w and y <= cy <= y + h for x, y, w, h in truth[item.frame])
        per_track.setdefault(item.track, []).append(item.frame)
    assert sorted(per_track) == [1, 2]
    for frames in per_track.values():
        assert len(frames) == len(set(frames)) <= 3
    marker = read_marker(gallery.root, video_sha)
    assert marker["items"] == report.items_added and marker["settings"]["detector"]["name"] == "hog"

    again = ingest(video, tmp_path / "g", tiny_encoder, HogDetector(min_person_height=128))
    assert again.sources[0].status == "done before" and again.totals()["items_added"] == 0
    assert len(Gallery.open(tmp_path / "g")) == report.items_added


def test_killed_ingest_resumes_without_duplicates(footage, tmp_path):
    video, _, _ = footage
    options = IngestOptions(batch_size=1, samples_per_track=4)
    clean = FakeEncoder()
    ingest(video, tmp_path / "clean", clean, ForegroundDetector(), options)
    expected = Gallery.open(tmp_path / "clean").ids
    assert len(expected) == clean.encoded == 8

    with pytest.raises(RuntimeError, match="simulated crash"):
        ingest(video, tmp_path / "g", FakeEncoder(fail_after=3), ForegroundDetector(), options)
    partial = Gallery.open(tmp_path / "g")
    assert len(partial) == 3 and set(partial.ids) <= set(expected)
    assert read_marker(partial.root, sha256_file(video)) is None

    resumed = FakeEncoder()
    summary = ingest(video, tmp_path / "g", resumed, ForegroundDetector(), options)
    assert summary.sources[0].items_present == 3 and summary.sources[0].items_added == 5
    assert resumed.encoded == 5  # items already committed are not encoded again
    final = Gallery.open(tmp_path / "g")
    assert sorted(final.ids) == sorted(expected) and len(set(final.ids)) == len(final.ids)
    assert final.verify() == []


@pytest.mark.slow
def test_sigkilled_ingest_leaves_a_consistent_gallery(footage, tmp_path):
    video, _, _ = footage
    script = textwrap.dedent(f"""
        import sys, time
        sys.path.insert(0, {str(Path(__file__).parent)!r})
        from footage_fakes import FakeEncoder, ForegroundDetector
        from engine.ingest import IngestOptions, ingest

        class Slow(FakeEncoder):
            def __call__(self, *args):
                if self.calls >= 2:
                    print("committed", flush=True)
                    time.sleep(60)
                return super().__call__(*args)

        ingest({str(video)!r}, {str(tmp_path / "g")!r}, Slow(), ForegroundDetector(), IngestOptions(batch_size=1))
    """)
    process = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True,
                               cwd=Path(__file__).parent.parent)
    try:
        assert process.stdout.readline().strip() == "committed"
        time.sleep(0.5)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    killed = Gallery.open(tmp_path / "g")
    assert len(killed) == 2 and killed.verify() == []
    summary = ingest(video, tmp_path / "g", FakeEncoder(), ForegroundDetector(), IngestOptions(batch_size=1))
    assert summary.sources[0].items_present == 2 and summary.sources[0].items_added == 4
    final = Gallery.open(tmp_path / "g")
    assert len(set(final.ids)) == len(final) == 6 and final.verify() == []


def test_corrupt_inputs_are_listed_and_the_rest_goes_on(footage, tmp_path):
    video, images, _ = footage
    source = tmp_path / "in"
    (source / "empty").mkdir(parents=True)
    (source / "odd").mkdir()
    shutil.copy(video, source / "good.avi")
    mp4 = write_video(tmp_path / "whole.mp4", images[:6], codec="mp4v").read_bytes()
    (source / "cut.mp4").write_bytes(mp4[: len(mp4) // 2])
    avi = video.read_bytes()
    (source / "cut.avi").write_bytes(avi[: len(avi) // 2])
    (source / "odd" / "photo.jpg").write_text("this is not a JPEG")
    (source / "notes.txt").write_text("hello")
    seen: list[tuple[int, int]] = []
    summary = ingest(source, tmp_path / "g", FakeEncoder(), ForegroundDetector(),
                     progress=lambda done, total: seen.append((done, total)))
    assert seen[-1][0] == seen[-1][1] > 0  # skipped and short sources still complete the progress
    by_name = {Path(s.path).name: s for s in summary.sources}
    assert by_name["good.avi"].status == "ingested" and by_name["good.avi"].items_added == 6
    assert by_name["cut.mp4"].status == "skipped" and "cannot open" in by_name["cut.mp4"].reason
    cut = by_name["cut.avi"]
    assert cut.status == "ingested" and 0 < cut.frames < 16
    assert any("of the 16 frames" in note for note in cut.notes)
    assert by_name["odd"].status == "skipped" and "could be decoded" in by_name["odd"].reason
    skipped = dict(summary.skipped_files)
    assert "not a decodable image" in skipped[str(source / "odd" / "photo.jpg")]
    assert "not an image, video" in skipped[str(source / "notes.txt")]
    totals = summary.totals()
    assert totals["sources_read"] == 2 and totals["sources_skipped"] == 2 and totals["files_skipped"] == 2
    assert len(Gallery.open(tmp_path / "g")) == totals["items_added"]
    text = "\n".join(summary.lines())
    assert "skipped  " in text and "cut.mp4" in text and "photo.jpg" in text
    with pytest.raises(IngestError, match="holds no images, videos or built world"):
        ingest(source / "empty", tmp_path / "g2", FakeEncoder(), ForegroundDetector())
    with pytest.raises(IngestError, match="does not exist"):
        ingest(source / "missing", tmp_path / "g2", FakeEncoder(), ForegroundDetector())


def test_world_items_carry_ground_truth_without_detection(tmp_path):
    from engine.lab.world.build import build_world

    world = tmp_path / "world"
    build_world(world, identities=2, images_per_identity=6, seed=3, workers=1)
    records = [json.loads(line) for line in (world / "manifest.jsonl").read_text().splitlines()]
    footage_records = {r["image"]: r for r in records if r["modality"] != "sketch"}
    summary = ingest(world, tmp_path / "g", FakeEncoder(), ForegroundDetector())
    report = summary.sources[0]
    assert report.kind == "world" and report.items_added == len(footage_records) == 10
    assert report.detections == 0 and any("2 sketches left out" in note for note in report.notes)
    gallery = Gallery.open(tmp_path / "g")
    modalities = set()
    for item in gallery.iter_items():
        record = footage_records[str(Path(item.source).relative_to(world.resolve()))]
        assert item.identity == str(record["identity"]) and dict(item.attributes) == record["attributes"]
        assert (item.camera, item.modality, item.resolution) == (record["camera"], record["modality"],
                                                                 record["resolution"])
        assert item.time == pytest.approx(parse_time(record["time"], "t"))
        assert item.crop_sha256 == item.source_sha256 == sha256_file(world / record["image"])
        image = cv2.imread(str(world / record["image"]))
        assert item.box == (0.0, 0.0, float(image.shape[1]), float(image.shape[0])) and item.track is None
        modalities.add(item.modality)
    assert modalities == {"rgb", "ir"}
    assert ingest(world, tmp_path / "g", FakeEncoder(), ForegroundDetector()).sources[0].status == "done before"
    assert gallery.ranking is None  # nothing recorded without the checkpoint's weights


def test_ingest_records_the_gallery_domain_and_its_weight(footage, tmp_path):
    from engine.lab.world.build import build_world
    from engine.retrieval.evidence.ranking import DomainWeights

    weights = DomainWeights({"world": 0.5, "footage": 2.0}, {"world": "synthetic", "footage": "real people"})
    world = tmp_path / "world"
    build_world(world, identities=1, images_per_identity=3, seed=4, workers=1)
    ingest(world, tmp_path / "g", FakeEncoder(), ForegroundDetector(), weights=weights)
    ranking = Gallery.open(tmp_path / "g").ranking
    assert ranking.pop("appearance").startswith("the checkpoint's own view: no appearance view")  # a built world
    assert ranking == {"domain": "world", "attribute_weight": 0.5, "origin": "synthetic"}
    ingest(footage[0], tmp_path / "g", FakeEncoder(), ForegroundDetector(), weights=weights)
    assert Gallery.open(tmp_path / "g").ranking["domain"] == "footage"
    ingest(world, tmp_path / "g", FakeEncoder(), ForegroundDetector(), weights=weights)  # footage stays footage
    ranking = Gallery.open(tmp_path / "g").ranking
    assert ranking.pop("appearance").startswith("the checkpoint's own view")  # the gallery keeps what it had
    assert ranking == {"domain": "footage", "attribute_weight": 2.0, "origin": "real people"}


def test_image_folder_with_sidecar_is_one_tracked_sequence(footage, tmp_path):
    _, images, truth = footage
    folder = tmp_path / "frames"
    folder.mkdir()
    rows = ["file,camera,time"]
    for index in range(0, 16, 2):
        cv2.imwrite(str(folder / f"f{index}.png"), images[index])
        rows.append(f"f{index}.png,lobby,{100 + index}")
    (folder / "sidecar.csv").write_text("\n".join(rows) + "\n")
    summary = ingest(folder, tmp_path / "g", FakeEncoder(), ForegroundDetector(),
                     IngestOptions(tracker=IngestOptions().tracker, samples_per_track=2))
    report = summary.sources[0]
    assert (report.kind, report.camera, report.frames, report.tracks) == ("images", "lobby", 8, 2)
    for item in Gallery.open(tmp_path / "g").iter_items():
        path = Path(item.source)
        index = int(path.stem[1:])
        assert item.frame == index // 2 and item.time == 100 + index and item.camera == "lobby"
        assert item.source_sha256 == sha256_file(path)
        assert max(iou(item.box, box) for box in truth[index]) > 0.95


def test_no_tracking_grey_footage_and_stride(footage, tmp_path):
    _, images, _ = footage
    grey = [cv2.cvtColor(cv2.cvtColor(i, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR) for i in images]
    video = write_video(tmp_path / "night.avi", grey)
    summary = ingest(video, tmp_path / "g", FakeEncoder(), ForegroundDetector(),
                     IngestOptions(track=False, stride=4, camera="yard", start=50.0))
    report = summary.sources[0]
    assert report.frames == 4 and report.tracks == 0 and report.items_added == report.detections == 8
    items = list(Gallery.open(tmp_path / "g").iter_items())
    assert {i.frame for i in items} == {0, 4, 8, 12} and {i.track for i in items} == {None}
    assert {i.modality for i in items} == {"ir"} and {i.camera for i in items} == {"yard"}
    assert sorted({i.time for i in items}) == [50.0, 50.4, 50.8, 51.2]


def test_a_gallery_of_another_model_is_refused(footage, tmp_path):
    video, _, _ = footage
    ingest(video, tmp_path / "g", FakeEncoder("model-a"), ForegroundDetector())
    with pytest.raises(GalleryMismatchError, match="fingerprint"):
        ingest(video, tmp_path / "g", FakeEncoder("model-b"), ForegroundDetector())
    other_views = FakeEncoder("model-a")
    other_views.views = {"rgb": 6}
    with pytest.raises(IngestError, match="holds views"):
        ingest(video, tmp_path / "g", other_views, ForegroundDetector())


@pytest.mark.slow
def test_cli_ingest_with_a_checkpoint(footage, tmp_path):
    from typer.testing import CliRunner

    from engine.retrieval.models import create, save
    from lineup.cli import app

    video, _, _ = footage
    checkpoint = save(create("tiny", device="cpu"), tmp_path / "ck")
    args = ["ingest", str(video), "--gallery", str(tmp_path / "g"), "--checkpoint", str(checkpoint),
            "--detector", "hog", "--min-person-height", "128", "--samples-per-track", "1", "--reid", "none",
            "--device", "cpu", "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout.strip().splitlines()[-1])
    assert summary["totals"]["tracks"] == 2 and summary["totals"]["items_added"] == 2
    assert set(Gallery.open(tmp_path / "g").views) == {f"text:{lv}" for lv in ("UC", "C", "M", "F", "UF")} | \
        {"rgb", "appearance", "appearance:grey"}
    bad = CliRunner().invoke(app, ["ingest", str(video), "--gallery", str(tmp_path / "h"), "--checkpoint",
                                   str(checkpoint), "--reid", "XX"])
    assert bad.exit_code == 2 and "unknown re-identification" in bad.output
    assert math.isfinite(summary["seconds"])
