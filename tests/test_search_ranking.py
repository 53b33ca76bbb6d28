"""Final ranking (docs/methods.md §1.3) on a hand-made example: six items on a circle, three queries."""

from __future__ import annotations

import numpy as np
import pytest

from engine.index import Gallery
from engine.retrieval.search import SearchSession, StepQuery
from engine.retrieval.search.encoder import FingerprintEncoder
from engine.retrieval.search.ranking import CONFIRMED, UNRANKED

ANGLES = {"A": 0, "B": 20, "C": 40, "D": 60, "E": 80, "F": 100}


def at(degrees):
    r = np.deg2rad(degrees)
    return np.array([np.cos(r), np.sin(r)], dtype=np.float32)


class AngleEncoder(FingerprintEncoder):
    fingerprint = None

    def level_for(self, text):
        return "UC"

    attribute_weight = None  # the checkpoint states no attribute weight

    def level_and_source(self, text):
        return self.level_for(text), "parser"

    def encode_text(self, text):
        return at(float(text))

    def encode_fused(self, text, sketch, ir):
        raise AssertionError("not used")


@pytest.fixture
def session(tmp_path):
    g = Gallery.create(tmp_path / "g", {"text:UC": 2}, "ckpt")
    items = [{"id": name, "source": "s", "camera": "east" if name == "B" else "west"} for name in ANGLES]
    g.add(items, {"text:UC": np.stack([at(a) for a in ANGLES.values()])})
    return SearchSession(g, AngleEncoder())


def run(session, *queries):
    for q in queries:
        session.step(q)
    return session.final_ranking()


def test_survivors_then_later_eliminated_first(session):
    # step 0 at 0°: keep A, B, C (3 of 6); drops D, E, F
    # step 1 at 90°: keep C, B (2 of 3); drops A
    # step 2 at 25°: ranks B (5° away) before C (15°)
    ranking = run(session, "0", "90", "25")
    assert ranking.ids == ["B", "C", "A", "D", "E", "F"]
    assert ranking.stage.tolist() == [2, 2, 1, 0, 0, 0]
    np.testing.assert_allclose(ranking.scores[:3], [np.cos(np.deg2rad(5)), np.cos(np.deg2rad(15)), 0.0],
                               atol=1e-3)


def test_confirmed_lead_and_rejected_trail(session):
    session.step("0")
    session.step("90")
    session.confirm("F")
    session.reject("C")
    ranking = run(session, "25")
    assert ranking.ids == ["F", "B", "A", "D", "E", "C"]
    assert ranking.stage.tolist() == [CONFIRMED, 2, 1, 0, 0, UNRANKED]


def test_filtered_items_count_as_eliminated_at_their_step(session):
    # step 1 filters B out (camera east): candidates A, C → keep C; A and B dropped at step 1 by step-1 score
    ranking = run(session, "0", StepQuery(text="90", cameras={"west"}), "25")
    assert ranking.ids == ["C", "B", "A", "D", "E", "F"]
    assert session.steps[1].filtered_rows.tolist() == [1]


def test_single_step_ranks_everything(session):
    assert run(session, "100").ids == ["F", "E", "D", "C", "B", "A"]
