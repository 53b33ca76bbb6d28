"""Galleries beyond memory (docs/scaling.md): memory-mapped item columns, vectors and indexes at open; columns
built once for galleries made before them and kept consistent through adds, removes, journals and kills; the
index kind chosen by size; whole-gallery steps on a large gallery start from the index's shortlist."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import faiss
import numpy as np
import pytest

from engine.index import Gallery, indexes, journal
from engine.index.columns import COLUMNS_DIR, META_KEY, IdColumn
from engine.index.synthetic import item_id, make_synthetic_gallery, synthetic_vectors
from engine.index.writer_lock import writing
from engine.retrieval.search import SearchSession, StepQuery

DIM = 16


def _rss() -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


def _item_ids_in_file(gallery: Gallery) -> list[str]:
    committed = (gallery.root / "items.jsonl").read_bytes()[: gallery.meta["items_bytes"]]
    return [json.loads(line)["id"] for line in committed.decode().splitlines()]


@pytest.fixture(scope="module")
def big(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("scale") / "g"
    make_synthetic_gallery(path, 200_000, dim=DIM, chunk=50_000)
    return path


def test_open_of_a_large_gallery_maps_columns_vectors_and_index(big):
    before = _rss()
    gallery = Gallery.open(big)
    after = _rss()
    columns = gallery.columns
    for array in (columns.camera, columns.time, columns.identity, columns.offset):
        assert isinstance(array, np.memmap) and len(array) == 200_000
    assert isinstance(gallery.ids, IdColumn) and isinstance(gallery.stored_vectors("rgb"), np.memmap)
    if before is not None:  # nothing is read whole: far under a quarter of the vectors' bytes
        assert after - before < 0.25 * gallery.stored_vectors("rgb").nbytes
    assert gallery.ids[123_456] == item_id(123_456) and gallery.row(item_id(199_999)) == 199_999
    found = gallery.columns.rows_of([item_id(7), "nobody", item_id(150_001)])
    assert found.tolist() == [7, -1, 150_001]
    assert item_id(42) in gallery and "nobody" not in gallery
    assert gallery.item(99_999).camera == gallery.columns.cameras.names[int(gallery.columns.camera[99_999])]
    assert gallery.item(5).id == item_id(5)


def test_synthetic_gallery_does_not_depend_on_the_chunk_size(tmp_path):
    a = make_synthetic_gallery(tmp_path / "a", 1000, dim=DIM, views=("rgb", "text:full"), chunk=128, seed=3)
    b = make_synthetic_gallery(tmp_path / "b", 1000, dim=DIM, views=("rgb", "text:full"), chunk=1000, seed=3)
    assert list(a.ids) == list(b.ids) == [item_id(r) for r in range(1000)]
    for view in ("rgb", "text:full"):
        np.testing.assert_array_equal(a.stored_vectors(view), b.stored_vectors(view))
    np.testing.assert_allclose(np.linalg.norm(synthetic_vectors(10, 5, DIM), axis=1), 1, atol=1e-5)
    grown = make_synthetic_gallery(tmp_path / "a", 1500, dim=DIM, views=("rgb", "text:full"), seed=3)
    assert len(grown) == 1500 and grown.verify() == []


def _strip_columns(root: Path) -> None:
    """The gallery as a program that kept no item columns left it."""
    shutil.rmtree(root / COLUMNS_DIR)
    meta = json.loads((root / "gallery.json").read_text())
    del meta[META_KEY]
    (root / "gallery.json").write_text(json.dumps(meta))


def test_an_old_layout_gallery_gets_its_columns_built_once(tmp_path):
    g = make_synthetic_gallery(tmp_path / "g", 3000, dim=DIM, chunk=700)
    ids, cameras, times = list(g.ids), list(g.columns.cameras.names), np.asarray(g.columns.time).copy()
    _strip_columns(g.root)
    with writing(g.root):  # a writer holds the lock: a reader builds the columns in memory and writes nothing
        def read_elsewhere(out):
            out.append(Gallery.open(g.root))
        opened: list[Gallery] = []
        thread = threading.Thread(target=read_elsewhere, args=(opened,))
        thread.start()
        thread.join()
    assert list(opened[0].ids) == ids and not (g.root / COLUMNS_DIR).exists()
    seen = []
    reopened = Gallery.open(g.root, progress=lambda done, total: seen.append((done, total)))
    assert seen and seen[-1] == (3000, 3000)
    assert (g.root / COLUMNS_DIR / "camera.i32").is_file() and META_KEY in json.loads(
        (g.root / "gallery.json").read_text())
    assert list(reopened.ids) == ids and reopened.columns.cameras.names == cameras
    np.testing.assert_array_equal(reopened.columns.time, times)
    assert isinstance(reopened.columns.camera, np.memmap) and reopened.verify() == []
    seen.clear()
    Gallery.open(g.root, progress=lambda done, total: seen.append(done))
    assert seen == []  # built once


def test_a_writer_builds_missing_columns_before_it_appends(tmp_path):
    g = make_synthetic_gallery(tmp_path / "g", 500, dim=DIM)
    _strip_columns(g.root)
    stale = Gallery.open(g.root)  # (the lock is free: built here already; strip again behind its back)
    _strip_columns(g.root)
    extra = [{"id": "late", "source": "s.mp4", "camera": "camZ", "time": 5.0}]
    stale.add(extra, {"rgb": synthetic_vectors(9000, 1, DIM)})
    final = Gallery.open(g.root)
    assert len(final) == 501 and final.row("late") == 500 and final.columns.cameras.names[-1] == "camZ"
    assert final.verify() == []


def _check_columns(root: Path) -> Gallery:
    gallery = Gallery.open(root, finish_changes=True)
    ids = _item_ids_in_file(gallery)
    assert list(gallery.ids) == ids
    assert [gallery.row(i) for i in ids] == list(range(len(ids)))
    for row in (0, len(ids) // 2, len(ids) - 1):
        item = gallery.item(row)
        code = int(gallery.columns.camera[row])
        assert (None if code < 0 else gallery.columns.cameras.names[code]) == item.camera
        assert gallery.columns.time[row] == item.time
    assert gallery.verify() == []
    return gallery


def test_columns_stay_consistent_through_add_remove_journal_replay_and_kill(tmp_path, monkeypatch):
    g = make_synthetic_gallery(tmp_path / "g", 400, dim=DIM, chunk=150, cameras=4)
    g.remove([item_id(r) for r in range(0, 400, 4)])  # every cam00 item: its name goes
    after_remove = _check_columns(g.root)
    assert "cam00" not in after_remove.columns.cameras.names and len(after_remove) == 300

    def crash(root):
        if (root / journal.JOURNAL_FILE).exists():
            raise KeyboardInterrupt("killed after the journal was written")
        return False

    monkeypatch.setattr(journal, "roll_forward", crash)
    with pytest.raises(KeyboardInterrupt):
        after_remove.remove([item_id(1), item_id(2)])
    monkeypatch.undo()
    replayed = _check_columns(g.root)
    assert len(replayed) == 298 and item_id(1) not in replayed

    # a kill mid-add: a half-written batch in items.jsonl and in every column file past the commit
    for path in [g.root / "items.jsonl", *(g.root / COLUMNS_DIR).glob("*.i*"), g.root / COLUMNS_DIR / "ids.bin"]:
        with open(path, "ab") as fh:
            fh.write(b"\x07" * 13)
    killed = _check_columns(g.root)
    assert len(killed) == 298
    killed.add([{"id": "new", "source": "s.mp4", "camera": "cam09", "time": 1.5}],
               {"rgb": synthetic_vectors(5000, 1, DIM)})
    grown = _check_columns(g.root)
    assert grown.row("new") == 298 and grown.columns.cameras.names[int(grown.columns.camera[298])] == "cam09"
    grown.rebuild()
    _check_columns(g.root)


def test_the_index_kind_follows_the_size_and_a_stream_switches_to_ivf(tmp_path):
    small = make_synthetic_gallery(tmp_path / "small", 900, dim=DIM, ivf_threshold=1000)
    assert small.index_spec("rgb").kind == "flat" and not small.uses_shortlist
    big = make_synthetic_gallery(tmp_path / "big", 4000, dim=DIM, ivf_threshold=1000, chunk=1500)
    spec = big.index_spec("rgb")
    assert spec.kind == "ivf" and spec.count == 4000 and big.uses_shortlist
    assert big.meta["indexes"]["rgb"]["recall_at_100"] >= 0.95
    assert big.faiss_index("rgb").ntotal == 4000 and big.verify() == []


def _exact(gallery: Gallery, vector: np.ndarray) -> np.ndarray:
    """Exact scores of every item with ``vector`` made unit (as a step makes its query vector)."""
    return np.asarray(gallery.stored_vectors("rgb"), dtype=np.float32) @ (vector / np.linalg.norm(vector))


def test_whole_gallery_steps_of_a_large_gallery_start_from_the_index(tmp_path, monkeypatch):
    g = make_synthetic_gallery(tmp_path / "g", 6000, dim=DIM, ivf_threshold=1000, chunk=2000)
    monkeypatch.setattr(type(g._folder), "matrix", lambda *a: pytest.fail("the whole view was read as a matrix"))
    session = SearchSession(g, shortlist=300)
    session.reject(item_id(41))
    session.confirm(item_id(5999))
    step = session.step(StepQuery(example=item_id(40), k=100))
    vector = g.vectors("rgb", [40])[0]
    exact = _exact(g, vector)
    assert 300 <= step.rows.size <= 301 and 5999 in step.rows.tolist() and 41 not in step.rows.tolist()
    np.testing.assert_allclose(step.scores, exact[step.rows], atol=1e-5)  # the shortlist's scores are exact
    truth = set(np.argsort(-exact)[:101].tolist()) - {41}
    best = set(step.rows[np.argsort(-step.scores)][:100].tolist())
    assert len(best & truth) >= 95  # recall@100 of the IVF shortlist
    second = session.step(StepQuery(example=item_id(40), rho=0.5))
    assert set(second.rows.tolist()) <= set(step.kept.tolist())  # later steps score their candidates only
    np.testing.assert_allclose(second.scores, exact[second.rows], atol=1e-5)
    filtered = SearchSession(g, shortlist=50).step(StepQuery(example=item_id(40), cameras=("cam03",)))
    assert filtered.rows.size == 50 and set(g.columns.camera[filtered.rows].tolist()) == {3}
    narrow = SearchSession(g, shortlist=600).step(StepQuery(example=item_id(40), cameras=("cam01",)))
    assert narrow.rows.size == 600 and set(g.columns.camera[narrow.rows].tolist()) == {1}


def test_first_step_of_a_small_gallery_equals_exact_search(tmp_path):
    g = make_synthetic_gallery(tmp_path / "g", 2000, dim=DIM)
    step = SearchSession(g).step(StepQuery(example=item_id(77), k=50))
    exact = _exact(g, g.vectors("rgb", [77])[0])
    assert step.rows.tolist() == list(range(2000))
    np.testing.assert_allclose(step.scores, exact, atol=1e-5)
    assert set(step.kept.tolist()) == set(np.argsort(-exact, kind="stable")[:50].tolist())


def test_a_large_top_k_probes_enough_lists_to_fill_it():
    vectors = synthetic_vectors(0, 20_000, DIM).astype(np.float16)
    index, spec = indexes.build(vectors, "ivf")
    faiss.extract_index_ivf(index).nprobe = 1  # lists of about 20 000 / nlist items each
    query = vectors[:1].astype(np.float32)
    assert (index.search(query, 3000)[1] >= 0).sum() < 3000  # the index's own nprobe cannot fill k
    scores, rows = indexes.search_among(index, query, 3000)
    assert (rows >= 0).sum() == 3000 and indexes.probes_for(index, 3000) > 1
    allowed = np.zeros(20_000, dtype=bool)
    allowed[::10] = True
    scores, rows = indexes.search_among(index, query, 500, allowed)
    assert (rows >= 0).sum() == 500 and (rows[0] % 10 == 0).all()


def test_the_fingerprint_of_an_id_column_hashes_the_same_bytes_as_its_ids_one_by_one():
    from engine.index.versions import fingerprint

    ids = [f"cam{i % 7}/person-é{i}" if i % 3 else f"x{i}" for i in range(150_000)]  # > two blocks, multi-byte
    encoded = [i.encode("utf-8") for i in ids]
    column = IdColumn(np.frombuffer(b"".join(encoded), dtype=np.uint8),
                      np.cumsum([len(e) for e in encoded]).astype(np.int64))
    assert list(column[65_530:65_540]) == ids[65_530:65_540]
    for low, high in ((0, len(ids)), (1, 131_073), (65_536, 65_537), (70_000, 70_000)):
        assert fingerprint("m", {"rgb": 16}, column[low:high], "head") == fingerprint("m", {"rgb": 16}, ids[low:high],
                                                                                     "head")
    assert fingerprint("m", {}, column) != fingerprint("m", {}, column[1:])
