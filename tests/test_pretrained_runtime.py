"""The IR loader (engine.perception.pretrained): every shipped network loads and runs; missing, truncated, altered and
mismatched files are refused by name; OpenVINO's telemetry package is never imported."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from engine.perception.pretrained import SHIPPED, IRModel, PretrainedModelError, load_shipped, shipped
from engine.perception.pretrained import runtime as rt
from engine.perception.pretrained.registry import APPEARANCE_PRESETS, REID


@pytest.mark.parametrize("name", sorted(SHIPPED))
def test_every_shipped_network_loads_and_runs(name):
    model, net = load_shipped(name, threads=1)
    assert (3, *net.input_size) == model.input
    batch = 3 if net.dynamic_batch else 1
    out = net.infer(np.full((batch, 3, *net.input_size), 128, np.float32))
    assert set(out) == set(model.outputs)
    for value in out.values():
        assert np.isfinite(value).all()
    if model.task == REID:
        assert out["reid_embedding"].shape == (3, 256)


def test_presets_name_the_three_reid_networks():
    assert {shipped(p).name for p in APPEARANCE_PRESETS} == {m.name for m in SHIPPED.values() if m.task == REID}
    with pytest.raises(PretrainedModelError, match="no shipped network is called 'huge'"):
        shipped("huge")


def _copy(tmp_path, name="person-reidentification-retail-0288"):
    source = shipped(name).xml
    xml = tmp_path / source.name
    shutil.copy(source, xml)
    shutil.copy(source.with_suffix(".bin"), xml.with_suffix(".bin"))
    return xml


def test_missing_files_are_named(tmp_path):
    with pytest.raises(PretrainedModelError, match="does not exist"):
        IRModel(tmp_path / "absent.xml")
    xml = _copy(tmp_path)
    xml.with_suffix(".bin").unlink()
    with pytest.raises(PretrainedModelError, match="weights .*bin are missing"):
        IRModel(xml)
    with pytest.raises(PretrainedModelError, match=r"an \.xml file"):
        IRModel(tmp_path / "model.onnx")


def test_truncated_and_garbage_files_are_named(tmp_path):
    xml = _copy(tmp_path)
    binary = xml.with_suffix(".bin")
    binary.write_bytes(binary.read_bytes()[:1000])
    with pytest.raises(PretrainedModelError, match=str(xml.name)):
        IRModel(xml)
    xml.write_text("<net>not a graph")
    with pytest.raises(PretrainedModelError, match="cannot be read"):
        IRModel(xml)


def test_a_network_with_another_layout_is_refused(tmp_path):
    xml = _copy(tmp_path)
    with pytest.raises(PretrainedModelError, match=r"expected \[3, 160, 80\]"):
        IRModel(xml, expected_input=(3, 160, 80))
    with pytest.raises(PretrainedModelError, match="no output '453'"):
        IRModel(xml, outputs=("453",))


def test_a_batch_of_the_wrong_shape_is_refused():
    _, net = load_shipped("fast", threads=1)
    with pytest.raises(PretrainedModelError, match=r"a batch must be \[N, 3, 256, 128\]"):
        net.infer(np.zeros((2, 3, 128, 64), np.float32))
    _, detector = load_shipped("person-detection-0200", threads=1)
    with pytest.raises(PretrainedModelError, match=r"\[1, 3, 256, 256\]"):
        detector.infer(np.zeros((2, 3, 256, 256), np.float32))


def test_an_altered_shipped_file_is_refused(tmp_path, monkeypatch):
    model = shipped("fast")
    xml = _copy(tmp_path)
    binary = xml.with_suffix(".bin")
    data = bytearray(binary.read_bytes())
    data[-1] ^= 0xFF
    binary.write_bytes(bytes(data))
    monkeypatch.setattr(type(model), "xml", property(lambda self: xml))
    with pytest.raises(PretrainedModelError, match="truncated or altered"):
        rt.verify_shipped(model)


def test_batches_give_what_single_crops_give():
    _, net = load_shipped("balanced", threads=1)
    rng = np.random.default_rng(0)
    batch = rng.uniform(0, 255, (3, 3, 256, 128)).astype(np.float32)
    together = net.infer(batch)["reid_embedding"]
    alone = np.concatenate([net.infer(batch[i : i + 1])["reid_embedding"] for i in range(3)])
    np.testing.assert_allclose(together, alone, rtol=1e-3, atol=1e-3)


def test_telemetry_is_opted_out_and_nothing_is_written_home(tmp_path):
    code = ("import numpy as np\n"
            "from engine.perception.pretrained import SHIPPED, load_shipped\n"
            "from engine.perception.pretrained.runtime import telemetry_consent\n"
            "for name in SHIPPED:\n"
            "    _, net = load_shipped(name, threads=1)\n"
            "    net.infer(np.zeros((1, 3, *net.input_size), np.float32))\n"
            "import openvino.tools.ovc.telemetry_utils as t\n"
            "t.init_ovc_telemetry('OpenVINO')\n"  # what a conversion would do: it finds Lineup's session
            "print(telemetry_consent())\n")
    home = tmp_path / "home"
    home.mkdir()
    # the telemetry package declines by itself under a CI's environment variables: test without them
    env = {k: v for k, v in os.environ.items() if k not in ("CI", "TF_BUILD", "JENKINS_URL")} | {"HOME": str(home)}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env)
    assert out.stdout.split() == ["False"]
    assert list(home.iterdir()) == []
    # Without the opt-out, importing the runtime alone writes a client id under the home folder:
    out = subprocess.run([sys.executable, "-c", "import openvino"], capture_output=True, text=True, check=True,
                         env=env)
    assert (home / "intel").is_dir()
