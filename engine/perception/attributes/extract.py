"""``extract_attributes``: clothing and hair evidence read directly from a person crop's pixels.

Steps (each in its own module):

1. check the inputs (:mod:`~engine.perception.attributes.inputs`) and shrink the crop to at most
   :data:`ANALYSIS_HEIGHT` rows (area interpolation; a given mask by nearest neighbour);
2. the person's silhouette (:mod:`~engine.perception.attributes.mask`): the given foreground mask cleaned, else GrabCut;
3. body regions from the silhouette's profile (:mod:`~engine.perception.attributes.regions`);
4. colour constancy from the scene or the crop's background (:mod:`~engine.perception.attributes.constancy`), then
   CIELAB and YCrCb of the corrected crop;
5. skin pixels (:mod:`~engine.perception.attributes.skin`), left out of garment and hair regions unless they are most
   of the region (a garment in a skin-like colour);
6. colour names (:mod:`~engine.perception.attributes.colors`) for ``top_color``, ``bottom_color``, ``hair_color`` and,
   when a hat is likely, ``hat_color``; ``hat_type`` (hat or none), ``top_length`` and ``bottom_length``
   (:mod:`~engine.perception.attributes.garments`).

Colour pixels come from the silhouette eroded by one pixel (edges mix person and background) when that
keeps at least half of it. Evidence from the prior silhouette (no mask, GrabCut found nothing) has its
confidence scaled by :data:`PRIOR_CONFIDENCE`.
"""

from __future__ import annotations

import cv2
import numpy as np

from engine.kernel.ontology import ONTOLOGY
from engine.perception.attributes.colors import GARMENT_NAMER, HAIR_NAMER, ColorReading
from engine.perception.attributes.constancy import (
    apply_gains,
    black_level,
    exposure_gain,
    reference_pixels,
    shades_of_grey,
)
from engine.perception.attributes.evidence import AttributeEvidence
from engine.perception.attributes.garments import hat_probability, leg_reading, sleeve_reading
from engine.perception.attributes.inputs import MIN_CROP_HEIGHT, MIN_CROP_WIDTH, as_bgr, as_mask
from engine.perception.attributes.mask import person_mask
from engine.perception.attributes.regions import body_regions, mask_box
from engine.perception.attributes.skin import skin_mask

ANALYSIS_HEIGHT = 96
PRIOR_CONFIDENCE = 0.5
MIN_CLOTH_SHARE = 0.25
MAX_HAIR_SKIN_SHARE = 0.6
MIN_REGION_PIXELS = 4
REGION_NAMES = ("head", "hair", "crown", "face", "top", "chest", "upper_arms", "forearms", "bottom", "thighs", "shins",
                "shoes")
HAT_TYPES = tuple(v for v in ONTOLOGY.attributes["hat_type"] if v != "none")


def _shrink(crop: np.ndarray, mask: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None, float]:
    h, w = crop.shape[:2]
    if h <= ANALYSIS_HEIGHT:
        return crop, mask, 1.0
    scale = ANALYSIS_HEIGHT / h
    size = (max(MIN_CROP_WIDTH, int(round(w * scale))), ANALYSIS_HEIGHT)
    small = cv2.resize(crop, size, interpolation=cv2.INTER_AREA)
    small_mask = None if mask is None else cv2.resize(mask, size, interpolation=cv2.INTER_NEAREST)
    return small, small_mask, scale


def _colour_pixels(region: np.ndarray, inner: np.ndarray, skin: np.ndarray) -> np.ndarray:
    """The region's pixels to name: inner silhouette minus skin, unless that leaves too little."""
    body = region & inner
    if body.sum() < MIN_REGION_PIXELS:
        body = region
    cloth = body & ~skin
    if cloth.sum() >= max(MIN_REGION_PIXELS, MIN_CLOTH_SHARE * body.sum()):
        return cloth
    return body


def _hair_pixels(region: np.ndarray, skin: np.ndarray, personal: bool) -> np.ndarray:
    """The hair region without skin when the skin model is the person's own (``personal``: a face was seen)
    and "skin" is not most of the region; else the whole region. Blonde, red and brown hair all pass the
    generic skin rule, and a head seen from behind or the side can lend its hair as the skin reference."""
    n = int(region.sum())
    if personal and n and (region & skin).sum() <= MAX_HAIR_SKIN_SHARE * n:
        return region & ~skin
    return region


def _add(out: AttributeEvidence, key: str, reading: ColorReading | None, scale: float = 1.0) -> None:
    if reading is None or reading.pixels == 0:
        return
    out.probabilities[key] = reading.probabilities
    out.confidence[key] = float(np.clip(reading.confidence * scale, 0.0, 1.0))


def extract_attributes(crop_bgr: np.ndarray, mask: np.ndarray | None = None,
                       scene_bgr: np.ndarray | None = None) -> AttributeEvidence:
    """Evidence for ``top_color``, ``bottom_color``, ``hair_color``, ``hat_type``, ``hat_color``,
    ``top_length`` and ``bottom_length`` of the person in ``crop_bgr`` (uint8 BGR).

    ``mask``: the crop's foreground mask from a background model (uint8, 255 = foreground), if any;
    ``scene_bgr``: the whole frame the crop was cut from, used for colour constancy, if any.
    Attributes whose region is not visible (e.g. legs of an upper-body crop) are left out.
    Raises :class:`~engine.perception.attributes.inputs.AttributeInputError` for inputs that are not images.
    """
    crop = as_bgr(crop_bgr, "crop_bgr", MIN_CROP_HEIGHT, MIN_CROP_WIDTH)
    given = None if mask is None else as_mask(mask, crop.shape[:2])
    scene = None if scene_bgr is None else as_bgr(scene_bgr, "scene_bgr")
    work, work_mask, scale = _shrink(crop, given)

    person = person_mask(work, work_mask)
    regions = body_regions(person.mask)
    reference = reference_pixels(work, person.mask, scene)
    black = black_level(reference if scene is not None else work.reshape(-1, 3))
    lifted = np.clip(reference.astype(np.float32) - black, 0.0, 255.0)
    gains = shades_of_grey(lifted)
    gains = gains * exposure_gain(lifted, gains)
    corrected = apply_gains(work, gains, black)
    lab = cv2.cvtColor(corrected, cv2.COLOR_BGR2Lab)
    ycrcb = cv2.cvtColor((corrected * 255.0 + 0.5).astype(np.uint8), cv2.COLOR_BGR2YCrCb)
    skin, skin_tone = skin_mask(ycrcb, regions.masks["face"])
    skin &= person.mask

    inner = cv2.erode(person.mask.astype(np.uint8), np.ones((3, 3), np.uint8)) > 0
    if inner.sum() < 0.5 * person.mask.sum():
        inner = person.mask
    trust = PRIOR_CONFIDENCE if person.source == "prior" else 1.0
    m = regions.masks
    out = AttributeEvidence({}, {})

    for key, region in (("top_color", "top"), ("bottom_color", "bottom")):
        if m[region].sum() >= MIN_REGION_PIXELS:
            _add(out, key, GARMENT_NAMER.read(lab[_colour_pixels(m[region], inner, skin)]), trust)

    hat = hat_probability(lab, skin, regions, inner)
    p_hat = 0.0
    if hat is not None:
        p_hat, hat_confidence = hat
        out.probabilities["hat_type"] = {"none": 1.0 - p_hat, **{t: p_hat / len(HAT_TYPES) for t in HAT_TYPES}}
        out.confidence["hat_type"] = float(hat_confidence * trust)
        if p_hat >= 0.5:
            crown = _colour_pixels(m["crown"], inner, skin)
            _add(out, "hat_color", GARMENT_NAMER.read(lab[crown]), p_hat * trust)

    hair_region = m["hair"] if p_hat < 0.5 else m["head_lower"] & ~m["face"]
    hair = _hair_pixels(hair_region, skin, skin_tone is not None)
    if hair.sum() >= MIN_REGION_PIXELS:
        _add(out, "hair_color", HAIR_NAMER.read(lab[hair]), (1.0 - 0.5 * p_hat) * trust)

    for key, reading in (("top_length", sleeve_reading(skin, regions)), ("bottom_length", leg_reading(skin, regions))):
        if reading is not None:
            out.probabilities[key] = reading.probabilities
            out.confidence[key] = float(np.clip(reading.confidence * trust, 0.0, 1.0))

    inv = 1.0 / scale
    masks = {"person": person.mask, **{name: m[name] for name in REGION_NAMES}}
    for name, region in masks.items():
        box = mask_box(region)
        if box is not None:
            x, y, w, h = box
            out.regions[name] = [int(x * inv), int(y * inv), max(1, round(w * inv)), max(1, round(h * inv))]
    out.info = {
        "mask_source": person.source,
        "mask_fraction": round(person.fraction, 4),
        "illuminant_gains_bgr": [round(float(g), 4) for g in gains],
        "black_level_bgr": [round(float(b), 1) for b in black],
        "head_unit_px": round(regions.unit * inv, 2),
        "truncated": bool(regions.truncated),
        "skin_tone_ycrcb": None if skin_tone is None else [round(float(v), 1) for v in skin_tone],
        "hat_probability": None if hat is None else round(p_hat, 4),
        "analysis_scale": round(scale, 6),
    }
    out.masks = {**masks, "skin": skin}
    return out

