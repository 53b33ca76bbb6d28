"""Sketch and IR queries on footage galleries: the ``appearance:grey`` view made at ingest and by a rebuild, the
routing of sketch/IR steps (and of an infrared find-similar example) to it, the query vector from the shipped
network of the grey query image, built worlds kept on the checkpoint's ``rgb`` view, the CLI record naming the
view, and colour words that do not count for infrared items."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from fixed_query_encoder import FixedQueryEncoder
from similarity_gallery import similarity_gallery
from size_encoder import SizeEncoder

from engine.index import Gallery, GalleryMismatchError
from engine.ingest import IngestOptions, ingest
from engine.ingest.appearance import WithAppearance, with_default_appearance
from engine.ingest.appearance_views import compute_appearance_view
from engine.kernel.ontology import ONTOLOGY
from engine.lab.world.build import build_world
from engine.perception.appearance import AppearanceModelError, ShippedAppearanceNetwork
from engine.perception.appearance.grey import encode_query, grey_bgr, query_network
from engine.perception.appearance.views import APPEARANCE_GREY_VIEW, APPEARANCE_VIEW, APPEARANCE_VIEWS
from engine.retrieval.encoding.views import route
from engine.retrieval.evidence.ranking import evidence_for
from engine.retrieval.search.query import StepQuery
from engine.retrieval.search.session import SearchSession

TOL = 2e-3  # gallery vectors are float16




class RecordingEncoder(FixedQueryEncoder):
    """The fixed encoder, counting its fused calls (a sketch routed to the checkpoint goes through it)."""

    fingerprint = None

    def __init__(self) -> None:
        self.fused = 0

    def encode_fused(self, text, sketch, ir):
        self.fused += 1
        return np.array([1.0, 0.0, 0.0], np.float32)


@pytest.fixture(scope="module")
def people(tmp_path_factory):
    """Rendered RGB people (six identities, several images each) as a crop folder IDENTITY_N.png, ingested in
    crops mode with the default appearance network."""
    root = tmp_path_factory.mktemp("world")
    build_world(root / "w", identities=6, images_per_identity=10, seed=5)
    out = root / "crops"
    out.mkdir()
    count = 0
    for line in (root / "w" / "manifest.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["modality"] == "rgb" and record["resolution"] == "HR" and record["outfit"] == 0:
            count += 1
            cv2.imwrite(str(out / f"{record['identity']}_{count}.png"), cv2.imread(str(root / "w" / record["image"])))
    ingest(out, root / "g", SizeEncoder(), options=IngestOptions(crops=True, attributes=False))
    return out, root / "g"


def crop_of(gallery: Gallery, item_id: str) -> np.ndarray:
    return cv2.imread(str(gallery.root / gallery.item(item_id).crop))


def person(gallery: Gallery, item_id: str) -> str:
    return gallery.item(item_id).source.rsplit("/", 1)[-1].split("_")[0]


def drawing(bgr: np.ndarray) -> np.ndarray:
    """A pencil drawing of a crop (grey divided by its blurred negative: dark strokes on white), RGB as a query
    array."""
    grey = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    blurred = cv2.GaussianBlur(255 - grey, (21, 21), 0)
    return cv2.cvtColor(cv2.divide(grey, 255 - blurred, scale=256), cv2.COLOR_GRAY2RGB)


def test_the_views_are_named_once_and_route_sketch_ir_and_infrared_examples():
    assert APPEARANCE_VIEWS == {APPEARANCE_VIEW: False, APPEARANCE_GREY_VIEW: True}
    footage = {"rgb": 3, APPEARANCE_VIEW: 256, APPEARANCE_GREY_VIEW: 256}
    world = {"rgb": 3, "text:UC": 3}
    for text in (False, True):
        chosen = route(has_text=text, has_image=True, example=False, scenario=None, level="C", available=footage)
        assert (chosen.view, chosen.encoding) == (APPEARANCE_GREY_VIEW, "appearance")
        kept = route(has_text=text, has_image=True, example=False, scenario=None, level="C", available=world)
        assert (kept.view, kept.encoding) == ("rgb", "fused")
    assert route(has_text=False, has_image=False, example=True, scenario=None, level=None, available=footage,
                 example_infrared=True).view == APPEARANCE_GREY_VIEW
    assert route(has_text=False, has_image=False, example=True, scenario=None, level=None,
                 available=footage).view == APPEARANCE_VIEW
    assert route(has_text=True, has_image=False, example=False, scenario=None, level="C",
                 available=footage).view == "rgb"  # text alone: unchanged
    with pytest.raises(GalleryMismatchError, match="appearance:grey.*neither"):
        route(has_text=False, has_image=True, example=False, scenario=None, level=None, available={"text:C": 3})


def test_ingest_stores_the_grey_view_from_the_same_network(people):
    folder, root = people
    gallery = Gallery.open(root)
    assert gallery.views == {"rgb": 3, APPEARANCE_VIEW: 256, APPEARANCE_GREY_VIEW: 256}
    assert gallery.view_model(APPEARANCE_GREY_VIEW) == gallery.view_model(APPEARANCE_VIEW)
    network = ShippedAppearanceNetwork("balanced")
    ids = gallery.ids[:4]
    crops = [crop_of(gallery, i) for i in ids]
    rows = gallery.rows(ids)
    expected = network.encode([cv2.cvtColor(cv2.cvtColor(c, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR) for c in crops])
    np.testing.assert_allclose(gallery.vectors(APPEARANCE_GREY_VIEW, rows), expected, atol=TOL)
    colour = gallery.vectors(APPEARANCE_VIEW, rows)
    assert np.abs(colour - expected).max() > 0.05  # the colour view is another thing


def test_a_sketch_step_ranks_by_the_grey_view_without_a_checkpoint(people):
    _, root = people
    gallery = Gallery.open(root)
    session = SearchSession(gallery)  # no query encoder: the checkpoint is not needed for a sketch
    network = ShippedAppearanceNetwork("balanced")
    colour = gallery.matrix(APPEARANCE_VIEW).astype(np.float32)
    hits = colour_hits = 0
    for item_id in gallery.ids:
        sketch = drawing(crop_of(gallery, item_id))
        step = session.step(StepQuery(sketch=sketch, k=5))
        assert step.view == APPEARANCE_GREY_VIEW
        vector = encode_query(network, [sketch])
        expected = gallery.matrix(APPEARANCE_GREY_VIEW).astype(np.float32) @ vector
        np.testing.assert_allclose(step.scores, expected[step.rows], atol=TOL)
        top = [i for i, _ in step.top(1)][0]
        hits += person(gallery, top) == person(gallery, item_id)
        by_colour = gallery.ids[int(np.argmax(colour @ network.encode([sketch[..., ::-1].copy()])[0]))]
        colour_hits += person(gallery, by_colour) == person(gallery, item_id)
        session.undo()
    # six people (chance about 1/6); the sketch against the colour view (no grey) finds fewer
    assert hits / len(gallery) >= 0.75 and hits > colour_hits


def test_an_ir_image_of_a_crop_finds_that_crop_and_an_infrared_example_searches_grey(people):
    _, root = people
    gallery = Gallery.open(root)
    session = SearchSession(gallery)
    item_id = gallery.ids[3]
    ir = cv2.cvtColor(crop_of(gallery, item_id), cv2.COLOR_BGR2GRAY)  # a grey image: what an IR camera gives
    step = session.step(StepQuery(ir=ir, k=3))
    assert step.view == APPEARANCE_GREY_VIEW and step.top(1)[0][0] == item_id
    assert step.top(1)[0][1] == pytest.approx(1.0, abs=5e-3)
    both = SearchSession(gallery).step(StepQuery(sketch=drawing(crop_of(gallery, item_id)), ir=ir, k=3))
    assert both.view == APPEARANCE_GREY_VIEW and both.query.kind == "sketch+ir"


def test_the_detail_pane_names_the_grey_view(people):
    from app.views.detail import explanation_html
    from app.views.query_panel import score_scale

    _, root = people
    gallery = Gallery.open(root)
    step = SearchSession(gallery).step(StepQuery(sketch=drawing(crop_of(gallery, gallery.ids[0])), k=3))
    explained = step.explain(step.top(1)[0][0])
    assert explained["view"] == APPEARANCE_GREY_VIEW
    assert f"(view {APPEARANCE_GREY_VIEW})" in explanation_html(explained)
    assert score_scale(APPEARANCE_GREY_VIEW) == score_scale("rgb") != score_scale(APPEARANCE_VIEW)


def test_a_world_gallery_keeps_the_checkpoints_rgb_path(tmp_path):
    gallery = Gallery.create(tmp_path / "w", {"rgb": 3}, "ckpt")
    gallery.add([{"id": f"i{k}", "source": "s.mp4", "frame": k} for k in range(3)],
                {"rgb": np.eye(3, dtype=np.float32)})
    encoder = RecordingEncoder()
    step = SearchSession(gallery, encoder).step(StepQuery(sketch=np.full((40, 20, 3), 200, np.uint8), k=1))
    assert step.view == "rgb" and encoder.fused == 1 and step.top(1)[0][0] == "i0"


def test_an_appearance_only_gallery_keeps_ingesting_and_a_rebuild_adds_grey(people, tmp_path):
    folder, _ = people
    network = ShippedAppearanceNetwork("fast")
    old = WithAppearance(SizeEncoder(), network, grey=False)
    assert APPEARANCE_GREY_VIEW not in old.views and set(old.view_models) == {APPEARANCE_VIEW}
    ingest(folder, tmp_path / "g", old, options=IngestOptions(crops=True, attributes=False))
    again = with_default_appearance(SizeEncoder(), "auto", tmp_path / "g", {"crops"})
    assert APPEARANCE_GREY_VIEW not in again.views  # ingest into it keeps its views
    user = with_default_appearance(WithAppearance(SizeEncoder(), network), "auto", tmp_path / "g", {"crops"})
    assert APPEARANCE_GREY_VIEW not in user.views
    gallery = Gallery.open(tmp_path / "g")
    before = SearchSession(gallery, RecordingEncoder()).step(StepQuery(sketch=np.full((40, 20, 3), 200, np.uint8)))
    assert before.view == "rgb"  # no grey view yet: the checkpoint's path
    done = compute_appearance_view(gallery, network)
    assert done["views"] == [APPEARANCE_VIEW, APPEARANCE_GREY_VIEW]
    rebuilt = Gallery.open(tmp_path / "g")
    assert rebuilt.views[APPEARANCE_GREY_VIEW] == 256
    assert rebuilt.view_model(APPEARANCE_GREY_VIEW)["name"].endswith("0288")
    step = SearchSession(rebuilt).step(StepQuery(sketch=np.full((40, 20, 3), 200, np.uint8)))
    assert step.view == APPEARANCE_GREY_VIEW


def test_the_query_network_is_the_recorded_one_or_a_named_error(tmp_path):
    fast = ShippedAppearanceNetwork("fast")
    assert query_network(fast.fingerprint, APPEARANCE_GREY_VIEW).model.name == fast.model.name
    with pytest.raises(AppearanceModelError, match="another release"):
        query_network({**fast.fingerprint, "file_sha256": "0" * 64}, APPEARANCE_GREY_VIEW)
    gone = {"kind": "onnx", "file": str(tmp_path / "gone.onnx"), "file_sha256": "ab" * 32,
            "normalisation": {"order": "rgb", "divide": 255.0, "mean": [0, 0, 0], "std": [1, 1, 1]},
            "input_size": [256, 128]}
    with pytest.raises(AppearanceModelError, match="gone.onnx does not exist"):
        query_network(gone, APPEARANCE_GREY_VIEW)
    with pytest.raises(AppearanceModelError, match="records no network"):
        query_network(None, APPEARANCE_GREY_VIEW)
    with pytest.raises(AppearanceModelError, match="uint8"):
        grey_bgr(np.zeros((4, 4, 3), np.float32))
    rgb = np.zeros((8, 4, 3), np.uint8)
    rgb[..., 0] = 200  # red in RGB order
    assert grey_bgr(rgb, order="rgb")[0, 0, 0] == cv2.cvtColor(rgb[..., ::-1].copy(), cv2.COLOR_BGR2GRAY)[0, 0]


def test_cli_sketch_search_names_the_grey_view(people, tiny_checkpoint, tmp_path):
    from typer.testing import CliRunner

    from lineup.cli import app

    folder, _ = people
    runner = CliRunner()
    base = ["--checkpoint", str(tiny_checkpoint), "--device", "cpu"]
    made = runner.invoke(app, ["ingest", str(folder), "--gallery", str(tmp_path / "g"), "--crops", "--reid", "none",
                               *base, "--json"])
    assert made.exit_code == 0, made.output
    gallery = Gallery.open(tmp_path / "g")
    assert APPEARANCE_GREY_VIEW in gallery.views
    sketch = tmp_path / "sketch.png"
    cv2.imwrite(str(sketch), cv2.cvtColor(drawing(crop_of(gallery, gallery.ids[0])), cv2.COLOR_RGB2BGR))
    found = runner.invoke(app, ["search", "--gallery", str(tmp_path / "g"), *base, "--sketch", str(sketch),
                                "--keep", "3", "--json"])
    assert found.exit_code == 0, found.output
    record = json.loads(found.stdout.strip().splitlines()[-1])
    assert record["steps"][0]["view"] == APPEARANCE_GREY_VIEW
    text = runner.invoke(app, ["search", "--gallery", str(tmp_path / "g"), *base, "--sketch", str(sketch),
                               "--keep", "3"])
    assert text.exit_code == 0 and APPEARANCE_GREY_VIEW in text.output


def test_colour_words_count_for_rgb_items_only(tmp_path):
    def red(p):
        values = ONTOLOGY.attributes["top_color"]
        rest = (1 - p) / (len(values) - 1)
        return {"version": 1, "probabilities": {"top_color": {v: (p if v == "red" else rest) for v in values}},
                "confidence": {"top_color": 1.0}}

    evidence = {f"i{k}": {"model": red(1.0)} for k in range(3)}
    gallery = similarity_gallery(tmp_path / "g", [0.9, 0.9, 0.9], evidence, modality={"i1": "ir"})
    found = evidence_for(gallery)
    assert found.infrared.tolist() == [False, True, False]
    step = SearchSession(gallery, FixedQueryEncoder(), attribute_weight=0.5).step(
        StepQuery(text="a person in a red shirt", k=3))
    scores = {step.item_ids[int(r)]: float(s) for r, s in zip(step.rows, step.scores, strict=True)}
    assert scores["i0"] == pytest.approx(scores["i2"]) and scores["i0"] > scores["i1"] + 0.1
    explained = step.explain("i1")
    colour = next(a for a in explained["attributes"] if a["key"] == "top_color")
    assert colour["status"] == "no evidence"
