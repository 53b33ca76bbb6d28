"""Progressive search session on a synthetic clustered gallery driven by a fake query encoder."""

from __future__ import annotations

import math
from dataclasses import FrozenInstanceError

import numpy as np
import pytest

import engine.index.folder as folder_module
from engine.index import Gallery
from engine.index.scoring import inner_products
from engine.kernel.ontology import LEVELS
from engine.retrieval.encoding.views import gallery_views
from engine.retrieval.metrics.progressive import progressive_ranking
from engine.retrieval.search import SearchSession, StepQuery
from engine.retrieval.search.encoder import FingerprintEncoder
from engine.retrieval.search.ranking import CONFIRMED, UNRANKED

DIM = 16
N = 1001
PEOPLE = 20


class FakeEncoder(FingerprintEncoder):
    """Text → the centroid of the identity named in it; level from a table."""

    fingerprint = "ckpt"

    def __init__(self, centres, levels=None):
        self.centres = centres
        self.levels = levels or {}
        self.calls = []

    def level_for(self, text):
        return self.levels.get(text)

    attribute_weight = None  # the checkpoint states no attribute weight

    def level_and_source(self, text):
        return self.level_for(text), "parser"

    def _vector(self, text):
        return self.centres[int(text.split()[-1][1:])]

    def encode_text(self, text):
        self.calls.append(("text", text))
        return self._vector(text)

    def encode_fused(self, text, sketch, ir):
        self.calls.append(("fused", text, None if sketch is None else sketch.shape, None if ir is None else ir.shape))
        return self._vector(text) if text else self.centres[0]


def unit(x):
    return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(np.float32)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    rng = np.random.default_rng(7)
    centres = unit(rng.standard_normal((PEOPLE, DIM)))
    identity = rng.integers(0, PEOPLE, N)
    views = gallery_views(DIM, scenarios=["DT-ST"])
    vectors = {view: unit(centres[identity] + 0.6 * rng.standard_normal((N, DIM))) for view in views}
    items = [{"id": f"i{k}", "source": "s.mp4", "frame": k, "time": float(k), "camera": f"c{k % 4}",
              "identity": f"p{identity[k]}"} for k in range(N)]
    g = Gallery.create(tmp_path_factory.mktemp("search") / "g", views, "ckpt")
    g.add(items, vectors)
    return g, centres, identity


@pytest.fixture
def session(world):
    g, centres, _ = world
    return SearchSession(g, FakeEncoder(centres, {"person p3": "C"}))


def exact(g, view, query, rows):
    return g.vectors(view, rows) @ unit(query)


def test_rho_reduction_counts_and_exact_scores(world, session):
    g, centres, _ = world
    expected = N
    for j, text in enumerate(["person p3", "person p3", "person p5"]):
        result = session.step(text)
        assert result.index == j
        assert result.candidates_before == expected
        assert result.candidates_after == math.ceil(0.5 * expected) == result.k
        np.testing.assert_allclose(result.scores, exact(g, result.view, centres[int(text[-1])], result.rows),
                                   atol=1e-5)
        order = np.lexsort((result.rows, -result.scores.astype(np.float64)))
        assert set(result.kept.tolist()) == set(result.rows[order[: result.k]].tolist())
        expected = result.candidates_after
    assert [s.candidates_before for s in session.steps] == [1001, 501, 251]


def test_explicit_k_and_threshold(session):
    first = session.step(StepQuery(text="person p3", k=40))
    assert first.candidates_after == 40 and first.keep_rule == "k"
    second = session.step(StepQuery(text="person p3", threshold=0.5))
    assert second.candidates_before == 40
    assert np.all(second.scores[np.isin(second.rows, second.kept)] >= 0.5)
    assert np.all(second.scores[~np.isin(second.rows, second.kept)] < 0.5)
    third = session.step(StepQuery(text="person p3", k=10_000))
    assert third.candidates_after == third.candidates_before
    fourth = session.step(StepQuery(text="person p3", rho=0.25))
    assert fourth.candidates_after == math.ceil(0.25 * third.candidates_after)


def test_camera_and_time_filters(world, session):
    g, _, _ = world
    result = session.step(StepQuery(text="person p3", cameras={"c1", "c2"}, time_range=(100, 700)))
    cams = {g.columns.cameras.names[c] for c in g.columns.camera[result.rows]}
    assert cams == {"c1", "c2"}
    assert g.columns.time[result.rows].min() >= 100 and g.columns.time[result.rows].max() <= 700
    assert result.candidates_before == N
    assert len(result.rows) + len(result.filtered_rows) == N
    assert result.candidates_after == math.ceil(0.5 * len(result.rows))
    open_ended = session.step(StepQuery(text="person p3", time_range=(None, 400)))
    assert g.columns.time[open_ended.rows].max() <= 400


def test_reject_and_confirm(world, session):
    g, _, _ = world
    first = session.step("person p3")
    best_id = first.kept_ids[0]
    dropped = int(np.setdiff1d(first.rows, first.kept)[0])
    dropped_id = g.ids[dropped]
    session.reject(best_id)
    session.confirm(dropped_id)
    nxt = session.candidates()
    assert g.row(best_id) not in nxt and dropped in nxt
    second = session.step(StepQuery(text="person p9", k=1))
    assert second.kept.tolist() == [dropped]  # pinned, and it fills the k
    ranking = session.final_ranking()
    assert ranking.ids[0] == dropped_id and ranking.stage[0] == CONFIRMED
    assert ranking.ids[-1] == best_id and ranking.stage[-1] == UNRANKED
    session.clear_mark(best_id)
    assert session.rejected == ()


def test_undo_and_branch_are_independent(session):
    a = session.step("person p3")
    b = session.step("person p5")
    branch = session.branch(0)
    c = branch.step(StepQuery(text="person p7", k=5))
    assert [s.index for s in branch.steps] == [0, 1]
    assert session.steps == (a, b)
    assert branch.steps[0] is a and branch.steps[1] is c
    branch.reject(c.kept_ids[0])
    assert session.rejected == ()
    assert session.undo() is b
    assert session.steps == (a,)
    assert branch.steps == (a, c)
    again = session.step("person p5")
    np.testing.assert_array_equal(again.kept, b.kept)


def test_steps_are_immutable(session):
    result = session.step("person p3")
    with pytest.raises(FrozenInstanceError):
        result.k = 3
    with pytest.raises(ValueError):
        result.scores[0] = 1.0
    with pytest.raises(ValueError):
        result.kept[0] = 0


def test_relevance_from_identities_and_callback(world, session):
    g, centres, identity = world
    result = session.step(StepQuery(text="person p3", target_identity="p3"))
    np.testing.assert_array_equal(result.relevant, identity[result.rows] == 3)
    total, kept = result.relevant_counts()
    assert total == int((identity == 3).sum()) and 0 < kept <= total
    assert session.step("person p3").relevant is None

    calls = []

    def relevance(query, rows):
        calls.append(query.text)
        return rows % 2 == 0

    other = SearchSession(g, FakeEncoder(centres), relevance=relevance)
    flagged = other.step("person p1")
    np.testing.assert_array_equal(flagged.relevant, flagged.rows % 2 == 0)
    assert calls == ["person p1"]


def test_levels_and_views(world, session):
    g, centres, _ = world
    assert session.step("person p3").view == "text:C"
    assert session.steps[-1].level_source == "encoder"
    session.undo()
    unknown = session.step("person p4")
    assert (unknown.view, unknown.level, unknown.level_source) == (f"text:{LEVELS[0]}", LEVELS[0], "default")
    forced = session.step(StepQuery(text="person p3", level="F"))
    assert (forced.view, forced.level_source) == ("text:F", "override")
    sketch = np.zeros((32, 16, 3), np.uint8)
    fused = session.step(StepQuery(text="person p3", sketch=sketch, ir=np.zeros((32, 16), np.uint8)))
    assert fused.view == "rgb" and fused.level == "C"
    assert session.encoder.calls[-1] == ("fused", "person p3", (32, 16, 3), (32, 16, 3))


def test_find_similar_uses_the_gallery_embedding_or_the_named_scenario_and_example_identity(world, session):
    g, _, identity = world
    example = "i10"
    result = session.step(StepQuery(example=example))
    assert result.view == "rgb" and result.level is None
    plain = g.vectors("rgb")
    np.testing.assert_allclose(result.scores, plain[result.rows] @ unit(plain[10]), atol=1e-5)
    assert result.top(1)[0][0] == example
    np.testing.assert_array_equal(result.relevant, identity[result.rows] == identity[10])
    session.undo()
    named = session.step(StepQuery(example=example, scenario="DT-ST"))
    assert named.view == "reid:DT-ST"
    reid = g.vectors("reid:DT-ST")
    np.testing.assert_allclose(named.scores, reid[named.rows] @ unit(reid[10]), atol=1e-5)
    assert session.encoder.calls == []


def test_later_steps_score_only_their_candidates(session, monkeypatch):
    scored = []

    def counting(matrix, query, rows=None):
        scored.append(matrix.shape[0] if rows is None else len(rows))
        return inner_products(matrix, query, rows)

    monkeypatch.setattr(folder_module, "inner_products", counting)  # the gallery scores the rows
    for text in ["person p3", "person p4", "person p5", "person p6"]:
        session.step(text)
    assert scored == [1001, 501, 251, 126]


def test_final_ranking_equals_the_progressive_protocol(world, session):
    """Without marks or filters the session's final list is docs/methods.md §1.3's permutation."""
    g, centres, _ = world
    texts = ["person p3", "person p8", "person p3"]
    for text in texts:
        session.step(text)
    matrices = [inner_products(g.matrix(s.view), unit(centres[int(t[-1])]))[None, :]
                for s, t in zip(session.steps, texts, strict=True)]
    expected = progressive_ranking(matrices, rho=0.5)
    ranking = session.final_ranking()
    np.testing.assert_array_equal(ranking.rows, expected.order[0])
    np.testing.assert_allclose(ranking.scores, expected.stage_scores[0][ranking.rows], atol=1e-6)
    assert sorted(ranking.rows.tolist()) == list(range(N))


def test_top_and_kept_ids_are_best_first(session):
    result = session.step("person p3")
    top = result.top(5)
    ranked_rows, ranked_scores = result.ranked()
    assert [i for i, _ in top] == [result.item_ids[r] for r in ranked_rows[:5]]
    assert result.kept_ids[:5] == [i for i, _ in top]
    assert np.all(np.diff(ranked_scores) <= 0)
