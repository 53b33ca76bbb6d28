"""A user's own appearance network as the gallery view ``appearance``: tiny networks built and exported to ONNX
here (a fixed-weight net that maps a crop's colour to a vector, and broken ones), their named errors, the view
at ingest and added by a rebuild, find-similar through it, and the fingerprint that refuses another file."""

import json
import warnings

import cv2
import numpy as np
import pytest
import torch
from size_encoder import SizeEncoder
from torch import nn

from engine.index import Gallery
from engine.ingest import IngestError, IngestOptions, ingest
from engine.ingest.appearance import WithAppearance
from engine.ingest.appearance_views import compute_appearance_view
from engine.perception.appearance import AppearanceModelError, AppearanceNetwork, Normalisation, parse_normalisation
from engine.retrieval.search.query import StepQuery
from engine.retrieval.search.session import SearchSession

COLOURS = {"red": (30, 30, 210), "green": (40, 200, 40), "blue": (210, 60, 30)}
VIEWS = ("rgb", "reid:AD-LT")  # the checkpoint stand-in's views
SIZES = [(128, 64), (96, 48), (64, 32)]  # (height, width): every colour at every size


class ColourNet(nn.Module):
    """Mean colour → 6 numbers through fixed weights: crops of one colour get nearly the same direction."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 6)
        with torch.no_grad():
            self.fc.weight.copy_(torch.tensor([[1.0, 0, 0], [0, 1, 0], [0, 0, 1], [1, -1, 0], [0, 1, -1], [-1, 0, 1]]))
            self.fc.bias.fill_(0.1)

    def forward(self, x):
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1))


class FeatureMap(nn.Module):
    """Output [B, 4, H, W]: not one vector per crop."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 1)

    def forward(self, x):
        return self.conv(x)


class NotANumber(nn.Module):
    """log of a negative number: NaN for every crop."""

    def forward(self, x):
        return torch.log(-torch.flatten(nn.functional.adaptive_avg_pool2d(x, 1), 1).abs() - 1)


class Flat(nn.Module):
    """Takes [B, C] rows instead of images."""

    def forward(self, x):
        return x * 2


def export(module: nn.Module, path, shape, dynamic: bool = True):
    axes = {"images": {0: "batch"}, "out": {0: "batch"}} if dynamic else None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(module.eval(), torch.zeros(*shape), str(path), input_names=["images"],
                          output_names=["out"], dynamic_axes=axes, dynamo=False)
    return path


@pytest.fixture(scope="module")
def nets(tmp_path_factory):
    root = tmp_path_factory.mktemp("nets")
    torch.manual_seed(0)
    other = ColourNet()
    with torch.no_grad():
        other.fc.bias.fill_(0.3)
    return {
        "colour": export(ColourNet(), root / "colour.onnx", (1, 3, 32, 16)),
        "colour_fixed": export(ColourNet(), root / "colour_fixed.onnx", (1, 3, 32, 16), dynamic=False),
        "other": export(other, root / "other.onnx", (1, 3, 32, 16)),
        "map": export(FeatureMap(), root / "map.onnx", (1, 3, 32, 16)),
        "nan": export(NotANumber(), root / "nan.onnx", (1, 3, 32, 16)),
        "grey": export(ColourNet().fc, root / "rows.onnx", (1, 3)),  # rank-2 input
        "one_channel": export(FeatureMap().conv.__class__(1, 4, 1), root / "one.onnx", (1, 1, 32, 16)),
        "flat": export(Flat(), root / "flat.onnx", (1, 3, 32, 16)),
    }


def person(colour, height: int, width: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.clip(np.array(colour, np.int16) + rng.integers(-25, 26, (height, width, 3)), 0, 255).astype(np.uint8)


@pytest.fixture
def crops(tmp_path):
    """Nine crops: three colours at three sizes, named so the colour can be read back from the source."""
    root = tmp_path / "crops"
    root.mkdir()
    seed = 0
    for name, colour in COLOURS.items():
        for height, width in SIZES:
            seed += 1
            cv2.imwrite(str(root / f"{name}_{height}.png"), person(colour, height, width, seed))
    return root




def colour_of(gallery: Gallery, item_id: str) -> str:
    return gallery.item(item_id).source.rsplit("/", 1)[-1].split("_")[0]


def test_the_layout_is_read_from_the_file_and_vectors_are_unit(nets):
    network = AppearanceNetwork(nets["colour"])
    assert (network.layout.batch, network.layout.height, network.layout.width, network.dim) == (None, 32, 16, 6)
    batch = [person(COLOURS["red"], 100 + i, 40, i) for i in range(5)]
    vectors = network.encode(batch)
    assert vectors.shape == (5, 6) and np.allclose(np.linalg.norm(vectors, axis=1), 1, atol=1e-5)
    fixed = AppearanceNetwork(nets["colour_fixed"], batch_size=4)
    assert fixed.layout.batch == 1 and fixed.batch_size == 1
    assert np.allclose(fixed.encode(batch), vectors, atol=1e-5)
    # the normalisation changes the input, hence the vectors, and is part of the fingerprint
    bgr = AppearanceNetwork(nets["colour"], Normalisation(order="bgr"))
    assert not np.allclose(bgr.encode(batch), vectors, atol=1e-3)
    assert bgr.fingerprint["normalisation"]["order"] == "bgr"
    assert network.fingerprint["file_sha256"] != fixed.fingerprint["file_sha256"]


def test_broken_networks_are_named_errors(nets, tmp_path):
    cases = {
        "map": r"map\.onnx.*4-D",
        "nan": r"nan\.onnx gives NaN or infinite values for crop 0",
        "grey": r"rows\.onnx.*rank 2",
        "one_channel": r"one\.onnx.*1 channels",
    }
    for name, pattern in cases.items():
        with pytest.raises(AppearanceModelError, match=pattern):
            AppearanceNetwork(nets[name])
    with pytest.raises(AppearanceModelError, match=r"absent\.onnx does not exist"):
        AppearanceNetwork(tmp_path / "absent.onnx")
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00\x01 certainly not a protobuf \xff" * 10)
    with pytest.raises(AppearanceModelError, match=r"junk\.onnx is not an ONNX file"):
        AppearanceNetwork(junk)
    network = AppearanceNetwork(nets["colour"])
    with pytest.raises(AppearanceModelError, match=r"colour\.onnx: crop 1 must be a non-empty BGR uint8"):
        network.encode([person(COLOURS["red"], 40, 20, 0), np.zeros((0, 5, 3), np.uint8)])


def test_a_4d_output_the_file_misdeclares_is_caught_when_run(nets, tmp_path):
    """The file declares a 2-D output but gives a 4-D one: the probe run catches it."""
    import onnx

    model = onnx.load(str(nets["map"]))
    dims = model.graph.output[0].type.tensor_type.shape.dim
    del dims[2:]
    dims[1].ClearField("dim_value")
    dims[1].dim_param = "features"
    path = tmp_path / "undeclared.onnx"
    onnx.save(model, str(path))
    with pytest.raises(AppearanceModelError, match=r"undeclared\.onnx gives a 4-D output"):
        AppearanceNetwork(path)


def test_normalisation_spelling():
    assert parse_normalisation("imagenet") == Normalisation() == parse_normalisation(None)
    custom = parse_normalisation("order=bgr; divide=1 mean=0,0,0;std=1,1,1")
    assert custom == Normalisation("bgr", 1.0, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    assert parse_normalisation(custom.describe()) == custom
    for bad, pattern in (("order=hsv", "channel order"), ("mean=1,2", "three numbers"), ("std=1,0,1", "positive"),
                         ("divide=x", "not a number"), ("gamma=2", "unknown key"), ("rgb", "not key=value")):
        with pytest.raises(AppearanceModelError, match=pattern):
            parse_normalisation(bad)


def test_find_similar_searches_the_appearance_view_and_ranks_same_colour_first(nets, crops, tmp_path):
    network = AppearanceNetwork(nets["colour"])
    ingest(crops, tmp_path / "g", WithAppearance(SizeEncoder(VIEWS), network),
           options=IngestOptions(crops=True, attributes=False))
    gallery = Gallery.open(tmp_path / "g")
    assert gallery.views["appearance"] == 6 and gallery.view_model("appearance")["file_sha256"] == network.sha256
    session = SearchSession(gallery)
    for example in gallery.ids:
        step = session.step(StepQuery(example=example, k=len(gallery)))
        assert step.view == "appearance"
        ranked = [i for i, _ in step.top(len(gallery))]
        assert example in ranked[:3]  # the same colour scores nearly 1 for all three (float16 ties)
        assert {colour_of(gallery, i) for i in ranked[:3]} == {colour_of(gallery, example)}
        session.undo()
    # the model's own view (named by its scenario) ranks by size instead: other colours come first
    own = session.step(StepQuery(example=gallery.ids[0], scenario="AD-LT", k=len(gallery)))
    assert own.view == "reid:AD-LT"
    assert colour_of(gallery, own.top(2)[1][0]) != colour_of(gallery, gallery.ids[0])


def test_rebuild_adds_the_view_and_refuses_another_file(nets, crops, tmp_path):
    ingest(crops, tmp_path / "g", SizeEncoder(VIEWS), options=IngestOptions(crops=True, attributes=False,
                                                                       appearance="none"))
    gallery = Gallery.open(tmp_path / "g")
    assert SearchSession(gallery).step(StepQuery(example=gallery.ids[0])).view == "rgb"
    done = compute_appearance_view(gallery, AppearanceNetwork(nets["colour"]))
    assert done["items"] == 9 and not done["replaced"]
    reopened = Gallery.open(tmp_path / "g")
    assert reopened.verify() == [] and reopened.views["appearance"] == 6
    direct = AppearanceNetwork(nets["colour"]).encode(
        [cv2.imread(str(reopened.root / reopened.item(r).crop)) for r in range(len(reopened))])
    assert np.allclose(reopened.vectors("appearance"), direct, atol=2e-3)  # float16 storage
    assert reopened.search("appearance", direct[0], 1)[0][0] == 0  # FAISS index holds the view
    step = SearchSession(reopened).step(StepQuery(example=reopened.ids[0], k=3))
    assert step.view == "appearance"
    assert {colour_of(reopened, i) for i in step.kept_ids} == {colour_of(reopened, reopened.ids[0])}
    # the same file again recomputes; another file (or normalisation) is refused, unless replaced
    assert compute_appearance_view(reopened, AppearanceNetwork(nets["colour"]))["replaced"]
    with pytest.raises(AppearanceModelError, match=r"colour\.onnx.*other\.onnx.*is another model"):
        compute_appearance_view(reopened, AppearanceNetwork(nets["other"]))
    with pytest.raises(AppearanceModelError, match="another model"):
        compute_appearance_view(reopened, AppearanceNetwork(nets["colour"], Normalisation(order="bgr")))
    compute_appearance_view(reopened, AppearanceNetwork(nets["other"]), replace=True)
    assert Gallery.open(tmp_path / "g").view_model("appearance")["file"].endswith("other.onnx")


def test_ingest_checks_the_galleries_appearance_model(nets, crops, tmp_path):
    ingest(crops, tmp_path / "g", WithAppearance(SizeEncoder(VIEWS), AppearanceNetwork(nets["colour"])),
           options=IngestOptions(crops=True, attributes=False))
    with pytest.raises(AppearanceModelError, match="another model"):
        ingest(crops, tmp_path / "g", WithAppearance(SizeEncoder(VIEWS), AppearanceNetwork(nets["other"])),
               options=IngestOptions(crops=True, attributes=False, force=True))
    with pytest.raises(IngestError, match=r"has an 'appearance' view made by .*colour\.onnx.*--appearance"):
        ingest(crops, tmp_path / "g", SizeEncoder(VIEWS),
               options=IngestOptions(crops=True, attributes=False, force=True))
    again = ingest(crops, tmp_path / "g", WithAppearance(SizeEncoder(VIEWS), AppearanceNetwork(nets["colour"])),
                   options=IngestOptions(crops=True, attributes=False, force=True))
    assert again.totals()["items_present"] == 9 and again.totals()["items_added"] == 0


@pytest.mark.slow
def test_cli_crops_ingest_with_appearance_then_similar_and_rebuild(nets, crops, tmp_path):
    from typer.testing import CliRunner

    from engine.retrieval.models import create, save
    from lineup.cli import app

    checkpoint = save(create("tiny", device="cpu"), tmp_path / "ck")
    runner = CliRunner()
    base = ["--checkpoint", str(checkpoint), "--device", "cpu", "--reid", "none"]
    made = runner.invoke(app, ["ingest", str(crops), "--gallery", str(tmp_path / "g"), "--crops", "--appearance",
                               str(nets["colour"]), *base, "--json"])
    assert made.exit_code == 0, made.output
    assert json.loads(made.stdout.strip().splitlines()[-1])["totals"]["items_added"] == 9
    gallery = Gallery.open(tmp_path / "g")
    example = gallery.ids[0]
    found = runner.invoke(app, ["search", "--gallery", str(tmp_path / "g"), "--checkpoint", str(checkpoint),
                                "--device", "cpu", "--interactive", "--json", "--keep", "3"],
                          input=f":similar {example}\n")
    assert found.exit_code == 0, found.output
    record = json.loads(found.stdout.strip().splitlines()[0])
    assert record["view"] == "appearance" and record["example"] == example
    info = json.loads(runner.invoke(app, ["gallery", "info", str(tmp_path / "g"), "--json"]).stdout)
    assert info["views"]["appearance"]["model"]["file"].endswith("colour.onnx")
    refused = runner.invoke(app, ["gallery", "rebuild", str(tmp_path / "g"), "--appearance", str(nets["other"])])
    assert refused.exit_code == 2 and "another model" in refused.output
    replaced = runner.invoke(app, ["gallery", "rebuild", str(tmp_path / "g"), "--appearance", str(nets["other"]),
                                   "--replace-appearance"])
    assert replaced.exit_code == 0 and "recomputed views 'appearance', 'appearance:grey'" in replaced.output
    wrong = runner.invoke(app, ["ingest", str(crops), "--gallery", str(tmp_path / "h"), "--crops", "--appearance",
                                str(nets["map"]), *base])
    assert wrong.exit_code == 2 and "map.onnx" in wrong.output and "4-D" in wrong.output
