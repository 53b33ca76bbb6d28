"""Bad input to a search session: each a clear error, the session left as it was."""

from __future__ import annotations

import numpy as np
import pytest

from engine.index import Gallery, GalleryMismatchError
from engine.retrieval.search import NoCandidatesError, QueryInputError, SearchSession, SessionStateError, StepQuery
from engine.retrieval.search.encoder import FingerprintEncoder

DIM = 8


class Encoder(FingerprintEncoder):
    def __init__(self, fingerprint="ckpt", dim=DIM, level="UC"):
        self.fingerprint = fingerprint
        self.dim = dim
        self.level = level

    def level_for(self, text):
        return self.level

    attribute_weight = None  # the checkpoint states no attribute weight

    def level_and_source(self, text):
        return self.level_for(text), "parser"

    def encode_text(self, text):
        v = np.ones(self.dim, np.float32)
        return v / np.linalg.norm(v)

    def encode_fused(self, text, sketch, ir):
        return self.encode_text(text)


@pytest.fixture
def gallery(tmp_path):
    rng = np.random.default_rng(9)
    x = rng.standard_normal((20, DIM)).astype(np.float32)
    x /= np.linalg.norm(x, axis=1, keepdims=True)
    g = Gallery.create(tmp_path / "g", {"text:UC": DIM, "rgb": DIM}, "ckpt")
    g.add([{"id": f"i{k}", "source": "s", "camera": "c1"} for k in range(20)], {"text:UC": x, "rgb": x})
    return g


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({}, "empty"),
        ({"text": "   "}, "empty"),
        ({"text": "a man", "example": "i1"}, "cannot be combined"),
        ({"text": "a man", "k": 3, "rho": 0.2}, "at most one keep rule"),
        ({"text": "a man", "rho": 1.5}, "rho"),
        ({"text": "a man", "k": 0}, "positive integer"),
        ({"text": "a man", "threshold": float("nan")}, "finite"),
        ({"text": "a man", "level": "XL"}, "level"),
        ({"text": "a man", "cameras": set()}, "camera"),
        ({"text": "a man", "time_range": (5, 1)}, "starts after"),
        ({"text": "a man", "scenario": "DT-ST"}, "example-item"),
    ],
)
def test_invalid_queries(kwargs, message):
    with pytest.raises(QueryInputError, match=message):
        StepQuery(**kwargs)


def test_unreadable_sketch_and_ir_files(gallery, tmp_path):
    session = SearchSession(gallery, Encoder())
    broken = tmp_path / "sketch.png"
    broken.write_bytes(b"not an image")
    with pytest.raises(QueryInputError, match=r"sketch file .*sketch\.png is not a readable image"):
        session.step(StepQuery(sketch=broken))
    with pytest.raises(QueryInputError, match=r"IR file .*missing\.png does not exist"):
        session.step(StepQuery(ir=tmp_path / "missing.png"))
    with pytest.raises(QueryInputError, match="uint8"):
        session.step(StepQuery(sketch=np.zeros((4, 4, 3), np.float32)))
    assert session.steps == ()


def test_readable_sketch_file_is_loaded_as_rgb(gallery, tmp_path):
    import cv2

    path = tmp_path / "s.png"
    cv2.imwrite(str(path), np.full((12, 6, 3), (255, 0, 0), np.uint8))  # blue in OpenCV's BGR
    seen = {}

    class Recording(Encoder):
        def encode_fused(self, text, sketch, ir):
            seen["sketch"] = sketch
            return super().encode_fused(text, sketch, ir)

    SearchSession(gallery, Recording()).step(StepQuery(sketch=path))
    assert seen["sketch"].shape == (12, 6, 3) and seen["sketch"][0, 0].tolist() == [0, 0, 255]


def test_checkpoint_that_does_not_match_the_gallery(gallery):
    with pytest.raises(GalleryMismatchError, match="other-ckpt"):
        SearchSession(gallery, Encoder(fingerprint="other-ckpt"))
    session = SearchSession(gallery, Encoder(dim=DIM + 4))
    with pytest.raises(GalleryMismatchError, match="dimension"):
        session.step("a man")
    level_less = SearchSession(gallery, Encoder(level="F"))
    assert level_less.step("a man").view == "rgb"  # no text:F view: text falls back to the fused view
    with pytest.raises(GalleryMismatchError, match="reid:NT-LT"):
        level_less.step(StepQuery(example="i1", scenario="NT-LT"))


def test_missing_encoder_and_unknown_example(gallery):
    session = SearchSession(gallery)
    with pytest.raises(QueryInputError, match="encoder"):
        session.step("a man")
    with pytest.raises(QueryInputError, match="nobody"):
        session.step(StepQuery(example="nobody"))
    assert session.step(StepQuery(example="i3")).view == "rgb"  # no reid view: find-similar uses rgb


def test_no_candidates_left(gallery):
    session = SearchSession(gallery, Encoder())
    session.step(StepQuery(text="a man", threshold=2.0))
    with pytest.raises(NoCandidatesError, match="undo"):
        session.step("a man")
    session.undo()
    with pytest.raises(NoCandidatesError, match="filters"):
        session.step(StepQuery(text="a man", cameras={"c9"}))
    assert session.steps == ()


def test_session_state_errors(gallery):
    session = SearchSession(gallery, Encoder())
    with pytest.raises(SessionStateError, match="undo"):
        session.undo()
    with pytest.raises(SessionStateError, match="no steps"):
        session.final_ranking()
    session.step("a man")
    with pytest.raises(SessionStateError, match="branch from step 3"):
        session.branch(3)
    with pytest.raises(ValueError, match="i99"):
        session.reject("i99")
    with pytest.raises(QueryInputError, match="rho"):
        SearchSession(gallery, Encoder(), rho=0)


def test_empty_gallery_has_no_candidates(tmp_path):
    g = Gallery.create(tmp_path / "empty", {"text:UC": DIM}, "ckpt")
    with pytest.raises(NoCandidatesError):
        SearchSession(g, Encoder()).step("a man")
