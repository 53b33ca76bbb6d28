"""The built-in demo: a synthetic world cached in the user data folder (platformdirs)."""

from __future__ import annotations

from pathlib import Path

from platformdirs import user_data_dir

from engine.kernel import jsonio

DEMO_SEED = 20261129
DEMO_IDENTITIES = 300
DEMO_IMAGES_PER_IDENTITY = 8


def data_dir() -> Path:
    """Lineup's per-user data folder (created on demand)."""
    path = Path(user_data_dir("lineup", appauthor=False))
    path.mkdir(parents=True, exist_ok=True)
    return path


def demo_world_dir() -> Path:
    return data_dir() / "demo" / f"world-{DEMO_SEED}-{DEMO_IDENTITIES}x{DEMO_IMAGES_PER_IDENTITY}"


def demo_world_ready(world: Path | None = None) -> bool:
    world = world or demo_world_dir()
    meta = world / "world.json"
    if not meta.exists():
        return False
    try:
        info = jsonio.read(meta, expect=dict)
    except (OSError, ValueError):
        return False
    return (world / "manifest.jsonl").exists() and info.get("seed") == DEMO_SEED
