"""Benchmark splits built from a world: granularity, modalities, cross-resolution and any-time.

``build_benchmarks(world_dir)`` writes four JSON files (plus ``summary.json``) into ``world_dir/benchmarks``;
``load_benchmark(out_dir, name)`` reads one back; ``anytime_masks`` applies the Uni-AT filters (docs/methods.md §3).

Test identities are all identities of the world (a benchmark world is built from a seed never used in
training), or a seeded sample of ``max_identities`` of them. Every choice is seeded by ``seed`` and the
identity, so a rebuild gives identical files. Per identity one *source* image is drawn among its RGB HR
images; its attributes and descriptions drive that identity's text queries.

JSON schema (version 3: any-time items carry attributes). Every file holds the header
``{"benchmark": name, "version": 3, "world": <world folder relative to the benchmark folder>,
"manifest_sha256": str, "seed": int, "identities": [int], "relevance": str}``; ``relevance`` states the one
rule by which that benchmark's ``relevant`` lists were made (``RELEVANCE``); ``load_benchmark`` turns
``world`` into an absolute path. Image paths (``image``) are relative to the world folder. An *item* is
``{"id", "image", "identity", "outfit", "camera", "modality", "resolution"}``. ``relevant`` lists
indices into the file's ``gallery``.

- ``granularity.json`` (MG-Eval, docs/methods.md §1.2–1.4): ``levels``; ``gallery`` = RGB HR items, each with its
  own (outfit) ``attributes``; ``queries`` = one per test identity and level
  ``{"identity", "outfit", "source", "level", "text", "paraphrase", "reframed", "attributes": {stated key:
  value}, "relevant"}`` where a gallery image is relevant iff its attributes contain every stated
  attribute-value (cross-identity labels); ``paraphrase`` states the same attributes in held-out words and
  sentence frames, ``reframed`` in the held-out frames with plain value names (``engine.retrieval.text.paraphrase``);
  ``handwritten`` = the shipped hand-written descriptions (``resources/texts/handwritten_queries.jsonl``) as
  ``{"text", "level", "attributes", "relevant"}`` by the same rule; ``chains`` = one 5-step progressive
  chain per test identity
  ``{"identity", "outfit", "source", "steps": [{"level", "text", "attributes", "relevant"}]}``, nested
  (each step states a superset of the previous one). Texts come from ``engine.retrieval.text.generator.query_chain``.
- ``modalities.json`` (FlexiReID): ``modes`` = T, S, IR, T+S, T+IR, S+IR, T+S+IR; ``gallery`` = RGB HR
  items with their ``attributes``; ``queries`` = one per test identity ``{"identity", "outfit", "text",
  "text_level", "source", "attributes", "sketch": item, "ir": item, "relevant"}``: the sketch, the IR image
  and the text's source all show one outfit (the sketch's; HR preferred), ``attributes`` are that outfit's,
  and relevant = the identity's gallery images in that outfit. Identities without a sketch, or without an
  IR or RGB HR image of a sketch's outfit, are skipped (counted in the summary).
- ``cross_resolution.json`` (CRST): ``resolutions``; ``gallery`` = every RGB HR image at each of the four
  levels (HR: the world's file; mild, mid, ultra: that image area-downsampled by the world's factors ×2,
  ×4, ×8, written under ``cross_resolution/LEVEL/`` beside the benchmark files, item ``id`` ``ID@LEVEL``,
  ``source_id`` the HR image), so every level holds the same people, outfits and count; ``mixed`` = one
  gallery index per HR image at a seeded level; ``queries`` = one per test identity ``{"identity",
  "outfit", "text", "text_level", "source", "relevant"}`` (finest description of the source, relevant =
  the identity's images in the source's outfit, at every level).
- ``anytime.json`` (Uni-AT): ``scenarios``; ``query`` and ``gallery`` = HR RGB and IR items with their
  (outfit) ``attributes``, which only the attribute oracle reads (``engine.lab.evaluation.oracle``). Each
  (identity, modality, outfit) group is ordered by (camera, id) and every other image, from a seeded
  start, goes to the query side (``n // 2`` of ``n``; a single image stays in the gallery), so query and
  gallery images of a group tend to come from different cameras. ``counts`` = per scenario the queries
  kept, valid pairs and positive pairs. The evaluator applies ``anytime_masks(query, gallery, scenario)``.
- ``summary.json``: the counts ``build_benchmarks`` returns.
"""

from __future__ import annotations

import os
import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from engine.ingest.datasets.records import Sample
from engine.ingest.datasets.world import manifest_path, read_world
from engine.kernel import jsonio
from engine.kernel.atomic import atomic_target, atomic_write_json
from engine.kernel.hashing import sha256_file
from engine.kernel.ontology import ATTRIBUTE_KEYS, LEVELS, ONTOLOGY
from engine.kernel.vocabulary import SCENARIOS
from engine.kernel.vocabulary import WORLD_RESOLUTIONS as RESOLUTIONS
from engine.lab.world.modalities import RESOLUTIONS as RESOLUTION_SIZES

VERSION = 3
BENCHMARKS: tuple[str, ...] = ("granularity", "modalities", "cross_resolution", "anytime")
MODES: tuple[str, ...] = ("T", "S", "IR", "T+S", "T+IR", "S+IR", "T+S+IR")
CHAIN_STEPS = 5
JPEG_QUALITY = 92  # the world's own (engine.lab.world.build)
#: The one relevance rule of each benchmark, written into its file and carried into its reports.
RELEVANCE: dict[str, str] = {
    "granularity": "attributes: a gallery image is relevant iff its outfit's attributes contain every "
                   "attribute-value the query states (any identity)",
    "modalities": "outfit: the query's identity in the outfit its text, sketch and IR image show",
    "cross_resolution": "outfit: the query's identity in the outfit its text describes, at every resolution",
    "anytime": "identity by scenario: same-clothes (ST) positives share the query's outfit, changed-clothes "
               "(LT) positives are the query's identity in another outfit",
}
Paraphrase = Callable[[dict[str, str], list[str], random.Random, str], str]  # (attributes, keys, rng, words)

QueryChain = Callable[[dict[str, str], random.Random], list[dict[str, Any]]]


# --------------------------------------------------------------------------------------------- any-time

def anytime_masks(query_records: Sequence[Any], gallery_records: Sequence[Any],
                  scenario: str) -> tuple[np.ndarray, np.ndarray]:
    """(valid, positive) Q×G boolean masks of one any-time scenario (docs/methods.md §3, Uni-AT ``others/eval.py``).

    Records are mappings (or objects) with ``identity``, ``camera``, ``outfit`` and ``modality``. Rules:
    drop same-identity same-camera gallery items; DT keeps RGB query with RGB gallery, NT IR with IR, AD
    only cross-modal pairs; ST positives share the outfit and same-identity other-outfit items are
    dropped; LT positives changed outfit and same-identity same-outfit items are dropped; a query left
    without a positive gets an all-False row. ``positive`` is a subset of ``valid``.
    """
    if scenario not in SCENARIOS:
        raise ValueError(f"unknown any-time scenario {scenario!r}; scenarios: {list(SCENARIOS)}")
    time_mode, clothes_mode = scenario.split("-")
    q = _columns(query_records, "query")
    g = _columns(gallery_records, "gallery")
    same_id = q["identity"][:, None] == g["identity"][None, :]
    same_outfit = q["outfit"][:, None] == g["outfit"][None, :]
    valid = ~(same_id & (q["camera"][:, None] == g["camera"][None, :]))
    q_rgb, q_ir = q["modality"] == "rgb", q["modality"] == "ir"
    g_rgb, g_ir = g["modality"] == "rgb", g["modality"] == "ir"
    if time_mode == "DT":
        valid &= q_rgb[:, None] & g_rgb[None, :]
    elif time_mode == "NT":
        valid &= q_ir[:, None] & g_ir[None, :]
    else:
        valid &= (q_rgb[:, None] & g_ir[None, :]) | (q_ir[:, None] & g_rgb[None, :])
    if clothes_mode == "ST":
        valid &= ~(same_id & ~same_outfit)
        positive = valid & same_id & same_outfit
    else:
        valid &= ~(same_id & same_outfit)
        positive = valid & same_id & ~same_outfit
    valid &= positive.any(axis=1, keepdims=True)
    return valid, positive


def _columns(records: Sequence[Any], side: str) -> dict[str, np.ndarray]:
    columns: dict[str, list[Any]] = {"identity": [], "camera": [], "outfit": [], "modality": []}
    for i, record in enumerate(records):
        for key, values in columns.items():
            if isinstance(record, Mapping):
                if key not in record:
                    raise ValueError(f"{side} record {i}: missing field {key!r}")
                values.append(record[key])
            elif hasattr(record, key):
                values.append(getattr(record, key))
            else:
                raise ValueError(f"{side} record {i}: missing field {key!r}")
    return {"identity": np.array(columns["identity"], dtype=np.int64).reshape(-1),
            "camera": np.array([str(c) for c in columns["camera"]], dtype=object).reshape(-1),
            "outfit": np.array([-1 if o is None else o for o in columns["outfit"]], dtype=np.int64).reshape(-1),
            "modality": np.array(columns["modality"], dtype=object).reshape(-1)}


def anytime_split(samples: Sequence[Sample], seed: int) -> tuple[list[Sample], list[Sample]]:
    """Deterministic query/gallery split of HR RGB and IR images (see the module docstring)."""
    groups: dict[tuple[int, str, int | None], list[Sample]] = {}
    for s in samples:
        if s.modality in ("rgb", "ir") and s.extra["resolution"] == "HR":
            groups.setdefault((s.identity, s.modality, s.outfit), []).append(s)
    query_ids: set[str] = set()
    for key in sorted(groups, key=lambda k: (k[0], k[1], -1 if k[2] is None else k[2])):
        group = sorted(groups[key], key=lambda s: (s.camera or "", s.extra["id"]))
        start = random.Random(f"{seed}:anytime:{key[0]}:{key[1]}:{key[2]}").randrange(2)
        picks = [s for i, s in enumerate(group) if (i + start) % 2 == 0][: len(group) // 2]
        query_ids.update(s.extra["id"] for s in picks)
    pool = [s for group in groups.values() for s in group]
    pool.sort(key=lambda s: (s.identity, s.extra["id"]))
    return [s for s in pool if s.extra["id"] in query_ids], [s for s in pool if s.extra["id"] not in query_ids]


# ---------------------------------------------------------------------------------------- attributes

class AttributeTable:
    """Gallery attributes as an integer matrix, for the containment test of cross-identity relevance."""

    def __init__(self, attributes: Sequence[Mapping[str, str]]):
        self.matrix = np.full((len(attributes), len(ATTRIBUTE_KEYS)), -1, dtype=np.int16)
        for row, attrs in enumerate(attributes):
            for key, value in attrs.items():
                self.matrix[row, ATTRIBUTE_KEYS.index(key)] = ONTOLOGY.attributes[key].index(value)

    def relevant(self, stated: Mapping[str, str]) -> list[int]:
        """Indices of the rows whose attributes contain every stated attribute-value (docs/methods.md §5, MG-Eval)."""
        columns = [ATTRIBUTE_KEYS.index(k) for k in stated]
        values = [ONTOLOGY.attributes[k].index(v) for k, v in stated.items()]
        mask = np.all(self.matrix[:, columns] == np.array(values, dtype=np.int16), axis=1)
        return np.flatnonzero(mask).tolist()


def _steps(chain: QueryChain, attributes: dict[str, str], rng: random.Random, identity: int) -> list[dict]:
    """Call the generator's query chain and check its contract (text, keys ⊂ attributes, level, nesting)."""
    steps = chain(dict(attributes), rng)
    if not isinstance(steps, list) or not steps:
        raise ValueError(f"query_chain returned {steps!r:.80} for identity {identity}; expected a non-empty list")
    out, previous = [], set()
    for k, step in enumerate(steps):
        where = f"query_chain step {k} for identity {identity}"
        if not isinstance(step, Mapping) or not {"text", "keys", "level"} <= set(step):
            raise ValueError(f"{where}: expected an object with text, keys and level, got {step!r:.120}")
        keys = list(step["keys"])
        unknown = [key for key in keys if key not in attributes]
        if unknown:
            raise ValueError(f"{where}: keys {unknown} are not attributes of the source image")
        if step["level"] not in LEVELS:
            raise ValueError(f"{where}: level {step['level']!r} is not one of {list(LEVELS)}")
        if not isinstance(step["text"], str) or not step["text"].strip():
            raise ValueError(f"{where}: empty text")
        if not previous <= set(keys):
            raise ValueError(f"{where}: keys {sorted(keys)} do not contain the previous step's {sorted(previous)}")
        previous = set(keys)
        out.append({"level": step["level"], "text": step["text"], "attributes": {key: attributes[key] for key in keys}})
    return out


def _default_chain() -> QueryChain:
    from engine.retrieval.text.generator import query_chain

    return query_chain


def _default_paraphrase() -> Paraphrase:
    from engine.retrieval.text.paraphrase import paraphrase

    return paraphrase


def shipped_handwritten_queries() -> list[dict[str, Any]]:
    """The hand-written descriptions with their attribute labels (``resources/texts``), in file order."""
    from engine.kernel.resources import resource_path

    path = resource_path("texts", "handwritten_queries.jsonl")
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = jsonio.loads(line, f"{path} line {n}")
        except jsonio.JsonInputError as exc:
            raise ValueError(str(exc).replace(": not valid JSON", ": invalid JSON", 1)) from None
        if not isinstance(record, dict) or not isinstance(record.get("text"), str) or not record.get("attributes"):
            raise ValueError(f"{path} line {n}: expected an object with a text and its attributes")
        out.append({"text": record["text"], "attributes": dict(record["attributes"])})
    return out


def _handwritten(rows: Sequence[Mapping[str, Any]], table: AttributeTable) -> list[dict[str, Any]]:
    out = []
    for n, row in enumerate(rows):
        attributes = dict(row["attributes"])
        for key, value in attributes.items():
            if key not in ATTRIBUTE_KEYS or value not in ONTOLOGY.attributes[key]:
                raise ValueError(f"hand-written query {n} ({row['text'][:40]!r}): {key}={value!r} is not in the "
                                 "ontology")
        out.append({"text": row["text"], "level": ONTOLOGY.level_of(len(attributes)), "attributes": attributes,
                    "relevant": table.relevant(attributes)})
    return out


# ---------------------------------------------------------------------------------------- builders

def _item(sample: Sample) -> dict[str, Any]:
    return {"id": sample.extra["id"], "image": sample.extra["relative_image"], "identity": sample.identity,
            "outfit": sample.outfit, "camera": sample.camera, "modality": sample.modality,
            "resolution": sample.extra["resolution"]}


def _is_rgb_hr(sample: Sample) -> bool:
    return sample.modality == "rgb" and sample.extra["resolution"] == "HR"


def _finest(sample: Sample) -> tuple[str, str]:
    descriptions = sample.extra["descriptions"]
    level = next((lv for lv in reversed(LEVELS) if lv in descriptions), None)
    if level is None:
        raise ValueError(f"world image {sample.extra['id']!r} has no descriptions")
    return level, descriptions[level]


def _pick(candidates: list[Sample], outfit: int | None, rng: random.Random) -> Sample | None:
    """Prefer the given outfit, then HR; among equals a seeded draw."""
    if not candidates:
        return None
    best = min((c.outfit != outfit, c.extra["resolution"] != "HR") for c in candidates)
    pool = sorted((c for c in candidates if (c.outfit != outfit, c.extra["resolution"] != "HR") == best),
                  key=lambda c: c.extra["id"])
    return rng.choice(pool)


def _granularity(samples: list[Sample], sources: dict[int, Sample], chain: QueryChain, paraphrase: Paraphrase,
                 handwritten: Sequence[Mapping[str, Any]], seed: int) -> tuple[dict, dict]:
    """(file body, counts) of the granularity benchmark: per-level queries (generated and paraphrased),
    the hand-written queries and progressive chains."""
    gallery = [s for s in samples if _is_rgb_hr(s)]
    table = AttributeTable([s.extra["attributes"] for s in gallery])
    queries, chains = [], []
    missing_levels: Counter[str] = Counter()
    short_chains = 0
    for identity, source in sorted(sources.items()):
        attrs = source.extra["attributes"]
        head = {"identity": identity, "outfit": source.outfit, "source": source.extra["id"]}
        by_level: dict[str, dict] = {}
        for step in _steps(chain, attrs, random.Random(f"{seed}:granularity:{identity}"), identity):
            by_level.setdefault(step["level"], step)
        for level in LEVELS:
            step = by_level.get(level)
            if step is None:
                missing_levels[level] += 1
                continue
            keys = list(step["attributes"])
            held_out = paraphrase(attrs, keys, random.Random(f"{seed}:paraphrase:{identity}:{level}"), "held_out")
            reframed = paraphrase(attrs, keys, random.Random(f"{seed}:reframed:{identity}:{level}"), "canonical")
            queries.append({**head, **step, "paraphrase": held_out, "reframed": reframed,
                            "relevant": table.relevant(step["attributes"])})
        steps = _steps(chain, attrs, random.Random(f"{seed}:chain:{identity}"), identity)
        if len(steps) != CHAIN_STEPS:
            short_chains += 1
            continue
        chains.append({**head, "steps": [{**step, "relevant": table.relevant(step["attributes"])} for step in steps]})
    data = {"levels": list(LEVELS),
            "gallery": [{**_item(s), "attributes": s.extra["attributes"]} for s in gallery],
            "queries": queries, "handwritten": _handwritten(handwritten, table), "chains": chains}
    summary = {"gallery": len(gallery), "queries": len(queries),
               "handwritten_with_relevant": sum(bool(q["relevant"]) for q in data["handwritten"]),
               "queries_per_level": {lv: sum(q["level"] == lv for q in queries) for lv in LEVELS},
               "chains": len(chains), "missing_levels": dict(missing_levels), "short_chains": short_chains}
    return data, summary


def _outfit_positions(gallery: list[Sample]) -> dict[tuple[int, int | None], list[int]]:
    out: dict[tuple[int, int | None], list[int]] = {}
    for j, sample in enumerate(gallery):
        out.setdefault((sample.identity, sample.outfit), []).append(j)
    return out


def _modalities(samples: list[Sample], seed: int) -> tuple[dict, dict]:
    """(file body, counts) of the modalities benchmark: text, sketch and IR of one outfit per identity."""
    gallery = [s for s in samples if _is_rgb_hr(s)]
    positions = _outfit_positions(gallery)
    by_identity: dict[int, dict[str, list[Sample]]] = {}
    for s in samples:
        by_identity.setdefault(s.identity, {}).setdefault(s.modality, []).append(s)
    queries, skipped = [], Counter()
    for identity in sorted(by_identity):
        rng = random.Random(f"{seed}:modalities:{identity}")
        shots = by_identity[identity]
        outfits = sorted({s.outfit for s in shots.get("sketch", [])}, key=lambda o: -1 if o is None else o)
        if not outfits:
            skipped["no_sketch"] += 1
            continue
        usable = [o for o in outfits if any(s.outfit == o for s in shots.get("ir", []))]
        usable = [o for o in usable if any(s.outfit == o and _is_rgb_hr(s) for s in shots.get("rgb", []))]
        if not usable:
            has_ir = any(s.outfit in outfits for s in shots.get("ir", []))
            skipped["no_ir" if not has_ir else "no_rgb_hr"] += 1
            continue
        outfit = rng.choice(usable)
        sketch = _pick([s for s in shots["sketch"] if s.outfit == outfit], outfit, rng)
        ir = _pick([s for s in shots["ir"] if s.outfit == outfit], outfit, rng)
        source = rng.choice(sorted((s for s in shots["rgb"] if s.outfit == outfit and _is_rgb_hr(s)),
                                   key=lambda s: s.extra["id"]))
        level, text = _finest(source)
        queries.append({"identity": identity, "outfit": outfit, "text": text, "text_level": level,
                        "source": source.extra["id"], "attributes": source.extra["attributes"],
                        "sketch": _item(sketch), "ir": _item(ir), "relevant": positions[(identity, outfit)]})
    data = {"modes": list(MODES), "gallery": [{**_item(s), "attributes": s.extra["attributes"]} for s in gallery],
            "queries": queries}
    return data, {"gallery": len(gallery), "queries": len(queries), "skipped_identities": dict(skipped)}


def _low_resolution_copy(source: Path, target: Path, level: str) -> None:
    """Area-downsample an HR image by the world's factor for ``level`` and write it (JPEG q92 or PNG)."""
    image = cv2.imread(str(source), cv2.IMREAD_COLOR)
    if image is None:
        raise ValueError(f"world image cannot be read (missing or not an image): {source}")
    (hr_h, hr_w), (lv_h, lv_w) = RESOLUTION_SIZES["HR"], RESOLUTION_SIZES[level]
    size = (max(1, round(image.shape[1] * lv_w / hr_w)), max(1, round(image.shape[0] * lv_h / hr_h)))
    small = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
    params = [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY] if target.suffix.lower() in (".jpg", ".jpeg") else []
    with atomic_target(target, suffix=target.suffix) as tmp:
        if not cv2.imwrite(str(tmp), small, params):
            raise OSError(f"cannot write {target}")


def _cross_resolution(samples: list[Sample], sources: dict[int, Sample], world_root: Path, out_dir: Path,
                      seed: int) -> tuple[dict, dict]:
    """(file body, counts) of the cross-resolution benchmark: every RGB HR image at each level, text queries."""
    hr = [s for s in samples if _is_rgb_hr(s)]
    gallery: list[dict[str, Any]] = []
    for level in RESOLUTIONS:
        for s in hr:
            item = {**_item(s), "resolution": level, "source_id": s.extra["id"]}
            if level != "HR":
                target = out_dir / "cross_resolution" / level / f"{s.extra['id']}{Path(s.image).suffix}"
                _low_resolution_copy(Path(s.image), target, level)
                item["id"] = f"{s.extra['id']}@{level}"
                item["image"] = os.path.relpath(target.resolve(), world_root.resolve())
            gallery.append(item)
    positions: dict[tuple[int, int | None], list[int]] = {}
    for j, item in enumerate(gallery):
        positions.setdefault((item["identity"], item["outfit"]), []).append(j)
    mixed = [RESOLUTIONS.index(random.Random(f"{seed}:mixed:{s.extra['id']}").choice(RESOLUTIONS)) * len(hr) + i
             for i, s in enumerate(hr)]
    queries = []
    for identity, source in sorted(sources.items()):
        level, text = _finest(source)
        queries.append({"identity": identity, "outfit": source.outfit, "text": text, "text_level": level,
                        "source": source.extra["id"], "relevant": positions.get((identity, source.outfit), [])})
    data = {"resolutions": list(RESOLUTIONS), "gallery": gallery, "mixed": mixed, "queries": queries}
    per_resolution = {r: sum(item["resolution"] == r for item in gallery) for r in RESOLUTIONS}
    return data, {"gallery": len(gallery), "gallery_per_resolution": per_resolution, "queries": len(queries)}


def _anytime(samples: list[Sample], seed: int) -> tuple[dict, dict]:
    """(file body, counts) of the any-time benchmark: query/gallery split and per-scenario counts."""
    query, gallery = anytime_split(samples, seed)
    q_items = [{**_item(s), "attributes": s.extra["attributes"]} for s in query]
    g_items = [{**_item(s), "attributes": s.extra["attributes"]} for s in gallery]
    counts = {}
    for scenario in SCENARIOS:
        valid, positive = anytime_masks(q_items, g_items, scenario)
        counts[scenario] = {"queries": int(positive.any(axis=1).sum()), "valid_pairs": int(valid.sum()),
                            "positive_pairs": int(positive.sum())}
    data = {"scenarios": list(SCENARIOS), "query": q_items, "gallery": g_items, "counts": counts}
    return data, {"query": len(q_items), "gallery": len(g_items), "scenarios": counts}


def build_benchmarks(world_dir: Path, out_dir: Path | None = None, seed: int = 0, *,
                     max_identities: int | None = None, query_chain: QueryChain | None = None,
                     paraphrase: Paraphrase | None = None,
                     handwritten: Sequence[Mapping[str, Any]] | None = None) -> dict:
    """Build the four benchmark files from a world; returns the summary counts (also ``summary.json``).

    ``query_chain`` and ``paraphrase`` default to ``engine.retrieval.text.generator.query_chain`` and
    ``engine.retrieval.text.paraphrase.paraphrase``; ``handwritten`` to ``shipped_handwritten_queries()``."""
    world_dir = Path(world_dir)
    world = read_world(world_dir)
    if not world.samples:
        raise ValueError(f"world {world_dir} has no images")
    out_dir = Path(out_dir) if out_dir is not None else world_dir / "benchmarks"
    chain = query_chain if query_chain is not None else _default_chain()
    paraphrase = paraphrase if paraphrase is not None else _default_paraphrase()
    handwritten = shipped_handwritten_queries() if handwritten is None else handwritten
    identities = list(world.identities)
    if max_identities is not None:
        if max_identities < 1:
            raise ValueError(f"max_identities must be >= 1, got {max_identities}")
        if max_identities < len(identities):
            identities = sorted(random.Random(f"{seed}:identities").sample(identities, max_identities))
    chosen = set(identities)
    samples = [s for s in world.samples if s.identity in chosen]
    sources = {}
    for identity in identities:
        candidates = sorted((s for s in samples if s.identity == identity and _is_rgb_hr(s)),
                            key=lambda s: s.extra["id"])
        if candidates:
            sources[identity] = random.Random(f"{seed}:source:{identity}").choice(candidates)
    manifest = manifest_path(world_dir)
    header = {"version": VERSION, "world": os.path.relpath(manifest.parent.resolve(), out_dir.resolve()),
              "manifest_sha256": sha256_file(manifest), "seed": seed, "identities": identities}
    built = {"granularity": _granularity(samples, sources, chain, paraphrase, handwritten, seed),
             "modalities": _modalities(samples, seed),
             "cross_resolution": _cross_resolution(samples, sources, manifest.parent, out_dir, seed),
             "anytime": _anytime(samples, seed)}
    summary: dict[str, Any] = {"out_dir": str(out_dir), "seed": seed, "identities": len(identities),
                               "identities_without_rgb_hr": len(identities) - len(sources)}
    for name, (data, counts) in built.items():
        atomic_write_json(out_dir / f"{name}.json", {"benchmark": name, **header, "relevance": RELEVANCE[name], **data})
        summary[name] = counts
    atomic_write_json(out_dir / "summary.json", {"benchmark": "summary", **header, **summary}, indent=2)
    return summary


# ---------------------------------------------------------------------------------------- loading

def load_benchmark(out_dir: Path, name: str) -> dict[str, Any]:
    """Read one benchmark file written by ``build_benchmarks``; ``world`` comes back as an absolute path."""
    if name not in (*BENCHMARKS, "summary"):
        raise ValueError(f"unknown benchmark {name!r}; benchmarks: {[*BENCHMARKS, 'summary']}")
    path = Path(out_dir) / f"{name}.json"
    if not path.is_file():
        raise FileNotFoundError(f"benchmark file not found: {path} (run `lineup world benchmarks WORLD`)")
    try:
        data = jsonio.read(path)
    except jsonio.JsonInputError as exc:  # not JSON, not UTF-8, nested too deep, too large: named
        raise ValueError(str(exc).replace(": not valid JSON", ": invalid JSON", 1)) from None
    if not isinstance(data, dict) or data.get("benchmark") != name:
        raise ValueError(f"{path}: not a {name!r} benchmark file")
    if data.get("version") != VERSION:
        raise ValueError(f"{path}: schema version {data.get('version')!r}, this code reads version {VERSION}")
    data["world"] = str((Path(out_dir) / data["world"]).resolve())
    return data


def relevance_matrix(benchmark: Mapping[str, Any], queries: Sequence[Mapping[str, Any]] | None = None) -> np.ndarray:
    """Q×G boolean matrix from the ``relevant`` index lists of a loaded benchmark (or of chain steps)."""
    rows = benchmark["queries"] if queries is None else queries
    out = np.zeros((len(rows), len(benchmark["gallery"])), dtype=bool)
    for i, row in enumerate(rows):
        out[i, row["relevant"]] = True
    return out
