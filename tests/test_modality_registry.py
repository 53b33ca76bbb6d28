"""The query modalities are declared once (``engine.kernel.query_modalities``): a modality added to the registry
alone reaches the engine's query kind, the CLI's step record and lines, the case store's check and the report's
wording, with no other file naming it."""

from __future__ import annotations

import numpy as np
import pytest
from report_cases import make_gallery

from app.report import markup, text
from app.report.content import collect_content
from app.report.html import BROWSER
from app.store import CaseStore, StoreInputError
from app.store.from_engine import gallery_identity, step_input
from engine.kernel import query_modalities
from engine.kernel.query_modalities import QueryKindError, QueryModality, check_query_kind
from engine.retrieval.search import StepQuery, StepResult
from engine.retrieval.search.transcript import step_lines, step_record

THERMAL = QueryModality("thermal", "thermal image", "Thermal image", "load a thermal image", "image",
                        views=("appearance:grey", "rgb"), console=":thermal")


@pytest.fixture
def thermal(monkeypatch):
    """The registry with a toy image modality after the shipped ones."""
    monkeypatch.setitem(query_modalities.QUERY_MODALITIES, THERMAL.name, THERMAL)
    return THERMAL


def thermal_step(item_ids: list[str]) -> StepResult:
    """A text step that also carried a thermal image (set on the query as the registry names it)."""
    query = StepQuery(text="a man in a red jacket", k=3)
    object.__setattr__(query, "thermal", "thermal.png")
    rows = np.arange(len(item_ids), dtype=np.int64)
    scores = np.linspace(0.9, 0.1, len(item_ids)).astype(np.float32)
    return StepResult(index=0, query=query, view="rgb", level="C", level_source="parser", keep_rule="k",
                      keep_value=3.0, k=3, rows=rows, scores=scores, filtered_rows=rows[:0],
                      filtered_scores=scores[:0], kept=rows[:3], relevant=None, seconds=0.1, item_ids=item_ids)


def test_the_shipped_registry_names_each_modality_once():
    names = [m.name for m in query_modalities.modalities()]
    assert names == ["text", "sketch", "ir", "example"]
    assert [m.name for m in query_modalities.taking("image")] == ["sketch", "ir"]
    assert query_modalities.describe("text+ir") == "text + IR"
    assert [m.name for m in check_query_kind("sketch+ir")] == ["sketch", "ir"]
    for bad in ("", "text+text", "text+example", "thermal"):
        with pytest.raises(QueryKindError):
            check_query_kind(bad)


def test_a_registered_modality_reaches_the_query_the_cli_the_store_and_the_report(tmp_path, thermal, qapp):
    gallery = make_gallery(tmp_path / "gallery")
    step = thermal_step(list(gallery.ids))
    assert step.query.kind == "text+thermal"

    record = step_record(gallery, step, top=0)
    assert record["kind"] == "text+thermal" and record["thermal"] == "thermal.png"
    assert record["sketch"] is None and record["ir"] is None
    assert "thermal image thermal.png" in step_lines(record)[0]

    with CaseStore.open(tmp_path / "cases.sqlite") as store:
        case = store.create_case("A thermal step")
        gallery_id = store.add_gallery(case, **gallery_identity(gallery))
        store.record_step(case, step_input(step, gallery_id))
        assert store.load_case(case).steps[0].query_kind == "text+thermal"
        report = collect_content(store, case)

    assert text.modalities(report.chain[0].query_kind) == "text + thermal image"
    assert "Step 1 · text + thermal image" in markup.chain(report, BROWSER)


def test_the_store_refuses_a_modality_the_registry_does_not_name(tmp_path):
    gallery = make_gallery(tmp_path / "gallery")
    step = thermal_step(list(gallery.ids))
    assert step.query.kind == "text"  # unregistered, the query's extra field is not a modality
    with CaseStore.open(tmp_path / "cases.sqlite") as store:
        case = store.create_case("An unknown modality")
        gallery_id = store.add_gallery(case, **gallery_identity(gallery))
        bad = step_input(step, gallery_id)
        object.__setattr__(bad, "query_kind", "text+thermal")
        with pytest.raises(StoreInputError, match="unknown modalities"):
            store.record_step(case, bad)
