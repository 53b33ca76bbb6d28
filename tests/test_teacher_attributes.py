"""The pixel reader as a teacher of the image attribute heads (engine/lab/train/teacher.py, losses.teacher_attributes):
the source reads an ingested gallery and keeps only confident readings, the loss, a training step with and
without the teacher, resume, the settings' named errors, and ``--clips`` of bench/attribute_accuracy.py."""

from __future__ import annotations

import json
import math
import random
from pathlib import Path

import cv2
import numpy as np
import pytest
import torch
from bench_modules import load_bench
from tiny_training import build_tiny_world, tiny_run

from engine.index import Gallery
from engine.index.evidence_table import COLUMN_OF, CONFIDENCE_COLUMN, EvidenceTable
from engine.ingest import IngestOptions, ingest
from engine.kernel.ontology import ATTRIBUTE_KEYS, ONTOLOGY
from engine.lab.evaluation.attribute_accuracy import footage_samples
from engine.lab.train import (
    TrainConfig,
    TrainConfigError,
    Trainer,
    TrainOptions,
    compose_losses,
    load_run_config,
    train,
)
from engine.lab.train.forward import forward_train
from engine.lab.train.losses import teacher_attribute_loss
from engine.lab.train.teacher import TeacherDataError, read_teacher_data
from engine.retrieval.models import read_metadata

GREY = (120, 120, 120)
#: (top, bottom) BGR colours of the crops in the teacher gallery
OUTFITS = [((0, 0, 200), (30, 30, 30)), ((0, 180, 0), (220, 220, 220)), ((200, 60, 20), (30, 30, 30)),
           ((220, 220, 220), (140, 40, 20)), ((0, 200, 230), (30, 30, 30)), ((30, 30, 30), (0, 0, 200))]
KEYS = ("top_color", "bottom_color", "hair_color")


class MeanColourEncoder:
    """Test double of the model at ingest: one unit vector per crop from its mean colour."""

    views = {"rgb": 4}
    fingerprint = "mean-colour"

    def __call__(self, crops, modalities, resolutions):
        rows = np.array([[*crop.reshape(-1, 3).mean(0), 1.0] for crop in crops], np.float32)
        return {"rgb": rows / np.linalg.norm(rows, axis=1, keepdims=True)}


def person(top, bottom, height=128, width=64):
    """A BGR crop of a plain figure: dark hair, a face, a top and two legs on a grey background."""
    image = np.full((height, width, 3), GREY, np.uint8)
    sy, sx = height / 128, width / 64
    cv2.ellipse(image, (width // 2, int(14 * sy)), (int(8 * sx), int(11 * sy)), 0, 0, 360, (20, 20, 20), -1)
    cv2.ellipse(image, (width // 2, int(18 * sy)), (int(6 * sx), int(7 * sy)), 0, 0, 360, (120, 150, 200), -1)
    image[int(26 * sy):int(70 * sy), int(16 * sx):int(48 * sx)] = top
    image[int(70 * sy):int(122 * sy), int(20 * sx):int(44 * sx)] = bottom
    image[int(70 * sy):int(122 * sy), int(31 * sx):int(33 * sx)] = GREY
    return image


@pytest.fixture(scope="module")
def gallery(tmp_path_factory) -> Path:
    """A gallery made by ``ingest`` from a folder of person crops (large and small ones, so confidences vary)."""
    root = tmp_path_factory.mktemp("teacher")
    crops = root / "crops" / "lobby"
    crops.mkdir(parents=True)
    for index, (top, bottom) in enumerate(OUTFITS):
        cv2.imwrite(str(crops / f"p{index}.png"), person(top, bottom))
        cv2.imwrite(str(crops / f"s{index}.png"), person(top, bottom, 40, 20))
    ingest(root / "crops", root / "gallery", MeanColourEncoder(), options=IngestOptions(crops=True))
    return root / "gallery"


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> Path:
    return build_tiny_world(tmp_path_factory.mktemp("teacherworld") / "w")


def _table_readings(gallery: Path, threshold: float) -> dict[tuple[str, str], tuple[str, float]]:
    """(item id, key) → (most probable value, confidence) of every stored pixel reading at or above threshold."""
    table = EvidenceTable.read(gallery)
    pixels = table.matrix("pixels")
    out = {}
    for row, item_id in enumerate(table.ids):
        values = np.asarray(pixels[row], dtype=np.float32)
        for key in KEYS:
            confidence = float(values[CONFIDENCE_COLUMN[key]])
            if not math.isnan(confidence) and confidence >= threshold:
                probabilities = [values[COLUMN_OF[(key, v)]] for v in ONTOLOGY.attributes[key]]
                out[(item_id, key)] = (ONTOLOGY.attributes[key][int(np.argmax(probabilities))], confidence)
    return out


def _kept(data) -> dict[tuple[str, str], tuple[str, float]]:
    out = {}
    for row, item_id in enumerate(data.item_ids):
        for key in KEYS:
            column = ATTRIBUTE_KEYS.index(key)
            target = int(data.targets[row, column])
            if target >= 0:
                out[(item_id, key)] = (ONTOLOGY.attributes[key][target], float(data.weights[row, column]))
    return out


def test_the_source_reads_a_gallery_and_keeps_only_confident_readings(gallery):
    everything = _table_readings(gallery, 0.0)
    confidences = sorted({c for _, c in everything.values()})
    assert len(everything) >= 2 * len(OUTFITS) and confidences[0] < confidences[-1]
    for threshold in (confidences[0], confidences[len(confidences) // 2], confidences[-1]):
        data = read_teacher_data([gallery], (32, 16), threshold, KEYS)
        expected = _table_readings(gallery, threshold)
        kept = _kept(data)
        assert kept.keys() == expected.keys()
        for pair, (value, confidence) in expected.items():
            assert kept[pair][0] == value and kept[pair][1] == pytest.approx(confidence, abs=1e-6)
        assert len(data) == len({item for item, _ in expected})  # crops without a kept reading are left out
        assert data.images.shape == (len(data), 3, 32, 16) and data.images.dtype == torch.uint8
        untaught = [ATTRIBUTE_KEYS.index(k) for k in ATTRIBUTE_KEYS if k not in KEYS]
        assert bool((data.targets[:, untaught] == -100).all()) and float(data.weights[:, untaught].abs().sum()) == 0
        source = data.summary()["folders"][0]
        assert source["folder"] == str(gallery.resolve()) and source["clips"] == [f"{name}.png" for name in sorted(
            f"{p}{i}" for p in "ps" for i in range(len(OUTFITS)))]
        assert source["items"] == 2 * len(OUTFITS) and source["crops"] == len(data)
    red = read_teacher_data([gallery], (32, 16), confidences[0], ("top_color",))
    assert ONTOLOGY.attributes["top_color"][int(red.targets[red.item_ids.index(Gallery.open(gallery).ids[0]),
                                                             ATTRIBUTE_KEYS.index("top_color")])] == "red"
    with pytest.raises(TeacherDataError, match="no reading of"):
        read_teacher_data([gallery], (32, 16), 1.0 if confidences[-1] < 1.0 else 1.01, KEYS)


def test_bad_teacher_folders_are_named_errors(gallery, tmp_path):
    with pytest.raises(TeacherDataError, match=f"{tmp_path / 'nowhere'} does not exist"):
        read_teacher_data([tmp_path / "nowhere"], (32, 16), 0.5)
    (tmp_path / "file").write_text("x")
    with pytest.raises(TeacherDataError, match="is not a folder"):
        read_teacher_data([tmp_path / "file"], (32, 16), 0.5)
    (tmp_path / "empty").mkdir()
    with pytest.raises(TeacherDataError, match="empty.*is not a gallery"):
        read_teacher_data([tmp_path / "empty"], (32, 16), 0.5)
    crops = tmp_path / "crops"
    crops.mkdir()
    cv2.imwrite(str(crops / "p.png"), person((0, 0, 200), (30, 30, 30)))
    ingest(crops, tmp_path / "bare", MeanColourEncoder(), options=IngestOptions(crops=True, attributes=False))
    with pytest.raises(TeacherDataError, match="bare has no pixel attribute evidence"):
        read_teacher_data([gallery, tmp_path / "bare"], (32, 16), 0.5)
    with pytest.raises(TeacherDataError, match="must be keys of"):
        read_teacher_data([gallery], (32, 16), 0.5, ("hat_type",))
    with pytest.raises(TeacherDataError, match="no teacher gallery"):
        read_teacher_data([], (32, 16), 0.5)


def test_the_loss_is_zero_when_certain_and_positive_otherwise():
    rows = 3
    targets = torch.full((rows, len(ATTRIBUTE_KEYS)), -100, dtype=torch.long)
    weights = torch.zeros(rows, len(ATTRIBUTE_KEYS))
    top, hair = ATTRIBUTE_KEYS.index("top_color"), ATTRIBUTE_KEYS.index("hair_color")
    targets[:, top] = torch.tensor([3, 0, 7])
    weights[:, top] = torch.tensor([0.9, 0.5, 0.7])
    targets[1, hair], weights[1, hair] = 2, 0.6
    sizes = {key: len(ONTOLOGY.attributes[key]) for key in ATTRIBUTE_KEYS}

    certain = {key: torch.randn(rows, n) for key, n in sizes.items()}  # untaught columns hold anything
    for column, key in ((top, "top_color"), (hair, "hair_color")):
        for row in range(rows):
            if targets[row, column] >= 0:
                certain[key][row] = -1e4
                certain[key][row, targets[row, column]] = 1e4
    assert float(teacher_attribute_loss(certain, targets, weights)) == pytest.approx(0.0, abs=1e-6)

    flat = {key: torch.zeros(rows, n) for key, n in sizes.items()}
    expected = (math.log(sizes["top_color"]) + math.log(sizes["hair_color"])) / 2
    assert float(teacher_attribute_loss(flat, targets, weights)) == pytest.approx(expected, rel=1e-6)

    skewed = {key: value.clone() for key, value in flat.items()}
    skewed["top_color"][0, 3] = 5.0  # row 0 nearly right, the others flat
    ce = torch.nn.functional.cross_entropy(skewed["top_color"], targets[:, top], reduction="none")
    top_term = float((weights[:, top] * ce).sum() / weights[:, top].sum())
    loss = float(teacher_attribute_loss(skewed, targets, weights))
    assert loss == pytest.approx((top_term + math.log(sizes["hair_color"])) / 2, rel=1e-6) and loss > 0
    assert teacher_attribute_loss(flat, torch.full_like(targets, -100), weights) is None


TEACHER_MODEL = {"losses": {"teacher_attributes": 1.0}}


def _teacher_run(gallery: Path, **training) -> dict:
    return tiny_run(TEACHER_MODEL, teacher_data=[str(gallery)], teacher_per_batch=5, teacher_min_confidence=0.05,
                    **training)


def _options(world: Path, out: Path, run: dict, **kwargs) -> TrainOptions:
    return TrainOptions(config=run, data=f"world:{world}", out=out, seed=5, command="test", **kwargs)


def _heads(trainer: Trainer) -> torch.Tensor:
    return trainer.model.image_attributes.linear.weight.detach().clone()


def test_a_step_with_the_teacher_changes_the_heads_and_without_it_is_the_old_step(world, gallery, tmp_path):
    off = Trainer.prepare(_options(world, tmp_path / "off", tiny_run()))
    on = Trainer.prepare(_options(world, tmp_path / "on", _teacher_run(gallery)))
    assert off.teacher is None and len(on.teacher) > 0
    indices = next(iter(off.sampler.epoch(0)))
    assert indices == next(iter(on.sampler.epoch(0)))
    assert torch.equal(_heads(off), _heads(on))  # the same start

    # the old step, written out: batch, forward, losses, backward, clip, optimiser — no teacher anywhere
    old = Trainer.prepare(_options(world, tmp_path / "old", tiny_run()))
    from engine.lab.train.trainer import step_seed

    seed = step_seed(5, 0, 0)
    torch.manual_seed(seed)
    generator = torch.Generator().manual_seed(seed)
    batch = old.builder.build(indices, random.Random(seed), generator)
    outputs = forward_train(old.model, batch.images, batch.token_ids, **batch.forward_kwargs())
    losses = compose_losses(outputs, batch, old.model.config, generator)
    old.optimizer.zero_grad(set_to_none=True)
    losses.total.backward()
    torch.nn.utils.clip_grad_norm_(old.parameters, old.training.grad_clip)
    old.optimizer.step()

    record_off, record_on = off.train_step(indices), on.train_step(indices)
    assert "teacher_attributes" not in record_off["terms"] and record_on["terms"]["teacher_attributes"] > 0
    assert record_off["terms"] == pytest.approx(losses.as_floats(), rel=1e-6)
    for (name, a), b in zip(off.model.state_dict().items(), old.model.state_dict().values(), strict=True):
        torch.testing.assert_close(a, b, rtol=0, atol=0, msg=name)
    shared = {k: v for k, v in record_on["terms"].items() if k != "teacher_attributes"}
    assert shared == pytest.approx(record_off["terms"], rel=1e-6)  # the batch is the one a run without teacher gets
    assert not torch.allclose(_heads(on), _heads(off))
    log = [json.loads(line) for line in (tmp_path / "on" / "log.jsonl").read_text().splitlines()]
    assert log[0]["teacher"]["crops"] == len(on.teacher) and log[0]["teacher"]["folders"][0]["clips"]


def test_a_run_with_the_teacher_resumes_as_if_never_stopped(world, gallery, tmp_path):
    run = _teacher_run(gallery, epochs=1, steps_per_epoch=4, checkpoint_every=2)
    straight = train(_options(world, tmp_path / "straight", run))

    class Killed(Exception):
        pass

    def kill_at_step_3(record):
        if record["global_step"] == 3:
            raise Killed

    with pytest.raises(Killed):
        train(_options(world, tmp_path / "killed", run), on_step=kill_at_step_3)
    resumed = train(_options(world, tmp_path / "killed", run, resume=True))
    assert straight.global_step == resumed.global_step == 4

    def steps(out):
        records = [json.loads(line) for line in (out / "log.jsonl").read_text().splitlines()]
        return [r["terms"] for r in records if r["event"] == "step"]

    for a, b in zip(steps(tmp_path / "straight"), steps(tmp_path / "killed"), strict=True):
        assert "teacher_attributes" in a and b == pytest.approx(a, rel=1e-5, abs=1e-6)
    recorded = read_metadata(resumed.model_dir)["data_fingerprint"]["teacher"]
    assert recorded["folders"][0]["folder"] == str(gallery.resolve()) and recorded["keys"] == list(KEYS)


def test_a_run_recorded_before_the_teacher_resumes(world, tmp_path):
    out = tmp_path / "run"
    train(_options(world, out, tiny_run(epochs=1), max_minutes=0.0))
    recorded = json.loads((out / "run.json").read_text())
    for key in ("teacher_data", "teacher_per_batch", "teacher_min_confidence", "teacher_attributes"):
        del recorded["training"][key]
    del recorded["model_config"]["losses"]["teacher_attributes"]
    (out / "run.json").write_text(json.dumps(recorded))
    assert train(_options(world, out, tiny_run(epochs=1), resume=True)).status == "completed"


@pytest.mark.parametrize(("training", "message"), [
    ({"teacher_per_batch": 0}, "teacher_per_batch"),
    ({"teacher_min_confidence": 0.0}, "teacher_min_confidence"),
    ({"teacher_min_confidence": 1.5}, "teacher_min_confidence"),
    ({"teacher_attributes": ["hat_type"]}, "teacher_attributes"),
    ({"teacher_attributes": []}, "teacher_attributes"),
    ({"teacher_data": ["a", "a"]}, "teacher_data"),
    ({"teacher_data": "a"}, "teacher_data must be a list"),
])
def test_bad_teacher_settings_are_named_errors(training, message):
    with pytest.raises(TrainConfigError, match=message):
        TrainConfig.from_dict(training)


def test_the_teacher_needs_both_its_data_and_its_weight(world, gallery, tmp_path):
    with pytest.raises(TrainConfigError, match="teacher_attributes.*needs attributes.image"):
        load_run_config(tiny_run({"attributes": {"image": False}, "losses": {"teacher_attributes": 1.0}}))
    with pytest.raises(TrainConfigError, match="lists no gallery folder"):
        Trainer.prepare(_options(world, tmp_path / "a", tiny_run(TEACHER_MODEL)))
    with pytest.raises(TrainConfigError, match="teacher_attributes is 0"):
        Trainer.prepare(_options(world, tmp_path / "b", tiny_run(teacher_data=[str(gallery)])))
    with pytest.raises(TeacherDataError, match="does not exist"):
        Trainer.prepare(_options(world, tmp_path / "c", _teacher_run(tmp_path / "missing")))
    assert not (tmp_path / "c").exists()  # checked before the run folder is made


@pytest.fixture(scope="module")
def labelled(tmp_path_factory) -> Path:
    """Two short clips with one labelled person each, in a ``people.json``."""
    root = tmp_path_factory.mktemp("labelled")
    people = {}
    for name, (top, bottom), frames in (("a.avi", OUTFITS[0], (0, 2, 4)), ("b.avi", OUTFITS[1], (1, 3))):
        writer = cv2.VideoWriter(str(root / name), cv2.VideoWriter_fourcc(*"MJPG"), 10, (160, 160))
        for _ in range(6):
            frame = np.full((160, 160, 3), GREY, np.uint8)
            frame[16:144, 48:112] = person(top, bottom)
            writer.write(frame)
        writer.release()
        people[name] = {"p1": {"attributes": {"top_color": "red"},
                               "boxes": [{"frame": f, "box": [48, 16, 64, 128]} for f in frames]}}
    (root / "people.json").write_text(json.dumps({"clips": people}))
    return root


def test_clips_filters_the_labelled_boxes(labelled, tmp_path):
    people = labelled / "people.json"
    assert [s.clip for s in footage_samples(people, labelled)] == ["a.avi"] * 3 + ["b.avi"] * 2
    assert [s.frame_index for s in footage_samples(people, labelled, clips=["b.avi"])] == [1, 3]
    with pytest.raises(ValueError, match=r"c\.avi.*not in .*people\.json.*a\.avi, b\.avi"):
        list(footage_samples(people, labelled, clips=["c.avi"]))
    bench = load_bench("attribute_accuracy")
    out = tmp_path / "result.json"
    assert bench.main(["--real", "--people", str(people), "--footage", str(labelled), "--clips", "b.avi",
                       "--json", str(out)]) == 0
    result = json.loads(out.read_text())
    assert result["boxes"] == 2 and result["clips"] == ["b.avi"]
    assert set(result["per_person_ingest_masks"]) == {"b.avi:p1"}
    assert bench.main(["--real", "--people", str(people), "--footage", str(labelled), "--clips", "a.avi,b.avi",
                       "--json", str(out)]) == 0
    assert json.loads(out.read_text())["boxes"] == 5
    with pytest.raises(SystemExit, match="c.avi"):
        bench.main(["--real", "--people", str(people), "--footage", str(labelled), "--clips", "c.avi"])
