"""Calibrate how far each attribute evidence source is to be trusted on real footage: the reliability r per
(source, key) of ``engine.attributes.reliability``, fitted on the hand-labelled real crops.

Samples: one crop per reference box of ``tests/data/footage/people.json`` on the shared clips (© Intel
Corporation and contributors, intel-iot-devkit/sample-videos, CC BY 4.0), with the silhouette ingest's
foreground detector gives it and its frame as the scene (``engine.attributes.accuracy.footage_samples``).
Evidence: the three sources ingest computes for footage (``compute_evidence``): ``pixels``, ``model`` (the
checkpoint's heads) and ``pretrained`` (the shipped attribute network). For every source and ontology key with
at least ``MIN_SAMPLES`` labelled crops: top-1 accuracy, the majority guess, the maximum-likelihood r over all
crops, and — to show what the fit is worth on people it did not see — r fitted leaving each clip out in turn,
scored on that clip (mean log-likelihood per crop of the true value against the stored confidence, r = 1).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/calibrate_sources.py [--checkpoint C] [--write] [--json out.json]

``--write`` records the all-crops r in ``resources/calibration/footage_reliability.json`` (what footage
galleries rank with).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from engine.atomic import atomic_write_text  # noqa: E402
from engine.attributes.accuracy import footage_samples  # noqa: E402
from engine.attributes.gallery import compute_evidence  # noqa: E402
from engine.attributes.pretrained import AttributeNetwork  # noqa: E402
from engine.attributes.reliability import CALIBRATION, FORMAT_VERSION, MIN_SAMPLES, fit_reliability, log_likelihood  # noqa: E402
from engine.models.discovery import default_checkpoint  # noqa: E402
from engine.ontology import ONTOLOGY  # noqa: E402

FOOTAGE = ROOT.parent / "shared" / "data" / "footage"
PEOPLE = ROOT / "tests" / "data" / "footage" / "people.json"
SOURCES = ("pixels", "model", "pretrained")


def readings(checkpoint: Path) -> tuple[list, list[dict]]:
    from engine.models import load

    samples = list(footage_samples(PEOPLE, FOOTAGE, masks="ingest"))
    model = load(checkpoint, device="cpu")
    records = compute_evidence([s.crop for s in samples], [s.mask for s in samples], [s.frame for s in samples],
                               model, network=AttributeNetwork())
    return samples, records


def calibrate(samples: list, records: list[dict]) -> dict:
    clips = np.asarray([s.clip for s in samples])
    out: dict[str, dict] = {}
    for source in SOURCES:
        for key in ONTOLOGY.keys:
            size = len(ONTOLOGY.attributes[key])
            rows = [(i, r[source]) for i, r in enumerate(records)
                    if source in r and key in r[source]["probabilities"] and key in samples[i].attributes]
            if len(rows) < MIN_SAMPLES:
                continue
            index = np.asarray([i for i, _ in rows])
            truth = [samples[i].attributes[key] for i, _ in rows]
            p_true = np.asarray([e["probabilities"][key][t] for (_, e), t in zip(rows, truth, strict=True)])
            conf = np.asarray([e["confidence"][key] for _, e in rows])
            top = [max(e["probabilities"][key], key=e["probabilities"][key].get) for _, e in rows]
            r = fit_reliability(p_true, conf, size)
            held, stored = [], []
            for clip in sorted(set(clips[index])):
                inside = clips[index] == clip
                if inside.all():
                    continue
                r_out = fit_reliability(p_true[~inside], conf[~inside], size)
                held.append(float(log_likelihood(r_out, p_true[inside], conf[inside], size)[0]) * inside.sum())
                stored.append(float(log_likelihood(1.0, p_true[inside], conf[inside], size)[0]) * inside.sum())
            count = sum(inside.sum() for inside in (clips[index] == c for c in set(clips[index]))
                        if not inside.all())
            out.setdefault(source, {})[key] = {
                "r": round(r, 3), "n": len(rows), "people": len({(samples[i].clip, samples[i].person) for i in index}),
                "accuracy": round(float(np.mean([a == b for a, b in zip(top, truth, strict=True)])), 3),
                "majority": round(Counter(truth).most_common(1)[0][1] / len(truth), 3),
                "loglik_stored": round(float(log_likelihood(1.0, p_true, conf, size)[0]), 4),
                "loglik_fitted": round(float(log_likelihood(r, p_true, conf, size)[0]), 4),
                "loglik_chance": round(float(np.log(1.0 / size)), 4),
                "held_out_loglik_fitted": round(sum(held) / count, 4) if count else None,
                "held_out_loglik_stored": round(sum(stored) / count, 4) if count else None,
            }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", type=Path, help="checkpoint folder (default: the shipped one)")
    parser.add_argument("--write", action="store_true", help="record r in " + "/".join(CALIBRATION))
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args(argv)
    if not FOOTAGE.is_dir():
        parser.error(f"the real footage folder {FOOTAGE} is absent")
    checkpoint = args.checkpoint or default_checkpoint()
    samples, records = readings(checkpoint)
    table = calibrate(samples, records)
    print(f"{len(samples)} labelled crops of {len({(s.clip, s.person) for s in samples})} people")
    print(f"{'source':<11}{'key':<15}{'n':>4}{'acc':>7}{'major':>7}{'r':>7}{'LL r=1':>9}{'LL fit':>9}{'chance':>9}"
          f"{'held-out r=1':>14}{'held-out fit':>14}")
    for source, keys in table.items():
        for key, row in keys.items():
            held = row["held_out_loglik_stored"]
            print(f"{source:<11}{key:<15}{row['n']:>4}{row['accuracy']:>7.3f}{row['majority']:>7.3f}{row['r']:>7.3f}"
                  f"{row['loglik_stored']:>9.3f}{row['loglik_fitted']:>9.3f}{row['loglik_chance']:>9.3f}"
                  f"{'' if held is None else f'{held:.3f}':>14}"
                  f"{'' if held is None else format(row['held_out_loglik_fitted'], '.3f'):>14}")
    report = {"version": FORMAT_VERSION, "measured_on": {
        "labels": "tests/data/footage/people.json", "crops": len(samples),
        "people": len({(s.clip, s.person) for s in samples}), "checkpoint": checkpoint.name,
        "command": "bench/calibrate_sources.py --write"}, "reliability": table}
    if args.json:
        atomic_write_text(args.json, json.dumps(report, indent=1) + "\n")
    if args.write:
        target = ROOT / "resources" / Path(*CALIBRATION)
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, json.dumps(report, indent=1) + "\n")
        print(f"wrote {target.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
