"""Trainer end to end on a tiny config and a tiny built world: learning, resume equivalence, checkpoints,
time limit, clear errors and the CLI."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file
from tiny_training import build_tiny_world, tiny_run
from typer.testing import CliRunner

from engine.kernel.resources import resource_path
from engine.lab.train import (
    RunFolderError,
    TrainConfigError,
    Trainer,
    TrainingDataError,
    TrainOptions,
    train,
)
from engine.retrieval.models import load, read_metadata


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    return build_tiny_world(tmp_path_factory.mktemp("trainworld") / "w")


def _options(world: Path, out: Path, run: dict | None = None, **kwargs) -> TrainOptions:
    return TrainOptions(config=run or tiny_run(), data=f"world:{world}", out=out, seed=5, command="test", **kwargs)


def _complete_step_lines(out: Path) -> int:
    """Step records fully written to the log so far (a line being written is not counted)."""
    log = out / "log.jsonl"
    if not log.is_file():
        return 0
    complete = log.read_text(encoding="utf-8").split("\n")[:-1]
    return sum('"event":"step"' in line for line in complete)


def _step_losses(out: Path) -> list[tuple[int, float, dict]]:
    records = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
    return [(r["global_step"], r["loss"], r["terms"]) for r in records if r["event"] == "step"]


def test_a_second_stage_validates_on_the_first_stages_identities(world, tmp_path):
    run = tiny_run(epochs=1, steps_per_epoch=1, validation_identities=3)
    first = train(_options(world, tmp_path / "stage1", run=run))  # seed 5
    recorded = read_metadata(first.model_dir)
    held_out = recorded["validation_identities"]
    assert len(held_out) == 3 and recorded["validation_seed"] == 5 and recorded["validation_origin"] == "seed 5"
    start = json.loads((tmp_path / "stage1" / "log.jsonl").read_text().splitlines()[0])
    assert start["validation_identities"] == held_out
    second = train(TrainOptions(config=run, data=f"world:{world}", out=tmp_path / "stage2", seed=6, command="test",
                                init=first.model_dir))
    stage2 = read_metadata(second.model_dir)
    assert stage2["validation_identities"] == held_out and stage2["validation_seed"] == 5
    assert stage2["validation_origin"] == str(first.model_dir)


def test_validation_seed_pins_the_held_out_draw(world):
    from engine.lab.train.data import HeldOut, build_training_data
    from engine.lab.train.trainer import resolve_run_config

    config = resolve_run_config(_options(world, Path("unused"))).model

    def held_out(seed, **kwargs):
        data = build_training_data(f"world:{world}", config, seed=seed, validation_identities=3,
                                   queries_per_identity=1, identities_per_batch=2, **kwargs)
        return data.validation_identities, data

    by_run_seed = {seed: held_out(seed)[0] for seed in (5, 6, 7)}
    assert len({tuple(ids) for ids in by_run_seed.values()}) > 1  # the old rule: each stage its own people
    assert {tuple(held_out(seed, validation_seed=5)[0]) for seed in (5, 6, 7)} == {tuple(by_run_seed[5])}
    ids, data = held_out(6)
    other = HeldOut((0, 1), 5, "0" * 64, "elsewhere")  # recorded on other data: not reused, said so
    notes = []
    assert build_training_data(f"world:{world}", config, seed=6, validation_identities=3, queries_per_identity=1,
                               identities_per_batch=2, held_out=other, status=notes.append
                               ).validation_identities == ids
    assert any("elsewhere was trained on other data" in note for note in notes)
    same = HeldOut((0, 1), 5, data.fingerprint["content_sha256"], "stage one")
    assert held_out(6, held_out=same)[0] == [0, 1]


def test_repeated_steps_on_one_batch_reduce_the_loss(world, tmp_path):
    trainer = Trainer.prepare(_options(world, tmp_path / "run", tiny_run(lr=3e-3, warmup_epochs=0.0)))
    indices = next(iter(trainer.sampler.epoch(0)))
    losses = [trainer.train_step(indices)["loss"] for _ in range(12)]  # same (epoch, step) → same batch
    assert losses[-1] < 0.8 * losses[0], losses


@pytest.mark.slow
def test_resume_after_a_kill_repeats_the_uninterrupted_run(world, tmp_path):
    straight = train(_options(world, tmp_path / "straight"))
    assert straight.status == "completed" and straight.global_step == 10  # 5 steps per epoch × 2

    class Killed(Exception):
        pass

    def kill_at_step_8(record):
        if record["global_step"] == 8:  # last saved state: step 6 (checkpoint_every 3, epoch end at 5)
            raise Killed

    with pytest.raises(Killed):
        train(_options(world, tmp_path / "killed"), on_step=kill_at_step_8)
    resumed = train(_options(world, tmp_path / "killed", resume=True))
    assert resumed.status == "completed" and resumed.global_step == 10

    a, b = _step_losses(tmp_path / "straight"), _step_losses(tmp_path / "killed")
    assert [s for s, _, _ in b] == list(range(1, 11))  # the log was cut back to the state and replayed
    for (step, loss_a, terms_a), (_, loss_b, terms_b) in zip(a, b, strict=True):
        assert loss_b == pytest.approx(loss_a, rel=1e-5, abs=1e-6), step
        assert terms_b == pytest.approx(terms_a, rel=1e-5, abs=1e-6), step
    weights_a = load_file(str(tmp_path / "straight" / "model" / "weights.safetensors"))
    weights_b = load_file(str(tmp_path / "killed" / "model" / "weights.safetensors"))
    for name, value in weights_a.items():
        torch.testing.assert_close(weights_b[name], value, rtol=1e-5, atol=1e-6, msg=name)
    events = [json.loads(line)["event"] for line in (tmp_path / "killed" / "log.jsonl").read_text().splitlines()]
    assert events.count("resume") == 1 and events.count("epoch") == 2 and events[-1] == "end"


@pytest.mark.slow
def test_resume_after_sigkill_of_the_cli_repeats_the_uninterrupted_run(world, tmp_path):
    run = tiny_run(epochs=4, checkpoint_every=1)
    straight = train(_options(world, tmp_path / "straight", run))
    run_file = tmp_path / "run.json"
    run_file.write_text(json.dumps(run))
    out = tmp_path / "killed"
    command = [sys.executable, "-c", "from lineup.cli import main; main()", "train", "--config", str(run_file),
               "--data", f"world:{world}", "--out", str(out), "--seed", "5", "--device", "cpu"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None and _complete_step_lines(out) < 6:
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait()
    logged = len(_step_losses(out))
    assert 6 <= logged < straight.global_step, "the run was not killed mid-way"
    resumed = train(_options(world, out, run, resume=True))
    assert resumed.status == "completed" and resumed.global_step == straight.global_step
    a, b = _step_losses(tmp_path / "straight"), _step_losses(out)
    assert [s for s, _, _ in b] == [s for s, _, _ in a]
    for (step, loss_a, _), (_, loss_b, _) in zip(a, b, strict=True):
        assert loss_b == pytest.approx(loss_a, rel=1e-5, abs=1e-6), step
    assert not list(out.glob(".*.tmp"))


def test_checkpoint_loads_encodes_and_records_its_origin(world, tmp_path):
    result = train(_options(world, tmp_path / "run", tiny_run(epochs=1)))
    model = load(result.model_dir, device="cpu")
    vectors, level_logits = model.encode_text(["a woman in a red coat", "a man with a black backpack"])
    assert vectors.shape == (2, 32) and level_logits.shape == (2, 5)
    assert torch.allclose(vectors.norm(dim=1), torch.ones(2), atol=1e-5)
    images = model.encode_images(torch.zeros(3, 3, 32, 16), level="UC")
    assert images.shape == (3, 32)
    meta = read_metadata(result.model_dir)
    assert meta["training_command"] == "test" and meta["seed"] == 5 and meta["global_step"] == 5
    fingerprint = meta["data_fingerprint"]
    assert fingerprint["reader"] == "world" and len(fingerprint["manifest_sha256"]) == 64
    assert fingerprint["world"]["seed"] == 3 and fingerprint["world"]["identities"] == 12
    # the Uni-AT classifiers were sized to the 10 training identities and their 20 outfits
    assert model.config.scenarios.num_person_ids == 10 and model.config.scenarios.num_clothing_ids == 20
    epoch = [json.loads(line) for line in (result.out / "log.jsonl").read_text().splitlines()][-2]
    assert epoch["event"] == "epoch" and set(epoch["validation"]) == {"UF", "UC", "S", "IR"}  # it fuses sketch/IR
    assert 0.0 <= epoch["validation"]["UF"]["R@1"] <= 1.0 and epoch["validation"]["UF"]["queries"] == 4


def test_time_limit_stops_with_a_checkpoint_and_resume_finishes(world, tmp_path):
    out = tmp_path / "run"
    stopped = train(_options(world, out, tiny_run(epochs=1), max_minutes=0.0))
    assert stopped.status == "time_limit" and stopped.global_step == 0
    assert (out / "training_state.pt").is_file() and (out / "model" / "weights.safetensors").is_file()
    done = train(_options(world, out, tiny_run(epochs=1), resume=True))
    assert done.status == "completed" and done.global_step == 5
    again = train(_options(world, out, tiny_run(epochs=1), resume=True))
    assert again.status == "already_complete"


def test_clear_errors(world, tmp_path):
    with pytest.raises(TrainingDataError, match="world folder not found"):
        Trainer.prepare(TrainOptions(config=tiny_run(), data=f"world:{tmp_path / 'nothing'}", out=tmp_path / "a"))
    with pytest.raises(TrainingDataError, match="unknown reader"):
        Trainer.prepare(TrainOptions(config=tiny_run(), data=f"imagenet:{world}", out=tmp_path / "a"))
    with pytest.raises(TrainConfigError, match="unknown training key 'learning_rate'"):
        Trainer.prepare(_options(world, tmp_path / "a", tiny_run(learning_rate=1.0)))
    with pytest.raises(TrainConfigError, match="not found"):
        Trainer.prepare(TrainOptions(config="no_such_config", data=f"world:{world}", out=tmp_path / "a"))
    with pytest.raises(TrainConfigError, match="unknown key 'vision.depth'"):
        Trainer.prepare(_options(world, tmp_path / "a", tiny_run({"vision": {"depth": 3}})))
    with pytest.raises(RunFolderError, match="no training state"):
        Trainer.prepare(_options(world, tmp_path / "a", resume=True))

    stopped = tmp_path / "b"
    train(_options(world, stopped, tiny_run(epochs=1), max_minutes=0.0))
    with pytest.raises(RunFolderError, match="already holds this run; pass --resume"):
        Trainer.prepare(_options(world, stopped, tiny_run(epochs=1)))
    with pytest.raises(RunFolderError, match=r"different run \(differs in: .*training.epochs"):
        Trainer.prepare(_options(world, stopped, tiny_run(epochs=1), resume=True, epochs=3))
    with pytest.raises(RunFolderError, match="different run"):
        Trainer.prepare(TrainOptions(config=tiny_run(epochs=1), data=f"world:{world}", out=stopped, seed=6))
    stranger = tmp_path / "c"
    stranger.mkdir()
    (stranger / "notes.txt").write_text("mine")
    with pytest.raises(RunFolderError, match="not empty and holds no Lineup run"):
        Trainer.prepare(_options(world, stranger))


def test_resume_keeps_the_recorded_config_when_the_config_file_changed(world, tmp_path):
    out = tmp_path / "run"
    train(_options(world, out, tiny_run(epochs=1), max_minutes=0.0))
    notes = []
    changed = tiny_run({"vision": {"width": 64}}, epochs=1, lr=0.1)
    result = train(_options(world, out, changed, resume=True), echo=notes.append)
    assert result.status == "completed" and any("resuming with the recorded one" in n for n in notes)
    notes.clear()
    train(_options(world, out, tiny_run(epochs=1), resume=True), echo=notes.append)  # unchanged: no note
    assert not any("resuming with the recorded one" in n for n in notes), notes
    assert load(result.model_dir, device="cpu").config.vision.width == 32
    assert read_metadata(result.model_dir)["training"]["lr"] == 1e-3


def test_a_run_recorded_before_the_new_keys_resumes_with_its_old_rules(world, tmp_path):
    out = tmp_path / "run"
    train(_options(world, out, tiny_run(epochs=1), max_minutes=0.0))
    recorded = json.loads((out / "run.json").read_text())
    for key in ("validation_seed", "low_resolution_reference", "text_positives", "realism"):
        del recorded["training"][key]
    (out / "run.json").write_text(json.dumps(recorded))
    result = train(_options(world, out, tiny_run(epochs=1), resume=True))
    assert result.status == "completed"
    training = read_metadata(result.model_dir)["training"]
    assert training["text_positives"] == "identity" and training["low_resolution_reference"] == "input"
    assert training["realism"] == 0.0


def test_cli_train_and_its_errors(world, tmp_path):
    from lineup.cli import app

    run_file = tmp_path / "tiny_run.json"
    run_file.write_text(json.dumps(tiny_run(epochs=1)))
    runner = CliRunner()
    out = tmp_path / "cli"
    args = ["train", "--config", str(run_file), "--data", f"world:{world}", "--out", str(out), "--seed", "2"]
    result = runner.invoke(app, [*args, "--max-minutes", "0"])
    assert result.exit_code == 0, result.output
    assert "time_limit" in result.output and (out / "training_state.pt").is_file()
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and "pass --resume" in result.output
    result = runner.invoke(app, [*args, "--resume", "--epochs", "1"])
    assert result.exit_code == 0, result.output
    assert "completed: 1 epochs, 5 steps" in result.output
    result = runner.invoke(app, ["train", "--data", f"world:{tmp_path / 'none'}", "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and "world folder not found" in result.output


def test_trainable_prefixes_train_only_those_parameters(world, tmp_path):
    first = train(_options(world, tmp_path / "stage1", run=tiny_run(epochs=1, steps_per_epoch=1)))
    prefixes = ("scenario_tokens", "scenario_positions", "scenario_heads")
    run = tiny_run(epochs=1, steps_per_epoch=2, trainable=list(prefixes))
    second = train(_options(world, tmp_path / "stage2", run=run, init=first.model_dir))
    before = load(first.model_dir, device="cpu").state_dict()
    after = load(second.model_dir, device="cpu").state_dict()
    changed = {name for name, value in after.items() if not torch.equal(before[name], value)}
    assert any(name.startswith("scenario_tokens") for name in changed)
    assert changed and all(name.startswith(prefixes) for name in changed), sorted(changed)
    with pytest.raises(TrainConfigError, match=r"'trainable' prefixes \['scenario_tokns'\] name no parameter"):
        Trainer.prepare(_options(world, tmp_path / "typo", tiny_run(trainable=["scenario_tokns"])))


def test_stem_weights_start_a_mobilenet_stem_from_imagenet(world, tmp_path):
    from engine.lab.train.trainer import TrainingError

    mobilenet = {"vision": {"stem": "mobilenetv2", "patch_size": 16, "image_size": [64, 32], "stem_channels": []}}
    weights = "models/backbones/mobilenetv2_imagenet.pt"
    shipped = torch.load(resource_path(weights), map_location="cpu", weights_only=True)
    prepared = Trainer.prepare(_options(world, tmp_path / "run", tiny_run(mobilenet, stem_weights=weights)))
    torch.testing.assert_close(prepared.model.backbone.visual.conv1.features[0][0].weight,
                               shipped["features.0.0.weight"])
    trained = train(_options(world, tmp_path / "stage1", tiny_run(mobilenet, epochs=1, steps_per_epoch=1,
                                                                   stem_weights=weights)))
    second = Trainer.prepare(_options(world, tmp_path / "stage2", tiny_run(mobilenet, stem_weights=weights),
                                      init=trained.model_dir))  # the checkpoint's trained stem wins
    stem_after_stage1 = load(trained.model_dir, device="cpu").backbone.visual.conv1.features[0][0].weight
    torch.testing.assert_close(second.model.backbone.visual.conv1.features[0][0].weight, stem_after_stage1)
    assert not torch.equal(stem_after_stage1, shipped["features.0.0.weight"])
    with pytest.raises(TrainingError, match="'stem_weights' needs vision.stem 'mobilenetv2'"):
        Trainer.prepare(_options(world, tmp_path / "conv", tiny_run(stem_weights=weights)))
    with pytest.raises(TrainingError, match="nothing.pt: no such file"):
        missing = str(tmp_path / "nothing.pt")
        Trainer.prepare(_options(world, tmp_path / "none", tiny_run(mobilenet, stem_weights=missing)))


def test_realism_is_recorded_and_changes_what_the_run_sees(world, tmp_path):
    plain = train(_options(world, tmp_path / "plain", tiny_run(epochs=1)))
    realistic = train(_options(world, tmp_path / "real", tiny_run(epochs=1, realism=0.5)))
    assert realistic.status == "completed"
    assert read_metadata(realistic.model_dir)["training"]["realism"] == 0.5
    assert json.loads((realistic.out / "run.json").read_text())["training"]["realism"] == 0.5
    assert read_metadata(plain.model_dir)["training"]["realism"] == 0.0
    losses = _step_losses(realistic.out)
    assert all(torch.isfinite(torch.tensor(loss)) for _, loss, _ in losses)
    assert [loss for _, loss, _ in losses] != [loss for _, loss, _ in _step_losses(plain.out)]


def test_a_second_trainer_into_the_same_folder_is_refused(world, tmp_path):
    from engine.lab.train.state import HOLDER_FILE, RunBusyError

    out = tmp_path / "run"
    second: list[RunFolderError] = []

    def attempt():
        try:
            train(_options(world, out, resume=True))
        except RunFolderError as exc:
            second.append(exc)

    def train_again(record):
        if record["global_step"] == 2 and not second:
            # another thread of this process stands for another process: it is refused like one
            thread = threading.Thread(target=attempt)
            thread.start()
            thread.join()

    result = train(_options(world, out, tiny_run(epochs=1)), on_step=train_again)
    assert result.status == "completed"
    assert len(second) == 1 and isinstance(second[0], RunBusyError)
    assert f"run folder {out} is being written by process {os.getpid()}" in str(second[0])
    assert not (out / HOLDER_FILE).exists()
    again = train(_options(world, out, tiny_run(epochs=1), resume=True))  # the lock was released
    assert again.status == "already_complete"


def test_a_folder_holding_only_a_killed_trainers_lock_is_still_empty(world, tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "trainer.lock").touch()  # what a trainer killed before writing run.json leaves
    (out / "trainer.json").write_text('{"pid": 999999, "started": "2026-01-01T00:00:00+00:00"}')
    result = train(_options(world, out, tiny_run(epochs=1)))
    assert result.status == "completed"


def test_a_resumed_run_records_the_command_that_started_it_and_its_validation_origin(world, tmp_path):
    run = tiny_run(epochs=1, steps_per_epoch=1, validation_identities=3)
    train(_options(world, tmp_path / "stage1", run=run))
    second = tiny_run(epochs=2, checkpoint_every=1, validation_identities=3)
    out = tmp_path / "stage2"

    class Killed(Exception):
        pass

    def kill_at_step_3(record):
        if record["global_step"] == 3:
            raise Killed

    started = TrainOptions(config=second, data=f"world:{world}", out=out, seed=6, command="lineup train --init s1",
                           init=tmp_path / "stage1" / "model")
    with pytest.raises(Killed):
        train(started, on_step=kill_at_step_3)
    assert read_metadata(out / "model")["validation_origin"] == str(tmp_path / "stage1" / "model")
    for command in ("lineup train --resume (1)", "lineup train --resume (2)"):
        train(TrainOptions(config=second, data=f"world:{world}", out=out, seed=6, command=command, resume=True,
                           max_minutes=0 if command.endswith("(1)") else None))
    metadata = read_metadata(out / "model")
    assert metadata["training_command"] == "lineup train --init s1"
    assert metadata["resumed_with"] == ["lineup train --resume (1)", "lineup train --resume (2)"]
    assert metadata["validation_origin"] == str(tmp_path / "stage1" / "model")  # not the run's own folder


def test_a_run_that_failed_before_its_first_checkpoint_starts_again(world, tmp_path, monkeypatch):
    import engine.lab.train.trainer as trainer_module

    def broken(*args, **kwargs):
        raise RuntimeError("the first step failed")

    out = tmp_path / "run"
    with monkeypatch.context() as patch:
        patch.setattr(trainer_module, "compose_losses", broken)
        with pytest.raises(RuntimeError, match="the first step failed"):
            train(_options(world, out, tiny_run(epochs=1)))
    assert (out / "run.json").is_file() and not (out / "training_state.pt").exists()
    with pytest.raises(RunFolderError, match="no training state"):  # nothing to resume
        Trainer.prepare(_options(world, out, tiny_run(epochs=1), resume=True))
    (out / "notes.txt").write_text("mine")  # a folder with anything else in it is never cleared
    with pytest.raises(RunFolderError, match="already holds this run"):
        Trainer.prepare(_options(world, out, tiny_run(epochs=1)))
    (out / "notes.txt").unlink()
    result = train(_options(world, out, tiny_run(epochs=1)))  # the same command again starts it afresh
    assert result.status == "completed"
    events = [json.loads(line)["event"] for line in (out / "log.jsonl").read_text().splitlines()]
    assert events.count("start") == 1 and events[-1] == "end"
