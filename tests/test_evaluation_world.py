"""A tiny hand-written world for the evaluation tests, and a test double of the model.

Every image is one flat grey value that encodes its identity (``paint_value``), so a test double can read
the identity back from the pixels; descriptions come from the real generator so that the benchmark
builder works on this world as on a rendered one.
"""

from __future__ import annotations

import cv2
from evaluation_data import SHOTS, paint_value, write_world

from engine.ingest.datasets.world import read_world


def test_world_writer_makes_a_readable_world(tmp_path):
    records = write_world(tmp_path, identities=2)
    world = read_world(tmp_path)
    assert len(world) == len(records) == 2 * (2 * len(SHOTS) + 1)
    assert {s.modality for s in world} == {"rgb", "ir", "sketch"}
    image = cv2.imread(str(world.samples[-1].image))
    assert int(image[0, 0, 0]) == paint_value(1)
