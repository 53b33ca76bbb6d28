"""The ONNX detector path end to end: tiny conv nets exported with torch.onnx (no download) whose output is
the box of the bright region of the input, in each supported layout; OpenCV's DNN module runs them and
``OnnxDetector`` must bring the box back to frame pixels."""

import warnings

import numpy as np
import pytest
import torch

from engine.ingest import DetectorError, OnnxDetector, make_detector

INPUT_W, INPUT_H = 96, 64
FRAME_W, FRAME_H = 200, 120
TRUTH = (50.0, 20.0, 40.0, 80.0)  # x, y, w, h of the white rectangle in the frame
CLASS_SCORES = (0.2, 0.9)  # class 0, class 1 ("person" when person_class=1)


class BrightBox(torch.nn.Module):
    """Centroid and extent (√12·σ per axis, exact for a uniform rectangle) of the input's brightness, in
    input pixels, and an objectness that is ~1 when anything is bright and 0 for a black input."""

    def __init__(self, layout: str) -> None:
        super().__init__()
        self.layout = layout
        self.grey = torch.nn.Conv2d(3, 1, kernel_size=1, bias=False)
        with torch.no_grad():
            self.grey.weight.fill_(1.0 / 3.0)
        ys, xs = torch.meshgrid(torch.arange(INPUT_H) + 0.5, torch.arange(INPUT_W) + 0.5, indexing="ij")
        self.register_buffer("xs", xs[None, None].float())
        self.register_buffer("ys", ys[None, None].float())

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        light = self.grey(image)
        mass = light.sum(dim=(2, 3)) + 1e-6
        cx = (light * self.xs).sum(dim=(2, 3)) / mass
        cy = (light * self.ys).sum(dim=(2, 3)) / mass
        w = torch.sqrt(torch.relu((light * self.xs * self.xs).sum(dim=(2, 3)) / mass - cx * cx) * 12.0)
        h = torch.sqrt(torch.relu((light * self.ys * self.ys).sum(dim=(2, 3)) / mass - cy * cy) * 12.0)
        objectness = mass / (mass + 1.0)
        classes = [objectness * 0 + c for c in CLASS_SCORES]
        if self.layout == "ssd":
            row = torch.cat([objectness * 0, objectness * 0 + 1, objectness, (cx - w / 2) / INPUT_W,
                             (cy - h / 2) / INPUT_H, (cx + w / 2) / INPUT_W, (cy + h / 2) / INPUT_H], dim=1)
            return row[:, None, None, :]  # [1, 1, 1, 7]
        if self.layout == "yolov8":
            return torch.cat([cx, cy, w, h, *(c * objectness for c in classes)], dim=1)[:, :, None]  # [1, 6, 1]
        faint = torch.cat([cx, cy, w, h, objectness * 0.1, *classes], dim=1)  # a second, low-score row
        return torch.stack([torch.cat([cx, cy, w, h, objectness, *classes], dim=1), faint], dim=1)  # [1, 2, 7]


def export(layout: str, path) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(BrightBox(layout).eval(), torch.zeros(1, 3, INPUT_H, INPUT_W), str(path),
                          dynamo=False, opset_version=13, input_names=["images"], output_names=["out"])
    return str(path)


def frame(bright: bool = True) -> np.ndarray:
    image = np.zeros((FRAME_H, FRAME_W, 3), np.uint8)
    if bright:
        x, y, w, h = (int(v) for v in TRUTH)
        image[y : y + h, x : x + w] = 255
    return image


@pytest.mark.parametrize("layout", ["yolo", "yolov8", "ssd"])
def test_onnx_detector_returns_the_box_in_frame_pixels(tmp_path, layout):
    detector = make_detector(export(layout, tmp_path / f"{layout}.onnx"), layout=layout,
                             input_size=(INPUT_W, INPUT_H), person_class=1, min_score=0.5)
    assert isinstance(detector, OnnxDetector)
    found = detector.detect(frame())
    assert len(found) == 1
    assert found.boxes[0] == pytest.approx(np.array(TRUTH), abs=2.5)
    assert found.scores[0] == pytest.approx(0.9, abs=0.01) if layout != "ssd" else found.scores[0] > 0.99
    assert len(detector.detect(frame(bright=False))) == 0
    settings = detector.settings()
    assert settings["layout"] == layout and len(settings["file_sha256"]) == 64


def test_onnx_class_choice_and_score_threshold(tmp_path):
    path = export("yolo", tmp_path / "yolo.onnx")
    other_class = OnnxDetector(path, "yolo", (INPUT_W, INPUT_H), person_class=0, min_score=0.5)
    assert len(other_class.detect(frame())) == 0  # class 0 scores 0.2
    low = OnnxDetector(path, "yolo", (INPUT_W, INPUT_H), person_class=1, min_score=0.05)
    assert len(low.detect(frame())) == 1  # the faint row overlaps the strong one and is suppressed


def test_onnx_contract_errors(tmp_path):
    path = export("yolo", tmp_path / "yolo.onnx")
    with pytest.raises(DetectorError, match="layout 'ssd' expects output"):
        OnnxDetector(path, "ssd", (INPUT_W, INPUT_H)).detect(frame())
    with pytest.raises(DetectorError, match="person_class is 5"):
        OnnxDetector(path, "yolo", (INPUT_W, INPUT_H), person_class=5).detect(frame())
    with pytest.raises(DetectorError, match="layout must be one of"):
        OnnxDetector(path, "detr", (INPUT_W, INPUT_H))
    broken = tmp_path / "broken.onnx"
    broken.write_bytes(b"not a model")
    with pytest.raises(DetectorError, match="cannot load the ONNX detector"):
        OnnxDetector(broken)
