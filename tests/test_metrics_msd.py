import math

import numpy as np
import pytest

from engine.retrieval.metrics._arrays import MetricInputError
from engine.retrieval.metrics.msd import mean_sd, msd_per_query
from engine.retrieval.metrics.retrieval import evaluate_retrieval

REL = np.array([[True, False, True, False, False]])  # positives at ranks 1 and 3 of 5


@pytest.mark.parametrize(
    ("sims", "expected"),
    [
        ((0.60, 0.59, 0.58, 0.57, 0.56), 0.536),
        ((0.9, 0.8, 0.7, 0.6, 0.5), 0.598),
        ((0.95, 0.5, 0.45, 0.2, 0.1), 0.806),
    ],
)
def test_methods_examples(sims, expected):
    sim = np.array([sims])
    assert evaluate_retrieval(sim, REL).ap[0] == pytest.approx(0.8333, abs=1e-4)
    assert mean_sd(sim, REL, cosine=False) == pytest.approx(expected, abs=5e-4)
    # the same lists given as cosines are mapped by s ← (s + 1) / 2 first
    assert mean_sd(2 * sim - 1, REL, cosine=True) == pytest.approx(expected, abs=5e-4)


def test_first_example_parts_by_hand():
    s = [0.60, 0.59, 0.58, 0.57, 0.56]
    pnr = 1 - math.exp(-((s[0] + s[2]) / 2) / ((s[1] + s[3] + s[4]) / 3))
    asp = (1.0 + (s[0] + s[2]) / (s[0] + s[1] + s[2])) / 2
    assert pnr == pytest.approx(0.643, abs=5e-4) and asp == pytest.approx(0.833, abs=5e-4)
    assert msd_per_query(np.array([s]), REL, cosine=False)[0] == pytest.approx(pnr * asp, rel=1e-12)


def test_unsorted_rows_are_ranked_first():
    sims = np.array([[0.58, 0.60, 0.56, 0.59, 0.57]])  # same list as example one, shuffled
    rel = np.array([[True, True, False, False, False]])  # 0.58 and 0.60 are the positives
    assert mean_sd(sims, rel, cosine=False) == pytest.approx(0.536, abs=5e-4)


def test_asp_equals_ap_when_all_similarities_are_equal():
    rng = np.random.default_rng(0)
    rel = rng.random((20, 30)) < 0.2
    rel[:, 7] = True
    sim = np.full((20, 30), 0.4)
    ap = evaluate_retrieval(sim, rel).ap
    sd = msd_per_query(sim, rel, cosine=False)
    pnr = 1 - math.exp(-1.0)  # equal means: x = 1
    assert np.allclose(sd / pnr, ap)


def test_edge_cases_skip_and_no_negatives():
    sim = np.array([[0.9, 0.8], [0.7, 0.6]])
    rel = np.array([[True, True], [False, False]])
    sd = msd_per_query(sim, rel, cosine=False)
    assert sd[0] == pytest.approx(1.0) and np.isnan(sd[1])


def test_negative_similarities_need_the_cosine_mapping():
    with pytest.raises(MetricInputError, match="cosine=True"):
        mean_sd(np.array([[0.5, -0.5]]), np.array([[True, False]]), cosine=False)
    assert 0 < mean_sd(np.array([[0.5, -0.5]]), np.array([[True, False]]), cosine=True) <= 1
