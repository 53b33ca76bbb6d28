"""Content-bound gallery fingerprints (engine/index/content.py, docs/hardening.md): swapping two items' stored
vectors, or their crop paths and hashes in items.jsonl, changes the gallery's fingerprint and ``lineup gallery
verify`` names both items; adding items digests only the new ones; remove, set_view and rebuild keep the
digests recorded at ingest (a write does not hide a change); a gallery made before digests were kept says so and
``rebuild`` records them, while cases recorded against its ids-only fingerprints still find their version."""

from __future__ import annotations

import json

import numpy as np
import pytest
from typer.testing import CliRunner

from app.report.galleries import GalleryLookup
from app.store.from_engine import gallery_fingerprint
from engine.index import Gallery, content, vector_file
from engine.index.versions import ids_fingerprint
from lineup.cli import app

DIM = 8


def unit(rng, n, dim=DIM):
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def records(g, start, stop):
    out = []
    for k in range(start, stop):
        path, digest = g.put_crop(f"crop-{k}".encode(), ".png")
        out.append({"id": f"i{k}", "source": "s.mp4", "frame": k, "time": float(k), "camera": "c0",
                    "box": [k, 2.0, 30.0, 60.0], "crop": path, "crop_sha256": digest})
    return out


@pytest.fixture
def gallery(tmp_path):
    rng = np.random.default_rng(3)
    g = Gallery.create(tmp_path / "g", {"rgb": DIM, "ir": DIM}, "ckpt")
    g.add(records(g, 0, 8), {"rgb": unit(rng, 8), "ir": unit(rng, 8)})
    return g


def swap_vectors(g, view, a, b):
    path = g.root / "vectors" / f"{view}.f16.npy"
    rows = np.memmap(path, dtype="<f2", mode="r+", offset=vector_file.HEADER_BYTES, shape=(len(g), DIM))
    rows[[a, b]] = rows[[b, a]]
    rows.flush()
    del rows
    Gallery.open(g.root, check_indexes=False).rebuild()  # indexes in step with the swapped rows: only content differs


def swap_crops(g, a, b):
    path = g.root / "items.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    for key in ("crop", "crop_sha256"):
        lines[a][key], lines[b][key] = lines[b][key], lines[a][key]
    text = "".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) + "\n" for r in lines)
    assert len(text.encode()) == path.stat().st_size  # same bytes, only the two items' crops exchanged
    path.write_text(text, encoding="utf-8")


def verify_cli(root, *extra):
    return CliRunner().invoke(app, ["gallery", "verify", str(root), *extra])


def test_a_sound_gallery_verifies_and_its_fingerprints_agree(gallery):
    assert gallery.verify() == []
    assert gallery.content_covered
    assert gallery.fingerprint(from_files=True) == gallery.fingerprint() == gallery.version.fingerprint
    assert gallery_fingerprint(gallery) == gallery.version.fingerprint
    assert gallery.fingerprint() != ids_fingerprint(gallery.meta, gallery.ids, len(gallery))
    result = verify_cli(gallery.root)
    assert result.exit_code == 0 and "no problems found" in result.output


def test_swapped_vectors_are_named_and_change_the_fingerprint(gallery):
    recorded = gallery.version.fingerprint
    swap_vectors(gallery, "rgb", 2, 5)
    reopened = Gallery.open(gallery.root)
    assert reopened.version.fingerprint == recorded  # what gallery.json recorded at ingest (the rebuild kept it)
    assert reopened.fingerprint(from_files=True) != recorded  # what the files hold now
    problems = reopened.verify()
    assert sorted((p.kind, p.subject) for p in problems) == [("content_vectors", "i2"), ("content_vectors", "i5")]
    assert all("'rgb'" in p.message for p in problems)
    result = verify_cli(gallery.root)
    assert result.exit_code == 1
    assert "items 'i2' and 'i5': stored vectors differ from the content digests recorded when they were added" \
        in result.output
    as_json = json.loads(verify_cli(gallery.root, "--json").output)
    assert {p["subject"] for p in as_json["problems"]} == {"i2", "i5"} and as_json["content_covered"]


def test_swapped_crop_paths_and_hashes_are_named(gallery):
    swap_crops(gallery, 1, 6)
    reopened = Gallery.open(gallery.root)
    problems = reopened.verify(check_sources=True)  # every crop still matches the hash beside it
    assert sorted((p.kind, p.subject) for p in problems) == [("content_record", "i1"), ("content_record", "i6")]
    result = verify_cli(gallery.root, "--sources")
    assert result.exit_code == 1
    assert "items 'i1' and 'i6': items.jsonl records" in result.output
    lookup = GalleryLookup()
    assert lookup.fingerprint(str(gallery.root)) != gallery.version.fingerprint


def test_adding_items_digests_only_the_new_ones(gallery, monkeypatch):
    digested = []
    original = content.item_parts

    def counting(line, rows, views):
        digested.append(json.loads(line)["id"])
        return original(line, rows, views)

    monkeypatch.setattr(content, "item_parts", counting)
    rng = np.random.default_rng(4)
    gallery.add(records(gallery, 8, 11), {"rgb": unit(rng, 3), "ir": unit(rng, 3)}, batch_size=2)
    assert digested == ["i8", "i9", "i10"]
    monkeypatch.setattr(content, "item_parts", original)
    assert gallery.verify() == []
    assert gallery.fingerprint(from_files=True) == gallery.fingerprint()


def test_a_grown_gallery_still_finds_the_first_items_content_bound(gallery):
    first = gallery.fingerprint()
    rng = np.random.default_rng(5)
    gallery.add(records(gallery, 8, 12), {"rgb": unit(rng, 4), "ir": unit(rng, 4)})
    assert gallery.fingerprint(8) == first == gallery.fingerprint(8, from_files=True)
    assert gallery.find_version(first, 8) is not None
    swap_vectors(gallery, "ir", 0, 1)
    assert Gallery.open(gallery.root).fingerprint(8, from_files=True) != first


def test_remove_set_view_and_rebuild_keep_the_digests_recorded_at_ingest(gallery):
    swap_vectors(gallery, "rgb", 2, 5)
    gallery.remove(["i0"])
    named = sorted(p.subject for p in gallery.verify())
    assert named == ["i2", "i5"]
    gallery.set_view("extra", unit(np.random.default_rng(6), len(gallery), 4), {"name": "net"})
    assert sorted(p.subject for p in gallery.verify()) == ["i2", "i5"]
    gallery.rebuild()
    assert sorted(p.subject for p in gallery.verify()) == ["i2", "i5"]
    swap_vectors(gallery, "rgb", 1, 4)  # put the two rows back (row numbers moved up by the remove)
    assert Gallery.open(gallery.root).verify() == []


def test_a_sound_gallery_stays_sound_through_remove_and_set_view(gallery):
    gallery.remove(["i3", "i7"])
    assert gallery.verify() == [] and gallery.fingerprint(from_files=True) == gallery.fingerprint()
    gallery.set_view("extra", unit(np.random.default_rng(7), len(gallery), 4), {"name": "net"})
    assert gallery.verify() == [] and gallery.fingerprint(from_files=True) == gallery.fingerprint()


def test_a_gallery_without_digests_says_so_and_rebuild_records_them(gallery):
    meta_path = gallery.root / "gallery.json"
    meta = json.loads(meta_path.read_text())
    del meta["content_head"]
    meta_path.write_text(json.dumps(meta))
    content.path_of(gallery.root).unlink()
    old = Gallery.open(gallery.root)
    legacy = old.fingerprint()
    assert not old.content_covered
    assert legacy == ids_fingerprint(old.meta, old.ids, len(old)) == old.fingerprint(from_files=True)
    result = verify_cli(gallery.root)
    assert result.exit_code == 0 and "records no content digests" in result.output
    old.rebuild()
    assert old.content_covered and old.verify() == []
    assert old.fingerprint() != legacy and old.versions()[-1].sources == ("content digests recorded",)
    found = old.find_version(legacy, len(old))  # a case recorded before digests were kept
    assert found is not None and found.items == len(old)
    assert "records no content digests" not in verify_cli(gallery.root).output


def test_a_write_to_a_gallery_without_digests_records_them_once(gallery):
    meta_path = gallery.root / "gallery.json"
    meta = json.loads(meta_path.read_text())
    del meta["content_head"]
    meta_path.write_text(json.dumps(meta))
    content.path_of(gallery.root).unlink()
    old = Gallery.open(gallery.root)
    rng = np.random.default_rng(8)
    old.add(records(old, 8, 10), {"rgb": unit(rng, 2), "ir": unit(rng, 2)})
    assert old.content_covered and old.verify() == []


def test_a_lost_digests_file_is_a_problem_and_rebuild_recomputes_it(gallery):
    recorded = gallery.fingerprint()
    content.path_of(gallery.root).unlink()
    problems = Gallery.open(gallery.root).verify()
    assert [p.kind for p in problems] == ["content_digests"] and "rebuild" in problems[0].message
    gallery.rebuild()
    assert gallery.verify() == [] and gallery.fingerprint() == recorded  # nothing had changed: same head
