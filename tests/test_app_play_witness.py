"""A demo script that follows the suggested witness questions (app/play.py "answer" actions,
resources/demos/ask_the_witness.json): answers are clicked through the question bar, the true one read from the
demo world's ground truth, and each step records the question and the answer."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from app.state.play_script import PlayScriptError, load_script, parse_script


def test_the_shipped_script_follows_the_questions_and_answers_parse(tmp_path):
    script = load_script("ask_the_witness")
    kinds = [a.kind for a in script.actions]
    assert kinds[0] == "search" and kinds.count("answer") == 5 and script.target == "12"
    assert script.actions[2].describe() == "answer the witness question truthfully"
    assert script.actions[4].describe() == "the witness does not know"
    custom = parse_script({"title": "t", "actions": [{"search": "a man"}, {"answer": "red"}]}, tmp_path / "s.json")
    assert custom.actions[1].describe() == "answer the witness question “red”"
    with pytest.raises(PlayScriptError, match="action 2: an answer is"):
        parse_script({"title": "t", "actions": [{"search": "a man"}, {"answer": 3}]}, tmp_path / "s.json")


def _target(world: Path) -> tuple[str, dict[str, Counter]]:
    """The first RGB identity of the world and, per key, its items' values."""
    records = [json.loads(line) for line in (world / "manifest.jsonl").read_text(encoding="utf-8").splitlines()]
    identity = next(str(r["identity"]) for r in records if r["modality"] == "rgb")
    values: dict[str, Counter] = {}
    for record in records:
        if str(record["identity"]) == identity and record["modality"] != "sketch":
            for key, value in record["attributes"].items():
                values.setdefault(key, Counter())[value] += 1
    return identity, values


@pytest.mark.slow
def test_a_script_answers_the_suggested_questions_truthfully(tiny_demo_world, tiny_checkpoint, tmp_path):
    from app.launch import launch
    from app.store import CaseStore

    target, truth = _target(tiny_demo_world)
    script = tmp_path / "script.json"
    script.write_text(json.dumps({"title": "Tiny demo", "target": target, "pace_ms": 0, "actions": [
        {"search": "a person", "keep": 0.75}, {"answer": "truth"}, {"answer": "dont_know"}, {"answer": "truth"},
        {"confirm_relevant": 6, "expect_at_least": 0}]}), encoding="utf-8")
    assert launch(tmp_path / "cases.db", None, tiny_checkpoint, ["lineup"], play=script, quit_after=True,
                  fast=True) == 0
    with CaseStore.open(tmp_path / "cases.db") as store:
        state = store.load_case(next(c.id for c in store.list_cases() if c.title == "Tiny demo"))
    steps = [state.step(i) for i in state.active_path]
    assert len(steps) == 3 and steps[0].question is None
    answered = [s.question for s in steps[1:]]
    for record in answered:
        assert record["answer"] in truth[record["key"]] and record["question"].endswith("?")
        assert record["answer"] == truth[record["key"]].most_common(1)[0][0]
    hidden = answered[1]["unknown"]
    assert len(hidden) == 1 and hidden[0] not in {answered[0]["key"], answered[1]["key"]}
    assert steps[1].query_text.startswith("a person. ") and steps[2].query_text.startswith(steps[1].query_text)
