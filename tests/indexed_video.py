"""Videos whose frames carry their own index, for checking that frame k read is frame k: ``write_indexed``
writes one (any OpenCV fourcc, or a GIF through Pillow) and ``index_of`` reads the index back from a frame.

The index is written in binary as a row of ``BITS`` white or dark cells, large enough to survive lossy codecs;
the frame below the cells is a plain grey (the player's tests draw boxes there)."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
from PIL import Image

BITS = 10
CELL = 16
WIDTH, HEIGHT = BITS * CELL, 96
GREY = 90


def indexed_frame(index: int) -> np.ndarray:
    """BGR frame ``index``: its bits as white cells on the top row, grey elsewhere."""
    image = np.full((HEIGHT, WIDTH, 3), GREY, np.uint8)
    image[:CELL] = 30
    for bit in range(BITS):
        if index >> bit & 1:
            image[:CELL, bit * CELL:(bit + 1) * CELL] = 250
    return image


def index_of(image: np.ndarray, scale: float = 1.0) -> int:
    """The index a frame (BGR or RGB; shrunk by ``scale``) carries."""
    row = int(CELL * scale / 2)
    return sum(1 << bit for bit in range(BITS) if image[row, int((bit + 0.5) * CELL * scale)].mean() > 140)


def write_indexed(path: Path, frames: int, fps: float = 25.0, fourcc: str = "MJPG") -> Path:
    """A video of ``frames`` indexed frames (``fourcc`` ignored for a .gif)."""
    if path.suffix.lower() == ".gif":
        images = [Image.fromarray(cv2.cvtColor(indexed_frame(i), cv2.COLOR_BGR2RGB)) for i in range(frames)]
        images[0].save(path, save_all=True, append_images=images[1:], duration=round(1000 / fps), loop=0)
        return path
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*fourcc), fps, (WIDTH, HEIGHT))
    assert writer.isOpened(), f"OpenCV cannot write {fourcc} to {path}"
    for index in range(frames):
        writer.write(indexed_frame(index))
    writer.release()
    return path
