"""The ``pku-sketch`` reader and the ``sketch`` protocol (sketches drawn here from rendered people, photos of the
same people), the ``reid`` protocol's find-similar block on the shipped appearance network (a Market-1501
layout of rendered people), the reports naming their views and network, and the reader's named errors."""

from __future__ import annotations

import json
import os

import cv2
import numpy as np
import pytest

from engine.ingest.datasets import DatasetFormatError, DatasetNotFoundError, read_dataset, read_spec
from engine.ingest.datasets.pku_sketch import pku_sketch_protocol
from engine.lab.evaluation import EvaluationError, evaluate, render
from engine.lab.world.build import build_world
from engine.perception.appearance import ShippedAppearanceNetwork

IDS = ("007", "7", "a_b", "zed", "q9")  # strings: "007" and "7" are two people; "a_b" holds the separator


@pytest.fixture(scope="module")
def people(tmp_path_factory):
    """Rendered RGB people at full resolution, three BGR images each (one outfit)."""
    root = tmp_path_factory.mktemp("world")
    build_world(root / "w", identities=len(IDS), images_per_identity=10, seed=5)
    out: dict[int, list[np.ndarray]] = {}
    for line in (root / "w" / "manifest.jsonl").read_text().splitlines():
        record = json.loads(line)
        if record["modality"] == "rgb" and record["resolution"] == "HR" and record["outfit"] == 0:
            out.setdefault(record["identity"], []).append(cv2.imread(str(root / "w" / record["image"])))
    assert all(len(images) >= 2 for images in out.values())
    # a third view of each person: the second image mirrored (another camera's side)
    return [[*out[k][:2], cv2.flip(out[k][1], 1)] for k in sorted(out)]


def drawing(bgr: np.ndarray) -> np.ndarray:
    """A pencil drawing (grey divided by its blurred negative): what a sketch artist's strokes look like."""
    grey = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    return cv2.divide(grey, 255 - cv2.GaussianBlur(255 - grey, (21, 21), 0), scale=256)


@pytest.fixture
def pku(people, tmp_path):
    root = tmp_path / "PKU-Sketch"
    (root / "sketch").mkdir(parents=True)
    (root / "photo").mkdir()
    for person, images in zip(IDS, people, strict=True):
        cv2.imwrite(str(root / "sketch" / f"{person}.png"), drawing(images[0]))
        cv2.imwrite(str(root / "photo" / f"{person}_1.jpg"), images[1])
        cv2.imwrite(str(root / "photo" / f"{person}_2_back.png"), images[2])
    (root / "photo" / "Thumbs.db").write_bytes(b"\0")
    return root


def test_the_reader_keeps_string_ids_and_pairs_photos_by_the_longest_id(pku):
    index = read_dataset("pku-sketch", pku)
    sketches, photos = index.split("query").samples, index.split("gallery").samples
    assert [s.extra["id"] for s in sketches] == sorted(IDS) and {s.modality for s in sketches} == {"sketch"}
    assert len(photos) == 2 * len(IDS) and {p.modality for p in photos} == {"rgb"}
    by_name = {p.image.name: p for p in photos}
    assert by_name["a_b_2_back.png"].extra["id"] == "a_b" and by_name["a_b_2_back.png"].camera == "cam2"
    assert by_name["007_1.jpg"].identity != by_name["7_1.jpg"].identity
    protocol = pku_sketch_protocol(index)
    assert protocol.valid.all() and protocol.positive.sum(axis=1).tolist() == [2] * len(IDS)
    assert read_spec(f"pku-sketch:{pku}").name == "pku-sketch"


def test_the_reader_names_what_is_wrong(pku, tmp_path):
    with pytest.raises(DatasetNotFoundError, match="pku-sketch root"):
        read_dataset("pku-sketch", tmp_path / "nowhere")
    (pku / "sketch" / "lonely.png").write_bytes((pku / "sketch" / "zed.png").read_bytes())
    with pytest.raises(DatasetFormatError, match="lonely.png.*sketch of person 'lonely' has no photo"):
        read_dataset("pku-sketch", pku)
    (pku / "sketch" / "lonely.png").unlink()
    (pku / "photo" / "nocamera.jpg").write_bytes((pku / "photo" / "zed_1.jpg").read_bytes())
    with pytest.raises(DatasetFormatError, match="nocamera.jpg.*not ID_CAM"):
        read_dataset("pku-sketch", pku)
    (pku / "photo" / "nocamera.jpg").unlink()
    (pku / "photo" / "zed_3.jpg").write_bytes(b"not an image at all")
    with pytest.raises(DatasetFormatError, match="zed_3.jpg.*not a readable image"):
        read_dataset("pku-sketch", pku)
    assert len(read_dataset("pku-sketch", pku, check_images=False).split("gallery")) == 2 * len(IDS) + 1
    (pku / "photo" / "zed_3.jpg").unlink()
    outside = tmp_path / "outside.jpg"
    outside.write_bytes((pku / "photo" / "zed_1.jpg").read_bytes())
    os.symlink(outside, pku / "photo" / "zed_4.jpg")
    with pytest.raises(DatasetFormatError, match="zed_4.jpg.*outside the dataset folder"):
        read_dataset("pku-sketch", pku)
    (pku / "photo" / "zed_4.jpg").unlink()
    for path in (pku / "photo").iterdir():
        path.unlink()
    with pytest.raises(DatasetFormatError, match="photo.*holds no image"):
        read_dataset("pku-sketch", pku)
    (pku / "photo").rmdir()
    with pytest.raises(DatasetNotFoundError, match="pku-sketch folder 'photo'"):
        read_dataset("pku-sketch", pku)


def test_the_sketch_protocol_ranks_grey_sketches_against_grey_photos(pku):
    report = evaluate(None, f"pku-sketch:{pku}", "sketch")
    assert report["protocol"] == "sketch" and report["queries"] == len(IDS) and report["gallery"] == 2 * len(IDS)
    assert report["views"]["gallery"] == "appearance:grey" and "sketch in grey" in report["views"]["query"]
    assert report["network"]["name"] == "person-reidentification-retail-0287"
    overall = report["overall"]
    assert overall == report["by"]["sketch → photo (appearance:grey)"]
    assert set(overall) >= {"R@1", "R@5", "R@10", "mAP"}
    # by hand: the same network, both sides in grey
    index = read_dataset("pku-sketch", pku)
    network = ShippedAppearanceNetwork("balanced")

    def grey(path):
        return cv2.cvtColor(cv2.cvtColor(cv2.imread(str(path)), cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)

    queries, photos = index.split("query").samples, index.split("gallery").samples
    q = network.encode([grey(s.image) for s in queries])
    g = network.encode([grey(s.image) for s in photos])
    top = np.argmax(q @ g.T, axis=1)
    hits = np.mean([photos[t].identity == s.identity for t, s in zip(top, queries, strict=True)])
    assert overall["R@1"] == pytest.approx(hits)
    assert overall["R@1"] >= 0.6  # five people: chance is 0.2


def test_cli_eval_sketch_names_views_and_network(pku, tmp_path):
    from typer.testing import CliRunner

    from lineup.cli import app

    runner = CliRunner()
    found = runner.invoke(app, ["eval", "--protocol", "sketch", "--data", f"pku-sketch:{pku}", "--json"])
    assert found.exit_code == 0, found.output
    report = json.loads(found.stdout.strip().splitlines()[-1])
    assert report["views"]["gallery"] == "appearance:grey" and "checkpoint" not in report
    shown = runner.invoke(app, ["eval", "--protocol", "sketch", "--data", f"pku-sketch:{pku}"])
    assert shown.exit_code == 0 and "appearance:grey" in shown.output and "retail-0287" in shown.output
    refused = runner.invoke(app, ["eval", "--protocol", "sketch", "--data", f"pku-sketch:{pku}", "--checkpoint",
                                  str(tmp_path)])
    assert refused.exit_code == 2 and "takes no --checkpoint" in refused.output
    with pytest.raises(EvaluationError, match="protocol 'sketch' needs a sketch dataset"):
        evaluate(None, read_dataset("pku-sketch", pku).__class__("market1501", pku, ()), "sketch")


def test_reid_find_similar_ranks_by_the_shipped_appearance_network(people, tmp_path, capsys):
    from evaluation_data import LookupModel, one_hot

    root = tmp_path / "Market-1501"
    for folder in ("bounding_box_train", "bounding_box_test", "query"):
        (root / folder).mkdir(parents=True)
    for person, images in enumerate(people, start=1):
        cv2.imwrite(str(root / "query" / f"{person:04d}_c1s1_000001_00.jpg"), images[0])
        for camera, image in ((2, images[1]), (3, images[2])):
            cv2.imwrite(str(root / "bounding_box_test" / f"{person:04d}_c{camera}s1_000002_01.jpg"), image)
    report = evaluate(LookupModel({}, lambda code, level, modality: one_hot(0)), f"market1501:{root}", "reid")
    found = report["by"]["find similar"]
    assert report["overall"] == found and report["views"]["find similar"] == ["appearance"]
    network = ShippedAppearanceNetwork("balanced")
    index = read_dataset("market1501", root)
    queries, gallery = index.split("query").samples, index.split("gallery").samples
    q = network.encode([cv2.imread(str(s.image)) for s in queries])
    g = network.encode([cv2.imread(str(s.image)) for s in gallery])
    top = np.argmax(q @ g.T, axis=1)
    assert found["R@1"] == pytest.approx(np.mean([gallery[t].identity == s.identity
                                                  for t, s in zip(top, queries, strict=True)]))
    assert found["R@1"] >= 0.6 and found["R@1"] > report["by"]["checkpoint find similar (rgb)"]["R@1"]
    render(report)
    assert "person-reidentification-retail-0287" in capsys.readouterr().out


def test_an_infrared_query_compares_in_the_grey_view(people, tmp_path):
    from engine.ingest.datasets import Sample
    from engine.lab.evaluation.appearance_rank import find_similar, load_network

    paths = []
    for person, images in enumerate(people[:3]):
        for n, image in enumerate(images[:2]):
            path = tmp_path / f"{person}_{n}.png"
            cv2.imwrite(str(path), cv2.cvtColor(cv2.cvtColor(image, cv2.COLOR_BGR2GRAY), cv2.COLOR_GRAY2BGR)
                        if n == 0 else image)
            paths.append((person, n, path))
    queries = [Sample(image=p, identity=k, split="query", modality="ir" if k else "rgb") for k, n, p in paths
               if n == 0]
    gallery = [Sample(image=p, identity=k, split="gallery") for k, n, p in paths if n == 1]
    positive = np.asarray([[q.identity == g.identity for g in gallery] for q in queries])
    network = load_network()
    found = find_similar([*queries, *gallery], len(queries), network, positive, np.ones_like(positive))
    assert found["views"] == ["appearance", "appearance:grey"]
    grey = network.encode([cv2.cvtColor(cv2.cvtColor(cv2.imread(str(s.image)), cv2.COLOR_BGR2GRAY),
                                        cv2.COLOR_GRAY2BGR) for s in [*queries, *gallery]])
    colour = network.encode([cv2.imread(str(s.image)) for s in [*queries, *gallery]])
    expected = np.vstack([colour[:1] @ colour[3:].T, grey[1:3] @ grey[3:].T])
    hits = np.mean([gallery[int(t)].identity == q.identity for t, q in zip(expected.argmax(axis=1), queries,
                                                                            strict=True)])
    assert found["block"]["R@1"] == pytest.approx(hits)
