"""Gallery versions (engine.index.versions): an ingest records a version, a grown gallery still answers for the
first n items a case searched, removing items retires the versions past the first removed row, and
``lineup gallery info`` lists the versions."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.index import Gallery
from engine.index.report import info_lines
from engine.index.versions import fingerprint

DIM = 4


def unit(x):
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


def items(start, stop):
    return [{"id": f"i{k:03d}", "source": "a.mp4", "frame": k, "time": float(k), "camera": "c"}
            for k in range(start, stop)]


def vectors(count, seed=0):
    return {"rgb": unit(np.random.default_rng(seed).standard_normal((count, DIM)))}


@pytest.fixture
def gallery(tmp_path):
    g = Gallery.create(tmp_path / "g", {"rgb": DIM}, "ckpt")
    g.add(items(0, 10), vectors(10))
    return g


def test_a_gallery_without_a_list_has_one_implied_version(gallery):
    (only,) = gallery.versions()
    assert (only.version, only.items, only.recorded) == (1, 10, False)
    head = json.loads((gallery.root / "gallery.json").read_text())["content_head"]
    assert only.content_head == head
    assert only.fingerprint == fingerprint("ckpt", {"rgb": DIM}, [f"i{k:03d}" for k in range(10)], head)
    assert only.fingerprint == gallery.fingerprint() == gallery.fingerprint(from_files=True)


def test_recorded_versions_grow_and_keep_their_first_items(gallery):
    first = gallery.record_version(["a.mp4"])
    assert (first.version, first.items, first.recorded, first.sources) == (1, 10, True, ("a.mp4",))
    assert gallery.record_version(["again"]) == first  # nothing changed: no new version
    gallery.add(items(10, 16), vectors(6, 1))
    assert gallery.version.recorded is False and gallery.version.items == 16
    second = gallery.record_version(["b.mp4"])
    assert (second.version, second.items) == (2, 16)
    meta = json.loads((gallery.root / "gallery.json").read_text())
    assert [(v["version"], v["items"]) for v in meta["versions"]] == [(1, 10), (2, 16)]
    reopened = Gallery.open(gallery.root)
    found = reopened.find_version(first.fingerprint, 10, 1)
    assert found is not None and found.version == 1 and found.items == 10
    assert found.label() == "gallery v1, 10 items"
    assert reopened.fingerprint(10) == first.fingerprint
    lines = "\n".join(info_lines(reopened.info()))
    assert "versions (2):" in lines and "v1" in lines and "b.mp4" in lines


def test_a_case_on_a_gallery_that_grew_before_versions_finds_its_first_items(gallery):
    before = gallery.fingerprint()
    gallery.add(items(10, 14), vectors(4, 2))  # grown with no version recorded
    found = gallery.find_version(before, 10)
    assert found is not None and found.items == 10 and found.version == 0
    assert found.label() == "gallery, first 10 items"
    assert gallery.find_version(before, 11) is None
    assert gallery.find_version("0" * 64, 10) is None


def test_removing_items_retires_the_versions_it_changed(gallery):
    gallery.record_version(["a.mp4"])
    gallery.add(items(10, 16), vectors(6, 3))
    v2 = gallery.record_version(["b.mp4"])
    v1 = gallery.versions()[0]
    gallery.remove(["i012"])
    listed = gallery.versions()
    assert [v.version for v in listed] == [1, 2, 3]
    assert listed[0].retired is None and listed[1].retired is not None
    assert listed[2].items == 15 and listed[2].recorded
    assert gallery.find_version(v1.fingerprint, 10, 1) is not None
    assert gallery.find_version(v2.fingerprint, 16, 2) is None


def test_setting_a_view_records_the_state_before_and_after(gallery):
    before = gallery.fingerprint()
    gallery.set_view("extra", unit(np.random.default_rng(4).standard_normal((10, 3))), {"name": "net"})
    listed = gallery.versions()
    assert [(v.version, v.items) for v in listed] == [(1, 10), (2, 10)]
    assert gallery.find_version(before, 10).version == 1
