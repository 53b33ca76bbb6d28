"""Calibrate the attribute evidence of real footage on the hand-labelled real crops: the pretrained attribute
network's outputs (Platt scaling, ``engine.perception.attributes.pretrained``) and then how far each evidence source is
to be trusted, the reliability r per (source, key) of ``engine.retrieval.evidence.reliability``.

Samples: one crop per reference box of ``tests/data/footage/people.json`` on the real clips (© Intel
Corporation and contributors, intel-iot-devkit/sample-videos, CC BY 4.0), with the silhouette ingest's
foreground detector gives it and its frame as the scene (``engine.lab.evaluation.attribute_accuracy.footage_samples``).
Platt scaling: per network output, p' = σ(a·logit(p) + b) fitted by maximum likelihood against the truth the
labels give it (``OUTPUT_TRUTH``), with a Gaussian prior pulling (a, b) towards the identity (1, 0) (weight
``PRIOR``); scored leaving each clip out in turn (mean log-loss on the clip, raw against calibrated).
Evidence: the three sources ingest computes for footage (``compute_evidence``, the network's outputs
calibrated as above): ``pixels``, ``model`` (the checkpoint's heads) and ``pretrained``. For every source and
ontology key with
at least ``MIN_SAMPLES`` labelled crops: top-1 accuracy, the majority guess, the maximum-likelihood r over all
crops, and — to show what the fit is worth on people it did not see — r fitted leaving each clip out in turn,
scored on that clip (mean log-likelihood per crop of the true value against the stored confidence, r = 1).

With 74 crops of 19 people a fit can describe these people rather than footage in general, so a fit is applied
only where it helps on the clips it was not fitted on: a network output keeps its Platt scaling, and a (source,
key) its r, only when the leave-one-clip-out score beats the uncalibrated one; elsewhere the identity (a = 1,
b = 0; r = 1) is recorded beside the fitted values (``applied``).

    HF_HUB_OFFLINE=1 .venv/bin/python bench/calibrate_sources.py [--checkpoint C] [--write] [--json out.json]

``--write`` records the all-crops Platt parameters and r in ``resources/calibration/footage_calibration.json``
(what footage galleries are ingested and ranked with: re-ingest or ``lineup gallery rebuild --attributes`` to
apply a new network calibration to a gallery's stored evidence).
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

from engine.kernel.atomic import atomic_write_text  # noqa: E402
from engine.kernel.ontology import ONTOLOGY  # noqa: E402
from engine.lab.evaluation.attribute_accuracy import footage_samples  # noqa: E402
from engine.perception.attributes.calibration import CALIBRATION  # noqa: E402
from engine.perception.attributes.pretrained import (  # noqa: E402
    CALIBRATION_KEY,
    OUTPUT_TRUTH,
    OUTPUTS,
    AttributeNetwork,
    calibrate,
    logit,
)
from engine.retrieval.evidence.items import compute_evidence  # noqa: E402
from engine.retrieval.evidence.reliability import (  # noqa: E402
    FORMAT_VERSION,
    MIN_SAMPLES,
    fit_reliability,
    log_likelihood,
)
from engine.retrieval.models.discovery import default_checkpoint  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the benches beside this one
from footage_folder import footage_folder  # noqa: E402

PEOPLE = ROOT / "tests" / "data" / "footage" / "people.json"
SOURCES = ("pixels", "model", "pretrained")
PRIOR = 1.0  # weight of the Gaussian prior (a − 1)² + b² against the summed log-loss


def _log_loss(a: float, b: float, x: np.ndarray, y: np.ndarray) -> float:
    z = a * x + b
    return float(np.sum(np.logaddexp(0.0, z) - y * z))


def fit_platt(raw: np.ndarray, truth: np.ndarray) -> tuple[float, float]:
    from scipy.optimize import minimize

    x = logit(raw)
    result = minimize(lambda v: _log_loss(v[0], v[1], x, truth) + PRIOR * ((v[0] - 1) ** 2 + v[1] ** 2),
                      np.array([1.0, 0.0]), method="L-BFGS-B")
    return float(result.x[0]), float(result.x[1])


def platt_table(samples: list, raw: np.ndarray) -> dict:
    clips = np.asarray([s.clip for s in samples])
    out = {}
    for j, name in enumerate(OUTPUTS):
        key, positive = OUTPUT_TRUTH[name]
        rows = np.asarray([i for i, s in enumerate(samples) if key in s.attributes])
        if rows.size < MIN_SAMPLES:
            continue
        y = np.asarray([samples[i].attributes[key] in positive for i in rows], dtype=np.float64)
        x = raw[rows, j]
        a, b = fit_platt(x, y)
        held_raw = held_fit = 0.0
        count = 0
        for clip in sorted(set(clips[rows])):
            inside = clips[rows] == clip
            if inside.all():
                continue
            a_out, b_out = fit_platt(x[~inside], y[~inside])
            held_fit += _log_loss(a_out, b_out, logit(x[inside]), y[inside])
            held_raw += _log_loss(1.0, 0.0, logit(x[inside]), y[inside])
            count += int(inside.sum())
        auc = _auc(x, y)
        helps = count > 0 and held_fit < held_raw
        out[name] = {"a": round(a, 4) if helps else 1.0, "b": round(b, 4) if helps else 0.0,
                     "fitted": [round(a, 4), round(b, 4)], "applied": bool(helps),
                     "n": int(rows.size), "positives": int(y.sum()),
                     "auc": None if auc is None else round(auc, 3),
                     "log_loss_raw": round(_log_loss(1.0, 0.0, logit(x), y) / rows.size, 4),
                     "log_loss_fitted": round(_log_loss(a, b, logit(x), y) / rows.size, 4),
                     "held_out_log_loss_raw": round(held_raw / count, 4) if count else None,
                     "held_out_log_loss_fitted": round(held_fit / count, 4) if count else None}
    return out


def _auc(x: np.ndarray, y: np.ndarray) -> float | None:
    pos, neg = x[y == 1], x[y == 0]
    if not pos.size or not neg.size:
        return None
    return float(((pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum())
                 / (pos.size * neg.size))


def readings(checkpoint: Path) -> tuple[list, list[dict], dict]:
    """The samples, their evidence records (the network calibrated on all samples) and the Platt table."""
    from engine.retrieval.models import load

    samples = list(footage_samples(PEOPLE, footage_folder(), masks="ingest"))
    model = load(checkpoint, device="cpu")
    network = AttributeNetwork()
    crops = [s.crop for s in samples]
    raw, _ = network.read(crops)
    platt = platt_table(samples, raw)
    records = compute_evidence(crops, [s.mask for s in samples], [s.frame for s in samples], model)
    for record, evidence in zip(records, network.evidence(crops, {k: (v["a"], v["b"]) for k, v in platt.items()}),
                                strict=True):
        record["pretrained"] = evidence.to_dict()
    assert np.allclose(calibrate(raw[:1], {}), raw[:1])
    return samples, records, platt


def reliability_table(samples: list, records: list[dict]) -> dict:
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
            held_fit = sum(held) / count if count else None
            held_stored = sum(stored) / count if count else None
            helps = held_fit is not None and held_fit > held_stored
            out.setdefault(source, {})[key] = {
                "r": round(r, 3) if helps else 1.0, "r_fitted": round(r, 3), "applied": bool(helps), "n": len(rows),
                "people": len({(samples[i].clip, samples[i].person) for i in index}),
                "accuracy": round(float(np.mean([a == b for a, b in zip(top, truth, strict=True)])), 3),
                "majority": round(Counter(truth).most_common(1)[0][1] / len(truth), 3),
                "loglik_stored": round(float(log_likelihood(1.0, p_true, conf, size)[0]), 4),
                "loglik_fitted": round(float(log_likelihood(r, p_true, conf, size)[0]), 4),
                "loglik_chance": round(float(np.log(1.0 / size)), 4),
                "held_out_loglik_fitted": None if held_fit is None else round(held_fit, 4),
                "held_out_loglik_stored": None if held_stored is None else round(held_stored, 4),
            }
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", type=Path, help="checkpoint folder (default: the shipped one)")
    parser.add_argument("--write", action="store_true", help="record r in " + "/".join(CALIBRATION))
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args(argv)
    footage_folder()  # stops, naming the setting, when the real clips are not there
    checkpoint = args.checkpoint or default_checkpoint()
    samples, records, platt = readings(checkpoint)
    table = reliability_table(samples, records)
    print(f"{len(samples)} labelled crops of {len({(s.clip, s.person) for s in samples})} people")
    print(f"{'output':<17}{'n':>4}{'pos':>5}{'AUC':>7}{'a':>8}{'b':>8}{'loss raw':>10}{'fitted':>8}"
          f"{'held-out raw':>14}{'fitted':>8}{'applied':>9}")
    for name, row in platt.items():
        a, b = row["fitted"]
        print(f"{name:<17}{row['n']:>4}{row['positives']:>5}{row['auc'] if row['auc'] is not None else '':>7}"
              f"{a:>8.3f}{b:>8.3f}{row['log_loss_raw']:>10.3f}{row['log_loss_fitted']:>8.3f}"
              f"{row['held_out_log_loss_raw']:>14.3f}{row['held_out_log_loss_fitted']:>8.3f}{str(row['applied']):>9}")
    print(f"{'source':<11}{'key':<15}{'n':>4}{'acc':>7}{'major':>7}{'r':>7}{'LL r=1':>9}{'LL fit':>9}{'chance':>9}"
          f"{'held-out r=1':>14}{'held-out fit':>14}{'applied':>9}")
    for source, keys in table.items():
        for key, row in keys.items():
            held = row["held_out_loglik_stored"]
            print(f"{source:<11}{key:<15}{row['n']:>4}{row['accuracy']:>7.3f}{row['majority']:>7.3f}{row['r_fitted']:>7.3f}"
                  f"{row['loglik_stored']:>9.3f}{row['loglik_fitted']:>9.3f}{row['loglik_chance']:>9.3f}"
                  f"{'' if held is None else f'{held:.3f}':>14}"
                  f"{'' if held is None else format(row['held_out_loglik_fitted'], '.3f'):>14}{str(row['applied']):>9}")
    report = {"version": FORMAT_VERSION, "measured_on": {
        "labels": "tests/data/footage/people.json", "crops": len(samples),
        "people": len({(s.clip, s.person) for s in samples}), "checkpoint": checkpoint.name,
        "command": "bench/calibrate_sources.py --write"}, CALIBRATION_KEY: {"platt": platt}, "reliability": table}
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
