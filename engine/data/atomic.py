"""Where ``engine.atomic`` used to live; kept so that existing imports of ``engine.data.atomic`` still work."""

from engine.atomic import atomic_target, atomic_write_bytes, atomic_write_json, atomic_write_text

__all__ = ["atomic_target", "atomic_write_bytes", "atomic_write_json", "atomic_write_text"]
