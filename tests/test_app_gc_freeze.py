"""Long-lived objects leave the garbage collector's walks (app/gc_freeze.py); later garbage is still collected."""

from __future__ import annotations

import gc
import weakref

from app.gc_freeze import freeze_long_lived_objects, freeze_startup_objects


class Node:
    def __init__(self) -> None:
        self.other: Node | None = None


def cycle() -> tuple[Node, Node]:
    a, b = Node(), Node()
    a.other, b.other = b, a
    return a, b


def test_frozen_objects_leave_the_collectors_walk_and_new_cycles_are_still_collected():
    kept = cycle()
    freeze_startup_objects()
    frozen = gc.get_freeze_count()
    try:
        assert frozen >= 2
        walked = {id(o) for o in gc.get_objects()}
        assert id(kept[0]) not in walked and id(kept[1]) not in walked  # a full pass no longer visits them
        later = cycle()
        assert id(later[0]) in {id(o) for o in gc.get_objects()}
        probe = weakref.ref(later[0])
        del later
        gc.collect()
        assert probe() is None  # a cycle made after the freeze is collected as before
        more = Node()
        freeze_long_lived_objects()
        assert gc.get_freeze_count() > frozen and id(more) not in {id(o) for o in gc.get_objects()}
    finally:
        gc.unfreeze()
