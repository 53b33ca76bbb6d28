"""Market-1501 and SYSU-MM01 readers, their filename parsers and evaluation protocols."""

from pathlib import Path

import cv2
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.ingest.datasets import (
    DatasetFormatError,
    DatasetNotFoundError,
    market1501_protocol,
    parse_market_name,
    parse_sysu_path,
    read_dataset,
    sysu_mm01_protocol,
)


def _image(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(path), np.zeros((8, 4, 3), np.uint8))


# ------------------------------------------------------------------------------------------ Market-1501

MARKET_FILES = {
    "bounding_box_train": ["0002_c1s1_000451_03.jpg", "0002_c2s1_000301_01.jpg", "0007_c3s1_000100_01.jpg",
                           "-1_c1s1_000401_03.jpg"],
    "bounding_box_test": ["0001_c1s1_001051_03.jpg",   # same person and camera as query 0 -> removed
                          "0001_c2s1_000151_01.jpg",   # positive
                          "0003_c4s2_000201_02.jpg",   # positive of query 1
                          "0000_c1s1_000001_01.jpg",   # distractor
                          "-1_c3s1_000002_01.jpg"],    # junk -> not read
    "query": ["0001_c1s1_001051_00.jpg", "0003_c5s1_000080_01.jpg", "0005_c1s1_000010_01.jpg"],
}


@pytest.fixture
def market(tmp_path):
    root = tmp_path / "Market-1501"
    for folder, names in MARKET_FILES.items():
        for name in names:
            _image(root / folder / name)
        (root / folder / "Thumbs.db").write_bytes(b"\0")
    return root


def test_market_reads_splits_and_skips_junk(market):
    index = read_dataset("market1501", market)
    assert index.splits == ("train", "gallery", "query")
    assert [len(index.split(s)) for s in index.splits] == [3, 4, 3]
    assert index.notes["junk_skipped"] == {"train": 1, "gallery": 1, "query": 0}
    distractor = [s for s in index.split("gallery") if s.identity == 0]
    assert len(distractor) == 1 and distractor[0].extra["distractor"] is True
    first = index.split("train").samples[0]
    assert (first.identity, first.camera, first.extra["sequence"], first.extra["frame"], first.extra["box"]) == (
        2, "c1", 1, 451, 3)
    assert index.identities == (0, 1, 2, 3, 5, 7)


def test_market_protocol_removes_same_camera_and_skips_queries_without_positive(market):
    protocol = market1501_protocol(read_dataset("market1501", market))
    gallery = [s.image.name for s in protocol.gallery]
    query = [s.image.name for s in protocol.query]
    q0, q1, q2 = (query.index(n) for n in MARKET_FILES["query"])
    same_cam = gallery.index("0001_c1s1_001051_03.jpg")
    assert not protocol.valid[q0, same_cam] and not protocol.positive[q0, same_cam]
    assert protocol.positive[q0, gallery.index("0001_c2s1_000151_01.jpg")]
    assert protocol.valid[q0, gallery.index("0000_c1s1_000001_01.jpg")]
    assert not protocol.positive[:, gallery.index("0000_c1s1_000001_01.jpg")].any()
    assert protocol.positive[q1].sum() == 1
    assert not protocol.valid[q2].any()  # person 5 has no gallery image
    assert sorted(protocol.kept_queries.tolist()) == sorted([q0, q1])
    assert not (protocol.positive & ~protocol.valid).any()


def test_market_bad_filename_and_missing_folder(market):
    _image(market / "query" / "0001_c9s1_000001_01.jpg")
    with pytest.raises(DatasetFormatError, match=r"query: 0001_c9s1_000001_01\.jpg: field 'filename': .*camera 9"):
        read_dataset("market1501", market)
    (market / "query" / "0001_c9s1_000001_01.jpg").unlink()
    _image(market / "query" / "person1.jpg")
    with pytest.raises(DatasetFormatError, match=r"person1\.jpg: field 'filename'"):
        read_dataset("market1501", market)
    (market / "query" / "person1.jpg").unlink()
    for path in (market / "query").iterdir():
        path.unlink()
    (market / "query").rmdir()
    with pytest.raises(DatasetNotFoundError, match="market1501 folder 'query' not found"):
        read_dataset("market1501", market)


@given(pid=st.one_of(st.just(-1), st.integers(0, 9999)), cam=st.integers(1, 6), seq=st.integers(0, 99),
       frame=st.integers(0, 999999), box=st.integers(0, 99))
def test_market_name_round_trip(pid, cam, seq, frame, box):
    person = "-1" if pid == -1 else f"{pid:04d}"
    parsed = parse_market_name(f"{person}_c{cam}s{seq}_{frame:06d}_{box:02d}.jpg")
    assert (parsed.identity, parsed.camera, parsed.sequence, parsed.frame, parsed.box) == (pid, cam, seq, frame, box)


@given(st.text(max_size=30))
def test_market_parser_accepts_only_what_it_can_reproduce(name):
    try:
        parsed = parse_market_name(name)
    except ValueError as exc:
        assert repr(name) in str(exc)
        return
    person = "-1" if parsed.identity == -1 else f"{parsed.identity:04d}"
    assert name.startswith(f"{person}_c{parsed.camera}s") and name.endswith(".jpg")
    assert 1 <= parsed.camera <= 6


# ------------------------------------------------------------------------------------------- SYSU-MM01

SYSU_SPLITS = {"train_id.txt": "1,2", "val_id.txt": "3", "test_id.txt": "4,5,\n6"}


@pytest.fixture
def sysu(tmp_path):
    root = tmp_path / "SYSU-MM01"
    for camera in range(1, 7):
        (root / f"cam{camera}").mkdir(parents=True)
        for person in (1, 2, 3, 4, 5, 6, 9):  # 9 is in no id file
            if person == 6 and camera == 3:
                continue  # not every person is seen by every camera
            for frame in (1, 2, 3):
                _image(root / f"cam{camera}" / f"{person:04d}" / f"{frame:04d}.jpg")
    (root / "exp").mkdir()
    for name, text in SYSU_SPLITS.items():
        (root / "exp" / name).write_text(text)
    return root


def test_sysu_reads_modalities_and_splits(sysu):
    index = read_dataset("sysu-mm01", sysu)
    assert index.notes["unlisted_images"] == 18
    assert len(index) == 6 * 6 * 3 - 3
    assert index.split("train").identities == (1, 2) and index.split("test").identities == (4, 5, 6)
    modality = {s.camera: s.modality for s in index}
    assert modality == {"cam1": "rgb", "cam2": "rgb", "cam3": "ir", "cam4": "rgb", "cam5": "rgb", "cam6": "ir"}


@pytest.mark.parametrize(("mode", "cameras"), [("all", {1, 2, 4, 5}), ("indoor", {1, 2})])
def test_sysu_protocol(sysu, mode, cameras):
    index = read_dataset("sysu-mm01", sysu)
    protocol = sysu_mm01_protocol(index, mode=mode, trial=0)
    assert {s.extra["camera_index"] for s in protocol.query} == {3, 6}
    assert len(protocol.query) == 3 * 3 + 2 * 3  # persons 4, 5 in cams 3 and 6; person 6 only in cam 6
    assert {s.identity for s in protocol.query} == {4, 5, 6}
    assert {s.extra["camera_index"] for s in protocol.gallery} == cameras
    assert len(protocol.gallery) == 3 * len(cameras)  # single shot: one image per person and camera
    for i, q in enumerate(protocol.query):
        for j, g in enumerate(protocol.gallery):
            blocked = q.extra["camera_index"] == 3 and g.extra["camera_index"] == 2
            assert protocol.valid[i, j] == (not blocked)
            assert protocol.positive[i, j] == (not blocked and q.identity == g.identity)
    again = sysu_mm01_protocol(index, mode=mode, trial=0)
    assert [s.image for s in again.gallery] == [s.image for s in protocol.gallery]
    draws = {tuple(s.image for s in sysu_mm01_protocol(index, mode=mode, trial=t).gallery) for t in range(10)}
    assert len(draws) > 1
    multi = sysu_mm01_protocol(index, mode=mode, shots=10)
    assert len(multi.gallery) == 3 * 3 * len(cameras)  # only three images exist per person and camera


def test_sysu_errors(sysu):
    with pytest.raises(ValueError, match="mode 'outdoor'"):
        sysu_mm01_protocol(read_dataset("sysu-mm01", sysu), mode="outdoor")
    (sysu / "exp" / "val_id.txt").write_text("3,x7")
    with pytest.raises(DatasetFormatError, match=r"val_id\.txt: entry 2: field 'id': 'x7'"):
        read_dataset("sysu-mm01", sysu)
    (sysu / "exp" / "val_id.txt").write_text("3,4")
    with pytest.raises(DatasetFormatError, match="already listed in split 'val'"):
        read_dataset("sysu-mm01", sysu)
    (sysu / "exp" / "val_id.txt").write_text("3")
    _image(sysu / "cam2" / "0001" / "img1.jpg")
    with pytest.raises(DatasetFormatError, match=r"0001: img1\.jpg: field 'filename'"):
        read_dataset("sysu-mm01", sysu)
    (sysu / "cam2" / "0001" / "img1.jpg").unlink()
    (sysu / "exp" / "test_id.txt").unlink()
    with pytest.raises(DatasetNotFoundError, match=r"test_id\.txt"):
        read_dataset("sysu-mm01", sysu)


@given(cam=st.integers(1, 6), person=st.integers(0, 9999), frame=st.integers(0, 9999))
def test_sysu_path_round_trip(cam, person, frame):
    parsed = parse_sysu_path(Path("root") / f"cam{cam}" / f"{person:04d}" / f"{frame:04d}.jpg")
    assert (parsed.camera, parsed.identity, parsed.frame) == (cam, person, frame)
    assert parsed.modality == ("ir" if cam in (3, 6) else "rgb")


@given(cam=st.text(max_size=6), person=st.text(max_size=6), frame=st.text(max_size=10))
def test_sysu_parser_rejects_or_reproduces(cam, person, frame):
    path = f"{cam}/{person}/{frame}"
    try:
        parsed = parse_sysu_path(path)
    except ValueError:
        return
    assert Path(path).parts[-3:] == (f"cam{parsed.camera}", f"{parsed.identity:04d}", f"{parsed.frame:04d}.jpg")
