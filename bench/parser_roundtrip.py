"""Round trip generator → parser on random identities, and parser throughput (docs/methods.md §1.1).

Run: .venv/bin/python bench/parser_roundtrip.py [--n 10000] [--seed 0] [--show 10]
Random identities sample every attribute uniformly from the ontology; each description states a random
key subset of random size (a dependent colour only with its item). A description is recovered when the
parser returns exactly the stated attributes.
"""

from __future__ import annotations

import argparse
import random
import time
from collections import Counter

from engine.kernel.ontology import ONTOLOGY
from engine.retrieval.text.generator import describe, random_key_subset
from engine.retrieval.text.parser import parse


def random_identity(rng: random.Random) -> dict[str, str]:
    """Every attribute drawn uniformly from the ontology; colours of a ``none`` item are left out."""
    attributes = {key: rng.choice(values) for key, values in ONTOLOGY.attributes.items()}
    return ONTOLOGY.counted(attributes)


def roundtrip(n: int, seed: int) -> tuple[float, list[tuple[str, dict, dict]], list[str]]:
    rng = random.Random(seed)
    failures = []
    texts = []
    for _ in range(n):
        identity = random_identity(rng)
        keys = random_key_subset(identity, rng)
        text = describe(identity, keys, rng)
        texts.append(text)
        expected = {k: identity[k] for k in keys}
        got = parse(text).attributes
        if got != expected:
            failures.append((text, expected, got))
    return 1 - len(failures) / n, failures, texts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--n", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=10, help="failures to print")
    args = ap.parse_args()
    rate, failures, texts = roundtrip(args.n, args.seed)
    print(f"round trip: {rate:.4f} exact ({args.n - len(failures)}/{args.n})")
    kinds = Counter()
    for _text, expected, got in failures:
        for key in sorted(set(expected) | set(got)):
            if expected.get(key) != got.get(key):
                kinds[key + (" missed" if key not in got else " extra" if key not in expected else " wrong")] += 1
    if kinds:
        print("failure kinds:", ", ".join(f"{k} ×{v}" for k, v in kinds.most_common(8)))
    for text, expected, got in failures[: args.show]:
        diff = {k: (expected.get(k), got.get(k)) for k in set(expected) | set(got) if expected.get(k) != got.get(k)}
        print(f"  {text}\n    expected/got: {diff}")
    start = time.perf_counter()
    for text in texts:
        parse(text)
    elapsed = time.perf_counter() - start
    mean_chars = sum(map(len, texts)) / len(texts)
    print(f"throughput: {len(texts) / elapsed:,.0f} descriptions/s (mean {mean_chars:.0f} characters)")


if __name__ == "__main__":
    main()
