"""A readable rendering of an evaluation report (rich tables; metrics shown ×100 as the papers print them)."""

from __future__ import annotations

from typing import Any

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from engine.metrics import SUMMARY_KEYS


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


def render(report: dict[str, Any], console: Console | None = None) -> None:
    """Print ``report`` as tables plus its settings and notes."""
    console = console or Console()
    parts: list[Any] = [metrics_table(report)]
    if report.get("steps"):
        parts.append(steps_table(report["steps"]))
    settings = [f"{k}: {report[k]}" for k in ("level", "rho", "fusion", "queries", "gallery") if k in report]
    if "level_accuracy" in report:
        settings.append(f"level classifier accuracy: {_cell(report['level_accuracy'])}%")
    if settings:
        parts.append(Text("  ".join(settings), style="dim"))
    if report.get("mixed"):
        mixed = report["mixed"]
        parts.append(
            Text("mixed-resolution gallery: " + "  ".join(f"{k} {_cell(mixed.get(k))}" for k in SUMMARY_KEYS))
        )
    for note in report.get("notes", []):
        parts.append(Text(f"note: {note}", style="yellow"))
    console.print(Group(*parts))
