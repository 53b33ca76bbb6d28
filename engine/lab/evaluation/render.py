"""A readable rendering of an evaluation report (rich tables; metrics shown ×100 as the papers print them)."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from engine.retrieval.metrics import SUMMARY_KEYS


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{100 * value:.2f}"
    return str(value)


def metrics_table(report: dict[str, Any]) -> Table:
    """One row per ``by`` key then ``overall``; columns R@1 … mSD (×100) and queries."""
    source = report.get("source", {})
    where = source.get("world") or source.get("data") or ""
    table = Table(title=f"{report['protocol']}  {where}".strip(), title_justify="left")
    table.add_column("group")
    for key in (*SUMMARY_KEYS, "queries"):
        table.add_column(key, justify="right")
    for key, block in report.get("by", {}).items():
        if "score" in block:  # the any-time summary row
            table.add_row(key, *(_cell(block.get(k)) for k in SUMMARY_KEYS), f"score {_cell(block['score'])}")
        else:
            table.add_row(key, *(_cell(block.get(k)) for k in (*SUMMARY_KEYS, "queries")))
    overall = report["overall"]
    table.add_row(
        Text("overall", style="bold"),
        *(_cell(overall.get(k)) for k in (*SUMMARY_KEYS, "queries")),
        style="bold",
    )
    return table


def steps_table(steps: list[dict[str, Any]]) -> Table:
    table = Table(title="progressive steps (means over chains)", title_justify="left")
    for name in ("step", "level", "candidates before", "candidates after", "final positives kept %"):
        table.add_column(name, justify="right")
    for j, step in enumerate(steps, start=1):
        table.add_row(
            str(j),
            step["level"],
            f"{step['candidates_before']:.1f}",
            f"{step['candidates_after']:.1f}",
            _cell(step["positives_kept"]),
        )
    return table


def text_sets_table(sets: dict[str, Any]) -> Table:
    """mg-separate per text set: R@1 and mAP (×100) by level and overall."""
    levels = list(next(iter(sets.values()))["by"])
    table = Table(title="text sets: R@1 / mAP", title_justify="left")
    for name in ("texts", *levels, "overall", "queries"):
        table.add_column(name, justify="right")
    for name, part in sets.items():
        cells = [f"{_cell(b.get('R@1'))} / {_cell(b.get('mAP'))}" for b in (*part["by"].values(), part["overall"])]
        table.add_row(name, *cells, str(part["queries"]))
    return table


def plain_view_table(plain: dict[str, Any], by: dict[str, Any]) -> Table:
    """Per any-time scenario: R@1 and mAP of the scenario tokens beside the plain gallery embedding."""
    table = Table(title=f"scenario tokens against {plain['view']}", title_justify="left")
    for name in ("scenario", "tokens R@1", "tokens mAP", "plain R@1", "plain mAP"):
        table.add_column(name, justify="right")
    for scenario, block in plain["by"].items():
        tokens = by.get(scenario, {})
        table.add_row(scenario, _cell(tokens.get("R@1")), _cell(tokens.get("mAP")), _cell(block.get("R@1")),
                      _cell(block.get("mAP")))
    return table


def oracle_table(oracle: dict[str, Any], by: dict[str, Any], group: str = "mode",
                 heads: dict[str, Any] | None = None) -> Table:
    """The attribute oracle's R@1 and mAP per single mode (or any-time scenario) beside the model's, and beside
    the ranking by the model's own attribute heads when ``heads`` is given."""
    table = Table(title=f"attribute oracle (the ceiling of each {'query modality' if group == 'mode' else group})",
                  title_justify="left")
    columns = [group, "oracle R@1", "oracle mAP", "model R@1", "model R@1 / oracle R@1"]
    if heads:
        columns += ["heads R@1", "heads mAP"]
    for name in columns:
        table.add_column(name, justify="right")
    for mode, block in oracle["by"].items():
        model = by.get(mode, {}).get("R@1")
        ratio = "-" if model is None or not block.get("R@1") else f"{model / block['R@1']:.2f}"
        row = [mode, _cell(block.get("R@1")), _cell(block.get("mAP")), _cell(model), ratio]
        if heads:
            read = heads["by"].get(mode, {})
            row += [_cell(read.get("R@1")), _cell(read.get("mAP"))]
        table.add_row(*row)
    return table


def outfit_change_table(outfit_change: dict[str, Any]) -> Table:
    """Find similar with and without "clothes may have changed", per time mode, on galleries holding both the
    same-clothes and the other-clothes sightings."""
    table = Table(title=f"find similar, clothes may have changed (λ = {outfit_change['weight']:g}; galleries with "
                        "sightings in the same and in other clothes)", title_justify="left")
    for name in ("time", "ranking", "R@1", "mAP", "other clothes R@1", "other clothes R@10"):
        table.add_column(name, justify="right")
    for time_mode, pair in outfit_change["by"].items():
        for ranking, block in pair.items():
            table.add_row(time_mode, ranking.replace("_", " "), _cell(block.get("R@1")), _cell(block.get("mAP")),
                          _cell(block.get("other_outfit_R@1")), _cell(block.get("other_outfit_R@10")))
    return table


def render(report: dict[str, Any], console: Console | None = None) -> None:
    """Print ``report`` as tables plus its settings and notes."""
    console = console or Console()
    parts: list[Any] = [metrics_table(report)]
    if report.get("text_sets"):
        parts.append(text_sets_table(report["text_sets"]))
    if report.get("oracle"):
        group = "scenario" if "any-time" in report["by"] else "mode"
        parts.append(oracle_table(report["oracle"], report["by"], group, report.get("heads")))
    if report.get("plain_view"):
        parts.append(plain_view_table(report["plain_view"], report["by"]))
    if report.get("outfit_change"):
        parts.append(outfit_change_table(report["outfit_change"]))
    if report.get("steps"):
        parts.append(steps_table(report["steps"]))
    settings = [f"{k}: {report[k]}" for k in ("level", "texts", "text_rewrite", "rho", "fusion", "queries", "gallery")
                if k in report]
    if "level_accuracy" in report:
        settings.append(f"level classifier accuracy: {_cell(report['level_accuracy'])}%")
    if settings:
        parts.append(Text("  ".join(settings), style="dim"))
    if report.get("mixed"):
        mixed = report["mixed"]
        parts.append(
            Text("mixed-resolution gallery: " + "  ".join(f"{k} {_cell(mixed.get(k))}" for k in SUMMARY_KEYS))
        )
    if report.get("network"):
        network = report["network"]
        parts.append(Text(f"appearance network: {network['version']} ({network['precision']})", style="dim"))
    for name, views in (report.get("views") or {}).items():
        shown = ", ".join(views) if isinstance(views, list) else views
        parts.append(Text(f"views: {name}: {shown}", style="dim"))
    if report.get("relevance"):
        parts.append(Text(f"relevance: {report['relevance']}", style="dim"))
    for note in report.get("notes", []):
        parts.append(Text(f"note: {note}", style="yellow"))
    console.print(Group(*parts))
