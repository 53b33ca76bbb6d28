import numpy as np
import pytest

from engine.retrieval.metrics import SUMMARY_KEYS, evaluate_all, summarise
from engine.retrieval.metrics._arrays import MetricInputError
from engine.retrieval.metrics.progressive import evaluate_progressive, keep_count, progressive_ranking

BIG = 5.0  # planted on items that are no longer candidates: must never influence the order

# 8 items, 3 steps, ρ = 0.5: 8 → 4 → 2
STEP0 = [0.9, 0.1, 0.8, 0.3, 0.7, 0.3, 0.6, 0.4]
# step 0 order 0,2,4,6 | 7,3,5,1 (3 and 5 tie at 0.3: lower index first); keep {0,2,4,6}
STEP1 = [0.2, BIG, 0.9, BIG, 0.5, BIG, 0.7, BIG]
# step 1 order 2,6 | 4,0; keep {2,6}
STEP2 = [BIG, BIG, 0.3, BIG, BIG, BIG, 0.8, BIG]
# step 2 order 6,2
HAND_ORDER = [6, 2, 4, 0, 7, 3, 5, 1]


def _steps():
    return [np.array([s]) for s in (STEP0, STEP1, STEP2)]


def test_hand_example_final_order_and_counts():
    result = progressive_ranking(_steps(), rho=0.5)
    assert result.order.tolist() == [HAND_ORDER]
    assert result.candidate_counts.tolist() == [[8, 4, 2]]
    assert result.last_step.tolist() == [[1, 0, 2, 0, 1, 0, 2, 0]]
    assert result.stage_scores[0].tolist() == pytest.approx([0.2, 0.1, 0.3, 0.3, 0.5, 0.3, 0.8, 0.4])


def test_hand_example_metrics():
    rel = np.zeros((1, 8), dtype=bool)
    rel[0, [2, 5]] = True  # ranks 2 and 7 in HAND_ORDER
    _, report, summary = evaluate_progressive(_steps(), rel, rho=0.5, cosine=False)
    assert summary["R@1"] == 0.0 and summary["R@5"] == 1.0
    assert summary["mAP"] == pytest.approx((1 / 2 + 2 / 7) / 2)
    assert summary["mINP"] == pytest.approx(2 / 7)
    assert report.skipped == 0
    s = [0.8, 0.3, 0.5, 0.2, 0.4, 0.3, 0.3, 0.1]  # stage scores in final order
    pos = [s[1], s[6]]
    neg = [v for i, v in enumerate(s) if i not in (1, 6)]
    pnr = 1 - np.exp(-(np.mean(pos) / np.mean(neg)))
    asp = (s[1] / sum(s[:2]) + (s[1] + s[6]) / sum(s[:7])) / 2
    assert summary["mSD"] == pytest.approx(pnr * asp, rel=1e-12)


def test_rho_one_equals_ranking_by_the_last_step():
    rng = np.random.default_rng(0)
    steps = [np.tanh(rng.standard_normal((6, 40))) for _ in range(4)]
    steps[-1][:, :5] = 0.25  # ties in the last step
    result = progressive_ranking(steps, rho=1.0)
    expected = np.argsort(-steps[-1], axis=1, kind="stable")
    assert np.array_equal(result.order, expected)
    assert (result.candidate_counts == 40).all()
    rel = rng.random((6, 40)) < 0.2
    rel[:, 0] = True
    _, _, summary = evaluate_progressive(steps, rel, rho=1.0)
    assert summary == pytest.approx(summarise(steps[-1], rel))


def test_callable_and_matrices_agree_and_counts_halve():
    rng = np.random.default_rng(1)
    steps = [rng.standard_normal((5, 45)) for _ in range(5)]
    seen = []

    def score_fn(step, query, candidates):
        seen.append(len(candidates))
        return steps[step][query, candidates]

    a = progressive_ranking(steps, rho=0.5)
    b = progressive_ranking(score_fn, rho=0.5, n_steps=5, shape=(5, 45))
    assert np.array_equal(a.order, b.order)
    assert a.candidate_counts[0].tolist() == [45, 23, 12, 6, 3]
    assert sorted(set(seen)) == [3, 6, 12, 23, 45]
    assert all(sorted(row) == list(range(45)) for row in a.order.tolist())


def test_valid_mask_restricts_the_start_set():
    steps = _steps()
    valid = np.ones((1, 8), dtype=bool)
    valid[0, [0, 7]] = False
    result = progressive_ranking(steps, rho=0.5, valid=valid)
    # G⁰ = {1..6}: step0 order 2,4,6 | 3,5,1; step1 over {2,4,6}: 2,6 | 4 with k=⌈1.5⌉=2; step2: 6,2
    assert result.order[0, :6].tolist() == [6, 2, 4, 3, 5, 1]
    assert sorted(result.order[0, 6:].tolist()) == [0, 7]
    assert result.candidate_counts.tolist() == [[6, 3, 2]]
    assert np.isnan(result.stage_scores[0, [0, 7]]).all()


def test_keep_count_readings():
    assert keep_count(45113) == 22557 and keep_count(22557) == 11279
    assert keep_count(10, 0.3) == 3 and keep_count(10, 0.3, reading="reduce") == 7
    assert keep_count(1, 0.01) == 1
    with pytest.raises(MetricInputError, match="rho"):
        keep_count(10, 0.0)


def test_summarise_keys_and_ranges():
    rng = np.random.default_rng(2)
    sim = np.clip(rng.standard_normal((12, 30)) * 0.3, -1, 1)
    rel = rng.random((12, 30)) < 0.1
    rel[0] = False
    out = summarise(sim, rel)
    assert tuple(out) == SUMMARY_KEYS
    assert all(0.0 <= v <= 1.0 for v in out.values())
    report, sd = evaluate_all(sim, rel)
    assert report.skipped >= 1 and np.isnan(sd[0])
    assert out["R@1"] <= out["R@5"] <= out["R@10"]
