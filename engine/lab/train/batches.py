"""Assemble one training batch from P×K pair indices: images, texts and every auxiliary input the
enabled components need (``engine.lab.train.forward.forward_train``), plus the labels the losses read.

- Images come from the uint8 cache as 0–1 intensities; with ``realism`` > 0 each RGB image (text–image pairs,
  RGB re-id images) gets the camera-realism chain of ``engine.lab.data.realism`` with that probability, each IR
  image the same chain without its colour steps, sketches none (docs/training-notes.md, realism augmentation);
  then they are normalised and augmented (flip, pad + crop, erasing; docs/methods.md §1.7), all with the step's
  generator. With ``realism`` 0 no random number is drawn for it: batches are those of earlier runs.
- Text–image matches (``match_labels``): with ``text_positives = "outfit"`` a text matches the images of
  its person in the outfit it describes (the clothing id), as the evaluation counts them; with
  ``"identity"`` every image of the person.
- CRST (docs/methods.md §2): each pair gets a resolution r uniform over HR, mild, mid, ultra; its view is the
  augmented HR image downsampled ×2/×4/×8 (area) and upsampled back (bicubic); the HR image goes in as
  ``hr_images``. With ``low_resolution_reference = "source"`` the factors divide the image file's own
  size (a 256×128 world image: 128×64, 64×32, 32×16, the sizes the world's mild, mid and ultra images
  have), capped at the model's input size; with ``"input"`` they divide the input size. Masked token ids
  follow the policy π_r of ``engine.lab.losses.crst.resolution_masking``.
- FlexiReID (docs/methods.md §4): one sketch and one IR image of the pair's identity (same outfit when there is
  one; for sketches only under the outfit rule, as before otherwise).
- Uni-AT (docs/methods.md §3): RGB and IR re-id images of the batch identities with person and clothing ids.
- CMAM: the wrong levels g' for GCR (docs/methods.md §1.8) and the attribute codes PCIA needs (docs/methods.md §1.7).
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import torch
import torch.nn.functional as F

from engine.kernel.ontology import LEVELS, ONTOLOGY
from engine.lab.data.augment import ImageAugment
from engine.lab.data.realism import RealismAugment
from engine.lab.losses.crst import resolution_masking
from engine.lab.losses.gcr import sample_wrong_levels
from engine.lab.losses.pcia import encode_attributes
from engine.lab.train.config import TrainConfig
from engine.lab.train.data import DataNeeds, PairItem, TrainingData
from engine.lab.train.texts import TextSource, attribute_token_mask, ordinary_token_mask
from engine.retrieval.models import ModelConfig
from engine.retrieval.models.names import RESOLUTIONS
from engine.retrieval.models.tokenizer import Tokenizer


@dataclass
class Batch:
    """Model inputs (``forward_kwargs``) and loss labels of one step; tensors on the CPU until ``to``."""

    images: torch.Tensor
    token_ids: torch.Tensor
    levels: torch.Tensor
    labels: torch.Tensor  # training identity per pair
    match_labels: torch.Tensor  # what a text matches: clothing id (outfit rule) or the identity
    resolution: torch.Tensor
    query_codes: torch.Tensor  # [B, 18] value codes of what each text states (−1 unstated)
    fine_codes: torch.Tensor  # [B, 18] value codes of each image's full attribute set
    text_attribute_targets: torch.Tensor  # [B, 18], −100 where the text does not state the attribute
    image_attribute_targets: torch.Tensor | None  # [B, 18] (world only)
    texts: list[str]
    mismatch_levels: torch.Tensor | None = None
    hr_images: torch.Tensor | None = None
    mlm_ids: torch.Tensor | None = None
    mlm_labels: torch.Tensor | None = None
    sketch: torch.Tensor | None = None
    ir: torch.Tensor | None = None
    reid_images: torch.Tensor | None = None
    reid_modality: torch.Tensor | None = None
    reid_person: torch.Tensor | None = None
    reid_clothing: torch.Tensor | None = None
    clothing_person: torch.Tensor | None = None  # person of every clothing id of the training data

    @property
    def size(self) -> int:
        return int(self.images.shape[0])

    def to(self, device: torch.device) -> Batch:
        for name, value in vars(self).items():
            if isinstance(value, torch.Tensor):
                setattr(self, name, value.to(device, non_blocking=True))
        return self

    def forward_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"levels": self.levels, "resolution": self.resolution}
        optional = {
            "mismatch_levels": self.mismatch_levels, "hr_images": self.hr_images, "mlm_ids": self.mlm_ids,
            "mlm_labels": self.mlm_labels, "sketch": self.sketch, "ir": self.ir,
            "reid_images": self.reid_images, "reid_modality": self.reid_modality,
        }
        kwargs.update({k: v for k, v in optional.items() if v is not None})
        return kwargs


def _codes_to_targets(codes: torch.Tensor) -> torch.Tensor:
    return torch.where(codes >= 0, codes, torch.full_like(codes, -100))


class BatchBuilder:
    """Turns sampler indices into a ``Batch``; all randomness comes from the ``rng``/``generator`` given."""

    def __init__(self, data: TrainingData, config: ModelConfig, training: TrainConfig, tokenizer: Tokenizer) -> None:
        self.data = data
        self.config = config
        self.training = training
        self.tokenizer = tokenizer
        self.needs = DataNeeds.of(config)
        self.texts = TextSource(training.level_sizes, training.text_augment, training.text_pick, data.vocabulary)
        self.image_augment = ImageAugment() if training.image_augment else None
        self.realism = RealismAugment(apply_p=training.realism) if training.realism > 0 else None
        self.realism_by_modality = {} if self.realism is None else {
            "rgb": self.realism, "ir": self.realism.for_infrared(), "sketch": None}
        self.mean = torch.tensor(config.vision.mean).view(1, 3, 1, 1)
        self.std = torch.tensor(config.vision.std).view(1, 3, 1, 1)
        self.use_gcr = config.gcr.enabled and config.losses.gcr > 0
        self.use_rcr = config.crst.rcr and config.losses.rcr > 0

    # ------------------------------------------------------------------------------------------ images
    def images(self, rows: list[int] | torch.Tensor, generator: torch.Generator | None = None,
               modality: str | Sequence[str] = "rgb") -> torch.Tensor:
        """Normalised (and, with a generator and augmentation on, augmented) images of cache rows; ``modality``
        ("rgb", "ir" or "sketch", one for all rows or one per row) picks each row's realism chain."""
        rows = torch.as_tensor(rows, dtype=torch.long)
        x = self.data.images.index_select(0, rows).float() / 255.0
        if self.realism is not None and generator is not None:
            x = self._realistic(x, modality, generator)
        x = (x - self.mean) / self.std
        if self.image_augment is not None and generator is not None:
            x = self.image_augment(x, generator)
        return x

    def _realistic(self, x: torch.Tensor, modality: str | Sequence[str], generator: torch.Generator) -> torch.Tensor:
        """The realism chain on 0–1 intensities: RGB rows first, then IR rows; sketch rows untouched."""
        kinds = [modality] * x.shape[0] if isinstance(modality, str) else list(modality)
        if len(kinds) != x.shape[0]:
            raise ValueError(f"{len(kinds)} modalities given for {x.shape[0]} images")
        unknown = sorted(set(kinds) - set(self.realism_by_modality))
        if unknown:
            raise ValueError(f"unknown image modality {unknown[0]!r} (allowed: 'rgb', 'ir', 'sketch')")
        for kind, augment in self.realism_by_modality.items():
            picked = [i for i, k in enumerate(kinds) if k == kind]
            if augment is not None and picked:
                index = torch.tensor(picked, dtype=torch.long)
                x[index] = augment(x[index], generator)
        return x

    def low_resolution_views(self, hr: torch.Tensor, resolution: torch.Tensor,
                             source_sizes: torch.Tensor | None = None) -> torch.Tensor:
        """Each row downsampled by its resolution's factor (area) and upsampled back (bicubic); the factor
        divides ``source_sizes`` (each row's file size, capped at the input size) when given, else the
        input size."""
        out = hr.clone()
        size = tuple(hr.shape[-2:])
        for index, factor in enumerate(self.training.low_resolution_factors, start=1):
            rows = (resolution == index).nonzero().squeeze(1)
            if rows.numel() == 0:
                continue
            if source_sizes is None:
                targets = [(max(1, size[0] // factor), max(1, size[1] // factor))] * rows.numel()
            else:
                targets = [(max(1, min(size[0], int(h) // factor)), max(1, min(size[1], int(w) // factor)))
                           for h, w in source_sizes.index_select(0, rows).tolist()]
            for small_size in sorted(set(targets)):
                group = rows[[k for k, t in enumerate(targets) if t == small_size]]
                if small_size == size:
                    continue  # the level's size is at least the input size: the view is the HR image
                small = F.interpolate(hr.index_select(0, group), size=small_size, mode="area")
                out[group] = F.interpolate(small, size=size, mode="bicubic", align_corners=False)
        return out

    # -------------------------------------------------------------------------------------------- batch
    def build(self, indices: list[int], rng: random.Random, generator: torch.Generator) -> Batch:
        items: list[PairItem] = [self.data.pairs[i] for i in indices]
        drawn = [self.texts.sample(item, rng) for item in items]
        texts = [d.text for d in drawn]
        levels = torch.tensor([d.level for d in drawn], dtype=torch.long)
        labels = torch.tensor([item.label for item in items], dtype=torch.long)
        by_outfit = self.training.text_positives == "outfit"
        match_labels = torch.tensor([item.clothing for item in items], dtype=torch.long) if by_outfit else labels
        query_codes = torch.tensor([encode_attributes(d.stated) for d in drawn], dtype=torch.long)
        fine = [item.attributes if item.attributes is not None else _richest(item) for item in items]
        fine_codes = torch.tensor([encode_attributes(a) for a in fine], dtype=torch.long)
        world = all(item.attributes is not None for item in items)

        ids = self.tokenizer(texts)
        length = int(self.tokenizer.eot_positions(ids).max()) + 1
        ids = ids[:, :length].contiguous()

        rows = [item.row for item in items]
        images = self.images(rows, generator)
        hr_images = None
        if self.needs.low_resolution_views:
            resolution = torch.randint(0, len(RESOLUTIONS), (len(items),), generator=generator)
            hr_images = images
            sizes = None
            if self.training.low_resolution_reference == "source" and self.data.source_sizes is not None:
                sizes = self.data.source_sizes.index_select(0, torch.as_tensor(rows, dtype=torch.long))
            images = self.low_resolution_views(hr_images, resolution, sizes)
        else:
            resolution = torch.tensor([item.resolution for item in items], dtype=torch.long)

        batch = Batch(
            images=images, token_ids=ids, levels=levels, labels=labels, match_labels=match_labels,
            resolution=resolution,
            query_codes=query_codes, fine_codes=fine_codes,
            text_attribute_targets=_codes_to_targets(query_codes),
            image_attribute_targets=_codes_to_targets(fine_codes) if world else None,
            texts=texts, hr_images=hr_images,
        )
        if self.use_gcr:
            batch.mismatch_levels = sample_wrong_levels(levels, len(LEVELS), generator)
        if self.use_rcr:
            masked = resolution_masking(
                ids, attribute_token_mask(ids, self.tokenizer), ordinary_token_mask(ids, self.tokenizer),
                resolution, self.tokenizer.mask_id, self.tokenizer.ordinary_range, generator,
            )
            batch.mlm_ids, batch.mlm_labels = masked.input_ids, masked.labels
        if self.needs.query_images:
            self._add_query_images(batch, items, rng, generator)
        if self.needs.reid:
            self._add_reid(batch, items, rng, generator)
        return batch

    def _add_query_images(self, batch: Batch, items: list[PairItem], rng: random.Random,
                          generator: torch.Generator) -> None:
        labels = [item.label for item in items]
        if all(self.data.sketch_rows.get(label) for label in labels):
            rows = []
            for item in items:
                candidates = self.data.sketch_rows[item.label]
                same_outfit = [r for r, clothing in candidates if clothing == item.clothing]
                if self.training.text_positives == "outfit" and same_outfit:
                    rows.append(rng.choice(same_outfit))
                else:
                    rows.append(rng.choice(candidates)[0])
            batch.sketch = self.images(rows, generator, "sketch")
        if all(self.data.ir_rows.get(label) for label in labels):
            rows = []
            for item in items:
                candidates = self.data.ir_rows[item.label]
                same_outfit = [r for r, clothing in candidates if clothing == item.clothing]
                rows.append(rng.choice(same_outfit or [r for r, _ in candidates]))
            batch.ir = self.images(rows, generator, "ir")

    def _add_reid(self, batch: Batch, items: list[PairItem], rng: random.Random, generator: torch.Generator) -> None:
        count = self.training.reid_samples_per_modality
        rows, modality, person, clothing = [], [], [], []
        for label in sorted({item.label for item in items}):
            for code, pool in ((0, self.data.rgb_rows.get(label, [])), (1, self.data.ir_rows.get(label, []))):
                if not pool:
                    continue
                picks = rng.sample(pool, count) if len(pool) >= count else [rng.choice(pool) for _ in range(count)]
                for row, cid in picks:
                    rows.append(row)
                    modality.append(code)
                    person.append(label)
                    clothing.append(cid)
        batch.reid_images = self.images(rows, generator, ["ir" if code else "rgb" for code in modality])
        batch.reid_modality = torch.tensor(modality, dtype=torch.long)
        batch.reid_person = torch.tensor(person, dtype=torch.long)
        batch.reid_clothing = torch.tensor(clothing, dtype=torch.long)
        batch.clothing_person = self.data.clothing_person


def _richest(item: PairItem) -> dict[str, str]:
    """The parsed attributes of an image's most detailed caption (its "finest text", docs/methods.md §1.7)."""
    if not item.caption_attributes:
        return {}
    best = max(item.caption_attributes, key=lambda attrs: ONTOLOGY.count(attrs))
    return dict(best)
