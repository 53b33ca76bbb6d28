"""The shipped re-identification networks as the ``appearance`` view: encoding, the factory, the default at
ingest per kind of source, an existing gallery's network loaded again by name, and find-similar through it."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from size_encoder import SizeEncoder

from engine.index import Gallery
from engine.ingest import IngestError, IngestOptions, ingest
from engine.ingest.appearance import WithAppearance, auto_appearance, with_default_appearance
from engine.ingest.appearance_views import compute_appearance_view
from engine.lab.world.build import build_world
from engine.perception.appearance import (
    AppearanceModelError,
    AppearanceNetwork,
    ShippedAppearanceNetwork,
    appearance_network,
)
from engine.perception.appearance.normalisation import Normalisation
from engine.retrieval.search.query import StepQuery
from engine.retrieval.search.session import SearchSession


@pytest.fixture(scope="module")
def people(tmp_path_factory):
    """Rendered RGB people: six identities, each with several full-resolution images of one outfit, copied to a
    crop folder as IDENTITY_N.png."""
    root = tmp_path_factory.mktemp("world")
    build_world(root / "w", identities=6, images_per_identity=10, seed=5)
    out = root / "crops"
    out.mkdir()
    kept = []
    for line in (root / "w" / "manifest.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["modality"] == "rgb" and record["resolution"] == "HR" and record["outfit"] == 0:
            kept.append(record)
            image = cv2.imread(str(root / "w" / record["image"]))
            cv2.imwrite(str(out / f"{record['identity']}_{len(kept)}.png"), image)
    return out, kept


def test_vectors_are_unit_batch_invariant_and_name_the_network():
    network = ShippedAppearanceNetwork("fast", batch_size=2)
    rng = np.random.default_rng(1)
    crops = [rng.integers(0, 256, (h, 40, 3), dtype=np.uint8) for h in (90, 120, 150)]
    vectors = network.encode(crops)
    assert vectors.shape == (3, 256) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    np.testing.assert_allclose(ShippedAppearanceNetwork("fast", batch_size=8).encode(crops), vectors, atol=1e-4)
    print_ = network.fingerprint
    assert print_["kind"] == "openvino" and print_["name"] == "person-reidentification-retail-0288"
    assert print_["input_size"] == [256, 128] and print_["dim"] == 256 and "MSMT17" in print_["trained_on"]
    with pytest.raises(AppearanceModelError, match="crop 1 must be a non-empty BGR uint8 image"):
        network.encode([crops[0], np.zeros((0, 4, 3), np.uint8)])
    assert network.encode([]).shape == (0, 256)


def test_the_same_person_ranks_first(people):
    folder, records = people
    crops = [cv2.imread(str(p)) for p in sorted(folder.iterdir())]
    identity = np.asarray([int(p.name.split("_")[0]) for p in sorted(folder.iterdir())])
    vectors = ShippedAppearanceNetwork("balanced").encode(crops)
    similarity = vectors @ vectors.T
    np.fill_diagonal(similarity, -np.inf)
    hits = identity[similarity.argmax(axis=1)] == identity
    assert hits.mean() >= 0.7  # chance is about 1/6; measured near 0.9 on rendered people


def test_the_factory_names_what_it_takes(tmp_path):
    assert isinstance(appearance_network("accurate"), ShippedAppearanceNetwork)
    assert appearance_network("person-reidentification-retail-0288").model.name.endswith("0288")
    with pytest.raises(AppearanceModelError, match="use a preset"):
        appearance_network("person-detection-0200")
    with pytest.raises(AppearanceModelError, match="normalises inside its graph"):
        appearance_network("fast", Normalisation(order="bgr"))
    with pytest.raises(AppearanceModelError, match="does not exist"):
        appearance_network(tmp_path / "mine.onnx")
    assert appearance_network("fast", Normalisation()).model.name.endswith("0288")
    assert AppearanceNetwork.__name__ == "AppearanceNetwork"  # a user's ONNX file still goes through it


def test_auto_gives_footage_and_crops_the_balanced_network_and_worlds_none(tmp_path):
    assert auto_appearance({"video"}) == auto_appearance({"crops"}) == auto_appearance({"images", "world"}) == \
        "balanced"
    assert auto_appearance({"world"}) is None
    encoder = SizeEncoder()
    assert with_default_appearance(encoder, "auto", tmp_path / "new", {"world"}) is encoder
    assert with_default_appearance(encoder, "none", tmp_path / "new", {"video"}) is encoder
    wrapped = with_default_appearance(encoder, "auto", tmp_path / "new", {"video"})
    assert isinstance(wrapped, WithAppearance) and wrapped.network.model.name.endswith("0287")
    assert with_default_appearance(encoder, "fast", tmp_path / "new", {"world"}).network.model.name.endswith("0288")
    with pytest.raises(IngestError, match="appearance must be one of"):
        IngestOptions(appearance="huge")


def test_a_crop_folder_gets_the_view_and_find_similar_searches_it(people, tmp_path):
    folder, _ = people
    ingest(folder, tmp_path / "g", SizeEncoder(), options=IngestOptions(crops=True, attributes=False))
    gallery = Gallery.open(tmp_path / "g")
    assert gallery.views == {"rgb": 3, "appearance": 256, "appearance:grey": 256}
    assert gallery.view_model("appearance")["name"] == "person-reidentification-retail-0287"
    assert gallery.info()["views"]["appearance"]["model"]["version"].startswith("person-reidentification-retail-0287")
    session = SearchSession(gallery)
    hits = 0
    for example in gallery.ids:
        step = session.step(StepQuery(example=example, k=len(gallery)))
        assert step.view == "appearance"
        ranked = [i for i, _ in step.top(3) if i != example]
        name = lambda i: gallery.item(i).source.rsplit("/", 1)[-1].split("_")[0]  # noqa: E731
        hits += name(ranked[0]) == name(example)
        session.undo()
    assert hits / len(gallery) >= 0.7


def test_an_existing_gallery_keeps_its_network(people, tmp_path):
    folder, _ = people
    ingest(folder, tmp_path / "g", SizeEncoder(), options=IngestOptions(crops=True, attributes=False,
                                                                        appearance="fast"))
    again = with_default_appearance(SizeEncoder(), "auto", tmp_path / "g", {"crops"})
    assert again.network.model.name.endswith("0288")  # loaded again by the name the gallery records
    with pytest.raises(IngestError, match="names another network"):
        with_default_appearance(SizeEncoder(), "accurate", tmp_path / "g", {"crops"})
    ingest(folder, tmp_path / "h", SizeEncoder(), options=IngestOptions(crops=True, attributes=False,
                                                                        appearance="none"))
    assert with_default_appearance(SizeEncoder(), "auto", tmp_path / "h", {"crops"}).views == {"rgb": 3}
    with pytest.raises(IngestError, match="gallery rebuild .* --appearance fast"):
        with_default_appearance(SizeEncoder(), "fast", tmp_path / "h", {"crops"})
    gallery = Gallery.open(tmp_path / "h")
    done = compute_appearance_view(gallery, ShippedAppearanceNetwork("fast"))
    assert done["items"] == len(gallery) and Gallery.open(tmp_path / "h").views["appearance"] == 256
    with pytest.raises(AppearanceModelError, match="another model"):
        compute_appearance_view(Gallery.open(tmp_path / "h"), ShippedAppearanceNetwork("balanced"))


def test_the_gallery_records_which_view_find_similar_searches(people, tmp_path):
    from engine.index.report import info_lines
    from engine.retrieval.evidence.ranking import DomainWeights

    folder, _ = people
    weights = DomainWeights({"world": 0.5, "footage": 1.0}, {"world": "test", "footage": "test"})
    ingest(folder, tmp_path / "g", SizeEncoder(), options=IngestOptions(crops=True, attributes=False),
           weights=weights)
    ranking = Gallery.open(tmp_path / "g").ranking
    assert ranking["domain"] == "footage" and "person-reidentification-retail-0287" in ranking["appearance"]
    assert any(line.startswith("  find similar: the appearance view") for line in
               info_lines(Gallery.open(tmp_path / "g").info()))
    ingest(folder, tmp_path / "h", SizeEncoder(), options=IngestOptions(crops=True, attributes=False,
                                                                        appearance="none"), weights=weights)
    assert "no appearance view" in Gallery.open(tmp_path / "h").ranking["appearance"]
