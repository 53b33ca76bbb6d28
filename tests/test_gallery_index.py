"""Index choice by size: flat up to the threshold, IVF beyond it with nprobe tuned for recall@100 ≥ 0.95."""

from __future__ import annotations

import faiss
import numpy as np
import pytest

from engine.index import Gallery, indexes

DIM = 32


def clustered(rng, n, clusters=150, spread=0.35):
    centres = rng.standard_normal((clusters, DIM)).astype(np.float32)
    x = centres[rng.integers(0, clusters, n)] + spread * rng.standard_normal((n, DIM)).astype(np.float32)
    return x / np.linalg.norm(x, axis=1, keepdims=True)


def test_choice_and_list_count():
    assert indexes.choose_kind(1_000_000) == "flat"
    assert indexes.choose_kind(1_000_001) == "ivf"
    assert indexes.ivf_nlist(1_000_000) == 4096
    assert indexes.ivf_nlist(20_000) == 512
    assert indexes.ivf_nlist(50) == 1


def test_gallery_switches_to_ivf_past_the_threshold_and_keeps_recall(tmp_path):
    rng = np.random.default_rng(4)
    vectors = clustered(rng, 12_000)
    g = Gallery.create(tmp_path / "g", {"rgb": DIM}, "ckpt", ivf_threshold=10_000)
    records = [{"id": f"i{k}", "source": "s"} for k in range(12_000)]
    g.add(records[:8000], {"rgb": vectors[:8000]}, batch_size=4000)
    assert g.info()["views"]["rgb"]["index"]["kind"] == "flat"
    g.add(records, {"rgb": vectors}, batch_size=4000)
    spec = Gallery.open(g.root).info()["views"]["rgb"]["index"]
    assert spec["kind"] == "ivf" and spec["count"] == 12_000
    assert spec["recall_at_100"] >= 0.95 and 1 <= spec["nprobe"] < spec["nlist"]

    # recall measured afresh on other gallery rows, through the gallery's own search
    reopened = Gallery.open(g.root)
    queries = rng.choice(12_000, 60, replace=False)
    truth = indexes.exact_top_k(reopened.stored_vectors("rgb"), vectors[queries], 100)
    found = np.stack([reopened.search("rgb", vectors[q], 100)[0] for q in queries])
    assert indexes.recall_at_k(found, truth) >= 0.93
    assert reopened.verify() == []
    # an IVF gallery shrinking below the threshold goes back to flat
    reopened.remove([f"i{k}" for k in range(3000)])
    assert reopened.info()["views"]["rgb"]["index"]["kind"] == "flat"


def test_tuned_nprobe_is_the_smallest_reaching_the_target_times_the_query_factor():
    rng = np.random.default_rng(5)
    vectors = clustered(rng, 6000).astype(np.float16)
    index, spec = indexes.build(vectors, "ivf", recall_target=0.95)
    assert spec.recall_at_100 >= 0.95
    assert spec.nprobe > indexes.QUERY_NPROBE_FACTOR  # these clusters need more than one list per query
    ivf = faiss.extract_index_ivf(index)
    assert ivf.nprobe == spec.nprobe
    ivf.nprobe = spec.nprobe // indexes.QUERY_NPROBE_FACTOR // 2  # below the row-tuned value
    queries = np.sort(np.random.default_rng(0).choice(6000, 200, replace=False))
    xq = vectors[queries].astype(np.float32)
    _, found = index.search(xq, 100)
    assert indexes.recall_at_k(found, indexes.exact_top_k(vectors, xq, 100)) < 0.95


def test_recall_helper():
    truth = np.array([[1, 2, 3, 4]])
    assert indexes.recall_at_k(np.array([[4, 3, 9, -1]]), truth) == pytest.approx(0.5)


def test_search_uses_a_gpu_copy_when_faiss_sees_a_gpu(tmp_path, monkeypatch):
    """Wiring only (no GPU here): the copy is built from the CPU index and dropped when items are added."""
    built = []

    class FakeGpuCopy:
        def __init__(self, index, vectors):
            built.append(index.ntotal)
            self.index = index

        def search(self, queries, k):
            return self.index.search(queries, k)

    rng = np.random.default_rng(6)
    vectors = clustered(rng, 300)
    g = Gallery.create(tmp_path / "g", {"rgb": DIM}, "ckpt")
    g.add([{"id": f"i{k}", "source": "s"} for k in range(200)], {"rgb": vectors[:200]})
    monkeypatch.setattr(indexes, "gpu_available", lambda: True)
    monkeypatch.setattr(indexes, "GpuCopy", FakeGpuCopy)
    assert g.search("rgb", vectors[7], 1)[0].tolist() == [7]
    g.search("rgb", vectors[8], 1)
    assert built == [200]
    g.add([{"id": f"i{k}", "source": "s"} for k in range(300)], {"rgb": vectors})
    assert g.search("rgb", vectors[250], 1)[0].tolist() == [250]
    assert built == [200, 300]
