"""One JSON → dataclass-field converter, shared by model configs and training settings."""

from __future__ import annotations

import math
import types
import typing
from collections.abc import Callable
from typing import Any


def coerce_value(value: Any, kind: Any, path: str, describe: Callable[[str], str],
                 error: type[Exception]) -> Any:
    """A JSON value as a dataclass field of type ``kind`` (bool, int, float, str, ``X | None``, a tuple of
    them), checked: ``error`` names the value as ``describe(path)`` (``path[i]`` for a tuple's entries). The
    one converter behind model configs and training settings."""
    where = describe(path)
    origin = typing.get_origin(kind)
    if origin is tuple:
        args = typing.get_args(kind)
        if not isinstance(value, list | tuple):
            raise error(f"{where} must be a list, got {value!r}")
        inner = [args[0]] * len(value) if len(args) == 2 and args[1] is Ellipsis else list(args)
        if len(value) != len(inner):
            raise error(f"{where} must have {len(inner)} entries, got {len(value)}")
        return tuple(coerce_value(v, k, f"{path}[{i}]", describe, error)
                     for i, (v, k) in enumerate(zip(value, inner, strict=True)))
    if origin in (typing.Union, types.UnionType):
        others = [arg for arg in typing.get_args(kind) if arg is not type(None)]
        if len(others) != 1 or len(typing.get_args(kind)) != 2:
            raise error(f"{where} has an unsupported type")
        return None if value is None else coerce_value(value, others[0], path, describe, error)
    if kind is bool:
        if not isinstance(value, bool):
            raise error(f"{where} must be true or false, got {value!r}")
        return value
    if kind is int:
        if isinstance(value, bool) or not isinstance(value, int):
            raise error(f"{where} must be an integer, got {value!r}")
        return value
    if kind is float:
        if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
            raise error(f"{where} must be a number, got {value!r}")
        return float(value)
    if kind is str:
        if not isinstance(value, str):
            raise error(f"{where} must be a string, got {value!r}")
        return value
    raise error(f"{where} has an unsupported type {kind!r}")
