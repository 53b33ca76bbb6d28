"""Parser quality on the hand-written test set: exact-match rate (overall and per level), per-attribute
precision and recall, and the failing lines.

Per attribute key k over all lines: a prediction of k counts as a true positive when its value equals
the expected value, otherwise as a false positive; an expected k not predicted with that value is a
false negative. precision = TP / (TP + FP), recall = TP / (TP + FN). A line's level is the level of its
expected attribute count (docs/methods.md §1.1).

Run: ``.venv/bin/python bench/parser_quality.py [--data PATH] [--max-failures N]``.
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from engine.kernel.ontology import ATTRIBUTE_KEYS, LEVELS, ONTOLOGY

DEFAULT_DATA = Path(__file__).resolve().parents[1] / "tests" / "data" / "parser_handwritten.jsonl"


@dataclass
class Report:
    total: int = 0
    exact: int = 0
    level_total: Counter = field(default_factory=Counter)
    level_exact: Counter = field(default_factory=Counter)
    true_pos: Counter = field(default_factory=Counter)
    false_pos: Counter = field(default_factory=Counter)
    false_neg: Counter = field(default_factory=Counter)
    failures: list[tuple[int, str, dict, dict]] = field(default_factory=list)

    @property
    def exact_rate(self) -> float:
        return self.exact / self.total if self.total else 0.0


def load_cases(path: Path) -> list[tuple[int, str, dict]]:
    """(line number, text, expected attributes) for every non-blank line; bad lines raise ValueError."""
    cases = []
    with path.open(encoding="utf-8") as fh:
        for number, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                case = json.loads(line)
                text, expected = case["text"], case["attributes"]
                ONTOLOGY.validate(expected)
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
                raise ValueError(f"{path}:{number}: bad test line ({exc})") from exc
            cases.append((number, text, expected))
    return cases


def evaluate(cases: list[tuple[int, str, dict]], parse) -> Report:
    """Score ``parse(text).attributes`` against the expected attributes of every case."""
    report = Report()
    for number, text, expected in cases:
        got = dict(parse(text).attributes)
        level = ONTOLOGY.level_of(ONTOLOGY.count(expected)) or "none"
        report.total += 1
        report.level_total[level] += 1
        if got == expected:
            report.exact += 1
            report.level_exact[level] += 1
        else:
            report.failures.append((number, text, expected, got))
        for key, value in got.items():
            if expected.get(key) == value:
                report.true_pos[key] += 1
            else:
                report.false_pos[key] += 1
        for key, value in expected.items():
            if got.get(key) != value:
                report.false_neg[key] += 1
    return report


def _ratio(num: int, den: int) -> str:
    return f"{num / den:.3f}" if den else "  -  "


def print_report(report: Report, max_failures: int) -> None:
    print(f"exact match: {report.exact}/{report.total} = {report.exact_rate:.3f}")
    print("\nper level (expected attribute count):")
    for level in (*LEVELS, "none"):
        n = report.level_total[level]
        if n:
            print(f"  {level:<5} {report.level_exact[level]:>4}/{n:<4} {_ratio(report.level_exact[level], n)}")
    print(f"\n{'attribute':<16}{'precision':>10}{'recall':>8}{'TP':>6}{'FP':>5}{'FN':>5}")
    for key in ATTRIBUTE_KEYS:
        tp, fp, fn = report.true_pos[key], report.false_pos[key], report.false_neg[key]
        print(f"{key:<16}{_ratio(tp, tp + fp):>10}{_ratio(tp, tp + fn):>8}{tp:>6}{fp:>5}{fn:>5}")
    shown = report.failures if max_failures < 0 else report.failures[:max_failures]
    print(f"\nfailing lines: {len(report.failures)}" + (f" (showing {len(shown)})" if shown else ""))
    for number, text, expected, got in shown:
        missing = {k: v for k, v in expected.items() if got.get(k) != v}
        extra = {k: v for k, v in got.items() if expected.get(k) != v}
        print(f"  line {number}: {text!r}\n    missing/wrong {missing}\n    extra/wrong   {extra}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="JSONL test set")
    parser.add_argument("--max-failures", type=int, default=-1, help="failing lines to print (-1: all)")
    args = parser.parse_args(argv)
    if not args.data.is_file():
        parser.error(f"--data {args.data}: no such file")

    try:
        from engine.retrieval.text.parser import parse
    except ImportError as exc:
        parser.error(f"engine.retrieval.text.parser.parse is not importable ({exc})")

    print_report(evaluate(load_cases(args.data), parse), args.max_failures)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
