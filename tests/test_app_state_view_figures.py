"""What the views show, read in the state layer without a widget: the distribution's figures
(app/state/distribution.py), what the query panel reads of its inputs (app/state/query_reading.py) and an
explanation in words (app/state/explanation.py)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from app.state.distribution import DistributionInputError, ScoreDistribution
from app.state.engine_terms import APPEARANCE_GREY_VIEW, IMAGE_QUERY_VIEW, level_label
from app.state.explanation import explanation_words
from app.state.query_reading import QueryInputError, build_spec, query_warnings, read_description, score_scale
from app.state.query_spec import KeepRule


def test_a_distribution_cuts_at_the_kth_score_and_counts_what_a_threshold_keeps():
    scores = np.array([0.9, 0.1, 0.5, 0.7, 0.3], dtype=np.float32)
    dist = ScoreDistribution.of(scores, 2, pinned=np.array([False, True, False, False, False]))
    assert dist.cut == pytest.approx(0.7) and dist.rule_text() == "k = 2"
    assert dist.kept_at(0.5) == 4  # 0.9, 0.7, 0.5 and the confirmed 0.1
    assert not dist.moved(dist.cut) and dist.moved(0.5)
    assert dist.metrics is None and dist.relevant_at_or_above(0.0) == 0
    histograms = dist.histograms()
    assert set(histograms.counts) == {"candidates"} and int(histograms.counts["candidates"].sum()) == 5


def test_a_threshold_rule_cuts_at_its_threshold_and_ground_truth_gives_metrics():
    scores = np.array([0.9, 0.8, 0.2, 0.1], dtype=np.float32)
    relevant = np.array([True, False, True, False])
    dist = ScoreDistribution.of(scores, 2, relevant=relevant, keep_rule="threshold", keep_value=0.5)
    assert dist.cut == 0.5 and dist.rule_text() == "score ≥ 0.500"
    assert dist.metrics.relevant == 2 and dist.metrics.relevant_kept == 1 and not math.isnan(dist.metrics.ap)
    assert dist.relevant_at_or_above(0.15) == 2
    assert set(dist.histograms().counts) == {"others", "relevant"}


@pytest.mark.parametrize("scores, k", [([], 1), ([0.1, math.nan], 1), ([0.1], -1), ([0.1], True)])
def test_a_distribution_refuses_what_it_cannot_plot(scores, k):
    with pytest.raises(DistributionInputError):
        ScoreDistribution.of(scores, k)


def test_the_panels_inputs_make_a_query_or_say_what_is_missing():
    on = {"text": True, "sketch": False, "ir": False}
    spec = build_spec(on, text=" a red jacket ", sketch=None, ir="ir.png", level="C", keep=KeepRule())
    assert spec.text == "a red jacket" and spec.ir is None and spec.level == "C"
    with pytest.raises(QueryInputError, match="type a description"):
        build_spec(on, text="  ", sketch=None, ir=None, level=None, keep=KeepRule())
    with pytest.raises(QueryInputError, match="Turn on"):
        build_spec(dict.fromkeys(on, False), text="x", sketch=None, ir=None, level=None, keep=KeepRule())


def test_warnings_name_a_threshold_from_another_scale_and_a_description_without_attributes():
    assert score_scale("text:M") == "text–image"
    assert score_scale(IMAGE_QUERY_VIEW) == score_scale(APPEARANCE_GREY_VIEW) != score_scale("reid:AD-LT")
    on = {"text": True, "sketch": False, "ir": False}
    spec = build_spec(on, text="zzz qqq", sketch=None, ir=None, level=None, keep=KeepRule("threshold", 0.3))
    warnings = query_warnings(spec, read_description(spec.text), previous_view="reid:AD-LT",
                              token_counter=lambda text: (100, 77))
    assert len(warnings) == 3 and "find-similar" in warnings[0] and "score ≥ 0.300" in warnings[1]
    read = read_description("a woman in a red jacket")
    assert read.attributes and query_warnings(build_spec(on, text="a woman in a red jacket", sketch=None, ir=None,
                                                         level=None, keep=KeepRule()), read) == []
    assert level_label("C")


def test_an_explanation_in_words_marks_agreement():
    entry = {"key": "top_color", "value": "red", "status": "match", "sources": {"pretrained": {}}}
    explanation = {"score": 0.5, "similarity": 0.4, "attribute_weight": 0.2, "agreement": 0.5, "view": "rgb",
                   "attributes": [entry, {**entry, "status": "mismatch", "sources": {}}], "evidence": "stored"}
    words = explanation_words(explanation)
    assert words.score.startswith("Score 0.500") and words.view == "rgb" and words.evidence is None
    assert [line.agrees for line in words.attributes] == [True, False] and words.legend
    assert words.network is not None and words.likeness is None and not words.filtered
    assert explanation_words({**explanation, "attributes": []}).evidence == "The query states no attribute."
