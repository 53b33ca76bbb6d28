import pytest
import torch
import torch.nn.functional as F

from engine.kernel.ontology import ATTRIBUTE_KEYS, ONTOLOGY
from engine.lab.losses._checks import LossInputError
from engine.lab.losses.pcia import (
    UNSTATED,
    attribute_id,
    attribute_overlap,
    encode_attribute_sets,
    pcia_soft_labels,
    pcia_tal_loss,
)
from engine.lab.losses.tal import level_margins, soft_tal_loss

QUERY = {
    "gender": "male",
    "top_color": "red",
    "bottom_type": "jeans",
    "hat_type": "cap",
    "shoe_type": "boots",
}
FINE_A = {
    "gender": "male",
    "top_color": "red",
    "bottom_type": "jeans",
    "hat_type": "none",
    "shoe_type": "sneakers",
    "age": "young",
    "height": "tall",
    "hairstyle": "short",
    "hair_color": "black",
    "top_type": "t_shirt",
    "top_length": "short_sleeve",
    "bottom_length": "long",
    "bottom_color": "blue",
}
FINE_B = {
    "gender": "male",
    "top_color": "blue",
    "bottom_type": "jeans",
    "hat_type": "none",
    "shoe_type": "sneakers",
    "age": "elderly",
    "height": "short",
    "hairstyle": "bald",
    "top_type": "coat",
    "top_length": "long_sleeve",
    "bottom_length": "long",
    "bottom_color": "black",
}
FINE_Q = {**FINE_A, "hat_type": "cap", "shoe_type": "boots"}  # the query identity's own finest text


def test_encoding_from_dicts_and_ids_agree():
    codes = encode_attribute_sets([QUERY])
    assert codes.shape == (1, len(ATTRIBUTE_KEYS))
    assert int((codes != UNSTATED).sum()) == 5
    assert codes[0, ATTRIBUTE_KEYS.index("top_color")].item() == ONTOLOGY.attributes["top_color"].index("red")
    ids = {attribute_id(k, v) for k, v in QUERY.items()}
    assert torch.equal(encode_attribute_sets([ids]), codes)


def test_encoding_drops_colour_of_absent_item_and_rejects_bad_input():
    codes = encode_attribute_sets([{"hat_type": "none", "hat_color": "red"}])
    assert codes[0, ATTRIBUTE_KEYS.index("hat_color")].item() == UNSTATED
    with pytest.raises(ValueError, match="top_colour"):
        encode_attribute_sets([{"top_colour": "red"}])
    with pytest.raises(LossInputError, match="two values"):
        encode_attribute_sets([{attribute_id("gender", "male"), attribute_id("gender", "female")}])


def test_overlap_on_hand_example():
    query = encode_attribute_sets([QUERY])
    fine = encode_attribute_sets([FINE_A, FINE_B, FINE_Q])
    # A shares gender, top_color, bottom_type (3/5); B shares gender, bottom_type (2/5); own identity 5/5
    assert attribute_overlap(query, fine).tolist() == [pytest.approx([0.6, 0.4, 1.0])]


def _example_batch():
    # rows: texts 0..2 (identities 10, 11, 12); columns: images of the same identities
    identities = torch.tensor([10, 11, 12])
    query = encode_attribute_sets([QUERY, FINE_A, QUERY])
    fine = encode_attribute_sets([FINE_Q, FINE_A, FINE_B])
    return identities, query, fine


def test_soft_labels_without_noise_follow_threshold_and_levels():
    identities, query, fine = _example_batch()
    levels = torch.tensor([0, 3, 2])  # UC, F, M: only row 0 is coarse
    labels = pcia_soft_labels(identities, query, fine, levels, sigma=0.0)
    expected_soft = torch.tensor([[1.0, 0.6, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    assert torch.allclose(labels.soft, expected_soft)
    expected = torch.tensor([[1.0, 0.6, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
    assert torch.allclose(labels.t2i, expected)
    assert torch.allclose(labels.i2t, expected.t())
    coarse_all = pcia_soft_labels(identities, query, fine, torch.tensor([0, 1, 1]), sigma=0.0)
    # row 2 (the same 5-attribute query, level C) now also matches column 0 and 1 at r ≥ 0.6
    assert coarse_all.t2i[2].tolist() == pytest.approx([1.0, 0.6, 1.0])


def test_noise_only_where_soft_label_positive_and_clipped():
    identities, query, fine = _example_batch()
    levels = torch.tensor([0, 0, 0])
    a = pcia_soft_labels(
        identities, query, fine, levels, sigma=0.1, generator=torch.Generator().manual_seed(5)
    )
    b = pcia_soft_labels(
        identities, query, fine, levels, sigma=0.1, generator=torch.Generator().manual_seed(5)
    )
    clean = pcia_soft_labels(identities, query, fine, levels, sigma=0.0)
    assert torch.equal(a.soft, b.soft)
    assert torch.equal(a.soft == 0, clean.soft == 0)
    assert ((a.soft >= 0) & (a.soft <= 1)).all()
    assert not torch.equal(a.soft, clean.soft)
    big = pcia_soft_labels(
        identities, query, fine, levels, sigma=5.0, generator=torch.Generator().manual_seed(1)
    )
    assert ((big.soft >= 0) & (big.soft <= 1)).all()
    assert (big.soft[clean.soft == 0] == 0).all()


def test_pcia_tal_loss_composes_labels_margins_and_soft_tal():
    identities, query, fine = _example_batch()
    levels = torch.tensor([0, 3, 1])
    g = torch.Generator().manual_seed(2)
    text = torch.randn(3, 8, generator=g, dtype=torch.float64)
    image = torch.randn(3, 8, generator=g, dtype=torch.float64)
    got = pcia_tal_loss(text, image, identities, query, fine, levels, sigma=0.0, tau=0.05)
    labels = pcia_soft_labels(identities, query, fine, levels, sigma=0.0)
    sims = F.normalize(text, dim=1) @ F.normalize(image, dim=1).t()
    expected = soft_tal_loss(
        sims, labels.t2i.double(), labels.i2t.double(), level_margins(levels).double(), 0.05
    )
    assert got.item() == pytest.approx(expected.item(), rel=1e-12)


def test_soft_labels_reject_wrong_code_width():
    identities, query, fine = _example_batch()
    with pytest.raises(LossInputError, match="query_codes"):
        pcia_soft_labels(identities, query[:, :5], fine, torch.tensor([0, 0, 0]))
