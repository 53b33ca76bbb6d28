"""The compact step outputs (``app.store.codec``): ids and scores go through in chunks and come back exactly as
one join, one split and one conversion would give them, whatever the chunk sizes."""

from __future__ import annotations

import hashlib
import zlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.store import codec
from app.store.errors import StoreInputError

ID = st.text(st.characters(blacklist_characters="\n\r", blacklist_categories=("Cs",)), min_size=1, max_size=12)


@settings(max_examples=200, deadline=None)
@given(ids=st.lists(ID, max_size=60), chunk=st.integers(1, 7), text_chunk=st.integers(1, 40))
def test_ids_round_trip_through_chunks(ids, chunk, text_chunk, monkeypatch_module):
    monkeypatch_module.setattr(codec, "CHUNK", chunk)
    monkeypatch_module.setattr(codec, "_TEXT_CHUNK", text_chunk)
    blob, sha = codec.encode_ids(ids)
    whole = "\n".join(ids).encode("utf-8")
    assert zlib.decompress(blob) == whole and sha == hashlib.sha256(whole).hexdigest()
    assert codec.decode_ids(blob) == tuple(ids)
    assert codec.has_duplicates(ids) == (len(set(ids)) != len(ids))


@pytest.fixture(scope="module")
def monkeypatch_module():
    with pytest.MonkeyPatch.context() as patch:
        yield patch


def test_a_bad_id_in_a_later_chunk_is_named(monkeypatch):
    monkeypatch.setattr(codec, "CHUNK", 2)
    with pytest.raises(StoreInputError, match="'bad\\\\nid'"):
        codec.encode_ids(["a", "b", "c", "bad\nid"])


def test_scores_come_back_as_the_same_floats(monkeypatch):
    monkeypatch.setattr(codec, "CHUNK", 3)
    values = np.linspace(-1.0, 1.0, 11, dtype=np.float32)
    assert codec.float_tuple(codec.decode_scores(codec.encode_scores(values))) == tuple(values.tolist())
    assert codec.float_tuple(np.zeros(0, dtype=np.float32)) == ()
