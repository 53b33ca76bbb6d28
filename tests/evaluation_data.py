"""Tiny worlds, datasets and a lookup model for the evaluation tests."""

from __future__ import annotations

import json
import random
from pathlib import Path

import cv2
import numpy as np
import torch
import torch.nn.functional as F

from engine.kernel.ontology import LEVELS, ONTOLOGY
from engine.lab.world.identities import make_identity
from engine.retrieval.models.config import ModelConfig
from engine.retrieval.text.generator import descriptions_by_level

SIZES = {"HR": (16, 8), "mild": (8, 4), "mid": (4, 2), "ultra": (4, 2)}


# (modality, resolution, camera) of each outfit's images; outfit 0 also has a sketch
SHOTS = [
    ("rgb", "HR", "1"),
    ("rgb", "HR", "2"),
    ("ir", "HR", "3"),
    ("ir", "HR", "4"),
    ("rgb", "mild", "1"),
    ("rgb", "mid", "2"),
    ("rgb", "ultra", "1"),
]


def paint_value(code: int) -> int:
    return 10 + 20 * code


def read_code(images: torch.Tensor) -> list[int]:
    """The painted code of each prepared image (inverse of ``paint_value``)."""
    return [round((float(v) - 10) / 20) for v in images[:, 0, 0, 0]]


def write_image(path: Path, code: int, size: tuple[int, int]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    assert cv2.imwrite(str(path), np.full((*size, 3), paint_value(code), np.uint8))


def write_world(root: Path, identities: int = 5, seed: int = 7) -> list[dict]:
    """Write ``identities`` people × 2 outfits × (7 shots + a sketch for outfit 0) and the manifest."""
    records = []
    for identity in range(identities):
        person = make_identity(seed, identity, 2)
        for outfit, attributes in enumerate(person.outfits):
            descriptions = descriptions_by_level(attributes, random.Random(f"{identity}:{outfit}"))
            shots = SHOTS + ([("sketch", "HR", "s")] if outfit == 0 else [])
            for n, (modality, resolution, camera) in enumerate(shots):
                rel = f"images/{identity}/{outfit}_{n}.png"
                write_image(root / rel, identity, SIZES[resolution])
                records.append(
                    {
                        "id": f"{identity}-{outfit}-{n}",
                        "image": rel,
                        "identity": identity,
                        "outfit": outfit,
                        "attributes": attributes,
                        "camera": camera,
                        "modality": modality,
                        "resolution": resolution,
                        "descriptions": descriptions,
                        "split": "test",
                    }
                )
    (root / "manifest.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return records


class LookupModel:
    """Test double of ``PersonSearchModel``: vectors from tables instead of a network.

    ``text_vectors[text]`` gives a text's vector, ``level_logits[text]`` its classifier logits (optional);
    ``image_vector(code, level, modality)`` the vector of an image painted with ``code`` in the gallery
    view of ``level``. ``fuse`` is the normalised sum of the given parts; ``encode_reid`` the image vector.
    ``read_attributes(code)``, when given, is what the image attribute heads read on an image painted with
    ``code`` ({key: value}; a key it leaves out gets flat logits).
    """

    def __init__(self, text_vectors, image_vector, level_logits=None, fusion: str = "mean", read_attributes=None):
        self.text_vectors = text_vectors
        self.image_vector = image_vector
        self.level_logits = level_logits
        self.read_attributes = read_attributes
        self.image_attributes = None if read_attributes is None else "double heads"
        self.config = ModelConfig.from_dict(
            {"name": "double", "fusion": {"kind": fusion}, "scenarios": {"enabled": True}}
        )
        self.calls: list[tuple] = []

    def prepare_images(self, images: torch.Tensor) -> torch.Tensor:
        assert images.dtype == torch.uint8 and images.dim() == 4
        return F.interpolate(images.float(), size=(4, 2), mode="nearest")

    def encode_text(self, texts):
        vectors = torch.stack([self.text_vectors[t] for t in texts])
        logits = None if self.level_logits is None else torch.stack([self.level_logits[t] for t in texts])
        return F.normalize(vectors.float(), dim=-1), logits

    def _images(self, images, level, modality):
        self.calls.append(("images", level, modality, images.shape[0]))
        levels = [level] * images.shape[0] if isinstance(level, str) else level
        vectors = [
            self.image_vector(code, lv, modality) for code, lv in zip(read_code(images), levels, strict=True)
        ]
        return F.normalize(torch.stack(vectors).float(), dim=-1)

    def encode_images(self, images, modality="rgb", level=None, resolution="hr"):
        return self._images(images, level or self.config.granularity.image_query_level, modality)

    def encode_images_all_levels(self, images, modality="rgb", resolution="hr"):
        return torch.stack([self._images(images, lv, modality) for lv in LEVELS], dim=1)

    def fuse(self, text=None, sketch=None, ir=None, resolution="hr"):
        parts = []
        if text is not None:
            parts.append(self.encode_text(text)[0])
        if sketch is not None:
            parts.append(self.encode_images(sketch, "sketch"))
        if ir is not None:
            parts.append(self.encode_images(ir, "ir"))
        return F.normalize(torch.stack(parts).sum(dim=0), dim=-1)

    def encode_reid(self, images, scenario, modality=None, resolution="hr"):
        return self.encode_images(images, "rgb")

    def encode_images_with_attributes(self, images, modality="rgb", level=None, resolution="hr"):
        return self.encode_images(images, modality, level, resolution), self.image_attribute_logits(images)

    def image_attribute_logits(self, images, modality="rgb", level=None, resolution="hr"):
        read = [self.read_attributes(code) for code in read_code(images)]
        logits = {}
        for key, values in ONTOLOGY.attributes.items():
            rows = torch.zeros(len(read), len(values))
            for row, attributes in enumerate(read):
                if attributes.get(key) in values:
                    rows[row, values.index(attributes[key])] = 30.0
            logits[key] = rows
        return logits


def one_hot(index: int, size: int = 16) -> torch.Tensor:
    vector = torch.zeros(size)
    vector[index] = 1.0
    return vector


def write_cuhk(root, wrong_caption: str | None = None):
    """3 test identities × 2 images × 2 captions, plus a train record that must stay out of the gallery."""
    records, texts = [], {}
    for identity in range(3):
        for n in range(2):
            path = f"test/{identity}_{n}.png"
            write_image(root / "imgs" / path, identity, (16, 8))
            captions = [f"person {identity} picture {n} caption {c}" for c in range(2)]
            texts.update({c: one_hot(identity) for c in captions})
            records.append(
                {
                    "split": "test",
                    "captions": captions,
                    "file_path": path,
                    "processed_tokens": [],
                    "id": identity + 1,
                }
            )
    write_image(root / "imgs" / "train/9.png", 0, (16, 8))
    records.append(
        {
            "split": "train",
            "captions": ["a train caption"],
            "file_path": "train/9.png",
            "processed_tokens": [],
            "id": 99,
        }
    )
    (root / "reid_raw.json").write_text(json.dumps(records), encoding="utf-8")
    if wrong_caption is not None:
        texts[wrong_caption] = one_hot(1)
    return LookupModel(texts, lambda code, level, modality: one_hot(code))
