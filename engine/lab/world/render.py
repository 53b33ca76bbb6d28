"""Render one person crop: scene, figure, occlusion, camera look, modality, resolution level.

``render_sample(attributes, modality, resolution, view, camera, rng)`` is the one-call API a trainer uses
to make images on the fly; the world builder calls the same function. Every image is ``H×W×3 uint8`` RGB
at the native size of its resolution level (IR and sketch have three identical channels).

Per image the renderer varies: walking phase and amplitude (or standing), horizontal position (±6 px),
size (±2.5 %), the window of the camera's scene, mirroring, light level and colour cast of the camera,
sensor noise, occasional defocus blur and, in one image out of ten, a partial occluder (a pole at the edge
or a low object in front of the feet). Sketches are drawn by an artist: standing, centred, no scene,
no occluder, no noise.
"""

from __future__ import annotations

from collections.abc import Mapping

import cv2
import numpy as np

from engine.kernel.ontology import ATTRIBUTE_KEYS, DEPENDENT_COLORS
from engine.kernel.vocabulary import IMAGE_MODALITIES as MODALITIES
from engine.lab.world.backgrounds import background
from engine.lab.world.cameras import SKETCH_CAMERA, Camera, get_camera
from engine.lab.world.figure import CANVAS_H, CANVAS_W, Figure, Pose
from engine.lab.world.identities import canonical
from engine.lab.world.look import Look, make_look
from engine.lab.world.modalities import RESOLUTIONS, add_noise, downsample, materials, to_three_channels
from engine.lab.world.painter import Painter

VIEWS: tuple[str, ...] = ("front", "back", "side")
OCCLUSION_RATE = 0.1


class RenderError(ValueError):
    """Bad input to the renderer (names the argument and the problem)."""


def complete_attributes(attributes: Mapping[str, str]) -> dict[str, str]:
    """Canonical attributes with every key present that must be (dependent colours only with their item)."""
    try:
        attrs = canonical(attributes)
    except ValueError as exc:
        raise RenderError(f"attributes: {exc}") from None
    missing = [k for k in ATTRIBUTE_KEYS if k not in DEPENDENT_COLORS and k not in attrs]
    missing += [c for c, item in DEPENDENT_COLORS.items() if attrs.get(item, "none") != "none" and c not in attrs]
    if missing:
        raise RenderError(f"attributes: missing {missing}; a renderable person needs all of them")
    return attrs


def sample_pose(view: str, attrs: Mapping[str, str], look: Look, rng: np.random.Generator, sketch: bool) -> Pose:
    """Walking phase, position and size jitter of one image (sketches stand still, centred)."""
    if sketch:
        return Pose(view, 0.0, CANVAS_W / 2, CANVAS_H - 4.0, 1.0)
    amplitude = 0.0 if rng.random() < 0.2 else float(rng.uniform(0.45, 1.0))
    swing = amplitude * float(np.sin(rng.uniform(0, 2 * np.pi)))
    cx = CANVAS_W / 2 + float(rng.uniform(-6, 6))
    if attrs["carrying_type"] == "suitcase" and view != "side":
        cx -= 9 * look.carry_side
    ground = CANVAS_H - 4.0 + float(rng.uniform(-2.5, 2.0))
    return Pose(view, swing, cx, ground, float(rng.uniform(0.975, 1.025)))


def _occlude(canvas: np.ndarray, modality: str, rng: np.random.Generator) -> None:
    """A pole at one edge or a low object in front of the feet (never more than about a fifth of the crop)."""
    grey = modality == "ir"
    if rng.random() < 0.5:
        w = int(rng.integers(6, 11))
        x = int(rng.integers(3, 20)) if rng.random() < 0.5 else CANVAS_W - int(rng.integers(3, 20)) - w
        tone = (52,) if grey else tuple(float(v) for v in rng.uniform(90, 150) * np.array([1.0, 1.0, 1.04]))
        cv2.rectangle(canvas, (x, 0), (x + w, CANVAS_H), tone, -1)
        hi = (62,) if grey else tuple(min(255.0, t + 40) for t in tone)
        cv2.line(canvas, (x + 2, 0), (x + 2, CANVAS_H), hi, 1)
        return
    h = int(rng.integers(22, 42))
    left = rng.random() < 0.5
    x0, x1 = (0, int(rng.integers(40, 70))) if left else (CANVAS_W - int(rng.integers(40, 70)), CANVAS_W)
    tone = (70,) if grey else tuple(float(v) for v in rng.uniform(60, 140, 3) * 0.6 + 40)
    cv2.rectangle(canvas, (x0, CANVAS_H - h), (x1, CANVAS_H), tone, -1)
    edge = (44,) if grey else tuple(t * 0.6 for t in tone)
    cv2.rectangle(canvas, (x0, CANVAS_H - h), (x1, CANVAS_H), edge, 1)


def _finish_rgb(img: np.ndarray, cam: Camera, rng: np.random.Generator) -> np.ndarray:
    gain = float(rng.uniform(*cam.brightness))
    img = cv2.multiply(img, (gain * cam.cast[0], gain * cam.cast[1], gain * cam.cast[2], 0.0))
    if rng.random() < cam.blur:
        img = cv2.GaussianBlur(img, (0, 0), float(rng.uniform(0.5, 0.9)))
    return add_noise(img, float(rng.uniform(*cam.noise)), rng)


def _finish_ir(img: np.ndarray, cam: Camera, rng: np.random.Generator) -> np.ndarray:
    gain = float(rng.uniform(*cam.brightness))
    img = cv2.convertScaleAbs(img, alpha=gain, beta=float(rng.uniform(-6, 6)))
    sigma = float(rng.uniform(0.6, 1.0)) + (float(rng.uniform(0.3, 0.7)) if rng.random() < cam.blur else 0.0)
    img = cv2.GaussianBlur(img, (0, 0), sigma)
    return add_noise(img, float(rng.uniform(*cam.noise)), rng)


def render_hr(attrs: Mapping[str, str], look: Look, modality: str, view: str, camera: Camera | None,
              rng: np.random.Generator, occlusion: bool = True) -> np.ndarray:
    """The HR (256×128) image, RGB ``H×W×3`` or grey ``H×W`` for IR and sketch."""
    sketch = modality == "sketch"
    if sketch:
        canvas = np.full((CANVAS_H, CANVAS_W), 255, np.uint8)
    else:
        canvas = background(camera.style, "ir" if modality == "ir" else "rgb", rng, (CANVAS_H, CANVAS_W))
    pose = sample_pose(view, attrs, look, rng, sketch)
    mirror = view == "side" and rng.random() < 0.5
    if mirror:
        canvas = cv2.flip(canvas, 1)
    figure = Figure(dict(attrs), look, pose)
    figure.draw(Painter(canvas, materials(modality, dict(attrs), look)), shadow=modality == "rgb")
    if mirror:
        canvas = cv2.flip(canvas, 1)
    if sketch:
        return canvas
    if occlusion and rng.random() < OCCLUSION_RATE:
        _occlude(canvas, modality, rng)
    if modality == "ir":
        return _finish_ir(canvas, camera, rng)
    return _finish_rgb(canvas, camera, rng)


def render_sample(attributes: Mapping[str, str], modality: str, resolution: str, view: str,
                  camera: str | Camera, rng: np.random.Generator, look: Look | None = None,
                  occlusion: bool = True) -> np.ndarray:
    """One image of a person with ``attributes``: ``H×W×3 uint8`` RGB at the level's native size.

    ``camera`` is a camera id (``"cam01"``…) or :class:`Camera`; it is ignored for sketches (pass
    ``"sketch"``). ``look`` fixes the non-attribute details (exact tints, beard, …) of a person and outfit;
    without it they are drawn from ``rng``. The same ``rng`` state gives the same image.
    """
    if modality not in MODALITIES:
        raise RenderError(f"modality {modality!r} is not one of {list(MODALITIES)}")
    if resolution not in RESOLUTIONS:
        raise RenderError(f"resolution {resolution!r} is not one of {list(RESOLUTIONS)}")
    if view not in VIEWS:
        raise RenderError(f"view {view!r} is not one of {list(VIEWS)}")
    if not isinstance(rng, np.random.Generator):
        raise RenderError(f"rng must be a numpy.random.Generator, not {type(rng).__name__}")
    attrs = complete_attributes(attributes)
    cam = None
    if modality != "sketch":
        if camera == SKETCH_CAMERA:
            raise RenderError("camera 'sketch' only goes with modality 'sketch'")
        try:
            cam = get_camera(camera)
        except ValueError as exc:
            raise RenderError(str(exc)) from None
    if look is None:
        look = make_look(attrs, rng, rng)
    hr = render_hr(attrs, look, modality, view, cam, rng, occlusion)
    return to_three_channels(downsample(hr, resolution))
