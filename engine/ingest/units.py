"""Work units of an ingest spread over workers (``engine.ingest.cluster``, docs/scaling.md): every video, image
sequence and crop folder is one unit (a tracker follows people through a whole source, so a source is not cut);
a built world is cut into shards of ``shard`` consecutive images, each a ``WorldShard``.

A shard has a done marker of its own (``engine.ingest.markers``), keyed by the world's key and its image range,
so a resumed ingest skips the shards already committed; the world's own marker is written once its last shard
is committed, and an ingest in one process then finds the world done as well.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from engine.ingest.errors import IngestError, SourceSkipped
from engine.ingest.sources import Source, WorldSource

DEFAULT_WORLD_SHARD = 256  # images of a built world per work unit

_samples: dict[tuple[str, str], tuple] = {}  # the last world's samples read in this process, by (root, key)


@dataclass
class WorldShard(WorldSource):
    """Images ``start`` to ``stop`` (manifest order, blank lines not counted) of the built world at ``root``."""

    start: int = 0
    stop: int = 0
    _shard_key: str | None = field(default=None, repr=False)

    @property
    def world_key(self) -> str:
        return WorldSource.key.fget(self)

    @property
    def key(self) -> str:
        if self._shard_key is None:
            text = f"world shard\n{self.world_key}\n{self.start}:{self.stop}"
            self._shard_key = hashlib.sha256(text.encode()).hexdigest()
        return self._shard_key

    def samples(self):
        """This shard's samples; a worker reading several shards of one world parses its manifest once."""
        cache_key = (str(self.root), self.world_key)
        if cache_key not in _samples:
            _samples.clear()
            _samples[cache_key] = tuple(super().samples())
        return _samples[cache_key][self.start : self.stop]

    def expected_frames(self, stride: int) -> int:
        return self.stop - self.start


@dataclass(frozen=True)
class WorkUnit:
    """One unit of work: ``source`` (a whole source, or one shard of a world), the index of the source it belongs
    to among those found, and which of that source's ``parts`` it is."""

    source: Source
    origin: int
    part: int = 0
    parts: int = 1


def work_units(sources: list[Source], shard: int = DEFAULT_WORLD_SHARD, done: set[str] = frozenset()) -> list[WorkUnit]:
    """The units of ``sources`` in their order: worlds cut into shards of ``shard`` images, except those whose
    key is in ``done`` (their done marker is found whole) and those whose manifest cannot be read (one unit each,
    reported when read)."""
    if shard < 1:
        raise IngestError(f"world shard size must be at least 1 image, got {shard}")
    units: list[WorkUnit] = []
    for origin, source in enumerate(sources):
        if not isinstance(source, WorldSource) or isinstance(source, WorldShard):
            units.append(WorkUnit(source, origin))
            continue
        try:
            whole = source.key in done
        except SourceSkipped:
            whole = True
        size = source.expected_frames(1)
        if whole or size <= shard:
            units.append(WorkUnit(source, origin))
            continue
        cuts = list(range(0, size, shard))
        for part, start in enumerate(cuts):
            units.append(WorkUnit(WorldShard(Path(source.root), start=start, stop=min(size, start + shard)), origin,
                                  part, len(cuts)))
    return units
