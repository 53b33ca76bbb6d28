"""Contact sheet: layout (header + one row per identity, eight image columns + attribute panel)."""

import cv2
import numpy as np
import pytest

from engine.lab.world.sheet import CELL_H, CELL_W, COLUMNS, HEADER_H, PANEL_W, contact_sheet, render_sheet


def test_contact_sheet_layout(tmp_path):
    path = contact_sheet(tmp_path / "sub" / "sheet.png", identities=2, seed=3)
    img = cv2.imread(str(path))
    assert img.shape == (HEADER_H + 2 * CELL_H, len(COLUMNS) * CELL_W + PANEL_W, 3)
    assert np.array_equal(img[..., ::-1], render_sheet(2, 3)), "same seed, same sheet"
    sketch = img[HEADER_H:HEADER_H + CELL_H, 7 * CELL_W:8 * CELL_W - 1]
    assert (sketch >= 240).mean() > 0.6
    ir = img[HEADER_H:HEADER_H + CELL_H, 6 * CELL_W:7 * CELL_W - 1].astype(int)
    assert np.abs(ir[..., 0] - ir[..., 2]).max() == 0
    assert not list(path.parent.glob(".*tmp"))


@pytest.mark.parametrize("kwargs,pattern", [
    ({"out": "sheet.jpg"}, r"\.png"), ({"identities": 0}, "identities"), ({"seed": -2}, "seed")])
def test_contact_sheet_bad_arguments(tmp_path, kwargs, pattern):
    args = {"out": "sheet.png", "identities": 1, "seed": 0}
    args.update(kwargs)
    args["out"] = tmp_path / args["out"]
    with pytest.raises(ValueError, match=pattern):
        contact_sheet(**args)
