"""The pretrained networks Lineup ships (``resources/models/openvino/``), by name: one record each, read by
every layer that loads or names one (ingest, evaluation, detectors, redaction, ``gallery info``, reports).

Each record states the Open Model Zoo name and release, the precision shipped, the task, the input
``[3, H, W]`` (BGR, 0–255, NCHW: mean and scale are inside the graph), the outputs by name and the SHA-256 of
both files, which the loader checks: a truncated or altered copy is refused by name. Licence and provenance:
``resources/models/openvino/NOTICE`` and docs/pretrained-models.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from engine.kernel.resources import resource_path
from engine.perception.pretrained.errors import PretrainedModelError

RELEASE = "Intel Open Model Zoo 2023.0"
FOLDER = ("models", "openvino")
REID, ATTRIBUTES, PERSON_DETECTOR, FACE_DETECTOR = "reid", "attributes", "person-detector", "face-detector"
MSMT17 = "MSMT17 (a research re-identification data set), per Intel's training configuration"
UNDOCUMENTED = "not documented by Intel"


@dataclass(frozen=True)
class ShippedModel:
    """One shipped IR network: ``name`` (Open Model Zoo), ``task``, ``precision`` (FP32, FP16, …), ``input``
    [3, H, W], ``outputs`` (names, in the order the network's users read them), SHA-256 of the ``.xml`` and
    ``.bin`` files, and what it was trained on."""

    name: str
    task: str
    precision: str
    input: tuple[int, int, int]
    outputs: tuple[str, ...]
    xml_sha256: str
    bin_sha256: str
    trained_on: str
    summary: str

    @property
    def xml(self) -> Path:
        """The shipped ``.xml`` (its ``.bin`` lies beside it)."""
        return resource_path(*FOLDER, self.name, self.precision, f"{self.name}.xml")

    @property
    def version(self) -> str:
        return f"{self.name} ({self.precision}, {RELEASE})"

    def describe(self) -> dict[str, str]:
        """What a gallery, a step or a report records to name the network."""
        return {"name": self.name, "precision": self.precision, "release": RELEASE, "task": self.task,
                "trained_on": self.trained_on, "licence": "Apache-2.0"}


def _reid(name: str, precision: str, xml: str, binary: str, summary: str) -> ShippedModel:
    return ShippedModel(name, REID, precision, (3, 256, 128), ("reid_embedding",), xml, binary, MSMT17, summary)


_MODELS: tuple[ShippedModel, ...] = (
    _reid("person-reidentification-retail-0277", "FP16",
          "82039b1bb986231c50345550e59def94e63579998e9cddbd1a312f293eb87729",
          "6bb69e09d07733cc3896b29081d2627f92db7b9aacd50f1a8c3df491cb10f1b7",
          "OSNet-x1.0, 256-d appearance embedding (2.1 M parameters)"),
    _reid("person-reidentification-retail-0287", "FP32",
          "09af746c1068a3e89355e1f0226d3d6982dc1cd77634b1f70a40f1f654a94be1",
          "7f53d18d11253455e0e11646b2176cf6509cc7c97cb5376f9b91b4c41e09a06c",
          "OSNet-x0.5, 256-d appearance embedding (0.6 M parameters)"),
    _reid("person-reidentification-retail-0288", "FP32",
          "30f452b2ed2763f7bf429eea23f8f243ad0e7f3cdd7226db6888f1660efb3424",
          "6496b8d51741703c9e9c7f6474cb96c60de1856d7b4fd77235e48cea146066a5",
          "OSNet-x0.25, 256-d appearance embedding (0.18 M parameters)"),
    ShippedModel("person-attributes-recognition-crossroad-0230", ATTRIBUTES, "FP32", (3, 160, 80),
                 ("453", "456", "459"),
                 "ca288994e74a27bc1912e610460054ca79165ad68c2ec555ccda2738591c1502",
                 "9a2c20aa88b282219d31b67c9252cdf844d6ce387090eb676e79e284fa3a25d8", UNDOCUMENTED,
                 "eight person attributes (sigmoid) and the points where the top and bottom colours are read"),
    ShippedModel("person-detection-retail-0013", PERSON_DETECTOR, "FP32", (3, 320, 544), ("detection_out",),
                 "97c32b9b4c2e4cda309c8e21d582db1b5818b4c9d7f30039e8869360cf0f0869",
                 "6f09cb7061328942f9d5e9fc81631a4234be66a26daa50cd672d4077ee82ad44", UNDOCUMENTED,
                 "person detector for indoor and retail scenes (SSD, MobileNetV2)"),
    ShippedModel("pedestrian-detection-adas-0002", PERSON_DETECTOR, "FP16", (3, 384, 672), ("detection_out",),
                 "569e43b60fff50f9e7e635e5b523ac49b69a3858bfdaf3767e4650db165ac87d",
                 "a22aa7bda2d71c97689e0535b137f10e05dc57769a2d4bd8726099f45ccafe91", UNDOCUMENTED,
                 "pedestrian detector for driving scenes (SSD, MobileNet)"),
    ShippedModel("person-detection-0200", PERSON_DETECTOR, "FP16", (3, 256, 256), ("detection_out",),
                 "a23f88164c2ae6e1d5ba8e367eaf6ea985d3d90c55e1e484ff66c854838311b2",
                 "4d02a1f26826350395c7271034925d9f4c75adb109de12d0c03f77276ae810cf", UNDOCUMENTED,
                 "person detector (SSD, MobileNetV2, 256×256 input)"),
    ShippedModel("face-detection-retail-0005", FACE_DETECTOR, "FP16", (3, 300, 300), ("527",),
                 "b8faaf02020fc46877a844e02c56bbcf5423a163e5294b146e7d0ed7084263f9",
                 "fef3746455eec3d1e69730b556809a225a4f714b6bc0b4bacfe5c7bb1a944105", UNDOCUMENTED,
                 "frontal and near-frontal face detector (SSD, MobileNetV2)"),
)

SHIPPED: dict[str, ShippedModel] = {model.name: model for model in _MODELS}

#: ``--appearance`` presets: the re-identification network each names (docs/pretrained-models.md).
APPEARANCE_PRESETS: dict[str, str] = {
    "fast": "person-reidentification-retail-0288",
    "balanced": "person-reidentification-retail-0287",
    "accurate": "person-reidentification-retail-0277",
}
DEFAULT_APPEARANCE = "balanced"
ATTRIBUTE_NETWORK = "person-attributes-recognition-crossroad-0230"
FACE_NETWORK = "face-detection-retail-0005"


def shipped(name: str) -> ShippedModel:
    """The shipped network called ``name`` (an Open Model Zoo name, or an appearance preset)."""
    key = APPEARANCE_PRESETS.get(name, name)
    found = SHIPPED.get(key)
    if found is None:
        raise PretrainedModelError(f"no shipped network is called {name!r}; shipped: {sorted(SHIPPED)}, "
                                   f"appearance presets: {sorted(APPEARANCE_PRESETS)}")
    return found

