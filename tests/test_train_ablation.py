"""Ablation plans (engine/lab/train/ablation.py) and warm starts (engine/lab/train/warm_start.py)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from tiny_training import build_tiny_world, tiny_run
from typer.testing import CliRunner

from engine.lab.train.ablation import AblationPlanError, load_plan, parse_plan, render_markdown, run_ablation
from engine.lab.train.config import load_run_config
from engine.lab.train.optim import freeze_all_but
from engine.lab.train.warm_start import backbone_tensor_names, warm_start
from engine.retrieval.models import create, load, save
from engine.retrieval.models.config import load_config

REPOSITORY = Path(__file__).resolve().parents[1]
SHIPPED_PLANS = sorted(path.stem for path in (REPOSITORY / "resources" / "ablations").glob("*.json"))


def _plan(**changes) -> dict:
    run = tiny_run()
    plan = {
        "name": "tiny",
        "description": "two tiny rows",
        "training": {**run["training"], "epochs": 1},
        "model_overrides": {"losses": {"temperature": 0.07}},
        "protocols": ["mg-separate"],
        "rows": [
            {"name": "full", "model": run["model"]},
            {"name": "no_gcr", "model": run["model"], "model_overrides": {"gcr": {"enabled": False},
                                                                          "losses": {"gcr": 0.0}}},
        ],
    }
    plan.update(changes)
    return plan


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    return build_tiny_world(tmp_path_factory.mktemp("ablationworld") / "w")


def test_shipped_plans_resolve_every_row():
    assert {"cmam", "cmam_240", "flexireid", "flexireid_frozen", "crst", "uniat", "uniat_passes"} <= set(SHIPPED_PLANS)
    for name in SHIPPED_PLANS:
        plan = load_plan(name)
        assert plan.rows and plan.protocols
        assert len({row.name for row in plan.rows}) == len(plan.rows)


def test_shipped_plans_run_on_the_shipped_architecture():
    """docs/ablations say every row starts from the shipped default's backbone: each row's vision tower and text
    depth must be the checkpoint's, or the warm start would leave the stem fresh."""
    shipped = load_config(REPOSITORY / "resources" / "checkpoints" / "default" / "config.json")
    for name in SHIPPED_PLANS:
        plan = load_plan(name)
        assert plan.warm_start and plan.init_scope == "backbone"
        for row in plan.rows:
            model = load_run_config(plan.run_file(row)).model
            assert (model.vision.stem, model.vision.image_size, model.vision.patch_size) == (
                shipped.vision.stem, shipped.vision.image_size, shipped.vision.patch_size), (name, row.name)
            assert model.text.layers == shipped.text.layers, (name, row.name)


def test_shipped_cmam_plan_adds_one_component_per_row():
    plan = load_plan("cmam")
    assert plan.compare == "previous"
    models = [load_run_config(plan.run_file(row)).model for row in plan.rows]
    switches = [(m.granularity.enabled, m.losses.pcia, m.gcr.enabled) for m in models]
    assert switches == [(False, False, False), (True, False, False), (True, True, False), (True, True, True)]


def test_the_longer_cmam_plan_is_the_chain_at_twice_the_budget():
    short, long = load_plan("cmam"), load_plan("cmam_240")
    assert long.rows == short.rows and long.compare == short.compare
    assert short.model_overrides == long.model_overrides and short.protocols == long.protocols
    assert {**short.training, "epochs": long.training["epochs"]} == long.training
    assert long.training["epochs"] == 2 * short.training["epochs"]


def test_the_frozen_flexireid_plan_differs_from_its_pair_only_in_what_trains():
    full, frozen = load_plan("flexireid"), load_plan("flexireid_frozen")
    assert frozen.rows[0] == full.rows[0]
    assert (frozen.training, frozen.model_overrides, frozen.protocols, frozen.init_scope) == (
        full.training, full.model_overrides, full.protocols, full.init_scope)
    end_to_end, adapters_only = (frozen.run_file(row) for row in frozen.rows)
    assert adapters_only["model"] == end_to_end["model"]
    assert adapters_only["model_overrides"] == end_to_end["model_overrides"]
    model = create(load_run_config(adapters_only).model)
    freeze_all_but(model, tuple(adapters_only["training"]["trainable"]))
    training = {name for name, param in model.named_parameters() if param.requires_grad}
    assert training == set(dict(model.named_parameters())) - backbone_tensor_names(model)
    assert any(".adapters." in name for name in training if name.startswith("backbone.visual."))


def test_the_uniat_passes_plan_is_the_uniat_plan_with_more_passes_over_fewer_steps_per_epoch():
    short, passes = load_plan("uniat"), load_plan("uniat_passes")
    assert passes.rows == short.rows and passes.model_overrides == short.model_overrides
    assert passes.protocols == short.protocols and passes.init_scope == short.init_scope
    changed = {"epochs", "steps_per_epoch", "warmup_epochs"}
    assert {k: v for k, v in passes.training.items() if k not in changed} == {
        k: v for k, v in short.training.items() if k not in changed}
    steps = {plan.name: plan.training["epochs"] * plan.training["steps_per_epoch"] for plan in (short, passes)}
    assert steps == {"uniat": 120, "uniat_passes": 240}
    warmup = {plan.name: round(plan.training["warmup_epochs"] * plan.training["steps_per_epoch"])
              for plan in (short, passes)}
    assert warmup["uniat"] == warmup["uniat_passes"]


def test_row_config_is_model_then_shared_recipe_then_row_overrides():
    plan = parse_plan(_plan())
    merged = plan.run_file(plan.rows[1])["model_overrides"]
    assert merged == {"losses": {"temperature": 0.07, "gcr": 0.0}, "gcr": {"enabled": False}}
    assert plan.run_file(plan.rows[0])["training"]["epochs"] == 1


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"colour": 1}, "unknown key 'colour'"),
        ({"protocols": ["t2i"]}, "'protocols' must be"),
        ({"rows": []}, "'rows' must be a non-empty list"),
        ({"rows": [{"name": "a", "model": "default"}, {"name": "a", "model": "tiny"}]}, "'a' is used twice"),
        ({"rows": [{"name": "a b", "model": "default"}]}, "'name' must be a short name"),
        ({"rows": [{"name": "a", "model": "no_such_config"}]}, "row 'a'"),
        ({"rows": [{"name": "a", "model": "default", "model_overrides": {"vision": {"wdth": 3}}}]}, "row 'a'"),
        ({"training": {"epochs": 0}}, "epochs"),
        ({"init": "cold"}, "'init' can only be"),
        ({"init": "warm", "init_scope": "heads"}, "'init_scope' must be one of"),
        ({"init_scope": "backbone"}, "'init_scope' needs"),
    ],
)
def test_bad_plans_name_the_problem(changes, message):
    with pytest.raises(AblationPlanError, match=message):
        parse_plan(_plan(**changes), "plan.json")


def test_missing_plan_file_is_a_clear_error(tmp_path):
    with pytest.raises(AblationPlanError, match="not found"):
        load_plan(tmp_path / "nope.json")
    (tmp_path / "bad.json").write_text("{", encoding="utf-8")
    with pytest.raises(AblationPlanError, match="not valid JSON"):
        load_plan(tmp_path / "bad.json")


def test_init_must_match_the_plan(world, tmp_path):
    with pytest.raises(AblationPlanError, match="give the checkpoint"):
        run_ablation(parse_plan(_plan(init="warm")), f"world:{world}", world, tmp_path / "a")
    with pytest.raises(AblationPlanError, match="takes no --init"):
        run_ablation(parse_plan(_plan()), f"world:{world}", world, tmp_path / "b", init=tmp_path)
    with pytest.raises(AblationPlanError, match="no row named 'x'"):
        run_ablation(parse_plan(_plan()), f"world:{world}", world, tmp_path / "c", only=["x"])


@pytest.mark.slow
def test_ablation_trains_each_row_once_and_tabulates(world, tmp_path):
    out = tmp_path / "ablation"
    plan = parse_plan(_plan())
    messages: list[str] = []
    table = run_ablation(plan, f"world:{world}", world, out, seed=2, echo=messages.append)
    assert [row["status"] for row in table["rows"]] == ["done", "done"]
    for row in table["rows"]:
        report = row["reports"]["mg-separate"]
        assert set(report["by"]) == {"UC", "C", "M", "F", "UF"}
        assert 0.0 <= report["overall"]["mAP"] <= 1.0
        assert row["training"]["steps"] > 0
    assert load(out / "no_gcr" / "model").config.gcr.enabled is False
    assert load(out / "full" / "model").config.gcr.enabled is True
    markdown = (out / "table.md").read_text(encoding="utf-8")
    assert "| full |" in markdown and "| no_gcr |" in markdown and "pending" not in markdown
    assert json.loads((out / "table.json").read_text())["rows"][1]["name"] == "no_gcr"

    log_before = (out / "full" / "log.jsonl").read_text()
    messages.clear()
    again = run_ablation(plan, f"world:{world}", world, out, seed=2, echo=messages.append)
    assert messages == ["full: done already", "no_gcr: done already"]
    assert (out / "full" / "log.jsonl").read_text() == log_before
    assert again["rows"] == table["rows"]


def test_a_partial_table_marks_rows_pending(tmp_path):
    plan = parse_plan(_plan())
    (tmp_path / "full").mkdir()
    report = {"overall": {"R@1": 0.5, "mAP": 0.25}, "by": {"UF": {"R@1": 1.0, "mAP": 0.5}}}
    (tmp_path / "full" / "eval-mg-separate.json").write_text(json.dumps(report))
    from engine.lab.train.ablation import collect_table

    table = collect_table(plan, tmp_path)
    assert [row["status"] for row in table["rows"]] == ["done", "pending"]
    markdown = render_markdown(table)
    assert "| full | 0 | 0.500 (1.000) | 0.250 (0.500) |" in markdown
    assert "| no_gcr | 0 | pending | pending |" in markdown


def test_warm_start_copies_matching_tensors_and_reports_the_rest(tmp_path):
    source_config = tiny_run({"fusion": {"kind": "none"}, "losses": {"fusion_sdm": 0.0}})["model"]
    source = create(source_config)
    save(source, tmp_path / "stage1")
    target = create(tiny_run({"fusion": {"kind": "cmqf"}, "adapters": {"num_experts": 2}})["model"])
    before = {k: v.clone() for k, v in target.state_dict().items()}
    report = warm_start(target, tmp_path / "stage1")
    state, stage1 = target.state_dict(), source.state_dict()
    assert report.loaded and all(torch.equal(state[k], stage1[k]) for k in report.loaded)
    assert any(k.startswith("fusion") for k in report.new)
    assert all(torch.equal(state[k], before[k]) for k in report.new)
    assert any("shape" in why for _, why in report.skipped)  # the adapter router has 2 outputs now, not 4
    assert "warm start from" in report.summary() and "new" in report.summary()


def test_backbone_scope_copies_only_the_clip_layout_tensors(tmp_path):
    source = create(tiny_run()["model"])  # experts, adapters, heads, fusion: all trained components
    save(source, tmp_path / "trained")
    target = create(tiny_run()["model"])
    before = {k: v.clone() for k, v in target.state_dict().items()}
    report = warm_start(target, tmp_path / "trained", scope="backbone")
    state, trained = target.state_dict(), source.state_dict()
    assert set(report.loaded) == set(target.clip_parameter_names) | {
        k for k in state if k.startswith("backbone.visual.conv1.")}
    assert all(torch.equal(state[k], trained[k]) for k in report.loaded)
    added = [k for k in state if "granularity_experts" in k or ".adapters." in k or k.startswith("fusion.")]
    assert added and set(added) <= set(report.new)
    assert all(torch.equal(state[k], before[k]) for k in report.new)
    assert {key for key, why in report.skipped if "outside the backbone scope" in why} == set(report.new) & set(trained)


def test_an_unknown_warm_start_scope_is_refused(tmp_path):
    with pytest.raises(ValueError, match="scope must be one of"):
        warm_start(create(tiny_run()["model"]), tmp_path, scope="heads")


def test_warm_start_from_a_missing_checkpoint_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="checkpoint folder not found"):
        warm_start(create(tiny_run()["model"]), tmp_path / "none")


def test_ablate_cli_reports_a_bad_plan(tmp_path):
    from lineup.cli import app

    (tmp_path / "plan.json").write_text(json.dumps(_plan(rows=[])))
    result = CliRunner().invoke(app, ["ablate", "--plan", str(tmp_path / "plan.json"), "--data", "world:x",
                                      "--world", str(tmp_path), "--out", str(tmp_path / "o")])
    assert result.exit_code != 0 and "'rows' must be a non-empty list" in result.output


def test_a_backbone_scoped_plan_says_so_in_its_table(tmp_path):
    plan = parse_plan(_plan(init="warm", init_scope="backbone"))
    assert plan.warm_start and plan.init_scope == "backbone"
    (tmp_path / "plan.json").write_text(json.dumps({"init": "ckpt/default"}))
    from engine.lab.train.ablation import collect_table

    table = collect_table(plan, tmp_path)
    assert table["init_scope"] == "backbone"
    assert "starts from `ckpt/default` (its backbone tensors only" in render_markdown(table)
    assert parse_plan(_plan(init="warm")).init_scope == "all"


def test_seed_summary_is_the_mean_with_a_students_t_interval():
    from engine.lab.train.ablation import seed_summary

    reports = [{"overall": {"mAP": v, "R@1": 2 * v, "queries": 10}, "by": {"UF": {"mAP": v, "R@1": None}}}
               for v in (0.40, 0.42, 0.44)]
    summary = seed_summary(reports)
    assert summary["seeds"] == 3
    assert summary["overall"]["mAP"] == pytest.approx(0.42) and summary["overall"]["R@1"] == pytest.approx(0.84)
    # t(0.975, 2) = 4.3027; sample sd 0.02; half-width 4.3027 · 0.02 / √3
    assert summary["interval95"]["overall"]["mAP"] == pytest.approx(4.3027 * 0.02 / 3 ** 0.5, rel=1e-4)
    assert summary["by"]["UF"]["R@1"] is None and summary["interval95"]["by"]["UF"]["R@1"] is None
    single = seed_summary(reports[:1])
    assert single["overall"]["mAP"] == pytest.approx(0.40) and single["interval95"]["overall"]["mAP"] is None


def _write_eval(folder: Path, value: float) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    report = {"overall": {"R@1": value, "mAP": value / 2}, "by": {"UF": {"R@1": value, "mAP": value / 2}}}
    (folder / "eval-mg-separate.json").write_text(json.dumps(report))


def test_several_seeds_run_each_row_per_seed_and_tabulate_intervals(world, tmp_path):
    plan = parse_plan(_plan())
    out = tmp_path / "ablation"
    for row in ("full", "no_gcr"):
        for seed, value in ((1, 0.5), (2, 0.6), (3, 0.7)):
            _write_eval(out / row / f"seed-{seed}", value)
    messages: list[str] = []
    table = run_ablation(plan, f"world:{world}", world, out, seeds=[1, 2, 3], echo=messages.append)
    assert messages == [f"{row} seed {seed}: done already" for seed in (1, 2, 3) for row in ("full", "no_gcr")]
    assert table["seeds"] == [1, 2, 3] and [row["status"] for row in table["rows"]] == ["done", "done"]
    full = table["rows"][0]["reports"]["mg-separate"]
    assert full["overall"]["R@1"] == pytest.approx(0.6) and full["seeds"] == 3
    half = full["interval95"]["overall"]["mAP"]
    assert half == pytest.approx(4.3027 * 0.05 / 3 ** 0.5, rel=1e-4)
    markdown = (out / "table.md").read_text(encoding="utf-8")
    assert "mean over seeds 1, 2, 3" in markdown and f"0.300 ± {half:.3f} (0.600)" in markdown
    with pytest.raises(AblationPlanError, match=r"holds this ablation with seeds \[1, 2, 3\]"):
        run_ablation(plan, f"world:{world}", world, out, seeds=[1, 2])
    with pytest.raises(AblationPlanError, match="repeat a seed"):
        run_ablation(plan, f"world:{world}", world, tmp_path / "other", seeds=[4, 4])


def test_a_seed_still_missing_keeps_the_row_pending(tmp_path):
    from engine.lab.train.ablation import collect_table

    plan = parse_plan(_plan())
    (tmp_path / "plan.json").write_text(json.dumps({"seed": 1, "seeds": [1, 2]}))
    _write_eval(tmp_path / "full" / "seed-1", 0.5)
    table = collect_table(plan, tmp_path)
    assert [row["status"] for row in table["rows"]] == ["pending", "pending"]
    assert table["rows"][0]["seeds"] == [1] and table["rows"][0]["reports"]["mg-separate"]["seeds"] == 1


def test_ablate_cli_refuses_bad_seeds(tmp_path):
    from lineup.cli import app

    result = CliRunner().invoke(app, ["ablate", "--plan", "cmam", "--data", "world:x", "--world", str(tmp_path),
                                      "--out", str(tmp_path / "o"), "--seeds", "1,two"])
    assert result.exit_code != 0 and "comma-separated integers" in result.output


def test_rows_are_compared_with_the_first_row_seed_by_seed(tmp_path):
    from engine.lab.train.ablation import collect_table

    plan = parse_plan(_plan())
    (tmp_path / "plan.json").write_text(json.dumps({"seeds": [1, 2, 3]}))
    # the seeds move both rows alike (0.5 / 0.7 / 0.6); no_gcr is ahead by 0.02 / 0.04 / 0.03 R@1
    for seed, value, gain in ((1, 0.5, 0.02), (2, 0.7, 0.04), (3, 0.6, 0.03)):
        _write_eval(tmp_path / "full" / f"seed-{seed}", value)
        _write_eval(tmp_path / "no_gcr" / f"seed-{seed}", value + gain)
    table = collect_table(plan, tmp_path)
    assert "paired" not in table["rows"][0] and "runs" not in table["rows"][1]
    paired = table["rows"][1]["paired"]["mg-separate"]
    assert paired["against"] == "full" and paired["seeds"] == 3
    assert paired["overall"]["R@1"] == pytest.approx(0.03) and paired["overall"]["mAP"] == pytest.approx(0.015)
    # sample sd of the mAP differences (0.01, 0.02, 0.015) is 0.005: far narrower than the rows' own spread
    half = paired["interval95"]["overall"]["mAP"]
    assert half == pytest.approx(4.3027 * 0.005 / 3 ** 0.5, rel=1e-4)
    assert half < table["rows"][1]["reports"]["mg-separate"]["interval95"]["overall"]["mAP"] / 5
    markdown = render_markdown(table)
    assert "Against `full`, paired by seed" in markdown
    assert f"| no_gcr | 3 | +0.015 ± {half:.3f} (+0.030) | +0.015 ± {half:.3f} (+0.030) |" in markdown


def test_a_cumulative_plan_pairs_each_row_with_the_row_above(tmp_path):
    from engine.lab.train.ablation import collect_table

    run = tiny_run()
    rows = [{"name": name, "model": run["model"]} for name in ("base", "plus_a", "plus_b")]
    plan = parse_plan(_plan(rows=rows, compare="previous"))
    (tmp_path / "plan.json").write_text(json.dumps({"seeds": [1, 2]}))
    for seed, value in ((1, 0.5), (2, 0.7)):  # plus_a adds 0.1 R@1 to base, plus_b 0.04 more
        for name, gain in (("base", 0.0), ("plus_a", 0.1), ("plus_b", 0.14)):
            _write_eval(tmp_path / name / f"seed-{seed}", value + gain)
    table = collect_table(plan, tmp_path)
    first, second = (table["rows"][i]["paired"]["mg-separate"] for i in (1, 2))
    assert first["against"] == "base" and first["overall"]["R@1"] == pytest.approx(0.1)
    assert second["against"] == "plus_a" and second["overall"]["R@1"] == pytest.approx(0.04)
    markdown = render_markdown(table)
    assert "Each row against the row above it, paired by seed" in markdown
    assert "| plus_b − plus_a | 2 | +0.020 ± 0.000 (+0.040) |" in markdown
    with pytest.raises(AblationPlanError, match="'compare' must be one of"):
        parse_plan(_plan(compare="best"))


def test_the_table_shows_each_runs_learning_curve(tmp_path):
    from engine.lab.train.ablation import collect_table

    plan = parse_plan(_plan())
    (tmp_path / "plan.json").write_text(json.dumps({"seeds": [1, 2]}))
    for seed in (1, 2):
        _write_eval(tmp_path / "full" / f"seed-{seed}", 0.5)
    epochs = [{"event": "epoch", "epoch": e, "mean_loss": loss, "validation": {"UF": {"mAP": uf}, "UC": {"mAP": uc}}}
              for e, loss, uf, uc in ((0, 5.25, 0.6, 0.2), (1, 4.5, 0.7, 0.25))]
    stale = {**epochs[1], "mean_loss": 9.0}  # written before a crash, the epoch then run again after the resume
    log = [{"event": "step", "global_step": 1, "seconds": 2.0}, epochs[0], stale, epochs[1]]
    (tmp_path / "full" / "seed-1" / "log.jsonl").write_text("\n".join(map(json.dumps, log)) + "\n{cut")
    table = collect_table(plan, tmp_path)
    assert list(table["rows"][0]["curves"]) == ["1"] and table["rows"][1]["curves"] == {}
    markdown = render_markdown(table)
    assert "## Learning curves" in markdown and "| row | seed | UF mAP | UC mAP | mean loss |" in markdown
    assert "| full | 1 | 0.600 → 0.700 | 0.200 → 0.250 | 5.25 → 4.5 |" in markdown
    assert "| no_gcr |" not in markdown.split("## Learning curves")[1]


def test_a_single_seed_table_has_no_paired_comparison(tmp_path):
    from engine.lab.train.ablation import collect_table

    plan = parse_plan(_plan())
    _write_eval(tmp_path / "full", 0.5)
    _write_eval(tmp_path / "no_gcr", 0.6)
    table = collect_table(plan, tmp_path)
    assert all("paired" not in row for row in table["rows"])
    assert "paired by seed" not in render_markdown(table)


def test_a_row_another_process_is_training_is_skipped(world, tmp_path):
    import threading

    from engine.lab.train.state import RunFolder

    plan = parse_plan(_plan())
    out = tmp_path / "ablation"
    _write_eval(out / "no_gcr", 0.5)
    held, release = threading.Event(), threading.Event()

    def other_trainer():  # another thread of this process stands for another process
        with RunFolder(out / "full").writing():
            held.set()
            release.wait(30)

    thread = threading.Thread(target=other_trainer)
    thread.start()
    held.wait(30)
    messages: list[str] = []
    try:
        table = run_ablation(plan, f"world:{world}", world, out, seed=2, echo=messages.append)
    finally:
        release.set()
        thread.join()
    assert messages[0].startswith(f"full: skipped: run folder {out / 'full'} is being written by process")
    assert messages[1:] == ["no_gcr: done already"]
    assert [row["status"] for row in table["rows"]] == ["pending", "done"]
    assert not (out / "full" / "run.json").exists()  # nothing was trained into the busy folder


def test_threads_reach_every_run_and_must_be_positive(world, tmp_path):
    plan = parse_plan(_plan())
    with pytest.raises(AblationPlanError, match="threads must be at least 1"):
        run_ablation(plan, f"world:{world}", world, tmp_path / "a", threads=0)
    out = tmp_path / "b"
    run_ablation(plan, f"world:{world}", world, out, seed=2, only=["full"], threads=1)
    start = json.loads((out / "full" / "log.jsonl").read_text().splitlines()[0])
    assert start["event"] == "start" and start["training"]["threads"] == 1


def test_a_row_can_change_the_budget_for_itself(tmp_path):
    rows = [{"name": "full", "model": tiny_run()["model"]},
            {"name": "frozen", "model": tiny_run()["model"],
             "training": {"trainable": ["text_attributes"], "lr": 1e-3}}]
    plan = parse_plan(_plan(rows=rows))
    assert plan.run_file(plan.rows[0])["training"] == plan.training
    frozen = plan.run_file(plan.rows[1])["training"]
    assert frozen == {**plan.training, "trainable": ["text_attributes"], "lr": 1e-3}
    from engine.lab.train.ablation import collect_table

    markdown = render_markdown(collect_table(plan, tmp_path))
    assert 'Row `frozen` also trains with `{"lr": 0.001, "trainable": ["text_attributes"]}`.' in markdown
    assert "Row `full`" not in markdown
    bad = [rows[0], {**rows[1], "training": {"epochs": 0}}]
    with pytest.raises(AblationPlanError, match="row 'frozen'.*epochs"):
        parse_plan(_plan(rows=bad))
    with pytest.raises(AblationPlanError, match=r"rows\[1\]: 'training' must be an object"):
        parse_plan(_plan(rows=[rows[0], {**rows[1], "training": ["lr"]}]))
