"""Training data in memory: reader Samples → a decoded uint8 image cache at the model's input size, the
text–image pairs with their identity labels, the sketch/IR/re-id images per identity, the held-out
validation identities, and a fingerprint of the data for the checkpoint metadata.

Held-out identities are drawn with ``validation_seed``, or taken from ``HeldOut`` (the identities a
checkpoint trained on the same data held out, so that a second stage validates on the same people);
either way they are recorded in ``TrainingData.validation_identities``. The cache also keeps each image's
size on disk (``source_sizes``) so that low-resolution views can be made at the world's own sizes.

World data (``world:DIR``) keeps each image's attributes, so fresh descriptions can be generated per step
(see ``engine.lab.train.texts``). Captioned datasets (CUHK-PEDES, …) keep their captions and the level and
attributes ``engine.retrieval.text.parser`` reads from each caption. Images are decoded once (progress reported)
and resized with area interpolation when shrinking, bicubic when enlarging.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import torch

from engine.ingest.datasets import DatasetIndex, Sample, parse_dataset_spec, read_spec
from engine.kernel import jsonio
from engine.kernel.images import ImageInputError, read_image
from engine.kernel.ontology import LEVELS
from engine.kernel.progress import ProgressFn, no_progress
from engine.kernel.vocabulary import WORLD_TO_MODEL_RESOLUTION
from engine.retrieval.models import ModelConfig
from engine.retrieval.models.names import RESOLUTIONS


class TrainingDataError(ValueError):
    """Data that cannot be trained on (missing, unreadable, too few identities, …)."""


@dataclass(frozen=True)
class PairItem:
    """One image of the text–image pool."""

    row: int  # row in the image cache
    label: int  # training identity index 0..N-1
    clothing: int  # clothing id index (identity × outfit) 0..C-1
    resolution: int  # index into engine.retrieval.models.names.RESOLUTIONS
    attributes: dict[str, str] | None  # world: the canonical attributes of this image's outfit
    captions: tuple[str, ...] = ()  # captioned datasets
    caption_levels: tuple[int, ...] = ()  # level index per caption (parser)
    caption_attributes: tuple[dict[str, str], ...] = ()  # parsed attributes per caption


@dataclass(frozen=True)
class ValidationSet:
    """Held-out identities: gallery images and text queries per level (fixed for the whole run)."""

    gallery_rows: torch.Tensor  # [G] rows of the image cache
    gallery_identities: np.ndarray  # [G]
    queries: dict[str, tuple[list[str], np.ndarray]]  # level name → (texts, identity per text)
    gallery_outfits: np.ndarray | None = None  # [G] outfit of each gallery image (-1 unknown)
    query_outfits: dict[str, np.ndarray] = field(default_factory=dict)  # level → outfit each text describes
    # mode ("S", "IR") → (cache rows, identities, outfits) of the held-out sketch / IR query images
    image_queries: dict[str, tuple[torch.Tensor, np.ndarray, np.ndarray]] = field(default_factory=dict)


@dataclass(frozen=True)
class HeldOut:
    """Validation identities recorded by an earlier run (its checkpoint metadata) on data with this hash."""

    identities: tuple[int, ...]
    seed: int  # the seed their validation texts were drawn with
    content_sha256: str
    where: str  # the checkpoint they come from, for messages
    origin: str = ""  # how that checkpoint's run chose them, when it recorded it (kept by a resume)


@dataclass
class TrainingData:
    kind: str  # "world" | "captions"
    paths: list[Path]  # image file of every cache row
    image_size: tuple[int, int]  # (H, W) of the cache
    pairs: list[PairItem]
    sketch_rows: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # label → (row, clothing)
    ir_rows: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # label → (row, clothing)
    rgb_rows: dict[int, list[tuple[int, int]]] = field(default_factory=dict)  # label → (row, clothing)
    clothing_person: torch.Tensor = field(default_factory=lambda: torch.zeros(0, dtype=torch.long))
    vocabulary: list[str] = field(default_factory=list)
    validation: ValidationSet | None = None
    fingerprint: dict[str, Any] = field(default_factory=dict)
    validation_identities: list[int] = field(default_factory=list)  # held out (original identity ids)
    validation_origin: str = ""  # how they were chosen ("seed N" or the checkpoint they come from)
    validation_seed: int = 0  # the seed their validation texts were drawn with
    images: torch.Tensor | None = None  # uint8 [R, 3, H, W] once ``load_images`` ran
    source_sizes: torch.Tensor | None = None  # int [R, 2]: (height, width) of each image file

    def load_images(self, progress: ProgressFn = no_progress) -> None:
        """Decode every image once into the in-memory cache."""
        if self.images is None:
            self.images, self.source_sizes = decode_images_with_sizes(self.paths, self.image_size, progress)

    @property
    def num_identities(self) -> int:
        return len({p.label for p in self.pairs})

    @property
    def num_clothing(self) -> int:
        return int(self.clothing_person.numel())

    @property
    def labels(self) -> list[int]:
        return [p.label for p in self.pairs]


@dataclass(frozen=True)
class DataNeeds:
    """What the model config asks of the data."""

    low_resolution_views: bool  # CRST: HR images only in the pool, LR views made on the fly
    query_images: bool  # FlexiReID: a sketch and an IR image per pair
    reid: bool  # Uni-AT: RGB + IR re-id images per batch identity

    @classmethod
    def of(cls, config: ModelConfig) -> DataNeeds:
        loss = config.losses
        crst = loss.sdm_low_resolution > 0 or loss.cr_rda > 0 or (config.crst.tgr and loss.tgr > 0) or (
            config.crst.rcr and loss.rcr > 0)
        return cls(
            low_resolution_views=crst,
            query_images=config.fusion.kind != "none" and (loss.fusion_sdm > 0 or loss.query_attributes > 0),
            reid=config.scenarios.enabled and loss.scenario_id > 0,
        )


# ---------------------------------------------------------------------------------------------- reading


def read_training_index(spec: str) -> DatasetIndex:
    """Read ``READER:PATH``; a missing folder or file is a ``TrainingDataError`` naming it."""
    try:
        parse_dataset_spec(spec)
        return read_spec(spec)
    except FileNotFoundError as exc:
        raise TrainingDataError(f"data {spec!r}: {exc}") from None
    except ValueError as exc:
        raise TrainingDataError(f"data {spec!r}: {exc}") from None


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def data_fingerprint(spec: str, index: DatasetIndex) -> dict[str, Any]:
    """Reader, path, sizes and content hashes (world: manifest sha256 and world.json seed/size)."""
    parsed = parse_dataset_spec(spec)
    content = hashlib.sha256()
    for s in index.samples:
        try:
            relative = str(s.image.relative_to(index.root))
        except ValueError:
            relative = str(s.image)
        content.update(json.dumps([relative, s.identity, s.split, s.modality, s.outfit, list(s.captions)],
                                  ensure_ascii=False).encode("utf-8"))
    out: dict[str, Any] = {
        "reader": parsed.reader,
        "path": str(parsed.path.resolve()),
        "samples": len(index),
        "identities": len(index.identities),
        "content_sha256": content.hexdigest(),
    }
    manifest = index.notes.get("manifest")
    if manifest:
        out["manifest_sha256"] = _sha256(Path(manifest))
        world_json = Path(manifest).parent / "world.json"
        if world_json.is_file():
            info = jsonio.read(world_json, expect=dict)  # a JsonInputError names the file
            out["world"] = {k: info.get(k) for k in ("seed", "identities", "images_per_identity", "version")}
            out["world"]["palette"] = info.get("palette", "reference")
    return out


def decode_images(paths: list[Path], size: tuple[int, int], progress: ProgressFn = no_progress) -> torch.Tensor:
    """Decode ``paths`` as RGB and resize to ``size`` (H, W): uint8 tensor [N, 3, H, W]."""
    return decode_images_with_sizes(paths, size, progress)[0]


def resize_to_input(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """An image at the cache size (H, W) as training sees it: area when shrinking, bicubic otherwise."""
    height, width = size
    if image.shape[:2] == (height, width):
        return image
    shrink = image.shape[0] >= height and image.shape[1] >= width
    return cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA if shrink else cv2.INTER_CUBIC)


def decode_images_with_sizes(paths: list[Path], size: tuple[int, int],
                             progress: ProgressFn = no_progress) -> tuple[torch.Tensor, torch.Tensor]:
    """(``decode_images``, int tensor [N, 2] of each file's own (height, width))."""
    height, width = size
    out = torch.empty((len(paths), 3, height, width), dtype=torch.uint8)
    sizes = torch.empty((len(paths), 2), dtype=torch.long)
    progress(0, len(paths))
    for i, path in enumerate(paths):
        try:
            image = read_image(path)
        except ImageInputError as exc:
            raise TrainingDataError(f"cannot decode image {path}: {exc.reason}") from None
        sizes[i] = torch.tensor(image.shape[:2])
        image = resize_to_input(cv2.cvtColor(image, cv2.COLOR_BGR2RGB), size)
        out[i] = torch.from_numpy(np.ascontiguousarray(image.transpose(2, 0, 1)))
        if (i + 1) % 256 == 0 or i + 1 == len(paths):
            progress(i + 1, len(paths))
    return out, sizes


# ------------------------------------------------------------------------------------------- building


def _split_identities(identities: list[int], count: int, seed: int, minimum_train: int) -> tuple[set[int], set[int]]:
    ordered = sorted(identities)
    count = min(count, max(0, len(ordered) - minimum_train))
    rng = random.Random(f"lineup-validation:{seed}")
    held_out = set(rng.sample(ordered, count)) if count else set()
    return set(ordered) - held_out, held_out


def _vocabulary(texts: list[str]) -> list[str]:
    return sorted({w.strip(".,;:!?\"'()").lower() for t in texts for w in t.split()} - {""})


def build_training_data(
    spec: str,
    config: ModelConfig,
    *,
    seed: int,
    validation_identities: int,
    queries_per_identity: int,
    identities_per_batch: int,
    status: Callable[[str], None] = lambda message: None,
    validation_seed: int | None = None,
    held_out: HeldOut | None = None,
) -> TrainingData:
    """Read ``spec`` and hold out ``validation_identities`` identities drawn with ``validation_seed``
    (default ``seed``), or ``held_out``'s identities when it was recorded on the same data; the images are
    decoded later by ``TrainingData.load_images`` (so a bad output folder fails before the slow part)."""
    index = read_training_index(spec)
    fingerprint = data_fingerprint(spec, index)
    samples = [s for s in index.samples if s.split == "train"] if "train" in index.splits else list(index.samples)
    if not samples:
        raise TrainingDataError(f"data {spec!r} has no samples to train on")
    kind = "world" if index.name == "world" else "captions"
    needs = DataNeeds.of(config)
    if kind == "world":
        rgb = [s for s in samples if s.modality == "rgb" and s.extra.get("attributes")]
        if needs.low_resolution_views:
            rgb = [s for s in rgb if s.extra.get("resolution") == "HR"]
    else:
        rgb = [s for s in samples if s.modality == "rgb" and s.captions]
    if not rgb:
        raise TrainingDataError(f"data {spec!r} has no RGB images with attributes or captions to pair with text")
    identities = sorted({s.identity for s in rgb})
    draw_seed = seed if validation_seed is None else validation_seed
    origin = f"seed {draw_seed}"
    if held_out is not None and held_out.content_sha256 == fingerprint["content_sha256"]:
        val_ids = set(held_out.identities) & set(identities)
        train_ids = set(identities) - val_ids
        origin, draw_seed = held_out.origin or held_out.where, held_out.seed
        status(f"holding out the {len(val_ids)} validation identities recorded in {held_out.where}")
    else:
        if held_out is not None:
            status(f"note: {held_out.where} was trained on other data; its validation identities are not reused")
        train_ids, val_ids = _split_identities(identities, validation_identities, draw_seed, identities_per_batch)
    if len(train_ids) < identities_per_batch:
        raise TrainingDataError(
            f"data {spec!r} has {len(train_ids)} training identities, fewer than identities_per_batch "
            f"{identities_per_batch}")
    label_of = {identity: k for k, identity in enumerate(sorted(train_ids))}

    paths: list[Path] = []
    row_of: dict[Path, int] = {}

    def row(path: Path) -> int:
        if path not in row_of:
            row_of[path] = len(paths)
            paths.append(path)
        return row_of[path]

    clothing_of: dict[tuple[int, int], int] = {}

    def clothing(sample: Sample) -> int:
        key = (label_of[sample.identity], sample.outfit if sample.outfit is not None else 0)
        return clothing_of.setdefault(key, len(clothing_of))

    parsed = _parse_captions(rgb, status) if kind == "captions" else {}
    pairs: list[PairItem] = []
    rgb_rows: dict[int, list[tuple[int, int]]] = {}
    for s in rgb:
        if s.identity not in label_of:
            continue
        label = label_of[s.identity]
        resolution = RESOLUTIONS.index(WORLD_TO_MODEL_RESOLUTION.get(s.extra.get("resolution", "HR"), "hr"))
        item = PairItem(row=row(s.image), label=label, clothing=clothing(s), resolution=resolution,
                        attributes=dict(s.extra["attributes"]) if kind == "world" else None)
        if kind == "captions":
            results = [parsed[c] for c in s.captions]
            item = dataclasses.replace(item, captions=s.captions, caption_levels=tuple(r[0] for r in results),
                                       caption_attributes=tuple(r[1] for r in results))
        pairs.append(item)
        rgb_rows.setdefault(label, []).append((item.row, item.clothing))

    sketch_rows: dict[int, list[tuple[int, int]]] = {}
    ir_rows: dict[int, list[tuple[int, int]]] = {}
    if needs.query_images or needs.reid:
        for s in samples:
            if s.identity not in label_of:
                continue
            if s.modality == "sketch" and needs.query_images:
                sketch_rows.setdefault(label_of[s.identity], []).append((row(s.image), clothing(s)))
            elif s.modality == "ir":
                ir_rows.setdefault(label_of[s.identity], []).append((row(s.image), clothing(s)))
    if needs.query_images and not (sketch_rows or ir_rows):
        status("note: the config fuses sketch/IR queries but the data has no sketch or IR images; "
               "fusion losses are skipped")
    if needs.reid and not ir_rows:
        status("note: the data has no IR images; Uni-AT re-id batches use RGB only")

    validation = None
    val_rows: list[int] = []
    if val_ids:
        gallery = [s for s in rgb if s.identity in val_ids]
        val_rows = [row(s.image) for s in gallery]
        queries, query_outfits = _validation_queries(gallery, kind, parsed, draw_seed, queries_per_identity)
        validation = ValidationSet(
            gallery_rows=torch.tensor(val_rows, dtype=torch.long),
            gallery_identities=np.array([s.identity for s in gallery]),
            queries=queries,
            gallery_outfits=np.array([-1 if s.outfit is None else s.outfit for s in gallery]),
            query_outfits=query_outfits,
            image_queries=_validation_image_queries(samples, val_ids, row) if needs.query_images else {},
        )

    clothing_person = torch.zeros(len(clothing_of), dtype=torch.long)
    for (label, _outfit), cid in clothing_of.items():
        clothing_person[cid] = label
    texts = [c for p in pairs for c in p.captions] or [
        d for s in rgb if s.identity in label_of for d in s.extra.get("descriptions", {}).values()]
    return TrainingData(kind=kind, paths=paths, image_size=tuple(config.vision.image_size), pairs=pairs,
                        sketch_rows=sketch_rows, ir_rows=ir_rows,
                        rgb_rows=rgb_rows, clothing_person=clothing_person, vocabulary=_vocabulary(texts),
                        validation=validation, fingerprint=fingerprint,
                        validation_identities=sorted(val_ids), validation_origin=origin,
                        validation_seed=draw_seed)


def _validation_image_queries(samples: list[Sample], val_ids: set[int],
                              row: Callable[[Path], int]) -> dict[str, tuple[torch.Tensor, np.ndarray, np.ndarray]]:
    """The held-out identities' full-resolution sketch and IR images as validation queries, per mode ("S", "IR")."""
    out = {}
    for mode, modality in (("S", "sketch"), ("IR", "ir")):
        picked = [s for s in samples if s.modality == modality and s.identity in val_ids
                  and WORLD_TO_MODEL_RESOLUTION.get(s.extra.get("resolution", "HR"), "hr") == "hr"]
        if picked:
            out[mode] = (torch.tensor([row(s.image) for s in picked], dtype=torch.long),
                         np.array([s.identity for s in picked]),
                         np.array([-1 if s.outfit is None else s.outfit for s in picked]))
    return out


def _parse_captions(samples: list[Sample], status: Callable[[str], None]) -> dict[str, tuple[int, dict[str, str]]]:
    """caption → (level index, parsed attributes); captions without a readable attribute count as UF."""
    try:
        from engine.retrieval.text.parser import parse
    except ImportError as exc:
        raise TrainingDataError(f"captioned data needs engine.retrieval.text.parser ({exc})") from None
    captions = sorted({c for s in samples for c in s.captions})
    status(f"parsing {len(captions)} captions for their levels")
    out = {}
    for caption in captions:
        result = parse(caption)
        level = LEVELS.index(result.level) if result.level in LEVELS else len(LEVELS) - 1
        out[caption] = (level, dict(result.attributes))
    return out


def _validation_queries(
    gallery: list[Sample], kind: str, parsed: dict[str, tuple[int, dict[str, str]]], seed: int, per_identity: int
) -> tuple[dict[str, tuple[list[str], np.ndarray]], dict[str, np.ndarray]]:
    """(queries, outfit each query describes). World: ``per_identity`` fresh UF and UC descriptions per
    held-out identity (fixed seed). Captioned: up to ``per_identity`` captions per identity, grouped by
    parsed level ("all" holds every one)."""
    from engine.retrieval.text.generator import describe, nested_key_subsets

    by_identity: dict[int, list[Sample]] = {}
    for s in gallery:
        by_identity.setdefault(s.identity, []).append(s)
    rng = random.Random(f"lineup-validation-text:{seed}")
    queries: dict[str, tuple[list[str], list[int]]] = {}
    outfits: dict[str, list[int]] = {}
    for identity in sorted(by_identity):
        chosen = [by_identity[identity][k % len(by_identity[identity])] for k in range(per_identity)]
        for sample in chosen:
            if kind == "world":
                attributes = sample.extra["attributes"]
                for level, size in (("UF", None), ("UC", 5)):
                    keys = nested_key_subsets(attributes, rng, sizes=(size,))[0] if size else None
                    texts, ids = queries.setdefault(level, ([], []))
                    texts.append(describe(attributes, keys, rng))
                    ids.append(identity)
                    outfits.setdefault(level, []).append(-1 if sample.outfit is None else sample.outfit)
            else:
                caption = sample.captions[rng.randrange(len(sample.captions))]
                for level in ("all", LEVELS[parsed[caption][0]]):
                    texts, ids = queries.setdefault(level, ([], []))
                    texts.append(caption)
                    ids.append(identity)
                    outfits.setdefault(level, []).append(-1 if sample.outfit is None else sample.outfit)
    return ({level: (texts, np.array(ids)) for level, (texts, ids) in queries.items()},
            {level: np.array(values) for level, values in outfits.items()})
