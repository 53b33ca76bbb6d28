"""The values the parser's steps find for each attribute (``Candidates``), and the one each attribute keeps: the
highest priority, then the first found (docs/text-conventions.md)."""

from __future__ import annotations


class Candidates:
    """Candidate values per attribute key, each with its priority, the order it was found and its character span."""

    def __init__(self) -> None:
        #: key → list of (priority, order, value, start, end)
        self.by_key: dict[str, list[tuple[int, int, str, int, int]]] = {}
        self._found = 0

    def add(self, key: str, value: str, start: int, end: int, priority: int = 1) -> None:
        self._found += 1
        self.by_key.setdefault(key, []).append((priority, self._found, value, start, end))

    def best(self) -> dict[str, tuple[str, int, int]]:
        """key → (value, start, end) of its highest-priority candidate, the earliest among equals."""
        spans: dict[str, tuple[str, int, int]] = {}
        for key, options in self.by_key.items():
            best = min(options, key=lambda c: (-c[0], c[1]))
            spans[key] = (best[2], best[3], best[4])
        return spans
