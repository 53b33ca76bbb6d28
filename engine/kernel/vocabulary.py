"""The names of the categorical things Lineup talks about, declared once: granularity levels, the any-time
scenarios, image modalities and resolutions (with the map from a world's resolution labels to the model's).

Standard library only, so that the case store can check a step's level without loading the engine. The
shipped ontology (``resources/ontology.json``) describes each level (its label and attribute counts); its
level names must be ``LEVELS`` (``engine.kernel.ontology`` refuses a shipped file that disagrees).
"""

from __future__ import annotations

from types import MappingProxyType

#: granularity levels, coarsest first (docs/methods.md §1.1)
LEVELS: tuple[str, ...] = ("UC", "C", "M", "F", "UF")

#: the Uni-AT any-time scenarios: time of day (DT day, NT night, AD any) × term (ST short, LT long)
#: (docs/methods.md §3); also the order of the model's scenario heads
SCENARIOS: tuple[str, ...] = ("DT-ST", "DT-LT", "NT-ST", "NT-LT", "AD-ST", "AD-LT")

#: what an image shows: colour, infrared (grey), or a drawn sketch; also the model's modality codes (rgb 0, ir 1)
IMAGE_MODALITIES: tuple[str, ...] = ("rgb", "ir", "sketch")

#: a world's resolution labels, sharpest first (the crop sizes are the lab's: ``engine.lab.world.modalities``)
WORLD_RESOLUTIONS: tuple[str, ...] = ("HR", "mild", "mid", "ultra")
#: the model's resolution names (CRST, docs/methods.md §2), in the same order
MODEL_RESOLUTIONS: tuple[str, ...] = ("hr", "mild_lr", "mid_lr", "ultra_lr")
#: a world's resolution label → the model's name ("HR" → "hr", "mild" → "mild_lr", …)
WORLD_TO_MODEL_RESOLUTION: MappingProxyType[str, str] = MappingProxyType(
    dict(zip(WORLD_RESOLUTIONS, MODEL_RESOLUTIONS, strict=True)))


def model_resolution(label: str) -> str:
    """The model's name for a world resolution label (HR, mild, mid, ultra) or a model resolution name (any case);
    else ``ValueError``."""
    if label in WORLD_TO_MODEL_RESOLUTION:
        return WORLD_TO_MODEL_RESOLUTION[label]
    if isinstance(label, str) and label.lower() in MODEL_RESOLUTIONS:
        return label.lower()
    raise ValueError(f"resolution {label!r} is not one of {list(WORLD_RESOLUTIONS)} or {list(MODEL_RESOLUTIONS)}")
