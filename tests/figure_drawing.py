"""A drawn person figure with known regions, for the attribute tests."""

from __future__ import annotations

import cv2
import numpy as np

SKIN = (150, 180, 225)  # BGR, a light skin tone
HAIR = (25, 22, 22)

GREY_SCENE = (128, 128, 128)


def draw_figure(top=(40, 40, 200), bottom=(170, 90, 40), hair=HAIR, sleeves="short_sleeve", legs="long",
                unit=30.0, size=(240, 128), top_row=14, background=GREY_SCENE):
    """A flat-coloured standing figure on a plain background: (BGR image, uint8 mask, unit).

    Bands in head units ``u`` from ``top_row``: head 0–1 (hair over the top 0.45, skin face below), neck
    1–1.3, torso 1.3–3.8 with arms beside it (sleeves cover 1.35–2.6 for short, –3.7 for long), hands to
    4.2, legs 3.8–7.2 (trousers to 7.2 for long, to 5.6 for knee, to 4.5 for short; skin below), feet to 7.4.
    """
    h, w = size
    img = np.empty((h, w, 3), np.uint8)
    img[:] = background
    mask = np.zeros((h, w), np.uint8)
    cx = w / 2
    u = unit

    def rect(y0, y1, x0, x1, color):
        r0, r1, c0, c1 = int(round(top_row + y0 * u)), int(round(top_row + y1 * u)), int(round(x0)), int(round(x1))
        img[r0:r1, c0:c1] = color
        mask[r0:r1, c0:c1] = 255

    center = (int(round(cx)), int(round(top_row + 0.5 * u)))
    axes = (int(round(0.4 * u)), int(round(0.5 * u)))
    cv2.ellipse(img, center, axes, 0, 0, 360, SKIN, -1)
    cv2.ellipse(mask, center, axes, 0, 0, 360, 255, -1)
    cv2.ellipse(img, center, axes, 0, 180, 360, hair, -1)
    rect(0.0, 0.2, cx - 0.4 * u, cx + 0.4 * u, hair)
    rect(1.0, 1.3, cx - 0.15 * u, cx + 0.15 * u, SKIN)
    rect(1.3, 3.8, cx - 0.85 * u, cx + 0.85 * u, top)
    sleeve_end = {"sleeveless": 1.3, "short_sleeve": 2.6, "long_sleeve": 3.7}[sleeves]
    for side in (-1, 1):
        x0, x1 = sorted((cx + side * 0.85 * u, cx + side * 1.2 * u))
        rect(1.35, 4.2, x0, x1, SKIN)
        if sleeve_end > 1.35:
            rect(1.35, sleeve_end, x0, x1, top)
        lx0, lx1 = sorted((cx + side * 0.1 * u, cx + side * 0.65 * u))
        rect(3.8, 7.2, lx0, lx1, SKIN)
        hem = {"short": 4.5, "knee": 5.6, "long": 7.2}[legs]
        rect(3.8, hem, lx0, lx1, bottom)
        rect(7.2, 7.4, lx0, lx1, (20, 20, 20))
    return img, mask, u
