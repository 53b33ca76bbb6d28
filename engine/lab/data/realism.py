"""Realism augmentation: make rendered world crops look more like camera crops (docs/training-notes.md,
realism augmentation).

One camera-like chain per image, each step with its own probability and range (the fields below, the one
place they are set):

1. vertical squash / stretch (camera height, box aspect), content resampled, edges repeated;
2. white balance: per-channel gains (mean gain 1), then brightness, contrast (about the image mean), gamma;
3. saturation change (mix with luma);
4. optics: Gaussian defocus blur, a short straight motion blur;
5. sensor: the image taken down by a factor (area), then Gaussian read noise plus signal-dependent shot noise,
   then JPEG at a random quality (``cv2.imencode``/``imdecode`` on the CPU), and back up to the input size
   (bicubic) — noise and compression blocks land at the small size, as in a low-resolution camera crop. The
   sampling and the 8×8 JPEG grids sit at a random offset, as in a box cut anywhere from a frame.

``colour=False`` (infrared frames) leaves out the white balance and saturation steps and draws one noise
field for all three channels, so a grey image stays grey. Batches are ``B×3×H×W`` RGB, uint8 (0–255) or
float (0–1 intensities, before normalisation), on any device; the result has the input's shape, dtype and
range. Every random number comes from the ``torch.Generator`` given, so a seed repeats a batch exactly.

The default ranges were chosen with ``bench/realism_gap.py`` so the statistics of world crops move toward
those of the real footage crops without overshooting (figures in docs/training-notes.md).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import cv2
import numpy as np
import torch
import torch.nn.functional as F

_LUMA = (0.299, 0.587, 0.114)
_STEPS = ("squash", "cast", "tone", "saturation", "defocus", "motion", "lowres", "noise", "jpeg")
_DRAWS = {"squash": 1, "cast": 3, "tone": 3, "saturation": 1, "defocus": 1, "motion": 2, "lowres": 3,
          "noise": 2, "jpeg": 3}  # uniform draws per image and step (its parameters and grid offsets)
_DRAW_START = {step: sum(_DRAWS[s] for s in _STEPS[:k]) for k, step in enumerate(_STEPS)}


class RealismConfigError(ValueError):
    """A realism setting out of range; the message names the field and the value."""


@dataclass(frozen=True)
class RealismAugment:
    """Per-image camera-style degradations; ``apply_p`` is the chance an image gets the chain at all."""

    apply_p: float = 1.0
    colour: bool = True  # False: no white balance, no saturation change, one noise field for all channels
    squash_p: float = 0.3
    squash: tuple[float, float] = (0.9, 1.1)  # vertical scale of the content (<1 squashes, >1 stretches)
    cast_p: float = 0.8
    cast: tuple[float, float] = (0.8, 1.2)  # per-channel gain before rescaling the three to mean 1
    tone_p: float = 0.9
    brightness: tuple[float, float] = (0.45, 1.0)  # gain
    contrast: tuple[float, float] = (0.9, 1.3)  # scale of deviations from the image's mean luma
    gamma: tuple[float, float] = (0.9, 1.4)  # exponent on 0–1 intensities
    saturation_p: float = 0.7
    saturation: tuple[float, float] = (0.5, 1.0)  # 0 = grey, 1 = unchanged
    defocus_p: float = 0.3
    defocus_sigma: tuple[float, float] = (0.4, 1.2)  # Gaussian sigma in pixels of the input size
    motion_p: float = 0.2
    motion_length: tuple[float, float] = (2.0, 6.0)  # pixels, any direction
    lowres_p: float = 0.6
    lowres_factor: tuple[float, float] = (1.2, 2.0)  # input size / size the camera saw
    noise_p: float = 0.7
    noise_sigma: tuple[float, float] = (0.006, 0.03)  # read noise, standard deviation on 0–1 intensities
    noise_shot: tuple[float, float] = (0.0, 0.0004)  # signal-dependent variance per unit intensity
    jpeg_p: float = 0.5
    jpeg_quality: tuple[int, int] = (35, 85)
    jpeg_shift: bool = True  # the 8×8 block grid at a random offset (False: aligned with the image's corner)

    def __post_init__(self) -> None:
        for field in dataclasses.fields(self):
            value = getattr(self, field.name)
            if field.name.endswith("_p"):
                _need(0.0 <= value <= 1.0, field.name, value, "must lie in [0, 1]")
            elif isinstance(value, tuple):
                _need(len(value) == 2 and value[0] <= value[1], field.name, value, "must be a (low, high) pair")
        _need(self.squash[0] > 0, "squash", self.squash, "must be positive")
        _need(self.cast[0] > 0, "cast", self.cast, "must be positive")
        _need(self.brightness[0] > 0, "brightness", self.brightness, "must be positive")
        _need(self.contrast[0] >= 0, "contrast", self.contrast, "must be ≥ 0")
        _need(self.gamma[0] > 0, "gamma", self.gamma, "must be positive")
        _need(self.saturation[0] >= 0, "saturation", self.saturation, "must be ≥ 0")
        _need(self.defocus_sigma[0] >= 0 and self.defocus_sigma[1] <= 8, "defocus_sigma", self.defocus_sigma,
              "must lie in [0, 8] px")
        _need(self.motion_length[0] >= 1 and self.motion_length[1] <= 25, "motion_length", self.motion_length,
              "must lie in [1, 25] px")
        _need(self.lowres_factor[0] >= 1, "lowres_factor", self.lowres_factor, "must be ≥ 1")
        _need(self.noise_sigma[0] >= 0 and self.noise_shot[0] >= 0, "noise_sigma/noise_shot",
              (self.noise_sigma, self.noise_shot), "must be ≥ 0")
        _need(self.jpeg_quality[0] >= 1 and self.jpeg_quality[1] <= 100, "jpeg_quality", self.jpeg_quality,
              "must lie in [1, 100]")

    def for_infrared(self) -> RealismAugment:
        """The same chain without colour steps (infrared frames are grey)."""
        return dataclasses.replace(self, colour=False)

    def __call__(self, images: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
        """A new batch: each image through the chain with probability ``apply_p``, the others unchanged."""
        if images.ndim != 4 or images.shape[1] != 3:
            raise ValueError(f"expected a B×3×H×W RGB batch, got shape {tuple(images.shape)}")
        if images.dtype != torch.uint8 and not images.dtype.is_floating_point:
            raise ValueError(f"expected uint8 or float images, got {images.dtype}")
        b = images.shape[0]
        chosen = _uniform_draws((b, 1 + len(_STEPS)), generator) < torch.tensor(
            [self.apply_p] + [getattr(self, f"{step}_p") for step in _STEPS])
        params = _uniform_draws((b, sum(_DRAWS.values())), generator)
        active = chosen[:, 0:1] & chosen[:, 1:]
        if not self.colour:
            active[:, _STEPS.index("cast")] = False
            active[:, _STEPS.index("saturation")] = False
        x = images.float() / 255.0 if images.dtype == torch.uint8 else images.float().clamp(0.0, 1.0)
        out = x.clone()
        for i in torch.nonzero(active.any(dim=1)).flatten().tolist():
            steps = {name for name, on in zip(_STEPS, active[i].tolist(), strict=True) if on}
            out[i] = self._one(x[i], steps, params[i].tolist(), generator)
        if images.dtype == torch.uint8:
            return (out * 255.0).round().clamp(0, 255).to(torch.uint8)
        return out.to(images.dtype)

    # ------------------------------------------------------------------------------------------ one image
    def _one(self, image: torch.Tensor, steps: set[str], u: list[float],
             generator: torch.Generator | None) -> torch.Tensor:
        draws = {step: u[_DRAW_START[step]:_DRAW_START[step] + _DRAWS[step]] for step in _STEPS}
        x = image
        size = tuple(x.shape[-2:])
        if "squash" in steps:
            x = _squash(x, _pick(self.squash, draws["squash"][0]))
        if "cast" in steps:
            gains = torch.tensor([_pick(self.cast, d) for d in draws["cast"]], device=x.device)
            x = x * (gains / gains.mean()).view(3, 1, 1)
        if "tone" in steps:
            brightness, contrast, gamma = draws["tone"]
            mean = _luma(x).mean()
            x = (mean + (x - mean) * _pick(self.contrast, contrast)) * _pick(self.brightness, brightness)
            x = x.clamp(0.0, 1.0) ** _pick(self.gamma, gamma)
        if "saturation" in steps:
            grey = _luma(x).unsqueeze(0)
            x = grey + (x - grey) * _pick(self.saturation, draws["saturation"][0])
        x = x.clamp(0.0, 1.0)
        if "defocus" in steps:
            x = _convolve(x, _gaussian_kernel(_pick(self.defocus_sigma, draws["defocus"][0])).to(x.device))
        if "motion" in steps:
            length, angle = draws["motion"]
            x = _convolve(x, _line_kernel(_pick(self.motion_length, length), math.pi * angle).to(x.device))
        shift = (0, 0)
        if "lowres" in steps:  # the sampling grid at a random offset, as a box cut anywhere from a frame has it
            factor, dy, dx = draws["lowres"]
            factor = _pick(self.lowres_factor, factor)
            shift = int(8 * dy) % 8, int(8 * dx) % 8
            x = F.pad(x.unsqueeze(0), (shift[1], 0, shift[0], 0), mode="replicate")[0]
            small = (max(8, round(x.shape[1] / factor)), max(8, round(x.shape[2] / factor)))
            x = F.interpolate(x.unsqueeze(0), size=small, mode="area")[0]
        if "noise" in steps:
            read, shot = draws["noise"]
            variance = _pick(self.noise_sigma, read) ** 2 + _pick(self.noise_shot, shot) * x
            shape = tuple(x.shape) if self.colour else (1, *x.shape[-2:])
            field = torch.randn(shape, generator=generator, device=_draw_device(generator)).to(x.device)
            x = (x + variance.sqrt() * field).clamp(0.0, 1.0)
        if "jpeg" in steps:
            quality, dy, dx = draws["jpeg"]
            grid = (int(8 * dy) % 8, int(8 * dx) % 8) if self.jpeg_shift else (0, 0)
            x = _jpeg(x, round(_pick(self.jpeg_quality, quality)), grid)
        if "lowres" in steps:
            padded = (size[0] + shift[0], size[1] + shift[1])
            x = F.interpolate(x.unsqueeze(0), size=padded, mode="bicubic", align_corners=False)[0]
            x = x[:, shift[0]:, shift[1]:]
        return x.clamp(0.0, 1.0)


def _need(condition: bool, name: str, value: object, problem: str) -> None:
    if not condition:
        raise RealismConfigError(f"realism setting {name!r} {problem}, got {value!r}")


def _draw_device(generator: torch.Generator | None) -> torch.device:
    return generator.device if generator is not None else torch.device("cpu")


def _uniform_draws(shape: tuple[int, ...], generator: torch.Generator | None) -> torch.Tensor:
    return torch.rand(shape, generator=generator, device=_draw_device(generator)).cpu()


def _pick(bounds: tuple[float, float], u: float) -> float:
    return bounds[0] + (bounds[1] - bounds[0]) * u


def _luma(x: torch.Tensor) -> torch.Tensor:
    weights = torch.tensor(_LUMA, device=x.device, dtype=x.dtype).view(3, 1, 1)
    return (x * weights).sum(dim=0)


def _squash(x: torch.Tensor, scale: float) -> torch.Tensor:
    """Content scaled vertically by ``scale`` about the centre; rows beyond the image repeat the edge."""
    theta = torch.tensor([[[1.0, 0.0, 0.0], [0.0, 1.0 / scale, 0.0]]], device=x.device, dtype=x.dtype)
    grid = F.affine_grid(theta, [1, *x.shape], align_corners=False)
    return F.grid_sample(x.unsqueeze(0), grid, mode="bilinear", padding_mode="border", align_corners=False)[0]


def _gaussian_kernel(sigma: float) -> torch.Tensor:
    if sigma <= 0:
        return torch.ones(1, 1)
    radius = max(1, math.ceil(3 * sigma))
    line = torch.exp(-(torch.arange(-radius, radius + 1, dtype=torch.float32) ** 2) / (2 * sigma * sigma))
    line = line / line.sum()
    return line[:, None] * line[None, :]


def _line_kernel(length: float, angle: float) -> torch.Tensor:
    """A normalised straight-line kernel of ``length`` pixels at ``angle`` (radians), anti-aliased."""
    radius = max(1, math.ceil(length / 2))
    coords = torch.arange(-radius, radius + 1, dtype=torch.float32)
    yy, xx = torch.meshgrid(coords, coords, indexing="ij")
    along = xx * math.cos(angle) + yy * math.sin(angle)
    across = -xx * math.sin(angle) + yy * math.cos(angle)
    weight = (1 - across.abs()).clamp(min=0) * (length / 2 + 0.5 - along.abs()).clamp(0, 1)
    return weight / weight.sum()


def _convolve(x: torch.Tensor, kernel: torch.Tensor) -> torch.Tensor:
    """Each channel convolved with ``kernel`` (odd square), edges reflected."""
    radius = kernel.shape[-1] // 2
    if radius == 0:
        return x
    height, width = x.shape[-2:]
    mode = "reflect" if radius < min(height, width) else "replicate"
    padded = F.pad(x.unsqueeze(0), (radius, radius, radius, radius), mode=mode)
    weight = kernel.to(x.dtype).expand(x.shape[0], 1, *kernel.shape)
    return F.conv2d(padded, weight, groups=x.shape[0])[0]


def _jpeg(x: torch.Tensor, quality: int, offset: tuple[int, int]) -> torch.Tensor:
    """JPEG round trip of one 3×H×W 0–1 image at ``quality`` (on the CPU, back on the image's device), its
    8×8 block grid shifted by ``offset`` (rows, columns; edge pixels repeated) as a crop cut anywhere from a
    compressed frame has it."""
    pixels = (x * 255.0).round().clamp(0, 255).to(torch.uint8).permute(1, 2, 0).cpu().numpy()
    dy, dx = offset
    padded = np.pad(pixels[..., ::-1], ((dy, 0), (dx, 0), (0, 0)), mode="edge")
    ok, encoded = cv2.imencode(".jpg", np.ascontiguousarray(padded), [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:
        raise RuntimeError(f"JPEG encoding of a {padded.shape[1]}×{padded.shape[0]} image failed")
    decoded = cv2.imdecode(encoded, cv2.IMREAD_COLOR)[dy:, dx:, ::-1]
    return torch.from_numpy(np.ascontiguousarray(decoded)).to(x.device).permute(2, 0, 1).float() / 255.0
