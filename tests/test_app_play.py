"""Trainer demo scripts: parsing (with property tests), replay through the real window, and the
``lineup app --play … --quit`` end to end on a tiny demo world."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.state.play_script import PlayScriptError, load_script, parse_script
from app.state.query_spec import KeepRule

WAIT = 60_000


def _write_script(folder: Path, actions: list, **extra) -> Path:
    path = folder / "script.json"
    path.write_text(json.dumps({"title": "Tiny demo", "pace_ms": 0, "actions": actions, **extra}), encoding="utf-8")
    return path


# ------------------------------------------------------------------------------------------------ parsing


def test_shipped_demo_scripts_parse_and_start_with_a_search():
    for name in ("red_jacket", "sketch_then_words"):
        script = load_script(name)
        assert script.actions[0].kind == "search" and script.title.startswith("Demo")
        searches = [a for a in script.actions if a.kind == "search"]
        assert len(searches) >= 3
        assert any(a.kind == "confirm_relevant" for a in script.actions)


def test_keep_values_mean_fraction_count_or_threshold(tmp_path):
    actions = [{"search": "a man", "keep": 0.25}, {"search": "a man", "keep": 7},
               {"search": "a man", "keep": {"threshold": 0.3}}, {"search": "a man", "keep": 1.0}]
    script = parse_script({"title": "t", "actions": actions}, tmp_path / "s.json")
    assert [a.keep for a in script.actions] == [KeepRule("rho", 0.25), KeepRule("k", 7), KeepRule("threshold", 0.3),
                                                KeepRule("rho", 1.0)]


@pytest.mark.parametrize(
    ("actions", "message"),
    [
        ([], "'actions' must be a non-empty list"),
        ([{"note": "hi"}], "a script starts with a search"),
        ([{"search": ""}], "needs a text, a sketch or an IR image"),
        ([{"search": "a man", "keep": 0}], "kept count k must be a whole number"),
        ([{"search": "a man", "keep": 0.0}], "ρ must lie in"),
        ([{"search": "a man", "keep": "half"}], "keep must be"),
        ([{"search": "a man", "sketch": "missing.png"}], "file not found"),
        ([{"search": "a man", "level": "XL"}], "level must be one of"),
        ([{"search": "a man"}, {"confirm": []}], "at least one rank"),
        ([{"search": "a man"}, {"confirm": [0]}], "a rank must be"),
        ([{"search": "a man"}, {"confirm": [1], "reject": [2]}], "exactly one of"),
        ([{"search": "a man"}, {"undo": 1}], "undo"),
        ([{"search": "a man"}, {"pause": 10**9}], "at most"),
        ([{"search": "a man", "colour": "red"}], "unknown key 'colour'"),
    ],
)
def test_bad_scripts_name_the_action_and_the_problem(tmp_path, actions, message):
    with pytest.raises(PlayScriptError, match=message) as caught:
        parse_script({"title": "t", "actions": actions}, tmp_path / "s.json")
    assert "s.json" in str(caught.value)


def test_missing_and_corrupt_script_files_are_clear_errors(tmp_path):
    with pytest.raises(PlayScriptError, match="not found"):
        load_script(tmp_path / "none.json")
    (tmp_path / "bad.json").write_text("{nope", encoding="utf-8")
    with pytest.raises(PlayScriptError, match="not a readable JSON file"):
        load_script(tmp_path / "bad.json")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 50) | st.floats(allow_nan=True) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12)
action_keys = st.sampled_from(["search", "keep", "confirm", "reject", "confirm_relevant", "note", "undo", "branch",
                               "pause", "level"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(actions=st.lists(st.dictionaries(action_keys, json_values, max_size=3), max_size=5),
       title=st.one_of(st.text(max_size=5), json_values))
def test_any_json_gives_a_script_or_a_play_script_error(tmp_path, actions, title):
    try:
        script = parse_script({"title": title, "actions": actions}, tmp_path / "s.json")
    except PlayScriptError:
        return
    assert script.actions[0].kind == "search"
    assert all(isinstance(action.describe(), str) for action in script.actions)


valid_actions = st.one_of(
    st.builds(lambda t, k: {"search": t, "keep": k}, st.sampled_from(["a man", "a woman in red", "a tall man"]),
              st.one_of(st.floats(0.01, 1.0), st.integers(1, 500))),
    st.builds(lambda r: {"confirm": r}, st.lists(st.integers(1, 30), min_size=1, max_size=3)),
    st.builds(lambda n: {"confirm_relevant": n}, st.integers(1, 50)),
    st.builds(lambda t: {"note": t}, st.text(min_size=1, max_size=20).filter(str.strip)),
    st.just({"undo": True}),
    st.builds(lambda n: {"branch": n}, st.integers(1, 5)),
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rest=st.lists(valid_actions, max_size=6))
def test_valid_scripts_keep_every_action_in_order(tmp_path, rest):
    actions = [{"search": "a man"}, *rest]
    script = parse_script({"title": "t", "actions": actions}, tmp_path / "s.json")
    assert [a.kind for a in script.actions] == [next(iter(a)) for a in actions]


# ----------------------------------------------------------------------------------------------- playing


def _tiny_target(world: Path) -> tuple[str, str]:
    """(description, identity) of the first RGB identity of the tiny demo world."""
    from engine.retrieval.text.generator import describe

    for line in (world / "manifest.jsonl").read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["modality"] == "rgb":
            attributes = record["attributes"]
            text = describe(attributes, keys=["gender", "top_type", "top_color"], rng=1)
            return text, str(record["identity"])
    raise AssertionError("no RGB record")


@pytest.mark.slow
def test_play_end_to_end_through_the_cli_entry(tiny_demo_world, tiny_checkpoint, tmp_path):
    from app.launch import launch
    from app.store import CaseStore

    text, target = _tiny_target(tiny_demo_world)
    script = _write_script(tmp_path, [
        {"search": "a person", "keep": 0.5},
        {"note": "first step done"},
        {"search": text, "keep": 0.5},
        {"search": text, "keep": 3},
        {"confirm": [1, 2]},
        {"reject": [3]},
        {"confirm_relevant": 3, "expect_at_least": 0},  # an untrained model: the flow is tested, not its ranking
    ], target=target)
    db, shot, report = tmp_path / "cases.db", tmp_path / "shot.png", tmp_path / "report.pdf"
    status = launch(db, None, tiny_checkpoint, ["lineup"], play=script, screenshot=shot, quit_after=True,
                    fast=True, export_report=report)
    assert status == 0
    assert shot.is_file() and shot.stat().st_size > 10_000
    assert (tmp_path / "shot-distribution.png").stat().st_size > 2_000
    from app.report import verify_report

    assert report.read_bytes().startswith(b"%PDF")
    verification = verify_report(report, db)
    assert verification.ok, verification.problems
    with CaseStore.open(db) as store:
        case = next(c for c in store.list_cases() if c.title == "Tiny demo")
        state = store.load_case(case.id)
    steps = [state.step(step_id) for step_id in state.active_path]
    assert len(steps) == 3
    assert [s.candidates_after for s in steps] == [12, 6, 3]
    assert [s.candidates_before for s in steps] == [24, 12, 6]
    assert len(state.confirmed) >= 2 and len(state.rejected) == 1
    assert [n.text for n in state.notes][0] == "first step done"


@pytest.mark.slow
def test_a_failing_action_stops_the_play_with_the_reason(
        tiny_demo_world, tiny_checkpoint, tmp_path, capsys):
    from app.launch import launch

    script = _write_script(tmp_path, [{"search": "a person", "keep": 2}, {"confirm": [99]}, {"note": "never"}])
    status = launch(tmp_path / "cases.db", None, tiny_checkpoint, ["lineup"], play=script, quit_after=True,
                    fast=True)
    assert status == 1
    assert "there is no rank 99" in capsys.readouterr().out


def test_a_bad_script_fails_before_the_window_opens(tmp_path, capsys):
    from app.launch import launch

    status = launch(tmp_path / "cases.db", None, None, ["lineup"], play=tmp_path / "none.json", quit_after=True)
    assert status == 2 and "not found" in capsys.readouterr().err


@pytest.mark.slow
def test_undo_branch_and_ground_truth_through_a_script(tiny_demo_world, tiny_checkpoint, tmp_path):
    from app.launch import launch
    from app.store import CaseStore

    text, target = _tiny_target(tiny_demo_world)
    script = _write_script(tmp_path, [
        {"search": "a person", "keep": 1.0},
        {"search": text, "keep": 0.5},
        {"undo": True},
        {"search": text, "keep": 4},
        {"branch": 1},
        {"search": "a person in black", "keep": 2},
        {"confirm_relevant": 24},
    ], target=target)
    assert launch(tmp_path / "cases.db", None, tiny_checkpoint, ["lineup"], play=script, quit_after=True,
                  fast=True) == 0
    with CaseStore.open(tmp_path / "cases.db") as store:
        state = store.load_case(next(c.id for c in store.list_cases() if c.title == "Tiny demo"))
    assert len(state.steps) == 4
    assert sum(step.undone for step in state.steps) == 1
    path = [state.step(step_id) for step_id in state.active_path]
    assert [s.candidates_after for s in path] == [24, 2]
    first = path[0].id
    assert len(state.children(first)) == 3  # the undone step, the kept-4 step and the branch's step
    from engine.index import Gallery

    gallery = Gallery.open(state.galleries[0].path)
    names = gallery.columns.identities.names
    marked = [m.item_id for m in state.confirmed]  # the grid of the last step shows all 24 candidates
    assert marked and {names[gallery.columns.identity[gallery.row(item)]] for item in marked} == {target}


def test_target_identity_must_exist_in_the_gallery(qtbot, tmp_path):
    from app.state import AppState

    state = AppState()
    with qtbot.waitSignal(state.error) as blocker:
        assert not state.set_target_identity("12")
    assert "Open a gallery" in blocker.args[0]
    assert state.set_target_identity(None) and state.target_identity is None


def test_expectations_parse_with_defaults_and_bad_values_name_the_action(tmp_path):
    script = parse_script({"title": "t", "actions": [
        {"search": "a man", "expect_relevant_kept": 2}, {"confirm_relevant": 5},
        {"confirm_relevant": 5, "expect_at_least": 0}]}, tmp_path / "s.json")
    assert [a.expect for a in script.actions] == [2, 1, 0]
    for action, message in (({"confirm_relevant": 5, "expect_at_least": -1}, "expect_at_least must be a whole"),
                            ({"search": "x", "expect_relevant_kept": "all"}, "expect_relevant_kept must be"),
                            ({"note": "x", "expect_at_least": 1}, "unknown key 'expect_at_least'")):
        with pytest.raises(PlayScriptError, match=rf"action 2: {message}"):
            parse_script({"title": "t", "actions": [{"search": "a"}, action]}, tmp_path / "s.json")


@pytest.mark.slow
def test_an_unmet_expectation_fails_the_play_naming_the_action(
        tiny_demo_world, tiny_checkpoint, tmp_path, capsys):
    from app.launch import launch

    text, target = _tiny_target(tiny_demo_world)
    script = _write_script(tmp_path, [{"search": text, "keep": 1.0, "expect_relevant_kept": 1},
                                      {"search": "a person", "keep": 1, "expect_relevant_kept": 1000},
                                      {"note": "Confirmed the matches"}], target=target)
    status = launch(tmp_path / "cases.db", None, tiny_checkpoint, ["lineup"], play=script, quit_after=True,
                    fast=True)
    out = capsys.readouterr().out
    assert status == 1 and "action 2 (search “a person” (" in out and "expected at least 1000" in out
    # a confirm step that finds nothing to confirm fails too (a target that is not among the top 1)
    script = _write_script(tmp_path, [{"search": text, "keep": 1.0}, {"confirm_relevant": 24},
                                      {"confirm_relevant": 1, "expect_at_least": 25}], target=target)
    status = launch(tmp_path / "cases2.db", None, tiny_checkpoint, ["lineup"], play=script, quit_after=True,
                    fast=True)
    out = capsys.readouterr().out
    assert status == 1 and "action 3 (confirm the true matches in the top 1): expected at least 25" in out
