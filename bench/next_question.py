"""Asking the witness the suggested next question vs. the ontology's order vs. a random key: steps until the target
is in the top 5, on a built world the tests and other benches never use (seed 86421), with the shipped checkpoint.

For each hidden identity one of its RGB items is the sighting the witness saw; its ground-truth attributes are
what the witness knows. Step 1 is the witness's first words (the gender, "The person is a man"). Each later step
asks one key, chosen by the strategy among the keys the description has not stated (and the witness has not
said "don't know" to), and appends the answer's sentence (``app.state.suggestions.suggestion_sentence``, the
sentence the app's answer buttons append) to the description; the whole description is the next step's text,
run on the kept candidates (ρ = 0.5). A key the sighting has no value for (the colour of a hat it does not wear)
is answered "don't know" and hidden, without a step. Strategies:

- ``suggested``: the first of ``engine.retrieval.search.questions.questions_after`` (expected information gain);
- ``ontology``: the "add next" order (``engine.retrieval.text.parser.SUGGESTION_ORDER``);
- ``random``: a key drawn uniformly from the open ones (seeded).

Witnesses: ``truthful`` answers the true value; ``noisy`` answers another value (uniform) 10 % of the time.
"Steps" counts the search steps until an item of the target identity is among the step's first 5; a search
that loses the target from its kept set or runs ``--max-steps`` steps without it counts as ``--max-steps`` + 1
(and is reported as not found). Means with 95 % bootstrap intervals over identities.

Also, for the ``suggested`` strategy: the share of its questions whose key is among the three open keys whose
TRUE values (ground truth) split the kept candidates most evenly (highest entropy of the true values).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/next_question.py [--identities 120] [--images 4] \\
        [--cache DIR] [--max-steps 8] [--json out.json]

The same comparison on the hand-labelled real people of the shared clips: ``bench/next_question_footage.py``,
which imports the witness and the walk from here (``walk``, ``Target``).

Not run by the tests.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import NamedTuple

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np  # noqa: E402

from app.state.suggestions import append_sentence, suggestion_sentence  # noqa: E402
from engine.index import Gallery  # noqa: E402
from engine.kernel.ontology import ONTOLOGY  # noqa: E402
from engine.retrieval.evidence.next_question import open_keys  # noqa: E402
from engine.retrieval.search.errors import NoCandidatesError  # noqa: E402
from engine.retrieval.search.opening import open_search, query_encoder  # noqa: E402
from engine.retrieval.search.questions import questions_after, stated_in_chain  # noqa: E402
from engine.retrieval.text.parser import SUGGESTION_ORDER  # noqa: E402

SEED = 86421  # never used elsewhere in the repository (tests, benches, docs)
TOP = 5
STRATEGIES = ("suggested", "ontology", "random")
WITNESSES = {"truthful": 0.0, "noisy": 0.1}
FIRST_KEY = "gender"


def build(cache: Path, identities: int, images: int) -> Path:
    """The world rendered and ingested with the shipped checkpoint (kept in ``cache`` for reruns)."""
    from engine.ingest import ModelEncoder, ingest
    from engine.lab.world.build import build_world
    from engine.retrieval.evidence.ranking import DomainWeights
    from engine.retrieval.models.discovery import default_checkpoint, load_model

    world, gallery = cache / f"world-{SEED}-{identities}x{images}", cache / f"gallery-{SEED}-{identities}x{images}"
    if not (world / "world.json").is_file():
        build_world(world, identities=identities, images_per_identity=images, seed=SEED, workers=2)
    if not (gallery / "done.json").is_file():
        checkpoint = default_checkpoint()
        ingest(world, gallery, ModelEncoder(load_model(checkpoint, device="cpu")),
               weights=DomainWeights.of_checkpoint(checkpoint))
        (gallery / "done.json").write_text("{}\n", encoding="utf-8")
    return gallery


def true_split(gallery: Gallery, rows: np.ndarray, keys: list[str]) -> list[str]:
    """The three of ``keys`` whose true values split the items of ``rows`` most evenly (entropy, ties in ontology
    order)."""
    attributes = [gallery.item(int(r)).attributes for r in rows]

    def entropy(key: str) -> float:
        counts = np.asarray(list(Counter(a.get(key, "?") for a in attributes).values()), dtype=np.float64)
        share = counts / counts.sum()
        return float(-(share * np.log2(share)).sum())

    return sorted(keys, key=lambda k: (-entropy(k), ONTOLOGY.keys.index(k)))[:3]


def answer(truth: dict[str, str], key: str, wrong: float, rng: np.random.Generator) -> str | None:
    """The witness's answer to ``key``: None ("don't know") when ``truth`` has no value for it, else the true
    value, or with probability ``wrong`` another value of the key (uniform)."""
    value = truth.get(key)
    if value is None:
        return None
    if wrong and rng.random() < wrong:
        others = [v for v in ONTOLOGY.attributes[key] if v != value]
        return str(rng.choice(others))
    return value


def first_key(truth: dict[str, str]) -> str | None:
    """The key of the witness's first words: the gender, else the first key of the "add next" order that
    ``truth`` has a value for (None when it has none)."""
    if FIRST_KEY in truth:
        return FIRST_KEY
    return next((k for k in SUGGESTION_ORDER if k in truth), None)


class Target(NamedTuple):
    """What the witness knows (``truth``: key → value) and the gallery items that are the person they saw (a
    named tuple, not a dataclass: the tests load this script as a module that is not in ``sys.modules``)."""

    truth: dict[str, str]
    ids: frozenset[str]
    rows: np.ndarray

    @classmethod
    def of_rows(cls, gallery: Gallery, truth: dict[str, str], rows) -> Target:
        rows = np.asarray(sorted(int(r) for r in rows), dtype=np.int64)
        return cls(dict(truth), frozenset(gallery.item(int(r)).id for r in rows), rows)

    def within(self, step, n: int) -> bool:
        """Whether one of the target's items is among the step's first ``n``."""
        return any(item_id in self.ids for item_id, _ in step.top(n))

    def lost(self, step) -> bool:
        """Whether the step kept none of the target's items."""
        return not np.isin(np.asarray(step.kept), self.rows).any()


def walk(session, target: Target, strategy: str, wrong: float, max_steps: int, rng: np.random.Generator,
         splits: list[bool] | None = None, tops: tuple[int, ...] = (TOP,),
         ends: list[str] | None = None) -> dict[int, int | None]:
    """Questions and answers on a fresh ``session`` until the target is among each first n of ``tops``: n → the
    number of steps it took, None when the target was lost, ``max_steps`` ran out, no key was left to ask or no
    candidate was left first. ``splits`` (when given) gets, per suggested question, whether its key is among the
    three whose true values split the kept candidates most evenly (``true_split``; needs the items' truth);
    ``ends`` (when given) gets why the walk ended: ``found``, ``lost``, ``max steps``, ``no keys`` or ``no
    candidates``."""
    reached: dict[int, int] = {}
    truth = target.truth
    key = first_key(truth)
    if key is None:
        if ends is not None:
            ends.append("no keys")
        return dict.fromkeys(tops)
    description = append_sentence("", suggestion_sentence(key, truth[key], {}))
    hidden: list[str] = []
    step = session.step(description)
    while True:
        for n in tops:
            if n not in reached and target.within(step, n):
                reached[n] = len(session.steps)
        end = "found" if len(reached) == len(tops) else "max steps" if len(session.steps) >= max_steps \
            else "lost" if target.lost(step) else None
        if end is not None:
            break
        stated = stated_in_chain(session.steps)
        while True:
            keys = open_keys(stated, hidden)
            if not keys:
                end = "no keys"
                break
            if strategy == "suggested":
                asked = questions_after(session, hidden=hidden, top=1)[0]["key"]
                if splits is not None:
                    splits.append(asked in true_split(session.gallery, step.kept, keys))
            elif strategy == "ontology":
                asked = next(k for k in SUGGESTION_ORDER if k in keys)
            else:
                asked = str(rng.choice(keys))
            value = answer(truth, asked, wrong, rng)
            if value is not None:
                break
            hidden.append(asked)  # "don't know"
        if end is not None:
            break
        description = append_sentence(description, suggestion_sentence(asked, value, stated))
        try:
            step = session.step(description)
        except NoCandidatesError:
            end = "no candidates"
            break
    if ends is not None:
        ends.append(end)
    return {n: reached.get(n) for n in tops}


def run_one(gallery: Gallery, encoder, target_row: int, strategy: str, wrong: float, max_steps: int,
            rng: np.random.Generator, splits: list[bool]) -> tuple[int, bool]:
    """(steps needed, found) for one sighting, one strategy and one witness."""
    item = gallery.item(target_row)
    code = gallery.columns.identities.lookup(item.identity)
    rows = np.flatnonzero(gallery.columns.identity == code)
    steps = walk(open_search(gallery, encoder), Target.of_rows(gallery, item.attributes, rows), strategy, wrong,
                 max_steps, rng, splits)[TOP]
    return (max_steps + 1, False) if steps is None else (steps, True)


def strategy_rng(strategy: str, wrong: float) -> np.random.Generator:
    """The random keys' and the noisy witness's generator of one strategy and witness."""
    return np.random.default_rng([SEED, STRATEGIES.index(strategy), int(wrong * 100)])


def interval(values: list[float], rng: np.random.Generator, resamples: int = 2000) -> tuple[float, float, float]:
    data = np.asarray(values, dtype=np.float64)
    means = data[rng.integers(0, data.size, (resamples, data.size))].mean(axis=1)
    return float(data.mean()), float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def steps_entry(outcomes: list[tuple[int, bool]], rng: np.random.Generator) -> tuple[dict, str]:
    """Mean steps and share found, each with its 95 % bootstrap interval: the report's entry and a line."""
    mean, low, high = interval([s for s, _ in outcomes], rng)
    hit, hit_low, hit_high = interval([float(ok) for _, ok in outcomes], rng)
    entry = {"mean_steps": round(mean, 2), "ci95": [round(low, 2), round(high, 2)],
             "found": round(hit, 3), "found_ci95": [round(hit_low, 3), round(hit_high, 3)]}
    return entry, f"steps {mean:.2f} [{low:.2f}, {high:.2f}]  found {hit:.2f} [{hit_low:.2f}, {hit_high:.2f}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--identities", type=int, default=120)
    parser.add_argument("--images", type=int, default=4)
    parser.add_argument("--max-steps", type=int, default=8)
    parser.add_argument("--cache", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp")) / "lineup-next-question")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(argv)
    if args.identities < 100:
        print("note: fewer than 100 identities give wide intervals", file=sys.stderr)
    from engine.retrieval.models.discovery import default_checkpoint, load_model

    args.cache.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    gallery = Gallery.open(build(args.cache, args.identities, args.images))
    built = time.perf_counter() - started
    checkpoint = default_checkpoint()
    encoder = query_encoder(load_model(checkpoint, device="cpu"), checkpoint)
    rng = np.random.default_rng(SEED)
    by_identity: dict[str, int] = {}
    for row in range(len(gallery)):
        item = gallery.item(row)
        if item.modality in (None, "rgb") and item.identity is not None and item.identity not in by_identity \
                and FIRST_KEY in item.attributes:
            by_identity[item.identity] = row
    targets = [by_identity[i] for i in sorted(by_identity)]
    report: dict = {"seed": SEED, "identities": len(targets), "gallery_items": len(gallery), "top": TOP,
                    "max_steps": args.max_steps, "build_seconds": round(built, 1), "results": {}}
    for witness, wrong in WITNESSES.items():
        for strategy in STRATEGIES:
            splits: list[bool] = []
            draws = strategy_rng(strategy, wrong)
            outcomes = [run_one(gallery, encoder, row, strategy, wrong, args.max_steps, draws, splits)
                        for row in targets]
            entry, line = steps_entry(outcomes, rng)
            if splits:
                share, s_low, s_high = interval([float(s) for s in splits], rng)
                entry["suggested_in_true_top3"] = round(share, 3)
                entry["suggested_in_true_top3_ci95"] = [round(s_low, 3), round(s_high, 3)]
                entry["questions"] = len(splits)
            report["results"][f"{witness}/{strategy}"] = entry
            split = f"  suggested key in true top 3: {entry['suggested_in_true_top3']:.2f}" if splits else ""
            print(f"{witness:>8} {strategy:>9}: {line}{split}", flush=True)
    report["seconds"] = round(time.perf_counter() - started, 1)
    if args.json is not None:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
