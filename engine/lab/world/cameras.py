"""The world's cameras and clock.

Eight fixed cameras ``cam01``…``cam08``: five RGB day cameras and three infrared night cameras, each with
its own scene (background style), colour cast, brightness range, sensor noise and blur habit. Sketches
are not seen by a camera; their records use the pseudo-camera ``"sketch"``.

Clock: the world starts on :data:`BASE_DATE`; an outfit is worn on one world day. Day images are stamped
07:00:00–18:59:59 of that day, night images 20:00:00–05:59:59 of the night that follows it (so a night
image after midnight carries the next date but the same outfit). Short-term pairs share an outfit and a
day; long-term pairs are on different days in changed outfits (Uni-AT ST/LT, docs/methods.md §3).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from datetime import datetime, timedelta

import numpy as np

BASE_DATE = datetime(2024, 5, 6)
DAY_START_S, DAY_END_S = 7 * 3600, 19 * 3600            # [07:00, 19:00)
NIGHT_START_S, NIGHT_END_S = 20 * 3600, 30 * 3600        # [20:00, 06:00 next day)
SKETCH_CAMERA = "sketch"


@dataclass(frozen=True)
class Camera:
    id: str
    name: str
    style: str                                   # background scene, see engine.lab.world.backgrounds.STYLES
    modality: str                                # "rgb" (day camera) or "ir" (night camera)
    cast: tuple[float, float, float]             # per-channel RGB gain of the sensor/lighting
    brightness: tuple[float, float]              # range of the global light gain
    noise: tuple[float, float]                   # range of sensor noise sigma (grey levels)
    blur: float                                  # probability of a soft (defocused) image

    @property
    def daytime(self) -> str:
        return "day" if self.modality == "rgb" else "night"

    def to_dict(self) -> dict:
        out = asdict(self)
        out["daytime"] = self.daytime
        return out


CAMERAS: tuple[Camera, ...] = (
    Camera("cam01", "street entrance", "street", "rgb", (1.05, 1.0, 0.93), (0.9, 1.12), (1.5, 3.5), 0.15),
    Camera("cam02", "office corridor", "corridor", "rgb", (0.96, 1.0, 1.05), (0.82, 1.02), (2.5, 5.0), 0.25),
    Camera("cam03", "central plaza", "plaza", "rgb", (1.0, 1.0, 1.0), (0.95, 1.15), (1.0, 3.0), 0.1),
    Camera("cam04", "metro platform", "station", "rgb", (0.97, 1.02, 0.98), (0.8, 1.0), (3.0, 6.0), 0.3),
    Camera("cam05", "shopping mall", "mall", "rgb", (1.05, 1.0, 0.98), (0.92, 1.1), (1.5, 3.5), 0.15),
    Camera("cam06", "park path (night)", "park", "ir", (1.0, 1.0, 1.0), (0.9, 1.1), (3.0, 6.0), 0.35),
    Camera("cam07", "parking garage (night)", "parking", "ir", (1.0, 1.0, 1.0), (0.85, 1.05), (4.0, 7.0), 0.35),
    Camera("cam08", "campus gate (night)", "campus", "ir", (1.0, 1.0, 1.0), (0.9, 1.1), (3.0, 6.5), 0.3),
)
CAMERA_BY_ID: dict[str, Camera] = {c.id: c for c in CAMERAS}
RGB_CAMERAS: tuple[str, ...] = tuple(c.id for c in CAMERAS if c.modality == "rgb")
IR_CAMERAS: tuple[str, ...] = tuple(c.id for c in CAMERAS if c.modality == "ir")


def get_camera(camera: str | Camera) -> Camera:
    """A camera by id (or the camera itself); unknown ids raise ``ValueError`` listing the known ones."""
    if isinstance(camera, Camera):
        return camera
    try:
        return CAMERA_BY_ID[camera]
    except (KeyError, TypeError):
        raise ValueError(f"unknown camera {camera!r}; known: {list(CAMERA_BY_ID)}") from None


def timestamp(day: int, daytime: str, rng: np.random.Generator) -> str:
    """An ISO 8601 time (seconds) on world day ``day``: day 07:00–18:59, night 20:00–05:59 (next date)."""
    if daytime == "day":
        lo, hi = DAY_START_S, DAY_END_S
    elif daytime == "night":
        lo, hi = NIGHT_START_S, NIGHT_END_S
    else:
        raise ValueError(f"daytime must be 'day' or 'night', not {daytime!r}")
    seconds = int(rng.integers(lo, hi))
    return (BASE_DATE + timedelta(days=int(day), seconds=seconds)).isoformat(timespec="seconds")


def daytime_of(iso_time: str) -> str:
    """``"day"`` for 07:00–18:59, ``"night"`` for 20:00–05:59; other hours (dusk, dawn) raise ``ValueError``."""
    t = datetime.fromisoformat(iso_time)
    hour = t.hour
    if 7 <= hour < 19:
        return "day"
    if hour >= 20 or hour < 6:
        return "night"
    raise ValueError(f"time {iso_time!r} is neither day (07–19) nor night (20–06)")
