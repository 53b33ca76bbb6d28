"""Ablations as data: a plan is a list of model configs trained at one fixed budget and evaluated by the same
protocols on the same unseen world, so that rows differ only in the components they switch (docs/methods.md §1.8, §2,
§3, §5 ablation tables).

A plan file (``resources/ablations/*.json``)::

    {"name": "cmam", "description": "...",
     "training": {TrainConfig fields shared by every row: the budget},
     "model_overrides": {deep-merged onto every row's config: the shared recipe},
     "protocols": ["mg-separate"],
     "init": "warm" | absent,  # "warm": every row starts from the checkpoint given as ``init`` to run_ablation
     "init_scope": "all" | "backbone",  # what is copied from it (engine.lab.train.warm_start); "all"
     "compare": "first" | "previous",  # paired comparisons against the first row (default) or the row above
     "rows": [{"name": "baseline", "model": "cmam_baseline", "model_overrides": {...},
               "training": {TrainConfig fields this row alone changes, e.g. "trainable"}}, ...]}

``run_ablation`` trains each row into ``OUT/ROW`` (resuming a cut run, skipping a finished one), evaluates it
into ``OUT/ROW/eval-PROTOCOL.json`` and writes ``OUT/table.json`` and ``OUT/table.md`` (atomically, after
every row, so a cut run leaves a readable partial table). With several ``seeds`` every row is trained once per
seed into ``OUT/ROW/seed-S``, and each table cell is the mean over the seeds with its 95 % interval (Student's t
half-width of the mean); every later row is also compared seed by seed with the plan's first row, or with the
row above it in a cumulative plan ("compare": "previous"): the mean difference and its interval, which is how a
direction is read.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from scipy import stats

from engine.kernel import jsonio
from engine.kernel.atomic import atomic_write_json, atomic_write_text
from engine.kernel.progress import ProgressFn, no_progress
from engine.lab.train.config import TrainConfig, load_run_config
from engine.lab.train.state import RunBusyError, RunFolder
from engine.lab.train.trainer import TrainOptions, train
from engine.lab.train.warm_start import WARM_START_SCOPES

ROW_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
PLAN_KEYS = frozenset({"name", "description", "training", "model_overrides", "protocols", "rows", "init",
                       "init_scope", "compare"})
COMPARISONS = ("first", "previous")
ROW_KEYS = frozenset({"name", "model", "model_overrides", "note", "training"})
WORLD_PROTOCOLS = ("mg-separate", "mg-progressive", "modes", "cross-res", "anytime")


class AblationPlanError(ValueError):
    """A plan file that cannot be used; the message names the file, the key and the problem."""


@dataclass(frozen=True)
class AblationRow:
    name: str
    model: str | dict[str, Any]
    model_overrides: dict[str, Any] = field(default_factory=dict)
    note: str = ""
    training: dict[str, Any] = field(default_factory=dict)  # over the plan's budget, for this row alone


@dataclass(frozen=True)
class AblationPlan:
    name: str
    description: str
    training: dict[str, Any]
    model_overrides: dict[str, Any]
    protocols: tuple[str, ...]
    rows: tuple[AblationRow, ...]
    source: str = "plan"
    warm_start: bool = False  # every row starts from one given checkpoint's matching weights
    init_scope: str = "all"  # which of them: all, or only the backbone's (engine.lab.train.warm_start)
    compare: str = "first"  # each later row is paired with the first row, or with the previous one

    def run_file(self, row: AblationRow) -> dict[str, Any]:
        """The run dict of one row: its model, the shared recipe then the row's own overrides, the budget
        (then the row's own training fields)."""
        return {"model": row.model, "model_overrides": _merge(self.model_overrides, row.model_overrides),
                "training": {**self.training, **row.training}}


def _merge(base: dict[str, Any], extra: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in extra.items():
        out[key] = _merge(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def parse_plan(data: Any, source: str = "plan") -> AblationPlan:
    """Validate a plan object (every row's run config is resolved here, so a typo fails before any training)."""

    def need(condition: bool, message: str) -> None:
        if not condition:
            raise AblationPlanError(f"{source}: {message}")

    need(isinstance(data, dict), "a plan must be a JSON object")
    unknown = set(data) - PLAN_KEYS
    need(not unknown, f"unknown key {sorted(unknown)[0] if unknown else ''!r} (allowed: {sorted(PLAN_KEYS)})")
    need(isinstance(data.get("name"), str) and ROW_NAME.match(data["name"]) is not None,
         "'name' must be a short name of letters, digits, _ . + -")
    training = data.get("training", {})
    need(isinstance(training, dict), "'training' must be an object")
    try:
        TrainConfig.from_dict(training, f"{source} training")
    except ValueError as exc:
        raise AblationPlanError(str(exc)) from None
    overrides = data.get("model_overrides", {})
    need(isinstance(overrides, dict), "'model_overrides' must be an object")
    protocols = data.get("protocols", ["mg-separate"])
    need(isinstance(protocols, list) and protocols and all(p in WORLD_PROTOCOLS for p in protocols),
         f"'protocols' must be a non-empty list of {list(WORLD_PROTOCOLS)}")
    rows_data = data.get("rows")
    need(isinstance(rows_data, list) and rows_data, "'rows' must be a non-empty list")
    rows = []
    for i, row in enumerate(rows_data):
        need(isinstance(row, dict), f"rows[{i}] must be an object")
        extra = set(row) - ROW_KEYS
        need(not extra, f"rows[{i}]: unknown key {sorted(extra)[0] if extra else ''!r} (allowed: {sorted(ROW_KEYS)})")
        need(isinstance(row.get("name"), str) and ROW_NAME.match(row["name"]) is not None,
             f"rows[{i}]: 'name' must be a short name of letters, digits, _ . + -")
        need(isinstance(row.get("model"), (str, dict)), f"rows[{i}] ({row.get('name')}): 'model' is required")
        need(isinstance(row.get("model_overrides", {}), dict), f"rows[{i}]: 'model_overrides' must be an object")
        need(isinstance(row.get("training", {}), dict), f"rows[{i}]: 'training' must be an object")
        rows.append(AblationRow(row["name"], row["model"], row.get("model_overrides", {}), row.get("note", ""),
                                row.get("training", {})))
    need(data.get("init", "warm") == "warm", "'init' can only be \"warm\" (the checkpoint is given when running)")
    need(data.get("init_scope", "all") in WARM_START_SCOPES, f"'init_scope' must be one of {list(WARM_START_SCOPES)}")
    need("init_scope" not in data or "init" in data, "'init_scope' needs \"init\": \"warm\"")
    need(data.get("compare", "first") in COMPARISONS, f"'compare' must be one of {list(COMPARISONS)}")
    names = [r.name for r in rows]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    need(duplicate is None, f"row name {duplicate!r} is used twice")
    plan = AblationPlan(data["name"], data.get("description", ""), training, overrides, tuple(protocols),
                        tuple(rows), source, warm_start="init" in data, init_scope=data.get("init_scope", "all"),
                        compare=data.get("compare", "first"))
    for row in rows:
        try:
            load_run_config(plan.run_file(row))
        except ValueError as exc:
            raise AblationPlanError(f"{source}: row {row.name!r}: {exc}") from None
    return plan


def load_plan(path: str | Path) -> AblationPlan:
    """A plan file by path, or by name from ``resources/ablations``."""
    path = Path(path)
    if not path.is_file() and path.suffix != ".json" and len(path.parts) == 1:
        from engine.kernel.resources import resource_path

        with contextlib.suppress(FileNotFoundError):
            path = resource_path("ablations", f"{path}.json")
    if not path.is_file():
        raise AblationPlanError(f"ablation plan not found: {path}")
    try:
        data = jsonio.read(path)
    except jsonio.JsonInputError as exc:
        raise AblationPlanError(str(exc)) from None
    return parse_plan(data, str(path))


# ----------------------------------------------------------------------------------------------- running


def _row_complete(folder: Path, plan: AblationPlan) -> bool:
    return all((folder / f"eval-{protocol}.json").is_file() for protocol in plan.protocols)


def _training_summary(folder: Path) -> dict[str, Any]:
    """Steps, summed step time, the last validation, and the curve: per epoch its mean loss and validation."""
    steps, seconds, last, curve = 0, 0.0, None, {}
    log = folder / "log.jsonl"
    if log.is_file():
        for number, line in enumerate(log.read_text(encoding="utf-8").splitlines(), start=1):
            try:
                record = jsonio.loads(line, f"{log} line {number}")
            except jsonio.JsonInputError:
                continue
            if record.get("event") == "step":
                steps = max(steps, record["global_step"])
                seconds += record.get("seconds", 0.0)
            elif record.get("event") == "epoch":
                last = record.get("validation")
                curve[record.get("epoch")] = {"epoch": record.get("epoch"), "mean_loss": record.get("mean_loss"),
                                              "validation": last or {}}  # an epoch repeated by a resume: the last
    return {"steps": steps, "step_seconds": round(seconds, 1), "last_validation": last, "curve": list(curve.values())}


def row_folders(out: Path, row: str, seeds: Sequence[int]) -> dict[int, Path]:
    """Seed → run folder of one row: ``OUT/ROW`` for a single seed, ``OUT/ROW/seed-S`` for several."""
    if len(seeds) == 1:
        return {seeds[0]: out / row}
    return {seed: out / row / f"seed-{seed}" for seed in seeds}


def _reports(folder: Path, protocols: Sequence[str]) -> dict[str, dict[str, Any]]:
    reports = {}
    for protocol in protocols:
        file = folder / f"eval-{protocol}.json"
        if file.is_file():
            report = jsonio.read(file, expect=dict)
            reports[protocol] = {"overall": report["overall"], "by": report.get("by", {})}
    return reports


def collect_table(plan: AblationPlan, out: Path) -> dict[str, Any]:
    """The table so far: each row's evaluation reports (rows not yet evaluated on every seed are pending)."""
    recorded = _recorded_plan(out)
    seeds = [int(s) for s in recorded.get("seeds") or [recorded.get("seed", 0)]]
    rows = []
    for row in plan.rows:
        folders = row_folders(out, row.name, seeds)
        runs = {seed: _reports(folder, plan.protocols) for seed, folder in folders.items()}
        done = [seed for seed, reports in runs.items() if len(reports) == len(plan.protocols)]
        reports = {}
        if len(seeds) == 1:
            reports = runs[seeds[0]]
        elif done:
            reports = {protocol: seed_summary([runs[seed][protocol] for seed in done])
                       for protocol in plan.protocols}
        summaries = [_training_summary(folder) for folder in folders.values()]
        curves = {seed: summary.pop("curve") for seed, summary in zip(folders, summaries, strict=True)}
        training = summaries[0] if len(seeds) == 1 else {
            "steps": max(s["steps"] for s in summaries),
            "step_seconds": round(sum(s["step_seconds"] for s in summaries), 1), "last_validation": None}
        rows.append({"name": row.name, "model": row.model if isinstance(row.model, str) else "(inline)",
                     "note": row.note, "own_training": row.training,
                     "status": "done" if len(done) == len(seeds) else "pending",
                     "seeds": done, "training": training, "reports": reports, "runs": runs,
                     "curves": {str(seed): curve for seed, curve in curves.items() if curve}})
    for i, row in enumerate(rows[1:] if len(seeds) > 1 else [], start=1):
        row["paired"] = paired_against(rows[0] if plan.compare == "first" else rows[i - 1], row, plan.protocols)
    for row in rows:
        del row["runs"]
    return {"plan": plan.name, "description": plan.description, "training": plan.training,
            "model_overrides": plan.model_overrides, "protocols": list(plan.protocols),
            "init": recorded.get("init"), "init_scope": plan.init_scope, "compare": plan.compare, "seeds": seeds,
            "rows": rows}


def seed_summary(reports: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Mean over seeds of every metric of ``{"overall", "by"}`` reports, and the 95 % interval half-widths
    (Student's t, n − 1 degrees of freedom; none for a single seed)."""
    def merge(blocks: list[dict[str, Any] | None]) -> tuple[dict[str, Any], dict[str, Any]]:
        mean, half = {}, {}
        keys = [k for k, v in (blocks[0] or {}).items() if v is None or isinstance(v, int | float)]
        for key in keys:
            values = [b.get(key) if b else None for b in blocks]
            if any(v is None for v in values):
                mean[key] = half[key] = None
                continue
            array = np.asarray(values, dtype=float)
            mean[key] = float(array.mean())
            half[key] = None if array.size < 2 else float(
                stats.t.ppf(0.975, array.size - 1) * array.std(ddof=1) / np.sqrt(array.size))
        return mean, half

    overall, overall_half = merge([r["overall"] for r in reports])
    by, by_half = {}, {}
    for key in reports[0].get("by", {}):
        by[key], by_half[key] = merge([r.get("by", {}).get(key) for r in reports])
    return {"overall": overall, "by": by, "interval95": {"overall": overall_half, "by": by_half},
            "seeds": len(reports)}


def paired_against(reference: dict[str, Any], row: dict[str, Any],
                   protocols: Sequence[str]) -> dict[str, Any]:
    """``row`` minus ``reference`` seed by seed (both trained on the same seed), per protocol: the mean
    difference of every metric with its 95 % interval (seed_summary over the per-seed differences). Pairing
    removes what a seed does to both rows alike (the batches drawn, the fresh components' initialisation)."""
    seeds = [seed for seed in reference["seeds"] if seed in row["seeds"]]
    if len(seeds) < 2:
        return {}
    paired = {}
    for protocol in protocols:
        differences = [_difference(row["runs"][seed][protocol], reference["runs"][seed][protocol])
                       for seed in seeds]
        paired[protocol] = {"against": reference["name"], **seed_summary(differences)}
    return paired


def _difference(report: dict[str, Any], reference: dict[str, Any]) -> dict[str, Any]:
    def minus(block: dict[str, Any], base: dict[str, Any] | None) -> dict[str, Any]:
        return {key: None if value is None or (base or {}).get(key) is None else value - base[key]
                for key, value in block.items() if value is None or isinstance(value, int | float)}
    return {"overall": minus(report["overall"], reference["overall"]),
            "by": {key: minus(block, reference.get("by", {}).get(key))
                   for key, block in report.get("by", {}).items()}}


def _recorded_plan(out: Path) -> dict[str, Any]:
    try:
        return jsonio.read(out / "plan.json")
    except (OSError, jsonio.JsonInputError):
        return {}


def _fmt(value: Any) -> str:
    return "—" if value is None else f"{value:.3f}"


def _cell(block: dict[str, Any] | None, half: dict[str, Any] | None) -> str:
    """mAP (R@1), with the mAP's 95 % interval half-width when the row ran on several seeds."""
    if not block:
        return "—"
    spread = f" ± {_fmt(half['mAP'])}" if half and half.get("mAP") is not None else ""
    return f"{_fmt(block.get('mAP'))}{spread} ({_fmt(block.get('R@1'))})"


def _signed_cell(block: dict[str, Any] | None, half: dict[str, Any] | None) -> str:
    """Δ mAP ± its 95 % interval (Δ R@1), signed."""
    if not block or block.get("mAP") is None:
        return "—"
    spread = f" ± {half['mAP']:.3f}" if half and half.get("mAP") is not None else ""
    r1 = block.get("R@1")
    return f"{block['mAP']:+.3f}{spread} ({'—' if r1 is None else f'{r1:+.3f}'})"


def _start_sentence(table: dict[str, Any]) -> str:
    if not table.get("init"):
        return ""
    scope = " (its backbone tensors only: every component a row adds starts fresh)" \
        if table.get("init_scope") == "backbone" else ""
    return f" Every row starts from `{table['init']}`{scope}."


def _own_training_sentences(table: dict[str, Any]) -> str:
    return "".join(f" Row `{row['name']}` also trains with `{json.dumps(row['own_training'], sort_keys=True)}`."
                   for row in table["rows"] if row.get("own_training"))


def render_markdown(table: dict[str, Any]) -> str:
    """One markdown table per protocol: mAP per key (level, mode, resolution or scenario), then overall."""
    lines = [f"# Ablation `{table['plan']}`", "", table["description"], "",
             f"Budget (every row): `{json.dumps(table['training'], sort_keys=True)}`; shared recipe: "
             f"`{json.dumps(table['model_overrides'], sort_keys=True)}`."
             + _start_sentence(table) + _own_training_sentences(table), ""]
    for protocol in table["protocols"]:
        keys: list[str] = []
        for row in table["rows"]:
            for key in row["reports"].get(protocol, {}).get("by", {}):
                if key not in keys:
                    keys.append(key)
        seeds = table.get("seeds") or [0]
        legend = "Cells: mAP (R@1)." if len(seeds) == 1 else (
            f"Cells: mean over seeds {', '.join(map(str, seeds))} of mAP ± its 95 % interval (mean R@1).")
        lines += [f"## {protocol}", "", legend, ""]
        lines.append("| row | steps | " + " | ".join(keys + ["overall"]) + " |")
        lines.append("|---|---|" + "---|" * (len(keys) + 1))
        for row in table["rows"]:
            report = row["reports"].get(protocol)
            if report is None:
                cells = ["pending"] * (len(keys) + 1)
            else:
                blocks = [report["by"].get(k) for k in keys] + [report["overall"]]
                interval = report.get("interval95", {})
                halves = [interval.get("by", {}).get(k) for k in keys] + [interval.get("overall")]
                cells = [_cell(b, h) for b, h in zip(blocks, halves, strict=True)]
            lines.append(f"| {row['name']} | {row['training']['steps']} | " + " | ".join(cells) + " |")
        lines.append("")
        lines += _paired_lines(table, protocol, keys)
    lines += _curve_lines(table)
    return "\n".join(lines)


def _curve_lines(table: dict[str, Any]) -> list[str]:
    """Each run's learning curve: validation mAP per key and the mean training loss, epoch by epoch."""
    runs = [(row["name"], seed, curve) for row in table["rows"] for seed, curve in row.get("curves", {}).items()]
    if not runs:
        return []
    keys: list[str] = []
    for _, _, curve in runs:
        for point in curve:
            keys += [key for key in point["validation"] if key not in keys]
    lines = ["## Learning curves", "",
             "Held-out validation identities (text queries at each level, and sketch (S) and IR queries in runs "
             "that train them, against the identities' RGB images): mAP at the end of each epoch, and the epoch's "
             "mean training loss.", "",
             "| row | seed | " + " | ".join(f"{key} mAP" for key in keys) + " | mean loss |",
             "|---|---|" + "---|" * (len(keys) + 1)]
    for name, seed, curve in runs:
        cells = [" → ".join(_fmt((point["validation"].get(key) or {}).get("mAP")) for point in curve)
                 for key in keys]
        cells.append(" → ".join("—" if point["mean_loss"] is None else f"{point['mean_loss']:.3g}"
                                for point in curve))
        lines.append(f"| {name} | {seed} | " + " | ".join(cells) + " |")
    return lines + [""]


def _paired_lines(table: dict[str, Any], protocol: str, keys: list[str]) -> list[str]:
    paired = [(row["name"], row.get("paired", {}).get(protocol)) for row in table["rows"][1:]]
    paired = [(name, report) for name, report in paired if report]
    if not paired:
        return []
    previous = table.get("compare") == "previous"
    against = "Each row against the row above it" if previous else f"Against `{paired[0][1]['against']}`"
    lines = [f"{against}, paired by seed: mean difference of mAP ± its 95 % interval "
             "(mean difference of R@1); an interval that excludes 0 is a direction.", "",
             "| row | seeds | " + " | ".join(keys + ["overall"]) + " |",
             "|---|---|" + "---|" * (len(keys) + 1)]
    for name, report in paired:
        interval = report["interval95"]
        cells = [_signed_cell(report["by"].get(k), interval["by"].get(k)) for k in keys]
        cells.append(_signed_cell(report["overall"], interval["overall"]))
        label = f"{name} − {report['against']}" if previous else name
        lines.append(f"| {label} | {report['seeds']} | " + " | ".join(cells) + " |")
    return lines + [""]


def write_table(plan: AblationPlan, out: Path) -> dict[str, Any]:
    table = collect_table(plan, out)
    atomic_write_json(out / "table.json", table, indent=1)
    atomic_write_text(out / "table.md", render_markdown(table))
    return table


def run_ablation(plan: AblationPlan, data: str, world: Path, out: Path, *, seed: int = 0,
                 init: Path | None = None, device: str | None = None, only: list[str] | None = None,
                 batch_size: int = 64, seeds: Sequence[int] | None = None, threads: int | None = None,
                 echo: Callable[[str], None] = lambda message: None,
                 progress: ProgressFn = no_progress) -> dict[str, Any]:
    """Train and evaluate every row not yet done (or only the named ones), once per seed of ``seeds``
    (default: ``seed`` alone; every row for a seed before the next seed); returns the table. A row and seed
    that another process is training now is skipped (so several processes can share one plan); ``threads``
    sets each run's CPU threads (default: every core)."""
    if threads is not None and threads < 1:
        raise AblationPlanError(f"threads must be at least 1, not {threads}")
    seeds = list(seeds) if seeds else [seed]
    if len(set(seeds)) != len(seeds):
        raise AblationPlanError(f"{plan.source}: seeds {seeds} repeat a seed")
    recorded = _recorded_plan(out).get("seeds")
    if recorded is not None and [int(s) for s in recorded] != seeds:
        raise AblationPlanError(f"{out} holds this ablation with seeds {recorded}; use a new folder for {seeds}")
    from engine.lab.evaluation import evaluate
    from engine.retrieval.models import load

    if plan.warm_start and init is None:
        raise AblationPlanError(f"{plan.source}: this plan warm-starts every row; give the checkpoint (--init)")
    if init is not None and not plan.warm_start:
        raise AblationPlanError(f"{plan.source}: this plan trains every row from scratch; it takes no --init")
    names = {r.name for r in plan.rows}
    for name in only or []:
        if name not in names:
            raise AblationPlanError(f"{plan.source}: no row named {name!r} (rows: {sorted(names)})")
    out.mkdir(parents=True, exist_ok=True)
    atomic_write_json(out / "plan.json", {"source": plan.source, "data": data, "world": str(world),
                                        "seed": seeds[0], "seeds": seeds,
                                        "init": None if init is None else str(init)},
                      indent=1)
    # Seed-major: every row once before any row's second seed, so a cut-short run leaves a full table on
    # its first seeds and paired comparisons on the seeds that follow.
    rows = [row for row in plan.rows if not only or row.name in only]
    for run_seed in seeds:
        for row in rows:
            folder = row_folders(out, row.name, seeds)[run_seed]
            label = row.name if len(seeds) == 1 else f"{row.name} seed {run_seed}"
            if _row_complete(folder, plan):
                echo(f"{label}: done already")
                continue
            started = time.monotonic()
            try:
                with RunFolder(folder).writing():  # training and evaluation: one process per row and seed
                    if _row_complete(folder, plan):  # another process finished it meanwhile
                        echo(f"{label}: done already")
                        continue
                    resume = (folder / "training_state.pt").is_file()
                    model_name = row.model if isinstance(row.model, str) else "inline config"
                    echo(f"{label}: {'resuming' if resume else 'training'} ({model_name})")
                    run = plan.run_file(row)
                    if threads is not None:
                        run["training"]["threads"] = threads
                    train(TrainOptions(config=run, data=data, out=folder, resume=resume, seed=run_seed,
                                       device=device, init=init, init_scope=plan.init_scope,
                                       command=f"lineup ablate {plan.source} row {row.name} seed {run_seed}"),
                          progress=progress, echo=echo)
                    model = load(folder / "model", device=device)
                    for protocol in plan.protocols:
                        file = folder / f"eval-{protocol}.json"
                        if file.is_file():
                            continue
                        report = evaluate(model, world, protocol, batch_size=batch_size, progress=progress)
                        atomic_write_json(file, report, indent=1)
            except RunBusyError as exc:
                echo(f"{label}: skipped: {exc}")
                continue
            echo(f"{label}: finished in {time.monotonic() - started:.0f} s")
            write_table(plan, out)
    return write_table(plan, out)
