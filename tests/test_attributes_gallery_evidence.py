"""Evidence for gallery items (engine/retrieval/evidence/items.py): computing it from crops, the ingest hook, the
refresh from stored crops and source frames, `lineup gallery rebuild --attributes`, and `lineup search` with
the hybrid ranking (--attribute-weight, --require, explanations in --json and text)."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
import torch
from typer.testing import CliRunner

import engine.retrieval.evidence.items as evidence_module
from engine.index import Gallery, GalleryItem
from engine.index import evidence_table as store
from engine.retrieval.encoding.model_encoder import encode_items, model_views
from engine.retrieval.evidence.items import add_evidence, compute_evidence, refresh_evidence, source_frames
from engine.retrieval.models import create, model_fingerprint, save
from lineup.cli import app

BACKGROUND = (120, 120, 120)
RED, GREEN, BLACK, WHITE = (0, 0, 200), (0, 200, 0), (30, 30, 30), (220, 220, 220)
PEOPLE = [(RED, BLACK), (GREEN, WHITE), (RED, WHITE), (GREEN, BLACK)]
FRAME_SIZE = (200, 160)  # height, width of the video frames
BOX = (40, 40, 64, 128)  # x, y, w, h of the person in every frame


def person(top, bottom, h=128, w=64):
    """A BGR crop of a simple person (dark hair, face, top, legs) and its foreground mask."""
    image = np.full((h, w, 3), BACKGROUND, np.uint8)
    mask = np.zeros((h, w), np.uint8)
    for target, color in ((image, (20, 20, 20)), (mask, 255)):
        cv2.ellipse(target, (w // 2, 14), (8, 11), 0, 0, 360, color, -1)
    cv2.ellipse(image, (w // 2, 18), (6, 7), 0, 0, 360, (120, 150, 200), -1)
    image[26:70, 16:48], mask[26:70, 16:48] = top, 255
    image[70:122, 20:44], mask[70:122, 20:44] = bottom, 255
    image[70:122, 31:33], mask[70:122, 31:33] = BACKGROUND, 0
    return image, mask


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(gallery folder, checkpoint folder, model, items, crops): four people in a 4-frame video, one each frame."""
    root = tmp_path_factory.mktemp("evidence")
    torch.manual_seed(0)
    model = create("tiny", device="cpu")
    checkpoint = save(model, root / "checkpoint")
    video = root / "clip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 5, FRAME_SIZE[::-1])
    crops = []
    for top, bottom in PEOPLE:
        frame = np.full((*FRAME_SIZE, 3), BACKGROUND, np.uint8)
        crop, _ = person(top, bottom)
        x, y, w, h = BOX
        frame[y:y + h, x:x + w] = crop
        writer.write(frame)
        crops.append(crop)
    writer.release()
    gallery = Gallery.create(root / "gallery", model_views(model), model_fingerprint(model))
    items = []
    for index, crop in enumerate(crops):
        relative, digest = gallery.put_crop(cv2.imencode(".png", crop)[1].tobytes())
        items.append(GalleryItem(id=f"p{index}", source=str(video), frame=index, box=BOX, crop=relative,
                                 crop_sha256=digest, modality="rgb", resolution="HR"))
    gallery.add(items, encode_items(model, crops))
    return gallery.root, checkpoint, model, items, crops


def test_compute_evidence_reads_pixels_and_model_heads(built):
    _, _, model, _, crops = built
    masks = [person(*colors)[1] for colors in PEOPLE]
    tiny = np.zeros((10, 6, 3), np.uint8)
    records = compute_evidence([*crops[:2], crops[0], tiny], [*masks[:2], None, None], model=model,
                               modalities=["rgb", "rgb", "ir", "rgb"])
    assert [set(r) for r in records] == [{"pixels", "model"}, {"pixels", "model"}, {"model"}, {"model"}]
    assert records[0]["pixels"]["probabilities"]["top_color"]["red"] > 0.8
    assert max(records[1]["pixels"]["probabilities"]["top_color"].items(), key=lambda kv: kv[1])[0] == "green"
    assert set(records[0]["model"]["probabilities"]) == set(model.image_attributes.keys)
    assert set(compute_evidence(crops[:1])[0]) == {"pixels"}  # no model: pixels only
    with pytest.raises(ValueError, match="one mask and one scene"):
        compute_evidence(crops[:2], masks[:1])
    with pytest.raises(ValueError, match="one modality per crop"):
        compute_evidence(crops[:2], modalities=["rgb"])
    with pytest.raises(ValueError, match="crop 0"):
        compute_evidence([np.zeros((40, 20, 3), np.float32)])


def test_ingest_hook_stores_new_items_once(built, tmp_path, monkeypatch):
    root, _, model, items, crops = built
    target = tmp_path / "g"
    target.mkdir()
    assert add_evidence(target, items[:2], crops[:2], model=model) == 2
    table = store.EvidenceTable.read(target)
    assert table.ids == ["p0", "p1"] and set(table.sources) == {"pixels", "model"}
    assert table.sources["model"]["fingerprint"] == model_fingerprint(model)
    assert table.record(0)["pixels"].best("top_color") == "red"
    calls = []
    real = evidence_module.compute_evidence
    monkeypatch.setattr(evidence_module, "compute_evidence",
                        lambda c, *a, **k: calls.append(len(c)) or real(c, *a, **k))
    assert add_evidence(target, items, crops, model=None) == 2  # p0, p1 are skipped before computing
    assert calls == [2]
    table = store.EvidenceTable.read(target)
    assert table.ids == ["p0", "p1", "p2", "p3"] and "model" not in table.record(3)
    with pytest.raises(ValueError, match="one crop per item"):
        add_evidence(target, items, crops[:1])


def test_source_frames_reads_the_frames_asked_for(built):
    _, _, _, items, crops = built
    frames = source_frames(items[0].source, [2, 0, 9])
    assert sorted(frames) == [0, 2]  # frame 9 does not exist
    x, y, w, h = BOX
    assert np.abs(frames[2][y:y + h, x:x + w].astype(int) - crops[2]).mean() < 12  # MJPG is lossy
    assert source_frames("/no/such/video.avi", [0]) == {}


def test_refresh_recomputes_everything_and_keeps_model_evidence_without_a_model(built):
    root, _, model, _, _ = built
    gallery = Gallery.open(root)
    progress = []
    counts = refresh_evidence(gallery, model, progress=lambda done, total: progress.append((done, total)))
    assert {k: counts[k] for k in ("items", "pixels", "model", "no_crop")} == \
        {"items": 4, "pixels": 4, "model": 4, "no_crop": 0}
    assert progress[-1] == (4, 4)
    before = store.EvidenceTable.read(root)
    model_rows = np.asarray(before.matrix("model"), dtype=np.float32).copy()
    counts = refresh_evidence(gallery, None, scenes=False)
    after = store.EvidenceTable.read(root)
    assert counts["model"] == 4 and after.meta["generation"] == before.meta["generation"] + 1
    np.testing.assert_allclose(np.asarray(after.matrix("model"), np.float32), model_rows, atol=2e-3, equal_nan=True)
    assert [after.record(i)["pixels"].best("top_color") for i in range(4)] == ["red", "green", "red", "green"]


def run(*args):
    return CliRunner().invoke(app, [*map(str, args)])


def test_cli_rebuild_attributes_then_hybrid_search(built):
    root, checkpoint, _, _, _ = built
    result = run("gallery", "rebuild", root, "--attributes", "--checkpoint", checkpoint, "--device", "cpu", "--json")
    assert result.exit_code == 0, result.output
    counts = json.loads(result.stdout)["attributes"]
    assert counts["items"] == 4 and counts["pixels"] == 4 and counts["model"] == 4
    text = run("gallery", "rebuild", root, "--attributes")
    assert text.exit_code == 0 and "attribute evidence: 4 items, 4 from pixels, 4 from the model" in text.stdout
    assert run("gallery", "rebuild", root, "--checkpoint", checkpoint).exit_code == 2

    base = ["search", "--gallery", root, "--checkpoint", checkpoint, "--device", "cpu",
            "--text", "a man in a red shirt"]
    result = run(*base, "--attribute-weight", "5", "--require", "top_color", "--json")
    assert result.exit_code == 0, result.output
    step = json.loads(result.stdout)["steps"][0]
    assert step["attribute_weight"] == 5.0 and step["required"] == ["top_color"]
    assert step["filtered_out"] == 2  # the green tops contradict the required red
    top = step["top"]
    assert {item["id"] for item in top} == {"p0", "p2"}
    explanation = top[0]["explanation"]
    assert {"score", "similarity", "agreement", "attribute_contribution", "attributes", "matched",
            "filtered"} <= set(explanation)
    assert "top_color=red" in explanation["matched"]
    assert explanation["score"] == pytest.approx(top[0]["score"], abs=1e-5)
    assert explanation["similarity"] + explanation["attribute_contribution"] == pytest.approx(top[0]["score"],
                                                                                           abs=1e-5)
    final = json.loads(result.stdout)["final"]
    assert "explanation" in final[0]

    plain = run(*base, "--top", "2")
    assert plain.exit_code == 0, plain.output
    assert "colour of the top: red by the pixels" in plain.stdout and "= similarity " in plain.stdout

    bad = run(*base, "--require", "hair_color")
    assert bad.exit_code == 2 and "no step's text states it" in bad.output
    bad = run(*base, "--require", "colour")
    assert bad.exit_code == 2 and "not an attribute" in bad.output
    bad = run(*base, "--attribute-weight", "-1")
    assert bad.exit_code == 2 and "--attribute-weight" in bad.output
