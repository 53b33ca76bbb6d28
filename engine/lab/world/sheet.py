"""A contact sheet of the world: identities × (views, resolution levels, modalities), to look at.

Rows are identities (outfit 0 of ``make_identity(seed, i, 1)``); columns are RGB HR front/back/side,
RGB front at mild, mid and ultra (shown enlarged with nearest-neighbour so their pixels stay visible),
IR front and the sketch. A header row names the columns and a panel beside each row prints its 18
attributes, so a reader can check that each one can be read off the pictures.
"""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from engine.kernel.atomic import atomic_write_bytes
from engine.lab.world.build import identity_looks
from engine.lab.world.cameras import IR_CAMERAS, RGB_CAMERAS
from engine.lab.world.identities import STREAM_IMAGE, make_identity, stream_rng
from engine.lab.world.render import render_sample

CELL_H, CELL_W = 256, 128
HEADER_H = 26
PANEL_W = 250
COLUMNS: tuple[tuple[str, str, str, str], ...] = (
    # label, modality, resolution, view
    ("RGB front", "rgb", "HR", "front"), ("RGB back", "rgb", "HR", "back"), ("RGB side", "rgb", "HR", "side"),
    ("mild 128x64", "rgb", "mild", "front"), ("mid 64x32", "rgb", "mid", "front"),
    ("ultra 32x16", "rgb", "ultra", "front"), ("IR", "ir", "HR", "front"), ("sketch", "sketch", "HR", "front"),
)
_FONT = cv2.FONT_HERSHEY_SIMPLEX


def _attribute_lines(attrs: dict[str, str]) -> list[str]:
    def v(key: str) -> str:
        return attrs.get(key, "-").replace("_", " ")

    hat = v("hat_type") + (f" ({v('hat_color')})" if attrs.get("hat_type", "none") != "none" else "")
    carry = v("carrying_type") + (f" ({v('carrying_color')})" if attrs.get("carrying_type", "none") != "none" else "")
    return [
        f"{v('gender')}, {v('age')}, skin {v('skin_color')}",
        f"height {v('height')}, {v('physique')}",
        f"hair {v('hairstyle')}, {v('hair_color')}",
        f"hat: {hat}",
        f"top: {v('top_color')} {v('top_type')}",
        f"     {v('top_length')}",
        f"bottom: {v('bottom_color')} {v('bottom_type')}",
        f"        {v('bottom_length')}",
        f"shoes: {v('shoe_type')}",
        f"carry: {carry}",
    ]


def _cell(img: np.ndarray) -> np.ndarray:
    if img.shape[:2] == (CELL_H, CELL_W):
        return img
    return cv2.resize(img, (CELL_W, CELL_H), interpolation=cv2.INTER_NEAREST)


def render_sheet(identities: int = 6, seed: int = 0) -> np.ndarray:
    """The contact sheet as an RGB array (header row + one row per identity)."""
    if isinstance(identities, bool) or not isinstance(identities, int) or identities < 1:
        raise ValueError(f"identities must be a positive integer, got {identities!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    width = CELL_W * len(COLUMNS) + PANEL_W
    header = np.full((HEADER_H, width, 3), 32, np.uint8)
    for c, (label, *_rest) in enumerate(COLUMNS):
        cv2.putText(header, label, (c * CELL_W + 4, 17), _FONT, 0.42, (235, 235, 235), 1, cv2.LINE_AA)
    cv2.putText(header, "attributes (outfit 0)", (len(COLUMNS) * CELL_W + 6, 17), _FONT, 0.42, (235, 235, 235), 1,
                cv2.LINE_AA)
    rows = [header]
    for i in range(identities):
        person = make_identity(seed, i, 1)
        attrs = person.outfits[0]
        look = identity_looks(seed, person)[0]
        cells = []
        for c, (_label, modality, resolution, view) in enumerate(COLUMNS):
            rng = stream_rng(STREAM_IMAGE, seed, i, 1000 + c)
            camera = {"rgb": RGB_CAMERAS[i % len(RGB_CAMERAS)], "ir": IR_CAMERAS[i % len(IR_CAMERAS)]}.get(
                modality, "sketch")
            cells.append(_cell(render_sample(attrs, modality, resolution, view, camera, rng, look, occlusion=False)))
        panel = np.full((CELL_H, PANEL_W, 3), 250, np.uint8)
        cv2.putText(panel, f"identity {i}", (8, 20), _FONT, 0.5, (20, 20, 20), 1, cv2.LINE_AA)
        for k, line in enumerate(_attribute_lines(attrs)):
            cv2.putText(panel, line, (8, 44 + 19 * k), _FONT, 0.42, (40, 40, 40), 1, cv2.LINE_AA)
        row = np.hstack(cells + [panel])
        row[-1:, :] = 200
        rows.append(row)
    sheet = np.vstack(rows)
    for c in range(1, len(COLUMNS) + 1):
        sheet[HEADER_H:, c * CELL_W - 1] = 200
    return sheet


def contact_sheet(out: Path, identities: int = 6, seed: int = 0) -> Path:
    """Write the contact sheet PNG to ``out`` (atomically) and return its path."""
    out = Path(out)
    if out.suffix.lower() != ".png":
        raise ValueError(f"out must be a .png file, got {out}")
    sheet = render_sheet(identities, seed)
    ok, buf = cv2.imencode(".png", cv2.cvtColor(sheet, cv2.COLOR_RGB2BGR))
    if not ok:
        raise OSError("could not encode the contact sheet")
    return atomic_write_bytes(out, buf.tobytes())
