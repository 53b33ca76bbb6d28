"""Paths read from data files stay inside the folder they belong to.

A manifest, annotation file, ``gallery.json`` or evidence store names files relative to an allowed root (the
dataset root the user gave, the world folder, the gallery folder). ``contained(root, name)`` resolves the name
against the root, following symbolic links, and refuses it with ``PathEscapeError`` when the result lies
outside the root: ``..`` climbing out, an absolute path, or a link inside the root that points elsewhere.
"""

from __future__ import annotations

from pathlib import Path


class PathEscapeError(ValueError):
    """A path from a data file resolves outside its allowed root; names the path, where it leads and the root."""

    def __init__(self, name: str, resolved: Path, root: Path, what: str, problem: str | None = None) -> None:
        super().__init__(f"{what} {name!r} {problem or f'resolves to {resolved}, outside the allowed folder {root}'}")
        self.name = name
        self.resolved = resolved
        self.root = root


def contained(root: str | Path, name: str | Path, what: str = "path") -> Path:
    """``root / name`` resolved (symbolic links followed); ``PathEscapeError`` when it is not inside ``root``.

    ``what`` says in the error what the name is ("image", "view file", ...)."""
    base = Path(root).resolve()
    if "\x00" in str(name):  # the operating system refuses such names; resolving would raise a bare ValueError
        raise PathEscapeError(str(name), base, base, what, "holds a NUL byte, which no file name can hold")
    resolved = (base / name).resolve()
    if not resolved.is_relative_to(base):
        raise PathEscapeError(str(name), resolved, base, what)
    return resolved


def is_contained(root: str | Path, name: str | Path) -> bool:
    """Whether ``root / name`` resolves inside ``root`` (see ``contained``)."""
    try:
        contained(root, name)
    except PathEscapeError:
        return False
    return True
