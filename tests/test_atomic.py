"""Atomic writes: whole new file or the old one, no temporary file left behind, mode kept."""

from __future__ import annotations

import json
import os
import stat

import pytest

from engine.kernel.atomic import atomic_target, atomic_write_bytes, atomic_write_json, atomic_write_text


def test_writes_replace_the_target_and_leave_no_temporary_file(tmp_path):
    target = tmp_path / "sub" / "file.bin"
    assert atomic_write_bytes(target, b"one") == target
    atomic_write_bytes(target, b"two")
    assert target.read_bytes() == b"two"
    atomic_write_text(tmp_path / "t.txt", "grüße\n")
    assert (tmp_path / "t.txt").read_bytes() == "grüße\n".encode()
    atomic_write_json(tmp_path / "d.json", {"a": [1, 2]})
    assert (tmp_path / "d.json").read_text(encoding="utf-8") == '{"a":[1,2]}'
    atomic_write_json(tmp_path / "d.json", {"a": 1}, indent=2)
    assert json.loads((tmp_path / "d.json").read_text(encoding="utf-8")) == {"a": 1}
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["d.json", "file.bin", "sub", "t.txt"]


def test_a_replaced_file_keeps_its_mode_and_a_new_one_follows_the_umask(tmp_path):
    kept = tmp_path / "kept"
    kept.write_bytes(b"old")
    os.chmod(kept, 0o640)
    atomic_write_bytes(kept, b"new")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    mask = os.umask(0)
    os.umask(mask)
    fresh = atomic_write_bytes(tmp_path / "fresh", b"x")
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o666 & ~mask


def test_atomic_target_gives_a_sibling_name_and_cleans_up_on_failure(tmp_path):
    target = tmp_path / "image.png"
    target.write_bytes(b"old")
    with pytest.raises(RuntimeError, match="writer failed"), atomic_target(target, suffix=".png") as tmp:
        assert tmp.parent == tmp_path and tmp.name.startswith(".image.png.") and tmp.suffix == ".png"
        tmp.write_bytes(b"half")
        raise RuntimeError("writer failed")
    assert target.read_bytes() == b"old"
    assert [p.name for p in tmp_path.iterdir()] == ["image.png"]
    with atomic_target(target) as tmp:
        assert tmp.name.endswith(".tmp")
        tmp.write_bytes(b"new")
    assert target.read_bytes() == b"new"
    assert [p.name for p in tmp_path.iterdir()] == ["image.png"]
