"""Tokenizer: the shipped BPE vocabulary loads offline, special ids, context length, truncation warning."""

import pytest
import torch

from engine.retrieval.models.tokenizer import CLIP_VOCAB_SIZE, TextTruncationWarning, Tokenizer

LONG_UF = (
    "A middle-aged woman of short height with medium skin and an average build. Her shoulder-length brown hair "
    "is partly covered by a wide straw sun hat in cream. She has on a sleeveless green dress with a long hemline "
    "that reaches her ankles, paired with beige sandals, and she holds a small pink handbag in her left hand."
)


def test_vocabulary_and_special_ids():
    tok = Tokenizer(64)
    assert tok.vocab_size == CLIP_VOCAB_SIZE + 1
    assert (tok.sot_id, tok.eot_id, tok.mask_id) == (49406, 49407, 49408)
    assert tok.ordinary_range == (0, 49406)


def test_ids_layout_and_round_trip():
    tok = Tokenizer(16)
    ids = tok(["a man in a red coat", "woman"])
    assert ids.shape == (2, 16) and ids.dtype == torch.long
    assert ids[0, 0] == tok.sot_id and ids[1, 0] == tok.sot_id
    eot = tok.eot_positions(ids)
    assert ids[0, eot[0]] == tok.eot_id and ids[0, eot[0] + 1 :].eq(0).all()
    assert eot[1] == 2  # start, "woman", end
    assert tok.decode(ids[0]) == "a man in a red coat"
    assert tok.lengths(["a man in a red coat"]) == [int(eot[0]) + 1]


def test_long_descriptions_fit_the_default_context_and_truncation_warns():
    assert Tokenizer(128).lengths([LONG_UF])[0] <= 96
    short = Tokenizer(20)
    with pytest.warns(TextTruncationWarning, match="1 of 1"):
        ids = short([LONG_UF])
    assert ids[0, -1] == short.eot_id
    assert short.eot_positions(ids).item() == 19


def test_bad_input_is_rejected():
    tok = Tokenizer(16)
    with pytest.raises(ValueError, match="empty"):
        tok([])
    with pytest.raises(TypeError, match="string"):
        tok([3])
    with pytest.raises(ValueError, match="end-of-text"):
        tok.eot_positions(torch.zeros(1, 16, dtype=torch.long))
    with pytest.raises(ValueError, match="context_length"):
        Tokenizer(2)
