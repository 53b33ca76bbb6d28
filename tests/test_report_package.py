"""Evidence packages (app/report/package.py, package_verify.py, segments.py): a case with footage exported as one
zip — report, manifests, crops, a stream-copied segment per video sighting, the original file of an image
sighting — and checked: a changed byte in any file, a missing or added file, a missing or changed source, and
unsafe or broken zips are each named."""

from __future__ import annotations

import hashlib
import json
import struct
import zipfile
from pathlib import Path

import av
import numpy as np
import pytest
from package_cases import FRAMES, VIDEO_ITEMS, footage_case
from typer.testing import CliRunner

from app.report import PackageError, export_package, verify_package
from app.report.package_manifest import PACKAGE_MANIFEST
from app.report.segments import SegmentError, cut_segment
from engine.kernel.hashing import sha256_file
from lineup.cli import app

pytestmark = pytest.mark.usefixtures("qapp")  # a QApplication, as in the app (not a bare QGuiApplication)


@pytest.fixture(scope="module")
def packaged(tmp_path_factory, qapp):
    root = tmp_path_factory.mktemp("package")
    built = footage_case(root)
    result = export_package(built.db, built.case_id, root / "case.zip", report_format="html")
    return built, result


def manifest_of(path: Path) -> dict:
    with zipfile.ZipFile(path) as archive:
        return json.loads(archive.read(PACKAGE_MANIFEST))


def decoded(path: Path) -> list[np.ndarray]:
    with av.open(str(path)) as video:
        return [frame.to_ndarray(format="bgr24") for frame in video.decode(video=0)]


def keyframes(path: Path) -> list[int]:
    """Frame numbers (presentation order) of the video's keyframes."""
    with av.open(str(path)) as video:
        packets = [(p.pts, p.is_keyframe) for p in video.demux(video.streams.video[0]) if p.size]
    return [index for index, (_, key) in enumerate(sorted(packets)) if key]


def rewritten(source: Path, target: Path, change=None, drop: str | None = None,
              add: tuple[str, bytes] | None = None) -> Path:
    """A copy of the zip with ``change(name, data)`` applied to each entry, ``drop`` left out, ``add`` added."""
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            if info.filename == drop:
                continue
            data = old.read(info.filename)
            new.writestr(info, change(info.filename, data) if change else data)
        if add:
            new.writestr(*add)
    return target


def flip_one_byte(data: bytes) -> bytes:
    middle = len(data) // 2
    return data[:middle] + bytes([data[middle] ^ 0x01]) + data[middle + 1:]


def test_the_package_holds_every_file_listed_with_its_hash_and_verifies(packaged, tmp_path):
    built, result = packaged
    manifest = manifest_of(result.path)
    with zipfile.ZipFile(result.path) as archive:
        names = set(archive.namelist())
        for entry in manifest["files"]:
            data = archive.read(entry["name"])
            assert (len(data), hashlib.sha256(data).hexdigest()) == (entry["size"], entry["sha256"])
    assert names == {e["name"] for e in manifest["files"]} | {PACKAGE_MANIFEST}
    kinds = sorted(e["kind"] for e in manifest["files"])
    assert kinds == ["crop"] * 4 + ["report", "report-manifest", "segment", "segment", "source"]
    assert manifest["report"] == {"file": "report.html", "manifest": "report.html.manifest.json"}
    assert manifest["route"] == "cam1 → cam2" and result.gaps == () and result.sightings == 3
    assert {e["item"] for e in manifest["files"] if e["kind"] == "crop"} == {"v1", "v2", "v3", "s1"}
    check = verify_package(result.path)
    assert check.ok, check.problems
    assert any("not checked against its case database" in note for note in check.notes)
    with_db = verify_package(result.path, built.db)
    assert with_db.ok, with_db.problems
    assert not list(result.path.parent.glob(".*"))  # no temporary file or folder left beside it


def test_a_video_sighting_is_a_stream_copy_from_the_keyframe_to_its_last_frame(packaged, tmp_path):
    built, result = packaged
    first_sighting = manifest_of(result.path)["sightings"][0]
    assert first_sighting["items"] == ["v1", "v2"] and first_sighting["frames"] == [20, 31]
    source = first_sighting["sources"][0]
    assert source["sha256"] == source["sha256_recorded"] == sha256_file(built.video)
    segment = source["segment"]
    start, last = segment["frames"]
    assert last == 31 and start <= 20 and start in keyframes(built.video) and segment["codec"] == "mpeg4"
    with zipfile.ZipFile(result.path) as archive:
        out = tmp_path / "segment.mp4"
        out.write_bytes(archive.read(source["files"][0]))
    frames = decoded(out)
    assert len(frames) == segment["frame_count"] == last - start + 1
    original = decoded(built.video)
    assert len(original) == FRAMES
    for got, expected in zip(frames, original[start:last + 1], strict=True):
        assert np.array_equal(got, expected)  # the same packets, so the very same pixels
    third = VIDEO_ITEMS[2]
    second = manifest_of(result.path)["sightings"][1]["sources"][0]["segment"]
    assert second["frames"][1] == third[2] and second["frames"][0] in keyframes(built.video)


def test_an_image_sighting_carries_the_original_file_named_by_its_hash(packaged):
    built, result = packaged
    still = manifest_of(result.path)["sightings"][2]
    assert still["camera"] == "cam2" and still["frames"] == [None, None]
    digest = sha256_file(built.still)
    assert still["sources"][0]["sha256_recorded"] == digest
    assert still["sources"][0]["files"] == [f"sources/{digest}.png"]
    with zipfile.ZipFile(result.path) as archive:
        assert archive.read(f"sources/{digest}.png") == built.still.read_bytes()


def test_a_changed_byte_in_any_file_is_named(packaged, tmp_path):
    _, result = packaged
    with zipfile.ZipFile(result.path) as archive:
        names = archive.namelist()
    assert len(names) == 10
    for number, name in enumerate(names):
        changed = rewritten(result.path, tmp_path / f"changed-{number}.zip",
                            change=lambda entry, data, name=name: flip_one_byte(data) if entry == name else data)
        check = verify_package(changed)
        assert not check.ok and any(name in problem for problem in check.problems), (name, check.problems)


def test_a_byte_flipped_inside_the_zip_is_named_as_damaged(packaged, tmp_path):
    _, result = packaged
    raw = bytearray(result.path.read_bytes())
    with zipfile.ZipFile(result.path) as archive:
        info = next(i for i in archive.infolist() if i.filename.startswith("segments/"))
    name_length, extra_length = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
    raw[info.header_offset + 30 + name_length + extra_length + info.compress_size // 2] ^= 0x40
    damaged = tmp_path / "damaged.zip"
    damaged.write_bytes(bytes(raw))
    problems = verify_package(damaged).problems
    assert len(problems) == 1 and info.filename in problems[0] and "damaged" in problems[0]


def test_a_missing_or_an_extra_file_is_named(packaged, tmp_path):
    _, result = packaged
    crop = next(e["name"] for e in manifest_of(result.path)["files"] if e["kind"] == "crop")
    missing = verify_package(rewritten(result.path, tmp_path / "missing.zip", drop=crop)).problems
    assert missing == (f"file {crop} (crop) is missing from the package",)
    extra = verify_package(rewritten(result.path, tmp_path / "extra.zip", add=("notes.txt", b"hello"))).problems
    assert extra == ("file notes.txt is in the package but not in its manifest (added after it was made)",)
    no_manifest = verify_package(rewritten(result.path, tmp_path / "bare.zip", drop=PACKAGE_MANIFEST)).problems
    assert PACKAGE_MANIFEST in no_manifest[0] and "missing" in no_manifest[0]


def test_unsafe_or_broken_zips_are_named_errors(tmp_path):
    not_zip = tmp_path / "not.zip"
    not_zip.write_text("just text")
    with pytest.raises(PackageError, match="is not a zip file"):
        verify_package(not_zip)
    slip = tmp_path / "slip.zip"
    with zipfile.ZipFile(slip, "w") as archive:
        archive.writestr("../outside.txt", b"x")
    with pytest.raises(PackageError, match=r"unsafe path '\.\./outside\.txt'"):
        verify_package(slip)
    absolute = tmp_path / "absolute.zip"
    with zipfile.ZipFile(absolute, "w") as archive:
        archive.writestr(zipfile.ZipInfo("/etc/passwd"), b"x")
    with pytest.raises(PackageError, match="absolute path"):
        verify_package(absolute)
    bomb = tmp_path / "bomb.zip"
    with zipfile.ZipFile(bomb, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("big.bin", b"\0" * 4096)
    raw = bytearray(bomb.read_bytes())
    central = raw.rfind(b"PK\x01\x02")
    raw[central + 24:central + 28] = struct.pack("<I", 0xFFFFFF00)  # the uncompressed size it claims
    bomb.write_bytes(bytes(raw))
    with pytest.raises(PackageError, match="sizes are absurd"):
        verify_package(bomb)


def test_a_missing_or_changed_source_is_a_recorded_gap(tmp_path):
    built = footage_case(tmp_path)
    built.still.write_bytes(built.still.read_bytes() + b"appended")
    built.video.unlink()
    result = export_package(built.db, built.case_id, tmp_path / "gaps.zip", report_format="html")
    assert len(result.gaps) == 3
    assert sum("is missing" in gap for gap in result.gaps) == 2
    assert any(gap.startswith("sighting 3 (cam2)") and "changed since ingest" in gap for gap in result.gaps)
    manifest = manifest_of(result.path)
    assert not [e for e in manifest["files"] if e["kind"] in ("segment", "source")]
    check = verify_package(result.path)
    assert check.ok and sum(note.startswith("gap: ") for note in check.notes) == 3


def test_a_video_that_cannot_be_cut_is_carried_whole(tmp_path):
    built = footage_case(tmp_path, video_ending=".footage")
    with pytest.raises(SegmentError, match="has 60 frames"):
        cut_segment(built.video, 20, 99, tmp_path / "x.mp4")
    result = export_package(built.db, built.case_id, tmp_path / "whole.zip", report_format="html")
    manifest = manifest_of(result.path)
    digest = sha256_file(built.video)
    for sighting in manifest["sightings"][:2]:  # both sightings of the video share the one copy
        source = sighting["sources"][0]
        assert source["files"] == [f"sources/{digest}.footage"] and "cannot be copied" in source["cut"]
    assert [e["kind"] for e in manifest["files"]].count("source") == 2  # the video and the still
    with zipfile.ZipFile(result.path) as archive:
        assert sha256_file(built.video) == hashlib.sha256(
            archive.read(f"sources/{digest}.footage")).hexdigest()
    assert verify_package(result.path).ok


def test_a_failed_export_leaves_nothing_behind(tmp_path):
    built = footage_case(tmp_path)
    out_dir = tmp_path / "out"
    out_dir.mkdir()

    def stop(_done, _total, message):
        if message.startswith("Packaging sighting 2"):
            raise RuntimeError("cancelled")

    with pytest.raises(RuntimeError, match="cancelled"):
        export_package(built.db, built.case_id, out_dir / "case.zip", report_format="html", progress=stop)
    assert list(out_dir.iterdir()) == []


def test_the_sightings_section_lists_every_sighting(packaged):
    _, result = packaged
    with zipfile.ZipFile(result.path) as archive:
        page = archive.read("report.html").decode("utf-8")
    assert "<h2>Sightings (3)</h2>" in page and "cam1 → cam2" in page
    table = page[page.index('class="grid sightings"'):]
    table = table[:table.index("</table>")]
    assert table.count("<tr>") == 4  # the header and one row per sighting
    assert "20–31" in table and "1.1 s" in table and "footage/cam2_still.png" in table
    assert 'alt="sightings timeline"' in page


def test_cli_exports_and_verifies_a_package(tmp_path):
    built = footage_case(tmp_path)
    runner = CliRunner()
    out = tmp_path / "case.zip"
    exported = runner.invoke(app, ["report", "export", "--db", str(built.db), "--case", str(built.case_id),
                                   "--package", str(out)])
    assert exported.exit_code == 0, exported.output
    assert f"wrote {out} (10 files" in exported.output and "report pdf, 3 sightings" in exported.output
    verified = runner.invoke(app, ["report", "verify", str(out)])
    assert verified.exit_code == 0 and "OK:" in verified.output, verified.output
    checked = runner.invoke(app, ["report", "verify", str(out), "--db", str(built.db)])
    assert checked.exit_code == 0, checked.output
    changed = rewritten(out, tmp_path / "changed.zip",
                        change=lambda name, data: flip_one_byte(data) if name == "report.pdf" else data)
    failed = runner.invoke(app, ["report", "verify", str(changed)])
    assert failed.exit_code == 1 and "file report.pdf (report) has been changed" in failed.output
    both = runner.invoke(app, ["report", "export", "--db", str(built.db), "--case", "1", "--out",
                               str(tmp_path / "r.pdf"), "--package", str(out)])
    assert both.exit_code == 2 and "exactly one of --out" in both.output
    no_db = runner.invoke(app, ["report", "verify", str(tmp_path / "r.pdf")])
    assert no_db.exit_code == 2 and "--db is required" in no_db.output
    slip = tmp_path / "slip.zip"
    with zipfile.ZipFile(slip, "w") as archive:
        archive.writestr("../x", b"x")
    unsafe = runner.invoke(app, ["report", "verify", str(slip)])
    assert unsafe.exit_code == 2 and "unsafe path" in unsafe.output
