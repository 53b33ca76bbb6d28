"""Hybrid ranking on a built world: MG-Eval separate mAP per level (docs/methods.md §1.2) with and without the attribute
term, same queries, same gallery, same similarity.

The similarity is the ``mg-separate`` protocol's own (``engine.lab.evaluation``: every per-level query of the
world's ``granularity`` benchmark against its RGB gallery in the view of its given level); the metrics are
``engine.lab.evaluation.scoring``'s. The attribute term is the search session's (``engine.retrieval.evidence.ranking``:
each query's attributes from the text parser, agreement with the gallery items' stored evidence), from pixels
(``extract_attributes``, no mask, no scene), from the checkpoint's attribute heads, or both. The ranking score
is ``(similarity + w·agreement)/(1 + w)`` (divided so it stays a cosine in [−1, 1] for the metric code;
the order is that of similarity + w·agreement). ``w = 0`` reproduces the protocol's figures.

    HF_HUB_OFFLINE=1 .venv/bin/python bench/hybrid_synthetic.py --checkpoint C --world W \\
        [--weights 0.1,0.3,0.5,1] [--cache DIR] [--batch 64] [--json out.json]

``--cache DIR`` keeps the evidence table and the similarity matrix for reruns (keyed by checkpoint fingerprint
and world manifest).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from engine.index import evidence_table as store  # noqa: E402
from engine.kernel.atomic import atomic_write_text  # noqa: E402
from engine.kernel.ontology import LEVELS  # noqa: E402
from engine.lab.evaluation.encoding import encode_texts, model_resolution  # noqa: E402
from engine.lab.evaluation.levels import gallery_views, image_query_level, query_levels, similarity_by_level  # noqa: E402
from engine.lab.evaluation.scoring import block, pooled, score  # noqa: E402
from engine.lab.evaluation.sources import world_benchmark  # noqa: E402
from engine.lab.world.benchmarks import relevance_matrix  # noqa: E402
from engine.retrieval.evidence.items import compute_evidence  # noqa: E402
from engine.retrieval.evidence.ranking import AttributeTerm, GalleryEvidence  # noqa: E402
from engine.retrieval.models.discovery import default_checkpoint  # noqa: E402
from engine.retrieval.text.parser import parse  # noqa: E402

SOURCE_SETS: dict[str, tuple[str, ...]] = {"pixels": ("pixels",), "model": ("model",), "both": ("pixels", "model")}


def similarity(model, bench, batch: int, cache: Path, key: dict) -> np.ndarray:
    """The mg-separate Q×G similarity (given levels), cached under ``cache``."""
    stamp, matrix = cache / "similarity.json", cache / "similarity.npy"
    if stamp.is_file() and matrix.is_file() and json.loads(stamp.read_text()) == key:
        return np.load(matrix)
    queries = bench["queries"]
    texts = encode_texts(model, [q["text"] for q in queries], batch)
    used, _ = query_levels([q["level"] for q in queries], texts.level_logits, "given", image_query_level(model))
    world = Path(bench["world"])
    paths = [world / item["image"] for item in bench["gallery"]]
    resolutions = [model_resolution(item["resolution"]) for item in bench["gallery"]]
    views = gallery_views(model, paths, set(used), "rgb", resolutions, batch)
    out = similarity_by_level(texts.vectors, used, views)
    np.save(matrix, out)
    atomic_write_text(stamp, json.dumps(key))
    return out


def evidence(model, bench, batch: int, cache: Path, key: dict) -> tuple[GalleryEvidence, dict]:
    """Evidence of every gallery image from pixels and the model heads, stored in ``cache``/attributes."""
    ids = [item["id"] for item in bench["gallery"]]
    stamp = cache / "evidence.json"
    table = store.EvidenceTable.read(cache)
    if table is None or not stamp.is_file() or json.loads(stamp.read_text()).get("key") != key or table.ids != ids:
        world = Path(bench["world"])
        started = time.perf_counter()
        with store.rewriting(cache) as writer:
            for start in range(0, len(ids), batch):
                items = bench["gallery"][start : start + batch]
                crops = [cv2.imread(str(world / item["image"]), cv2.IMREAD_COLOR) for item in items]
                records = compute_evidence(crops, model=model, modalities=[i["modality"] for i in items],
                                           resolutions=[i["resolution"] for i in items], batch_size=batch)
                writer.add(ids[start : start + batch], records)
        atomic_write_text(stamp, json.dumps({"key": key, "seconds": time.perf_counter() - started}))
        table = store.EvidenceTable.read(cache)
    info = {"items": len(table), "seconds": round(json.loads(stamp.read_text())["seconds"], 1),
            "keys": {source: sorted(table.covered(source)) for source in table.sources}}
    return GalleryEvidence(table, ids), info


def agreement_matrix(gallery_evidence: GalleryEvidence, stated: list[dict[str, str]],
                     sources: tuple[str, ...]) -> np.ndarray:
    """Q×G agreement, each row through the session's own ``AttributeTerm.scores``."""
    rows = np.arange(gallery_evidence.evidence_row.shape[0])
    out = np.zeros((len(stated), rows.size), dtype=np.float32)
    for q, attributes in enumerate(stated):
        term = AttributeTerm(tuple(attributes.items()), 1.0, sources, (), gallery_evidence)
        if term.covered.any():
            out[q] = term.scores(rows)[0]
    return out


def metrics(ranking: np.ndarray, relevance: np.ndarray, given: list[str]) -> dict:
    groups = {lv: score(ranking[rows], relevance[rows]) for lv in LEVELS
              if (rows := [i for i, g in enumerate(given) if g == lv])}
    return {"overall": pooled(list(groups.values())), "by": {lv: block(g) for lv, g in groups.items()}}


def run(checkpoint: Path, world: Path, weights: list[float], batch: int, cache: Path) -> dict:
    from engine.kernel.hashing import sha256_file
    from engine.retrieval.models import load, model_fingerprint

    model = load(checkpoint, device="cpu")
    bench, _ = world_benchmark(world, "granularity")
    key = {"checkpoint": model_fingerprint(model), "manifest": bench["manifest_sha256"],
           "benchmark": sha256_file(Path(world) / "benchmarks" / "granularity.json")}
    cache.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    sim = similarity(model, bench, batch, cache, key)
    gallery_evidence, evidence_info = evidence(model, bench, batch, cache, key)
    relevance = relevance_matrix(bench)
    queries = bench["queries"]
    given = [q["level"] for q in queries]
    stated = [dict(parse(q["text"]).attributes) for q in queries]
    exact = float(np.mean([s == {k: v for k, v in q["attributes"].items()} for s, q in zip(stated, queries,
                                                                                          strict=True)]))
    results = [{"sources": "none", "weight": 0.0, **metrics(sim, relevance, given)}]
    for name, sources in SOURCE_SETS.items():
        if not all(s in gallery_evidence.sources for s in sources):
            continue
        agreement = agreement_matrix(gallery_evidence, stated, sources)
        for weight in weights:
            ranking = (sim + weight * agreement) / (1.0 + weight)
            results.append({"sources": name, "weight": weight, **metrics(ranking, relevance, given)})
    return {"checkpoint": str(checkpoint), "world": str(world), "queries": len(queries),
            "gallery": len(bench["gallery"]), "evidence": evidence_info,
            "parser_exact_share": round(exact, 4), "seconds": round(time.perf_counter() - started, 1),
            "results": results}


def table(report: dict) -> list[str]:
    head = f"{'sources':<8}{'w':>6}" + "".join(f"{lv:>8}" for lv in LEVELS) + f"{'all':>8}{'R@1':>8}"
    lines = [f"MG-Eval separate mAP ×100, {report['queries']} queries, {report['gallery']} gallery images "
             f"({report['checkpoint']}, {report['world']})", head]
    for row in report["results"]:
        cells = "".join(f"{100 * row['by'][lv]['mAP']:>8.2f}" if lv in row["by"] else f"{'-':>8}" for lv in LEVELS)
        lines.append(f"{row['sources']:<8}{row['weight']:>6g}{cells}{100 * row['overall']['mAP']:>8.2f}"
                     f"{100 * row['overall']['R@1']:>8.2f}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--checkpoint", type=Path, help="checkpoint folder (default: the shipped one)")
    parser.add_argument("--world", type=Path, required=True, help="a built world (lineup world build)")
    parser.add_argument("--weights", default="0.1,0.3,0.5,1", help="comma-separated w values")
    parser.add_argument("--batch", type=int, default=64)
    parser.add_argument("--cache", type=Path, help="folder keeping evidence and similarity between runs")
    parser.add_argument("--json", type=Path, help="also write the report here")
    args = parser.parse_args(argv)
    weights = [float(w) for w in args.weights.split(",") if w.strip()]
    checkpoint = args.checkpoint or default_checkpoint()
    if args.cache is None:
        with tempfile.TemporaryDirectory(prefix="hybrid-") as folder:
            report = run(checkpoint, args.world, weights, args.batch, Path(folder))
    else:
        report = run(checkpoint, args.world, weights, args.batch, args.cache)
    print(json.dumps(report))
    print("\n".join(table(report)))
    if args.json:
        atomic_write_text(args.json, json.dumps(report, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
