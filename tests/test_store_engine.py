"""Engine steps into the case store: a real gallery and search session, recorded with ``from_engine`` and
read back with the same kept items (best first), scores, filters, levels and query images."""

from __future__ import annotations

import numpy as np
import pytest

from app.store import CaseStore
from app.store.from_engine import gallery_identity, step_input
from engine.index import Gallery
from engine.retrieval.encoding.views import gallery_views
from engine.retrieval.search import SearchSession, StepQuery
from engine.retrieval.search.encoder import FingerprintEncoder

DIM = 8
N = 240
PEOPLE = 6


def unit(x):
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


class CentroidEncoder(FingerprintEncoder):
    """Text "person pK" → centroid K; a sketch or IR image → centroid 0."""

    fingerprint = "ckpt-store"

    def __init__(self, centres):
        self.centres = centres

    def level_for(self, text):
        return None

    attribute_weight = None  # the checkpoint states no attribute weight

    def level_and_source(self, text):
        return self.level_for(text), "parser"

    def encode_text(self, text):
        return self.centres[int(text.split()[-1][1:])]

    def encode_fused(self, text, sketch, ir):
        return self.encode_text(text) if text else self.centres[0]


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    rng = np.random.default_rng(3)
    centres = unit(rng.standard_normal((PEOPLE, DIM)))
    identity = rng.integers(0, PEOPLE, N)
    views = gallery_views(DIM)
    vectors = {view: unit(centres[identity] + 0.5 * rng.standard_normal((N, DIM))) for view in views}
    items = [{"id": f"cam{k % 3}/f{k:05d}", "source": "walk.mp4", "frame": k, "time": float(k), "camera": f"cam{k % 3}",
              "identity": f"p{identity[k]}"} for k in range(N)]
    gallery = Gallery.create(tmp_path_factory.mktemp("store-engine") / "gallery", views, "ckpt-store")
    gallery.add(items, vectors)
    return gallery, centres


def test_engine_steps_reopen_with_the_same_kept_items(world, tmp_path):
    gallery, centres = world
    session = SearchSession(gallery, CentroidEncoder(centres), rho=0.5)
    sketch = np.full((32, 16, 3), 200, dtype=np.uint8)
    results = [
        session.step(StepQuery(text="person p2", cameras=frozenset({"cam0", "cam1"}), level="M")),
        session.step(StepQuery(text="person p2", sketch=sketch, k=30)),
        session.step(StepQuery(example="cam1/f00004", threshold=0.2)),
    ]
    with CaseStore.open(tmp_path / "cases.sqlite") as store:
        case = store.create_case("Engine run")
        gallery_id = store.add_gallery(case, **gallery_identity(gallery))
        ids = [store.record_step(case, step_input(result, gallery_id)) for result in results]
        left = store.load_case(case)
    with CaseStore.open(tmp_path / "cases.sqlite") as store:
        state = store.load_case(case)
        assert store.verify_chain(case).ok
    assert state == left and state.active_path == tuple(ids)
    for result, saved in zip(results, state.steps, strict=True):
        assert saved.kept_ids == tuple(result.kept_ids)
        by_id = {result.item_ids[int(r)]: float(s) for r, s in zip(result.rows, result.scores, strict=True)}
        assert saved.kept_scores == tuple(by_id[i] for i in saved.kept_ids)
        assert list(saved.kept_scores) == sorted(saved.kept_scores, reverse=True)
        assert (saved.candidates_before, saved.candidates_after) == (result.candidates_before, result.candidates_after)
        assert saved.histogram["count"] == result.rows.shape[0]
        assert (saved.view, saved.level, saved.keep_rule, saved.k) == \
            (result.view, result.level, result.keep_rule, result.k)
    first, second, third = state.steps
    assert first.filters == {"cameras": ["cam0", "cam1"], "time_range": None}
    assert first.filtered_out == results[0].filtered_rows.shape[0] > 0
    assert first.level_overridden and first.level_source == "override"
    assert second.query_kind == "text+sketch" and second.sketch is not None and second.sketch.original_path is None
    assert second.sketch.stored_path.endswith(".png")
    assert third.example_item == "cam1/f00004" and third.level is None


def test_gallery_identity_follows_the_gallery_contents(world, tmp_path):
    gallery, _ = world
    identity = gallery_identity(gallery)
    assert identity == gallery_identity(Gallery.open(gallery.root))
    assert identity["item_count"] == N and identity["model_fingerprint"] == "ckpt-store"
    other = Gallery.create(tmp_path / "other", gallery_views(DIM), "ckpt-store")
    assert gallery_identity(other)["gallery_fingerprint"] != identity["gallery_fingerprint"]
