"""The next-question comparison of ``bench/next_question.py`` on the hand-labelled real people of the shared
clips: steps until the person is in the top 5 and until they are first, asking the suggested question, the
"add next" order or a random key, with a truthful witness and one wrong 10 % of the time.

Gallery: every clip of ``tests/data/footage/people.json`` in the folder ``LINEUP_FOOTAGE_DIR`` names (© Intel
Corporation and contributors, intel-iot-devkit/sample-videos, CC BY 4.0; ``--footage`` overrides it) ingested
into ONE gallery as ``lineup ingest`` does (``engine.ingest.ingest``: its default detector and tracker, the
shipped checkpoint's encoder, the shipped appearance network, attribute evidence from pixels, the checkpoint's
heads and the pretrained attribute network; the footage domain's weight and reliabilities), so every search
runs over the people of all clips.

Items → people: per clip, with ``bench/real_queries.py``'s rule (``their_items``: at a labelled frame of
people.json or ``tests/data/footage/boxes.json``, IoU ≥ 0.5 with the person's box, interpolated between
labelled frames at most 30 frames apart; an item at a frame without such a box joins the person through its
track). Tracks are matched within their clip only (track numbers repeat across clips). People with no item
are listed and left out of the comparison (no question can bring up a person the gallery does not hold).

Witness: the person's hand labels are what they know; a key the labels leave out is answered "don't know"
(hidden, without a step). Step 1 states the gender (or, unlabelled, the first labelled key of the "add next"
order). The questions, answers, strategies and step counting are ``bench/next_question.py``'s (``walk``):
a search that loses the person from its kept set, runs out of keys or reaches ``--max-steps`` counts
``--max-steps`` + 1. Means over the people with 95 % bootstrap intervals; beside them, person by person, the
suggested question's steps minus each other strategy's (same interval), why each walk ended (a walk goes on
until the person is first) and, before any question, the chance that a random order of the gallery puts one of
the person's items in the top 5 / first.

    LINEUP_FOOTAGE_DIR=DIR HF_HUB_OFFLINE=1 .venv/bin/python bench/next_question_footage.py [--stride 1] \\
        [--keep DIR] [--max-steps 8] [--json out.json]

Not run by the tests (``tests/test_bench_next_question_footage.py`` checks the matching).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from collections import Counter
from math import comb
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benches beside this one

import numpy as np  # noqa: E402
from footage_folder import footage_folder  # noqa: E402
from next_question import (  # noqa: E402
    SEED,
    STRATEGIES,
    TOP,
    WITNESSES,
    Target,
    first_key,
    interval,
    strategy_rng,
    walk,
)
from real_queries import DENSE, PEOPLE, labelled_boxes, their_items  # noqa: E402

from engine.index import Gallery  # noqa: E402
from engine.retrieval.search.opening import open_search, query_encoder  # noqa: E402

TOPS = (TOP, 1)


def pool(footage: Path, gallery: Path, clips: list[str], checkpoint: Path, model, stride: int) -> dict:
    """Ingest ``clips`` of ``footage`` into the one gallery folder ``gallery`` (resumable: a clip already done
    there is not read again); clip → its ingest seconds."""
    from engine.ingest import IngestOptions, ModelEncoder, ingest
    from engine.retrieval.evidence.ranking import DomainWeights

    encoder, seconds = ModelEncoder(model), {}
    for clip in clips:
        summary = ingest(footage / clip, gallery, encoder, options=IngestOptions(stride=stride),
                         weights=DomainWeights.of_checkpoint(checkpoint))
        seconds[clip] = round(summary.seconds, 1)
    return seconds


def people_rows(items: list, people: dict, dense: dict | None) -> dict[tuple[str, str], list[int]]:
    """(clip, person) → the rows of ``items`` (gallery order) that are that labelled person, matched clip by clip
    with ``their_items``; an item's clip is the file name of its source."""
    rows_of = {item.id: row for row, item in enumerate(items)}
    by_clip: dict[str, list] = {}
    for item in items:
        by_clip.setdefault(Path(item.source).name, []).append(item)
    out = {}
    for clip, labelled in people["clips"].items():
        for person in labelled:
            theirs = their_items(by_clip.get(clip, []), labelled_boxes(clip, person, people, dense))
            out[(clip, person)] = sorted(rows_of[i] for i in theirs)
    return out


def summarise(steps: list[int | None], max_steps: int, rng: np.random.Generator) -> dict:
    """Mean steps (a miss counts ``max_steps`` + 1) and share found, with 95 % bootstrap intervals."""
    counted = [max_steps + 1 if s is None else s for s in steps]
    mean, low, high = interval(counted, rng)
    hit, hit_low, hit_high = interval([float(s is not None) for s in steps], rng)
    return {"mean_steps": round(mean, 2), "ci95": [round(low, 2), round(high, 2)], "found": round(hit, 3),
            "found_ci95": [round(hit_low, 3), round(hit_high, 3)], "steps": counted}


def paired(first: list[int], second: list[int], rng: np.random.Generator) -> dict:
    """Mean of ``first`` − ``second`` over the same people, with its 95 % bootstrap interval."""
    mean, low, high = interval([a - b for a, b in zip(first, second, strict=True)], rng)
    return {"mean": round(mean, 2), "ci95": [round(low, 2), round(high, 2)]}


def chance(items: int, theirs: list[int], n: int) -> float | None:
    """Mean over the people of the chance that a random order of ``items`` puts one of their ``theirs`` items
    among its first ``n``."""
    if not theirs:
        return None
    return round(float(np.mean([1 - comb(items - m, n) / comb(items, n) for m in theirs])), 3)


def compare(gallery: Gallery, encoder, targets: dict[str, Target], max_steps: int) -> dict:
    """witness/strategy → per first-n of ``TOPS`` the summary of the steps over ``targets`` and why the walks
    ended (they go on until the target is first); per witness and first-n, the suggested question's steps minus
    each other strategy's, person by person."""
    rng = np.random.default_rng(SEED)
    results: dict = {}
    for witness, wrong in WITNESSES.items():
        for strategy in STRATEGIES:
            draws, ends = strategy_rng(strategy, wrong), []
            walks = [walk(open_search(gallery, encoder), target, strategy, wrong, max_steps, draws, tops=TOPS,
                          ends=ends) for target in targets.values()]
            results[f"{witness}/{strategy}"] = {f"top{n}": summarise([w[n] for w in walks], max_steps, rng)
                                                for n in TOPS}
            results[f"{witness}/{strategy}"]["ended"] = dict(Counter(ends))
        for n in TOPS:
            ours = results[f"{witness}/suggested"][f"top{n}"]["steps"]
            for other in STRATEGIES[1:]:
                results[f"{witness}/suggested-{other}"] = results.get(f"{witness}/suggested-{other}", {})
                results[f"{witness}/suggested-{other}"][f"top{n}"] = paired(
                    ours, results[f"{witness}/{other}"][f"top{n}"]["steps"], rng)
    return results


def run(footage: Path, folder: Path, stride: int, max_steps: int, dense_boxes: bool) -> dict:
    from engine.retrieval.models.discovery import default_checkpoint, load_model

    started = time.perf_counter()
    people = json.loads(PEOPLE.read_text(encoding="utf-8"))
    dense = json.loads(DENSE.read_text(encoding="utf-8")) if dense_boxes and DENSE.is_file() else None
    checkpoint = default_checkpoint()
    model = load_model(checkpoint, device="cpu")
    ingest_seconds = pool(footage, folder, list(people["clips"]), checkpoint, model, stride)
    gallery = Gallery.open(folder)
    items = list(gallery.iter_items())
    matched = people_rows(items, people, dense)
    targets = {f"{clip}:{person}": Target.of_rows(gallery, people["clips"][clip][person]["attributes"], rows)
               for (clip, person), rows in matched.items()
               if rows and first_key(people["clips"][clip][person]["attributes"]) is not None}
    owners = Counter(row for rows in matched.values() for row in rows)
    report = {"seed": SEED, "gallery_items": len(items), "people": len(matched), "people_compared": len(targets),
              "people_without_items": [f"{c}:{p}" for (c, p), rows in matched.items() if not rows],
              "items_of_labelled_people": len(owners),
              "items_of_two_or_more_people": sum(count > 1 for count in owners.values()),
              "items_per_person": {f"{c}:{p}": len(rows) for (c, p), rows in matched.items()},
              "labelled_keys_per_person": {name: len(t.truth) for name, t in targets.items()},
              "chance": {f"top{n}": chance(len(items), [len(t.rows) for t in targets.values()], n) for n in TOPS},
              "stride": stride, "dense_boxes": dense is not None, "max_steps": max_steps, "tops": list(TOPS),
              "ingest_seconds": ingest_seconds}
    if targets:
        encoder = query_encoder(model, checkpoint)
        report["targets"] = list(targets)
        report["results"] = compare(gallery, encoder, targets, max_steps)
    report["seconds"] = round(time.perf_counter() - started, 1)
    return report


def lines(report: dict) -> list[str]:
    out = [f"{report['gallery_items']} items from {len(report['ingest_seconds'])} clips; {report['people']} labelled "
           f"people, {report['people_compared']} with items ({report['items_of_labelled_people']} items theirs); "
           f"no item: {', '.join(report['people_without_items']) or 'none'}; chance before any question: "
           + ", ".join(f"{k} {v}" for k, v in report["chance"].items())]
    for name, result in report.get("results", {}).items():
        parts = []
        for n in TOPS:
            entry = result[f"top{n}"]
            low, high = entry["ci95"]
            if "mean_steps" in entry:
                parts.append(f"top {n}: steps {entry['mean_steps']:.2f} [{low:.2f}, {high:.2f}] found "
                             f"{entry['found']:.2f}")
            else:
                parts.append(f"top {n}: difference {entry['mean']:+.2f} [{low:+.2f}, {high:+.2f}]")
        ended = ", ".join(f"{why} {count}" for why, count in sorted(result.get("ended", {}).items()))
        out.append(f"{name:>27}  " + "   ".join(parts) + (f"   ended: {ended}" if ended else ""))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--footage", type=Path, help="folder of the real clips (default: LINEUP_FOOTAGE_DIR)")
    parser.add_argument("--stride", type=int, default=1, help="ingest every STRIDE-th frame (default 1)")
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--no-dense", action="store_true", help="match only people.json's boxes, not boxes.json")
    parser.add_argument("--keep", type=Path, help="keep the pooled gallery in this folder (reused when run again)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.stride < 1 or args.max_steps < 1:
        parser.error(f"--stride and --max-steps must be at least 1, got {args.stride} and {args.max_steps}")
    footage = footage_folder(args.footage)
    if args.keep is not None:
        report = run(footage, args.keep, args.stride, args.max_steps, not args.no_dense)
    else:
        with tempfile.TemporaryDirectory(prefix="next-question-footage-") as folder:
            report = run(footage, Path(folder) / "gallery", args.stride, args.max_steps, not args.no_dense)
    print("\n".join(lines(report)))
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
