"""The lines above the results grid: what the step on view did, the grid's own counts (never mixed with the
step's in one phrase) and the legend of the ground-truth tags (``app.views.results`` shows them)."""

from __future__ import annotations

import html

#: Shown above the grid when the ranking carries ground truth (trainers' built worlds), until the window says
#: whose identity it is (``ground_truth_legend``): it never claims an identity was chosen.
GT_LEGEND = ("<span style='color:#6b7280'><b style='color:#e8702a'>GT</b> = ground truth: the item shows the "
             "person sought, by the built world's identity labels (built worlds only; it is never used to rank)."
             "</span>")


def ground_truth_legend(identity: str | None, chosen: bool) -> str:
    """The GT legend for the step on view: ``identity`` its relevant items share (None: unknown) and whether
    it is the one chosen under Search → Ground-truth identity (else it is the find-similar example's own)."""
    if identity is None:
        return GT_LEGEND
    who = f"identity <b>{html.escape(identity)}</b>"
    if chosen:
        source = f"{who}, chosen under Search → Ground-truth identity"
    else:
        source = f"{who}, the example item's own (no ground-truth identity was chosen)"
    return ("<span style='color:#6b7280'><b style='color:#e8702a'>GT</b> = ground truth: the item shows "
            f"{source} (built worlds only; it is never used to rank).</span>")


def step_caption(step_text: str) -> str:
    """What the step did, each line ending in a break: the first line in bold, later ones (a warning on weak
    scores) plain; "" without a step text."""
    if not step_text:
        return ""
    first, *rest = step_text.split("\n")
    return f"<b>{html.escape(first)}</b><br>" + "".join(f"{html.escape(line)}<br>" for line in rest)


def grid_caption(shown: int, total: int, *, step_kept: int | None, filters: str,
                 preview: tuple[float, int] | None, confirmed: tuple[int, str], rejected: tuple[int, str],
                 selected: int) -> str:
    """The grid's counts on one line: items ``shown`` of ``total``, kept by the step (``step_kept``, None: not
    said), the view's ``filters`` in words, a threshold ``preview`` (threshold, kept), the ``confirmed`` and
    ``rejected`` counts with their colours, and the ``selected`` count."""
    parts = [f"Grid: <b>{shown:,}</b> shown" + ("" if shown == total else f" of {total:,}")]
    if step_kept is not None:
        parts.append(f"{step_kept:,} kept by the step")
    if filters:
        parts.append(f"filters: {html.escape(filters)} (also the next step's)")
    if preview is not None:
        parts.append(f"<i>preview: score ≥ {preview[0]:.3f} would keep {preview[1]:,}</i>")
    for (count, color), word in ((confirmed, "confirmed"), (rejected, "rejected")):
        if count:
            parts.append(f"<span style='color:{color}'>{count:,} {word}</span>")
    if selected > 1:
        parts.append(f"{selected:,} selected")
    return " · ".join(parts)
