import numpy as np
import pytest
import torch
from sklearn.metrics import average_precision_score

from engine.retrieval.metrics._arrays import MetricInputError, stable_order
from engine.retrieval.metrics.retrieval import evaluate_retrieval


def test_hand_worked_two_queries():
    sim = np.array([[0.9, 0.8, 0.7, 0.6, 0.5], [0.1, 0.9, 0.3, 0.8, 0.2]])
    rel = np.array(
        [
            [True, False, True, False, False],  # ranks 1, 3
            [False, False, True, False, True],
        ]
    )  # order 1,3,2,4,0 → positives at ranks 3 and 4
    report = evaluate_retrieval(sim, rel)
    assert report.ap.tolist() == pytest.approx([(1 / 1 + 2 / 3) / 2, (1 / 3 + 2 / 4) / 2])
    assert report.inp.tolist() == pytest.approx([2 / 3, 2 / 4])
    assert report.first_hit.tolist() == [1, 3]
    assert report.recall_at(1) == 0.5 and report.recall_at(3) == 1.0
    assert report.as_dict()["mAP"] == pytest.approx(((1 + 2 / 3) / 2 + (1 / 3 + 1 / 2) / 2) / 2)


def test_ties_break_by_gallery_index():
    sim = np.array([[0.5, 0.7, 0.5, 0.7, 0.5]])
    assert stable_order(sim).tolist() == [[1, 3, 0, 2, 4]]
    rel = np.array([[False, False, False, True, True]])  # item 3 at rank 2, item 4 at rank 5
    report = evaluate_retrieval(sim, rel)
    assert report.ap[0] == pytest.approx((1 / 2 + 2 / 5) / 2)
    assert report.inp[0] == pytest.approx(2 / 5)
    assert report.first_hit[0] == 2


def test_queries_without_positive_are_skipped_and_counted():
    sim = np.array([[0.9, 0.1], [0.2, 0.3], [0.5, 0.6]])
    rel = np.array([[True, False], [False, False], [False, True]])
    report = evaluate_retrieval(sim, rel)
    assert report.skipped == 1 and report.n_queries == 2
    assert report.mean_ap == pytest.approx(1.0)
    assert np.isnan(report.ap[1])
    with pytest.raises(MetricInputError, match="no query"):
        _ = evaluate_retrieval(sim, np.zeros_like(rel)).mean_ap


def test_valid_mask_removes_items_from_the_list():
    sim = np.array([[0.9, 0.8, 0.7, 0.6]])
    rel = np.array([[True, False, False, True]])
    valid = np.array([[False, True, True, True]])  # the top positive is junk for this query
    report = evaluate_retrieval(sim, rel, valid)
    assert report.ap[0] == pytest.approx(1 / 3)  # positive 3 at rank 3 of the valid list [1, 2, 3]
    assert report.first_hit[0] == 3 and report.n_positives[0] == 1


def test_agrees_with_sklearn_average_precision_without_ties():
    rng = np.random.default_rng(0)
    sim = rng.standard_normal((40, 300))
    rel = rng.random((40, 300)) < 0.05
    rel[:, 0] |= ~rel.any(axis=1)
    report = evaluate_retrieval(sim, rel)
    expected = [average_precision_score(rel[q], sim[q]) for q in range(40)]
    assert report.ap.tolist() == pytest.approx(expected, rel=1e-10)


def test_chunking_and_torch_input_do_not_change_results():
    rng = np.random.default_rng(1)
    sim = rng.standard_normal((17, 50)).astype(np.float32)
    rel = rng.random((17, 50)) < 0.1
    whole = evaluate_retrieval(sim, rel)
    chunked = evaluate_retrieval(torch.from_numpy(sim), torch.from_numpy(rel), rows_per_chunk=4)
    assert np.array_equal(whole.first_hit, chunked.first_hit)
    assert np.allclose(whole.ap, chunked.ap, equal_nan=True)
    assert whole.as_dict() == chunked.as_dict()


def test_explicit_order_is_used_and_checked():
    sim = np.zeros((1, 3))
    rel = np.array([[False, False, True]])
    assert evaluate_retrieval(sim, rel, order=np.array([[2, 0, 1]])).first_hit[0] == 1
    with pytest.raises(MetricInputError, match="permutation"):
        evaluate_retrieval(sim, rel, order=np.array([[2, 2, 1]]))


def test_bad_inputs_name_the_problem():
    with pytest.raises(MetricInputError, match="relevance"):
        evaluate_retrieval(np.zeros((2, 3)), np.zeros((2, 4), dtype=bool))
    with pytest.raises(MetricInputError, match="NaN"):
        evaluate_retrieval(np.array([[np.nan, 0.0]]), np.array([[True, False]]))
