"""verify() finds missing crops, hash mismatches and index/metadata disagreement; broken indexes give clear
errors naming the fix; rebuild() repairs what it can."""

from __future__ import annotations

import json

import faiss
import numpy as np
import pytest

from engine.index import Gallery, GalleryCorruptError, GalleryIndexError, indexes, vector_file

DIM = 8


def unit(rng, n):
    x = rng.standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


@pytest.fixture
def gallery(tmp_path):
    rng = np.random.default_rng(2)
    g = Gallery.create(tmp_path / "g", {"rgb": DIM, "reid:DT-ST": DIM}, "ckpt")
    records = []
    for k in range(12):
        path, _ = g.put_crop(f"crop-{k}".encode(), ".png")
        records.append({"id": f"i{k}", "source": "s.mp4", "crop": path})
    g.add(records, {"rgb": unit(rng, 12), "reid:DT-ST": unit(rng, 12)})
    return g


def kinds(problems):
    return sorted(p.kind for p in problems)


def test_sound_gallery_has_no_problems(gallery):
    assert gallery.verify() == []


def test_deleted_crop_and_changed_crop_are_found(gallery):
    (gallery.root / gallery.item("i3").crop).unlink()
    (gallery.root / gallery.item("i4").crop).write_bytes(b"tampered")
    problems = gallery.verify()
    assert kinds(problems) == ["crop_hash", "missing_crop"]
    assert {p.subject for p in problems} == {"i3", "i4"}


def test_source_hash_is_checked_on_request(tmp_path):
    rng = np.random.default_rng(3)
    source = tmp_path / "clip.bin"
    source.write_bytes(b"footage")
    g = Gallery.create(tmp_path / "g", {"rgb": DIM}, "ckpt")
    from engine.kernel.hashing import sha256_file

    g.add([{"id": "a", "source": str(source), "source_sha256": sha256_file(source)}], {"rgb": unit(rng, 1)})
    assert g.verify(check_sources=True) == []
    source.write_bytes(b"edited footage")
    assert kinds(g.verify(check_sources=True)) == ["source_hash"]


def test_index_with_wrong_count_is_found_and_blocks_open(gallery):
    index_path = gallery.root / "index" / "rgb.faiss"
    short = indexes.empty_flat(DIM)
    indexes.add_rows(short, gallery.stored_vectors("rgb")[:5])
    faiss.write_index(short, str(index_path))
    assert kinds(gallery.verify()) == ["index_count"]
    # more vectors in the index than items in the gallery: a disagreement open cannot repair
    long = indexes.empty_flat(DIM)
    indexes.add_rows(long, np.concatenate([gallery.stored_vectors("rgb")] * 2))
    faiss.write_index(long, str(index_path))
    assert kinds(gallery.verify()) == ["index_count"]
    with pytest.raises(GalleryIndexError, match="lineup gallery rebuild"):
        Gallery.open(gallery.root)
    repaired = Gallery.open(gallery.root, check_indexes=False)
    repaired.rebuild()
    assert Gallery.open(gallery.root).verify() == []


def test_index_content_disagreement_is_found(gallery):
    index_path = gallery.root / "index" / "rgb.faiss"
    other = indexes.empty_flat(DIM)
    indexes.add_rows(other, gallery.stored_vectors("reid:DT-ST"))
    faiss.write_index(other, str(index_path))
    assert kinds(gallery.verify()) == ["index_content"]


def test_metadata_disagreement_is_found(gallery):
    meta = json.loads((gallery.root / "gallery.json").read_text())
    meta["indexes"]["rgb"]["count"] = 3
    (gallery.root / "gallery.json").write_text(json.dumps(meta))
    assert kinds(Gallery.open(gallery.root).verify()) == ["index_metadata"]


@pytest.mark.parametrize("damage", [b"garbage!" * 4, b"", "truncate"])
def test_corrupt_index_gives_a_clear_error_and_rebuild_fixes_it(gallery, damage):
    index_path = gallery.root / "index" / "reid_DT-ST.faiss"
    if damage == "truncate":
        index_path.write_bytes(index_path.read_bytes()[:-20])
    else:
        index_path.write_bytes(damage)
    with pytest.raises(GalleryIndexError, match=r"reid_DT-ST\.faiss.*lineup gallery rebuild"):
        Gallery.open(gallery.root)
    broken = Gallery.open(gallery.root, check_indexes=False)
    assert kinds(broken.verify()) == ["index_unreadable"]
    broken.rebuild()
    assert Gallery.open(gallery.root).verify() == []


def test_missing_index_file_gives_a_clear_error(gallery):
    (gallery.root / "index" / "rgb.faiss").unlink()
    with pytest.raises(GalleryIndexError, match="missing.*rebuild"):
        Gallery.open(gallery.root)


def test_truncated_vectors_or_items_are_reported_on_open(gallery):
    path = gallery.root / "vectors" / "rgb.f16.npy"
    path.write_bytes(path.read_bytes()[: vector_file.HEADER_BYTES + 3 * DIM * 2])
    with pytest.raises(GalleryCorruptError, match="vectors were lost"):
        Gallery.open(gallery.root)


def test_broken_gallery_json_and_items_are_reported(gallery):
    items = gallery.root / "items.jsonl"
    lines = items.read_bytes().split(b"\n")
    lines[2] = b"{" + b"x" * (len(lines[2]) - 1)  # same length, not JSON
    items.write_bytes(b"\n".join(lines))
    reopened = Gallery.open(gallery.root)  # the item columns are mapped, items.jsonl is read by row
    with pytest.raises(GalleryCorruptError, match="line 3"):
        reopened.item(2)
    assert ("item", "row 2") in [(p.kind, p.subject) for p in reopened.verify()]
    (gallery.root / "gallery.json").write_text("{")
    with pytest.raises(GalleryCorruptError, match="gallery.json"):
        Gallery.open(gallery.root)


def test_vector_header_and_values_are_checked(gallery):
    path = gallery.root / "vectors" / "rgb.f16.npy"
    vector_file.set_rows(path, 12, DIM)
    with open(path, "r+b") as fh:  # overwrite row 4 with zeros
        fh.seek(vector_file.HEADER_BYTES + 4 * DIM * 2)
        fh.write(b"\x00" * DIM * 2)
    problems = Gallery.open(gallery.root, check_indexes=False).verify()
    assert "vector_values" in kinds(problems)
