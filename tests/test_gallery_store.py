"""Gallery folder: create, add, open, read, search, remove, crops, info, input validation."""

from __future__ import annotations

import json

import numpy as np
import pytest

from engine.index import (
    Gallery,
    GalleryInputError,
    GalleryItem,
    GalleryMismatchError,
    GalleryNotFoundError,
)
from engine.index.scoring import inner_products

DIM = 16
VIEWS = {"text:UC": DIM, "rgb": DIM}


def unit(rng, n, dim=DIM):
    x = rng.standard_normal((n, dim)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def make_items(n, start=0):
    return [
        {"id": f"item{i}", "source": "clip.mp4", "frame": i, "time": float(i), "camera": f"cam{i % 3}",
         "identity": f"p{i % 7}", "box": [1, 2, 30, 60], "track": i % 5}
        for i in range(start, start + n)
    ]


@pytest.fixture
def rng():
    return np.random.default_rng(0)


@pytest.fixture
def gallery(tmp_path, rng):
    g = Gallery.create(tmp_path / "g", VIEWS, "ckpt-A")
    vectors = {view: unit(rng, 50) for view in VIEWS}
    g.add(make_items(50), vectors, batch_size=16)
    return g, vectors


def folder_bytes(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_add_then_open_round_trips_items_and_vectors(gallery):
    g, vectors = gallery
    again = Gallery.open(g.root)
    assert len(again) == 50
    assert again.ids[:3] == ["item0", "item1", "item2"]
    item = again.item("item7")
    assert item == GalleryItem(id="item7", source="clip.mp4", frame=7, time=7.0, camera="cam1", identity="p0",
                               box=(1, 2, 30, 60), track=2)
    assert again.item(7) == item
    stored = again.vectors("rgb", [3, 9])
    np.testing.assert_allclose(stored, vectors["rgb"][[3, 9]], atol=1e-3)
    assert stored.dtype == np.float32
    # the vectors file is an ordinary .npy of float16 rows in item order
    on_disk = np.load(g.root / "vectors" / "text_UC.f16.npy")
    assert on_disk.dtype == np.float16 and on_disk.shape == (50, DIM)
    np.testing.assert_array_equal(on_disk, vectors["text:UC"].astype(np.float16))
    assert json.loads((g.root / "gallery.json").read_text())["count"] == 50
    assert (g.root / "index" / "rgb.faiss").is_file()


def test_columns_hold_camera_time_identity(gallery):
    g, _ = gallery
    cols = g.columns
    assert cols.cameras.names == ["cam0", "cam1", "cam2"]
    assert cols.camera[4] == cols.cameras.lookup("cam1")
    assert cols.time[10] == 10.0
    assert cols.identities.names[cols.identity[8]] == "p1"


def test_index_search_matches_exact_scores(gallery):
    g, vectors = gallery
    query = vectors["rgb"][5]
    rows, scores = g.search("rgb", query, 5)
    exact = g.vectors("rgb") @ query
    expected = np.argsort(-exact, kind="stable")[:5]
    assert rows.tolist() == expected.tolist()
    np.testing.assert_allclose(scores, exact[expected], atol=1e-4)
    sub_rows, sub_scores = g.search("rgb", query, 2, subset=[1, 5, 9])
    assert sub_rows[0] == 5 and len(sub_rows) == 2
    assert set(sub_rows.tolist()) <= {1, 5, 9}


def test_scoring_kernel_equals_matrix_product(rng):
    matrix = unit(rng, 3000, 24)
    query = unit(rng, 1, 24)[0]
    rows = np.sort(rng.choice(3000, 1200, replace=False))
    np.testing.assert_allclose(inner_products(matrix, query), matrix @ query, atol=1e-5)
    np.testing.assert_allclose(inner_products(matrix, query, rows), matrix[rows] @ query, atol=1e-5)
    with pytest.raises(IndexError):
        inner_products(matrix, query, np.array([3000]))
    # dense blocks are streamed, sparse ones gathered: both give the same numbers, in the order asked
    big = unit(rng, 20_000, 24)
    mixed = np.concatenate([np.arange(0, 4096, 2), np.arange(9000, 20_000, 97)])
    np.testing.assert_allclose(inner_products(big, query, mixed), big[mixed] @ query, atol=1e-5)
    shuffled = rng.permutation(mixed)
    np.testing.assert_allclose(inner_products(big, query, shuffled), big[shuffled] @ query, atol=1e-5)


def test_readding_the_same_items_skips_them(gallery, rng):
    g, _ = gallery
    report = g.add(make_items(60), {view: unit(rng, 60) for view in VIEWS})
    assert (report.added, report.skipped) == (10, 50)
    assert len(Gallery.open(g.root)) == 60
    assert len(set(Gallery.open(g.root).ids)) == 60


def test_remove_rewrites_rows_and_keeps_order(gallery):
    g, vectors = gallery
    assert g.remove(["item1", "item3"]) == 2
    again = Gallery.open(g.root)
    assert len(again) == 48 and "item1" not in again and again.ids[:3] == ["item0", "item2", "item4"]
    np.testing.assert_allclose(again.vectors("rgb", [1])[0], vectors["rgb"][2], atol=1e-3)
    assert again.verify() == []
    with pytest.raises(GalleryInputError, match="item1"):
        again.remove(["item1"])


def test_crops_are_stored_hashed_and_removed_with_their_item(tmp_path, rng):
    g = Gallery.create(tmp_path / "g", {"rgb": DIM}, "ckpt")
    path_a, sha_a = g.put_crop(b"\x89PNG-fake-a", ".png")
    path_b, _ = g.put_crop(b"\x89PNG-fake-b", ".png")
    items = [dict(make_items(1)[0], crop=path_a), dict(make_items(1, 1)[0], crop=path_b)]
    g.add(items, {"rgb": unit(rng, 2)})
    assert g.item("item0").crop_sha256 == sha_a
    assert g.verify() == []
    g.remove(["item0"])
    assert not (g.root / path_a).exists() and (g.root / path_b).exists()


def test_info_reports_counts_and_bytes(gallery):
    g, _ = gallery
    info = g.info()
    assert info["count"] == 50 and info["views"]["rgb"]["dim"] == DIM
    assert info["views"]["rgb"]["index"]["kind"] == "flat"
    assert info["time_range"] == [0.0, 49.0]
    assert info["raw_float32_bytes_per_item"] == 2 * 4 * DIM
    assert info["bytes"]["vectors"] > 2 * 50 * DIM * 2


def test_invalid_add_writes_nothing(gallery, rng):
    g, _ = gallery
    before = folder_bytes(g.root)
    good = {view: unit(rng, 3) for view in VIEWS}
    with pytest.raises(GalleryMismatchError, match="shape"):
        g.add(make_items(3, 100), {"text:UC": unit(rng, 3), "rgb": unit(rng, 3, DIM + 1)})
    with pytest.raises(GalleryMismatchError, match="missing"):
        g.add(make_items(3, 100), {"rgb": good["rgb"]})
    with pytest.raises(GalleryInputError, match="L2-normalised"):
        g.add(make_items(3, 100), {"text:UC": good["text:UC"] * 3, "rgb": good["rgb"]})
    nan = good["rgb"].copy()
    nan[1, 0] = np.nan
    with pytest.raises(GalleryInputError, match="NaN"):
        g.add(make_items(3, 100), {"text:UC": good["text:UC"], "rgb": nan})
    with pytest.raises(GalleryInputError, match="twice"):
        g.add(make_items(2, 100) + make_items(1, 100), good)
    with pytest.raises(GalleryInputError, match="crop file"):
        g.add([dict(item, crop="crops/none.png") for item in make_items(3, 100)], good)
    with pytest.raises(GalleryInputError, match="time"):
        g.add([dict(item, time="noon") for item in make_items(3, 100)], good)
    with pytest.raises(GalleryInputError, match="attribute"):
        g.add([dict(item, attributes={"top_color": "plaid"}) for item in make_items(3, 100)], good)
    with pytest.raises(GalleryInputError, match="relative"):
        g.add([dict(item, crop="../outside.png") for item in make_items(3, 100)], good)
    assert folder_bytes(g.root) == before


def test_create_and_open_errors(tmp_path):
    with pytest.raises(GalleryNotFoundError, match="does not exist"):
        Gallery.open(tmp_path / "nowhere")
    (tmp_path / "plain").mkdir()
    with pytest.raises(GalleryNotFoundError, match="gallery.json"):
        Gallery.open(tmp_path / "plain")
    (tmp_path / "plain" / "x").write_text("x")
    with pytest.raises(GalleryInputError, match="not an empty folder"):
        Gallery.create(tmp_path / "plain", VIEWS, "ckpt")
    with pytest.raises(GalleryInputError, match="dimension"):
        Gallery.create(tmp_path / "a", {"rgb": 0}, "ckpt")
    with pytest.raises(GalleryInputError, match="share the file name"):
        Gallery.create(tmp_path / "b", {"text:UC": 4, "text_UC": 4}, "ckpt")
    with pytest.raises(GalleryInputError, match="fingerprint"):
        Gallery.create(tmp_path / "c", VIEWS, "")


def test_checkpoint_mismatch_is_reported(gallery):
    g, _ = gallery
    g.check_model("ckpt-A", {"rgb": DIM})
    with pytest.raises(GalleryMismatchError, match="ckpt-B"):
        g.check_model("ckpt-B")
    with pytest.raises(GalleryMismatchError, match="dimension"):
        g.check_model("ckpt-A", {"rgb": DIM * 2})
    with pytest.raises(GalleryMismatchError, match="not in the gallery"):
        g.search("reid:DT-ST", np.zeros(DIM), 3)
    with pytest.raises(GalleryMismatchError, match="shape"):
        g.search("rgb", np.ones(DIM + 1), 3)


def test_silhouettes_round_trip_and_bad_ones_are_refused(tmp_path):
    from engine.index.crops import put_silhouette, read_silhouette

    mask = np.zeros((30, 12), np.uint8)
    mask[5:25, 3:9] = 255
    put_silhouette(tmp_path, "item/1", mask)
    assert np.array_equal(read_silhouette(tmp_path, "item/1"), mask)
    assert read_silhouette(tmp_path, "item/2") is None
    for bad in (np.zeros((3, 4, 3), np.uint8), np.zeros((0, 4), np.uint8), np.zeros((3, 4), np.float32)):
        with pytest.raises(GalleryInputError, match="silhouette of item 'x'"):
            put_silhouette(tmp_path, "x", bad)
