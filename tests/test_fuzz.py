"""``bench/fuzz.py`` keeps the CLI honest: a small run of generated bad inputs ends without a crash, and its
classifier tells crashes (tracebacks, signals, hangs) from named errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from bench_modules import load_bench

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def fuzz():
    return load_bench("fuzz")


def test_a_small_fuzz_run_has_no_crash(tmp_path):
    results = tmp_path / "results.json"
    done = subprocess.run([sys.executable, "bench/fuzz.py", "--count", "30", "--seed", "0", "--subprocess-every",
                           "15", "--work", str(tmp_path / "work"), "--json", str(results)], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    report = json.loads(results.read_text())
    crashes = [c for c in report["cases"] if c["outcome"] == "crash"]
    assert not crashes, "\n".join(f"{c['argv']}: {c['reason']}\n{c['escaped'] or c['output']}" for c in crashes)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert report["count"] == 30 and sum(report["outcomes"].values()) == 30
    assert sum(c["mode"] == "subprocess" for c in report["cases"]) == 2  # cases 14 and 29
    families = {c["kind"].split(":")[0] for c in report["cases"]}
    assert len(families) >= 6, families  # images, videos, worlds, datasets, checkpoints, queries, galleries …
    assert "no crashes" in done.stdout


def case(fuzz, names=("bad.jpg",)):
    return fuzz.Case("detect", "image:x", ["detect", "bad.jpg"], list(names))


@pytest.mark.parametrize(("result", "outcome"), [
    ({"exit_code": 2, "output": "error: image /x/bad.jpg: the file is empty\n"}, "named"),
    ({"exit_code": 1, "output": "error: something went wrong\n"}, "unnamed"),
    ({"exit_code": 0, "output": "1 frames\n"}, "success"),
    ({"exit_code": 1, "output": "Traceback (most recent call last):\n  ...\nValueError: bad.jpg\n"}, "crash"),
    ({"exit_code": 1, "output": "╭──── Traceback (most recent call last) ────╮\n│ bad.jpg │\n"}, "crash"),
    ({"exit_code": 1, "output": "", "escaped": "Traceback ...\nKeyError: 'x'\n"}, "crash"),
    ({"exit_code": -11, "output": "", "died": True}, "crash"),
    ({"exit_code": None, "output": "", "timed_out": True}, "crash"),
    ({"exit_code": 3, "output": "bad.jpg"}, "crash"),
])
def test_classifier(fuzz, result, outcome):
    assert fuzz.classify(case(fuzz), result)[0] == outcome
