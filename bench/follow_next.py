"""How often "Follow to the next camera" proposes the person's next sighting, on the demo world gallery.

For every identity the gallery's ground truth shows on at least three cameras, each of its sightings (its items
grouped by ``group_sightings`` with the default gap) is followed (``follow_query``: find similar over the whole
gallery, other cameras, ``--window`` seconds before and after; ``proposals``: the first five candidate
sightings). A follow counts for

- rate@1 / rate@5: the identity's NEXT sighting in time on another camera (the first to start after the followed
  one ends, within the window) is among the items of the first / the first five proposals; followed sightings
  without such a next sighting are left out of this rate;
- time@5 (a diagnostic): the earliest proposal "after" the followed sighting among the first five is the next
  sighting, i.e. what reading the five proposals in time order gives;
- any@1 / any@5: the first proposal / some proposal of the first five holds an item of the same identity;
  followed sightings with no same-identity sighting on another camera within the window (either side) are
  left out.

Rates come with a 95 % Wilson interval. Also printed: the view the step searched, the seconds per follow (step
and proposals), and what bounds the rates: the number of candidate sightings per follow (other cameras within
the window), and how far the next sighting lies from the followed one. Not run by the tests.

    .venv/bin/python bench/follow_next.py [--gallery PATH] [--window 43200] [--json]
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.index import Gallery  # noqa: E402
from engine.index.sightings import DEFAULT_GAP, Sighting, group_sightings  # noqa: E402
from engine.lab.demo import data_dir  # noqa: E402
from engine.retrieval.search import NoCandidatesError, SearchSession  # noqa: E402
from engine.retrieval.search.follow import DEFAULT_PROPOSALS, DEFAULT_WINDOW, follow_query, proposals  # noqa: E402

READY_MARKER = "demo-ready.json"  # what app.demo_gallery writes once the demo gallery is complete
MIN_CAMERAS = 3
Z95 = 1.959963984540054


def demo_gallery() -> Path:
    """The ready demo gallery in the user data folder (the newest, when several models built one)."""
    found = sorted((data_dir() / "demo").glob("gallery-*/" + READY_MARKER), key=lambda p: p.stat().st_mtime)
    if not found:
        raise SystemExit("no demo gallery found: run `lineup demo` (or `lineup app` once), or give --gallery PATH")
    return found[-1].parent


def wilson(hits: int, total: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of hits/total."""
    if total == 0:
        return math.nan, math.nan
    p = hits / total
    centre = (p + Z95 ** 2 / (2 * total)) / (1 + Z95 ** 2 / total)
    half = Z95 * math.sqrt(p * (1 - p) / total + Z95 ** 2 / (4 * total ** 2)) / (1 + Z95 ** 2 / total)
    return max(0.0, centre - half), min(1.0, centre + half)


def rate(hits: int, total: int) -> dict:
    low, high = wilson(hits, total)
    return {"hits": hits, "of": total, "rate": hits / total if total else math.nan, "ci95": [low, high]}


def next_sighting(followed: Sighting, others: list[Sighting], window: float) -> Sighting | None:
    """The first sighting on another camera that starts after ``followed`` ends, within ``window``."""
    later = [s for s in others if s.camera != followed.camera and followed.end < s.start <= followed.end + window]
    return min(later, key=lambda s: s.start) if later else None


def near(followed: Sighting, others: list[Sighting], window: float) -> list[Sighting]:
    """The sightings on other cameras that overlap ``followed`` widened by ``window``."""
    return [s for s in others if s.camera != followed.camera and s.end >= followed.start - window
            and s.start <= followed.end + window]


def measure(gallery: Gallery, window: float) -> dict:
    by_identity: dict[str, list] = defaultdict(list)
    for item in gallery.iter_items():
        if item.identity is not None and item.camera is not None and item.time is not None:
            by_identity[item.identity].append(item)
    followed_ids = sorted(p for p, items in by_identity.items() if len({i.camera for i in items}) >= MIN_CAMERAS)
    all_sightings = group_sightings([i for items in by_identity.values() for i in items])
    per_camera_window = []
    counts = {"next1": 0, "next5": 0, "time5": 0, "next_total": 0, "any1": 0, "any5": 0, "any_total": 0}
    seconds, gaps, views = [], [], defaultdict(int)
    starts = sorted((s.start, s.camera) for s in all_sightings)
    for identity in followed_ids:
        sightings = group_sightings(by_identity[identity], gap=DEFAULT_GAP)
        for sighting in sightings:
            started = time.perf_counter()
            try:
                step = SearchSession(gallery).step(follow_query(gallery, sighting, window=window))
            except NoCandidatesError:  # no item on another camera within the window: no proposal
                found, view = [], "none (no candidates)"
            else:
                found, view = proposals(step, gallery, count=DEFAULT_PROPOSALS), step.view
            seconds.append(time.perf_counter() - started)
            views[view] += 1
            low, high = sighting.start - window, sighting.end + window
            per_camera_window.append(sum(1 for t, c in starts if low <= t <= high and c != sighting.camera))
            proposed = [set(p.sighting.items) for p in found]
            target = next_sighting(sighting, sightings, window)
            if target is not None:
                counts["next_total"] += 1
                gaps.append(target.start - sighting.end)
                wanted = set(target.items)
                counts["next1"] += bool(proposed and proposed[0] & wanted)
                counts["next5"] += any(p & wanted for p in proposed)
                after = [p for p in found if p.direction == "after"]
                first = min(after, key=lambda p: p.sighting.start) if after else None
                counts["time5"] += bool(first is not None and set(first.sighting.items) & wanted)
            if near(sighting, sightings, window):
                counts["any_total"] += 1
                same = [any(gallery.item(i).identity == identity for i in p) for p in proposed]
                counts["any1"] += bool(same and same[0])
                counts["any5"] += any(same)
    follows = len(seconds)
    return {
        "gallery": str(gallery.root), "items": len(gallery), "window_s": window, "gap_s": DEFAULT_GAP,
        "identities": len(followed_ids), "sightings_followed": follows, "views": dict(views),
        "rate_at_1": rate(counts["next1"], counts["next_total"]),
        "rate_at_5": rate(counts["next5"], counts["next_total"]),
        "time_at_5": rate(counts["time5"], counts["next_total"]),
        "any_at_1": rate(counts["any1"], counts["any_total"]),
        "any_at_5": rate(counts["any5"], counts["any_total"]),
        "seconds_per_follow": {"mean": statistics.fmean(seconds) if seconds else math.nan,
                               "median": statistics.median(seconds) if seconds else math.nan},
        "candidate_sightings_in_window": {"median": statistics.median(per_camera_window) if follows else math.nan,
                                          "max": max(per_camera_window, default=0)},
        "hours_to_next_sighting": {"median": statistics.median(gaps) / 3600 if gaps else math.nan,
                                   "max": max(gaps, default=math.nan) / 3600},
    }


def show(result: dict) -> None:
    print(f"gallery {result['gallery']} ({result['items']:,} items), window {result['window_s'] / 3600:g} h, "
          f"gap {result['gap_s']:g} s, views {result['views']}")
    print(f"identities on ≥ {MIN_CAMERAS} cameras: {result['identities']}, sightings followed: "
          f"{result['sightings_followed']}")
    for name, label in (("rate_at_1", "next sighting first (rate@1)"), ("rate_at_5", "next sighting in top 5 "
                        "(rate@5)"), ("time_at_5", "earliest 'after' proposal of the five is the next"),
                        ("any_at_1", "a same-identity sighting first"),
                        ("any_at_5", "any same-identity sighting in top 5")):
        r = result[name]
        print(f"  {label}: {r['hits']}/{r['of']} = {r['rate']:.3f}  (95 % CI {r['ci95'][0]:.3f}–{r['ci95'][1]:.3f})")
    s = result["seconds_per_follow"]
    print(f"seconds per follow: mean {s['mean']:.4f}, median {s['median']:.4f}")
    c, h = result["candidate_sightings_in_window"], result["hours_to_next_sighting"]
    print(f"candidate sightings per follow (other cameras, in the window): median {c['median']:g}, max {c['max']}")
    print(f"hours from a followed sighting to the next: median {h['median']:.2f}, max {h['max']:.2f}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--gallery", type=Path, help="a gallery folder with identities (default: the demo gallery)")
    parser.add_argument("--window", type=float, default=DEFAULT_WINDOW, help="seconds before and after a sighting "
                        "(default 43200: 12 h, one world day)")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    args = parser.parse_args(argv)
    gallery = Gallery.open(args.gallery or demo_gallery())
    result = measure(gallery, args.window)
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        show(result)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
