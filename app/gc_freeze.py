"""Keep the garbage collector's full passes short, so no thread, the UI thread included, waits long on one.

A full collection walks every tracked object of the process while holding the interpreter lock, so it stops
the UI thread too. With torch, Qt, SQLAlchemy and pyqtgraph imported that is over half a million objects and
about half a second, started by whichever thread happened to allocate (a worker reading a gallery's item list
was the usual one). Objects that live as long as the app (modules, classes, the libraries' tables, the loaded
model and its tokenizer) are moved out of the collector's sight with ``gc.freeze``: later full passes walk only
what was made since. Frozen objects are still freed by reference counting; only a reference cycle through
one of them is never collected.
"""

from __future__ import annotations

import gc


def freeze_startup_objects() -> None:
    """Collect once, then exempt every surviving object from later collections. For the UI thread before the
    window shows (the one collection is the long walk this avoids later)."""
    gc.collect()
    freeze_long_lived_objects()


def freeze_long_lived_objects() -> None:
    """Exempt every object alive now from later collections, without collecting first: ``gc.freeze`` only
    relinks the collector's lists, so it is safe from a worker that has just built something the app keeps,
    such as a model. (Counting the frozen objects, ``gc.get_freeze_count``, walks them all while holding the
    interpreter lock — tens of milliseconds with the app's libraries loaded — so it is left to tests.)"""
    gc.freeze()
