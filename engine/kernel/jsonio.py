"""Reading JSON from files and stored values with limits: one reader for every JSON input of Lineup.

Python's ``json`` recurses once per nesting level, so 3 KB of ``[`` raise an unnamed ``RecursionError``, and
it reads whatever size it is given. Here a document is checked before it is parsed: its size (``max_bytes``)
and its nesting depth (``max_depth``, counted over brackets outside strings), and every failure — too big,
too deep, not UTF-8, not JSON, not the expected kind of value — is a ``JsonInputError`` naming the input
(a file, or a file and line, or a table and row) and the problem. See docs/hardening.md.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

#: nesting deeper than this is refused (Lineup's own files nest fewer than 10 levels)
MAX_DEPTH = 64
#: the largest JSON document read whole (a JSON-lines file is read line by line, each line within it)
MAX_BYTES = 64 * 1024 * 1024

_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_OPEN_CLOSE = np.zeros(256, dtype=np.int8)
_OPEN_CLOSE[[ord("["), ord("{")]] = 1
_OPEN_CLOSE[[ord("]"), ord("}")]] = -1


class JsonInputError(ValueError):
    """A JSON input that cannot be used; the message names the input and the problem."""


def nesting_depth(raw: bytes) -> int:
    """The deepest bracket nesting of ``raw`` outside strings (0 for a scalar)."""
    structure = _STRING.sub(b'""', raw)
    steps = _OPEN_CLOSE[np.frombuffer(structure, dtype=np.uint8)]
    return int(np.cumsum(steps, dtype=np.int64).max(initial=0)) if steps.size else 0


def loads(raw: str | bytes, source: str, *, expect: type | tuple[type, ...] | None = None,
          max_depth: int = MAX_DEPTH, max_bytes: int = MAX_BYTES) -> Any:
    """Parse one JSON document read from ``source`` (words for the error: "gallery.json in /g", "items.jsonl
    line 7", "table notes, row 3"). ``expect``: the type(s) the top-level value must have."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else bytes(raw)
    if len(data) > max_bytes:
        raise JsonInputError(f"{source}: {len(data):,} bytes of JSON is more than the {max_bytes:,} allowed")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonInputError(f"{source}: not UTF-8 text (byte {exc.start})") from None
    depth = nesting_depth(data)
    if depth > max_depth:
        raise JsonInputError(f"{source}: JSON nested {depth} levels deep, more than the {max_depth} allowed")
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as exc:
        raise JsonInputError(f"{source}: not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})") \
            from None
    except (RecursionError, ValueError) as exc:
        raise JsonInputError(f"{source}: not valid JSON ({exc})") from None
    if expect is not None and not isinstance(value, expect):
        wanted = " or ".join(_kind(t) for t in (expect if isinstance(expect, tuple) else (expect,)))
        raise JsonInputError(f"{source}: expected a JSON {wanted}, found {_kind(type(value))}")
    return value


def read(path: str | Path, *, expect: type | tuple[type, ...] | None = None, max_depth: int = MAX_DEPTH,
         max_bytes: int = MAX_BYTES, source: str | None = None) -> Any:
    """Read and parse the JSON file at ``path``; its size is checked before anything is read. ``OSError``
    (a missing or unreadable file) passes through for the caller to word."""
    path = Path(path)
    name = source or str(path)
    with open(path, "rb") as fh:
        size = _size(fh)
        if size > max_bytes:
            raise JsonInputError(f"{name}: {size:,} bytes of JSON is more than the {max_bytes:,} allowed")
        raw = fh.read(max_bytes + 1)
    return loads(raw, name, expect=expect, max_depth=max_depth, max_bytes=max_bytes)


def _size(fh) -> int:
    try:
        return os.fstat(fh.fileno()).st_size
    except OSError:
        return 0


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _kind(kind: type) -> str:
    return {dict: "object", list: "array", str: "string", int: "integer", float: "number", bool: "true/false",
            type(None): "null"}.get(kind, kind.__name__)
