"""Procedural scenes behind the pedestrians, one per camera style.

Each style is drawn once per process as a 256×384 panorama (RGB, and its thermal counterpart for
infrared) from a fixed seed; an image takes a random 256×128 window of it, so every camera has a
recognisable, consistent scene while crops still vary. Styles: street, corridor, plaza, park, station,
mall, parking, campus.
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np

PANORAMA_H, PANORAMA_W = 256, 384
STYLES: tuple[str, ...] = ("street", "corridor", "plaza", "park", "station", "mall", "parking", "campus")


def _vgrad(img: np.ndarray, y0: int, y1: int, top: tuple, bottom: tuple) -> None:
    t = np.linspace(0.0, 1.0, max(1, y1 - y0), dtype=np.float32)[:, None, None]
    img[y0:y1] = (np.asarray(top, np.float32) * (1 - t) + np.asarray(bottom, np.float32) * t)


def _texture(img: np.ndarray, rng: np.random.Generator, y0: int, y1: int, amount: float, smooth: float) -> None:
    n = rng.standard_normal((y1 - y0, img.shape[1], 1)).astype(np.float32)
    if smooth > 0:
        n = cv2.GaussianBlur(n, (0, 0), smooth)[..., None]
        n /= max(1e-6, float(n.std()))
    img[y0:y1] += n * amount


def _perspective_floor(img: np.ndarray, y0: int, color: tuple, line: tuple, vx: float, spacing: int) -> None:
    """Floor from ``y0`` down with tile lines converging to a vanishing point above the floor."""
    h, w = img.shape[:2]
    _vgrad(img, y0, h, tuple(c * 0.9 for c in color), color)
    horizon = y0 - 60
    for k in range(1, 40):
        y = int(horizon + 60 * (1.22 ** k))
        if y >= h:
            break
        if y > y0:
            cv2.line(img, (0, y), (w, y), line, 1, cv2.LINE_AA)
    for x_bottom in range(-w, 2 * w, spacing):
        x_top = vx + (x_bottom - vx) * 0.3
        cv2.line(img, (int(x_top), y0), (int(x_bottom), h), line, 1, cv2.LINE_AA)


def _street(rng: np.random.Generator) -> np.ndarray:
    img = np.zeros((PANORAMA_H, PANORAMA_W, 3), np.float32)
    img[:] = (176, 160, 142)
    _texture(img, rng, 0, 178, 6, 1.5)
    for x in range(6, PANORAMA_W, 38):
        for y in range(6, 120, 46):
            cv2.rectangle(img, (x, y), (x + 22, y + 30), (205, 196, 182), -1)
            cv2.rectangle(img, (x + 2, y + 2), (x + 20, y + 28), (66, 78, 92), -1)
            cv2.line(img, (x + 4, y + 26), (x + 16, y + 4), (110, 124, 140), 2, cv2.LINE_AA)
    cv2.rectangle(img, (0, 124), (PANORAMA_W, 134), (92, 84, 70), -1)
    for x in range(0, PANORAMA_W, 96):
        cv2.rectangle(img, (x + 8, 138), (x + 86, 178), (52, 58, 62), -1)
        cv2.rectangle(img, (x + 12, 142), (x + 82, 176), (118, 104, 82), -1)
    _perspective_floor(img, 178, (170, 168, 162), (132, 130, 126), PANORAMA_W / 2, 46)
    cv2.line(img, (0, 178), (PANORAMA_W, 178), (120, 118, 112), 2)
    return img


def _corridor(rng: np.random.Generator) -> np.ndarray:
    img = np.zeros((PANORAMA_H, PANORAMA_W, 3), np.float32)
    img[:] = (214, 208, 192)
    _texture(img, rng, 0, 168, 3, 3)
    img[0:34] = (236, 236, 230)
    for x in range(20, PANORAMA_W, 90):
        cv2.rectangle(img, (x, 6), (x + 50, 20), (255, 255, 246), -1)
    for x in range(40, PANORAMA_W, 128):
        cv2.rectangle(img, (x, 60), (x + 44, 168), (150, 112, 78), -1)
        cv2.rectangle(img, (x + 3, 63), (x + 41, 168), (172, 132, 92), -1)
        cv2.circle(img, (x + 36, 118), 3, (200, 190, 150), -1)
    cv2.rectangle(img, (0, 150), (PANORAMA_W, 168), (180, 172, 156), -1)
    _perspective_floor(img, 168, (196, 196, 190), (160, 160, 154), PANORAMA_W / 2, 40)
    return img


def _trees(img: np.ndarray, rng: np.random.Generator, y0: int, y1: int, count: int, dark: float) -> None:
    for _ in range(count):
        x = int(rng.integers(0, PANORAMA_W))
        y = int(rng.integers(y0, y1))
        r = int(rng.integers(14, 34))
        g = rng.uniform(0.7, 1.1) * dark
        cv2.line(img, (x, y), (x, y + r + 30), (84, 64, 44), 5)
        cv2.circle(img, (x, y), r, (54 * g, 110 * g, 52 * g), -1, cv2.LINE_AA)
        cv2.circle(img, (x - r // 3, y - r // 3), r // 2, (74 * g, 140 * g, 70 * g), -1, cv2.LINE_AA)


def _plaza(rng: np.random.Generator) -> np.ndarray:
    img = np.zeros((PANORAMA_H, PANORAMA_W, 3), np.float32)
    _vgrad(img, 0, 130, (150, 186, 222), (214, 226, 236))
    x = 0
    while x < PANORAMA_W:
        w = int(rng.integers(30, 70))
        top = int(rng.integers(28, 70))
        tone = rng.uniform(150, 190)
        cv2.rectangle(img, (x, top), (x + w, 130), (tone * 0.92, tone * 0.95, tone), -1)
        for yy in range(top + 6, 126, 12):
            cv2.line(img, (x + 4, yy), (x + w - 4, yy), (tone * 0.7, tone * 0.75, tone * 0.82), 2)
        x += w + int(rng.integers(2, 10))
    _trees(img, rng, 96, 126, 9, 1.0)
    _perspective_floor(img, 130, (196, 184, 168), (160, 148, 134), PANORAMA_W / 2, 30)
    return img


def _park(rng: np.random.Generator) -> np.ndarray:
    img = np.zeros((PANORAMA_H, PANORAMA_W, 3), np.float32)
    _vgrad(img, 0, 70, (160, 196, 228), (210, 224, 232))
    img[70:150] = (70, 120, 62)
    _trees(img, rng, 30, 120, 22, 0.9)
    _vgrad(img, 140, 200, (88, 144, 70), (104, 160, 80))
    _texture(img, rng, 140, 200, 9, 0.8)
    _vgrad(img, 200, PANORAMA_H, (196, 182, 150), (206, 192, 160))
    _texture(img, rng, 200, PANORAMA_H, 7, 0.6)
    return img


def _station(rng: np.random.Generator) -> np.ndarray:
    img = np.zeros((PANORAMA_H, PANORAMA_W, 3), np.float32)
    img[:] = (224, 226, 222)
    for y in range(0, 170, 14):
        cv2.line(img, (0, y), (PANORAMA_W, y), (196, 198, 196), 1)
    for x in range(0, PANORAMA_W, 14):
        cv2.line(img, (x, 0), (x, 170), (196, 198, 196), 1)
    cv2.rectangle(img, (0, 40), (PANORAMA_W, 62), (40, 70, 128), -1)
    for x in range(10, PANORAMA_W, 44):
        cv2.rectangle(img, (x, 46), (x + int(rng.integers(12, 30)), 56), (232, 232, 232), -1)
    for x in range(60, PANORAMA_W, 150):
        cv2.rectangle(img, (x, 0), (x + 26, 176), (150, 152, 156), -1)
        cv2.rectangle(img, (x + 4, 0), (x + 10, 176), (176, 178, 182), -1)
    _perspective_floor(img, 176, (146, 146, 144), (120, 120, 118), PANORAMA_W / 2, 50)
    cv2.rectangle(img, (0, 184), (PANORAMA_W, 190), (206, 180, 60), -1)
    return img


def _mall(rng: np.random.Generator) -> np.ndarray:
    img = np.zeros((PANORAMA_H, PANORAMA_W, 3), np.float32)
    img[:] = (228, 224, 216)
    x = 0
    while x < PANORAMA_W:
        w = int(rng.integers(70, 110))
        sign = tuple(float(c) for c in rng.uniform(80, 200, 3))
        cv2.rectangle(img, (x + 4, 20), (x + w - 4, 42), sign, -1)
        cv2.rectangle(img, (x + 4, 48), (x + w - 4, 176), (112, 124, 132), -1)
        cv2.rectangle(img, (x + 8, 52), (x + w - 8, 176), (150, 162, 168), -1)
        for k in range(3):
            xx = x + 12 + k * (w // 4)
            cv2.rectangle(img, (xx, 120), (xx + 14, 176), tuple(float(c) for c in rng.uniform(90, 210, 3)), -1)
        x += w
    _perspective_floor(img, 176, (222, 214, 198), (196, 188, 174), PANORAMA_W / 2, 60)
    img[176:] = img[176:] * 0.85 + cv2.GaussianBlur(img[96:176][::-1], (0, 0), 4)[: PANORAMA_H - 176] * 0.15
    return img


def _parking(rng: np.random.Generator) -> np.ndarray:
    img = np.zeros((PANORAMA_H, PANORAMA_W, 3), np.float32)
    img[:] = (122, 122, 120)
    _texture(img, rng, 0, 180, 5, 2)
    img[0:30] = (100, 100, 98)
    for x in range(30, PANORAMA_W, 110):
        cv2.rectangle(img, (x, 10), (x + 40, 16), (236, 236, 220), -1)
    x = -20
    while x < PANORAMA_W:
        w = int(rng.integers(76, 96))
        body = tuple(float(0.5 * c + 0.5 * 120) for c in rng.uniform(50, 190, 3))
        cv2.rectangle(img, (x, 132), (x + w, 176), body, -1)
        cv2.rectangle(img, (x + 14, 110), (x + w - 16, 134), body, -1)
        cv2.rectangle(img, (x + 18, 114), (x + w - 20, 132), (50, 58, 66), -1)
        cv2.circle(img, (x + 16, 176), 9, (26, 26, 26), -1)
        cv2.circle(img, (x + w - 16, 176), 9, (26, 26, 26), -1)
        x += w + int(rng.integers(10, 30))
    _perspective_floor(img, 182, (82, 82, 84), (76, 76, 78), PANORAMA_W / 2, 70)
    for x0 in range(0, PANORAMA_W, 70):
        cv2.line(img, (x0, 182), (x0 - 40, PANORAMA_H), (210, 210, 200), 2, cv2.LINE_AA)
    return img


def _campus(rng: np.random.Generator) -> np.ndarray:
    img = np.zeros((PANORAMA_H, PANORAMA_W, 3), np.float32)
    img[:] = (196, 200, 200)
    brick, mortar = (150, 78, 58), (190, 176, 160)
    img[0:150] = mortar
    for row, y in enumerate(range(0, 150, 9)):
        offset = 0 if row % 2 == 0 else 12
        for x in range(-offset, PANORAMA_W, 24):
            tone = rng.uniform(0.85, 1.1)
            cv2.rectangle(img, (x + 1, y + 1), (x + 22, y + 7), tuple(c * tone for c in brick), -1)
    for x in range(0, PANORAMA_W, 12):
        g = rng.uniform(0.75, 1.15)
        cv2.circle(img, (x, int(rng.integers(132, 146))), int(rng.integers(10, 16)), (40 * g, 92 * g, 44 * g), -1)
    img[150:168] = (52, 100, 50)
    _perspective_floor(img, 168, (200, 198, 190), (170, 168, 162), PANORAMA_W / 2, 36)
    return img


_DRAW = {"street": _street, "corridor": _corridor, "plaza": _plaza, "park": _park, "station": _station,
         "mall": _mall, "parking": _parking, "campus": _campus}

_WARM_SEED = 7_000  # seeds the warm objects (lamps, windows, engines) of each night scene


def _thermal(rgb: np.ndarray, style: str) -> np.ndarray:
    """Night-time thermal view of a scene: cold dark surfaces, colder sky, a few warm objects."""
    rng = np.random.default_rng(_WARM_SEED + STYLES.index(style))
    lum = rgb @ np.array([0.299, 0.587, 0.114], np.float32)
    t = 22.0 + 0.26 * lum
    t = cv2.GaussianBlur(t, (0, 0), 2.0)
    for _ in range(int(rng.integers(4, 9))):
        x, y = int(rng.integers(0, PANORAMA_W)), int(rng.integers(10, 190))
        cv2.ellipse(t, (x, y), (int(rng.integers(4, 16)), int(rng.integers(3, 10))), 0, 0, 360,
                    float(rng.uniform(95, 150)), -1, cv2.LINE_AA)
    t = cv2.GaussianBlur(t, (0, 0), 1.5)
    return np.clip(t, 0, 255).astype(np.uint8)


@lru_cache(maxsize=32)
def panorama(style: str, modality: str) -> np.ndarray:
    """The scene of ``style`` as a read-only panorama: RGB ``H×W×3`` or thermal ``H×W`` (``modality="ir"``)."""
    if style not in _DRAW:
        raise ValueError(f"unknown background style {style!r}; known: {list(STYLES)}")
    rgb = _DRAW[style](np.random.default_rng(1_000 + STYLES.index(style)))
    out = _thermal(rgb, style) if modality == "ir" else np.clip(rgb, 0, 255).astype(np.uint8)
    out.setflags(write=False)
    return out


def background(style: str, modality: str, rng: np.random.Generator, size: tuple[int, int] = (256, 128)) -> np.ndarray:
    """A fresh, writable ``size`` (H, W) window of the style's panorama at a random offset."""
    pano = panorama(style, modality)
    h, w = size
    x = int(rng.integers(0, PANORAMA_W - w + 1))
    window = pano[PANORAMA_H - h:, x:x + w]
    if rng.random() < 0.5:
        return cv2.flip(window, 1)
    return window.copy()
