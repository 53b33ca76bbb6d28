"""The step schema (``engine.kernel.step_schema``) reaches every written form of a step: each field of an engine step
goes through the CLI record, the case store (input, columns, read-back, audit payload), the migrated database
and the report's chain rows with its value intact. A field added to the schema that a form does not carry,
or a form that leaves out a field the schema does not say it leaves out, fails here."""

from __future__ import annotations

import dataclasses
import sqlite3

import numpy as np
import pytest
from report_cases import make_gallery

from app.report.content import ChainStep, collect_content
from app.store import CaseStore, StepInput, StepState
from app.store.from_engine import gallery_identity, step_input
from app.store.models import Step
from engine.kernel.step_schema import (
    STEP_FIELD_NAMES,
    STEP_FIELDS,
    StepRecord,
    audit_values,
    cli_values,
    step_values,
)
from engine.retrieval.search import StepQuery, StepResult
from engine.retrieval.search.transcript import step_record

#: The fields ``lineup search --json`` does not write (it has printed the same keys since before the schema).
NOT_IN_THE_CLI = {"scenario", "level_overridden", "filters", "whole_gallery"}


#: Fields added after cases were first recorded (``later``): the audit payload leaves them out while false.
LATER_DEFAULT_FALSE = {"whole_gallery"}


def engine_steps(item_ids: list[str]) -> list[StepResult]:
    """Two engine steps whose every schema field has a value that is not a default: a text step with a fixed
    level, camera and time filters and a count rule; a find-similar step with a scenario and a threshold over the
    whole gallery."""
    rows = np.arange(len(item_ids), dtype=np.int64)
    scores = np.linspace(0.9, 0.1, len(item_ids)).astype(np.float32)
    text = StepQuery(text="a man in a red jacket", level="M", k=5, cameras=frozenset({"c1", "c0"}),
                     time_range=(60.0, 200.0))
    similar = StepQuery(example=item_ids[0], scenario="LT", threshold=0.4, whole_gallery=True)
    return [
        StepResult(index=0, query=text, view="text:M", level="M", level_source="override", keep_rule="k",
                   keep_value=5.0, k=5, rows=rows[2:], scores=scores[2:], filtered_rows=rows[:2],
                   filtered_scores=scores[:2], kept=rows[2:7], relevant=None, seconds=0.123456, item_ids=item_ids),
        StepResult(index=1, query=similar, view="rgb", level=None, level_source=None, keep_rule="threshold",
                   keep_value=0.4, k=3, rows=rows[:9], scores=scores[:9], filtered_rows=rows[9:9],
                   filtered_scores=scores[9:9], kept=rows[:3], relevant=rows[:9] % 2 == 0, seconds=1.5,
                   item_ids=item_ids),
    ]


def cli_lookup(record: dict, key: str):
    for part in key.split("."):
        record = record[part]
    return record


@pytest.fixture
def recorded(tmp_path):
    """(the engine steps' records, their CLI records, the stored case, its audit records, its report)."""
    gallery = make_gallery(tmp_path / "gallery")
    steps = engine_steps(list(gallery.ids))
    cli = [step_record(gallery, step, top=0) for step in steps]
    with CaseStore.open(tmp_path / "cases.sqlite") as store:
        case = store.create_case("Schema round trip")
        gallery_id = store.add_gallery(case, **gallery_identity(gallery))
        for step in steps:
            store.record_step(case, step_input(step, gallery_id))
        state = store.load_case(case)
        _, records = store.content_records(case)
        report = collect_content(store, case)
    return [step.record() for step in steps], cli, state, records, report, tmp_path / "cases.sqlite"


def test_the_schema_lists_each_field_once_with_a_plain_type():
    assert len(set(STEP_FIELD_NAMES)) == len(STEP_FIELDS) == len(dataclasses.fields(StepRecord))
    assert {spec.kind for spec in STEP_FIELDS} <= {str, int, float, bool, dict}
    assert all(spec.limit is None or spec.kind is str for spec in STEP_FIELDS)


def test_the_forms_are_built_on_the_schema():
    for form in (StepInput, StepState, ChainStep):
        assert issubclass(form, StepRecord)
        assert set(STEP_FIELD_NAMES) <= {f.name for f in dataclasses.fields(form)}
    assert {f.name for f in dataclasses.fields(StepInput) if not f.init} == {"candidates_after", "level_overridden"}
    columns = {column.name: column for column in Step.__table__.columns}
    for spec in STEP_FIELDS:
        assert spec.name in columns and columns[spec.name].nullable == spec.optional
        assert getattr(columns[spec.name].type, "length", None) == spec.limit


def test_every_field_goes_through_the_cli_record(recorded):
    records, cli, *_ = recorded
    assert {spec.name for spec in STEP_FIELDS if spec.cli is None} == NOT_IN_THE_CLI
    for record, written in zip(records, cli, strict=True):
        for spec in STEP_FIELDS:
            if spec.cli is None:
                continue
            value = getattr(record, spec.name)
            expected = round(value, spec.digits) if spec.digits is not None and value is not None else value
            assert cli_lookup(written, spec.cli) == expected, spec.name
    assert cli[0]["keep"] == {"rule": "k", "value": 5.0, "k": 5} and cli[0]["seconds"] == 0.1235
    assert cli[0]["query"] == "a man in a red jacket" and cli[1]["example"] == records[1].example_item


def test_every_field_goes_through_the_store_its_payload_and_the_report(recorded):
    records, _, state, audit_records, report, _ = recorded
    assert len(state.steps) == len(report.chain) == len(records)
    for record, stored, chain in zip(records, state.steps, report.chain, strict=True):
        payload = audit_records["steps"][str(stored.id)]
        for name in STEP_FIELD_NAMES:
            value = getattr(record, name)
            assert getattr(stored, name) == value, name
            assert payload.get(name, False if name in LATER_DEFAULT_FALSE else None) == value, name
            assert getattr(chain, name) == value, name
        assert step_values(stored) == step_values(chain) == step_values(record) == dataclasses.asdict(record)
    first, second = records
    assert first.filters == {"cameras": ["c0", "c1"], "time_range": [60.0, 200.0]}
    assert (first.level_overridden, first.filtered_out, first.candidates_after) == (True, 2, 5)
    assert (second.scenario, second.example_item, second.query_kind) == ("LT", state.steps[1].example_item, "example")
    assert (first.whole_gallery, second.whole_gallery) == (False, True)
    first_payload, second_payload = (audit_records["steps"][str(s.id)] for s in state.steps)
    assert "whole_gallery" not in first_payload and second_payload["whole_gallery"] is True


def test_later_fields_leave_the_audit_payload_while_they_hold_their_default():
    assert {spec.name for spec in STEP_FIELDS if spec.later} == LATER_DEFAULT_FALSE
    record = StepRecord(query_kind="example", level_overridden=False, view="rgb", keep_rule="k", keep_value=5, k=5,
                        candidates_before=9, candidates_after=5)
    assert "whole_gallery" not in audit_values(record) and "whole_gallery" in step_values(record)
    assert audit_values(dataclasses.replace(record, whole_gallery=True))["whole_gallery"] is True


def test_every_field_is_a_column_of_the_migrated_database(recorded):
    *_, db = recorded
    with sqlite3.connect(db) as raw:
        columns = {row[1]: row for row in raw.execute("PRAGMA table_info(steps)")}
    for spec in STEP_FIELDS:
        assert spec.name in columns, spec.name
        assert bool(columns[spec.name][3]) == (not spec.optional), spec.name  # NOT NULL


def test_cli_values_nest_dotted_keys_and_round_to_the_fields_digits():
    record = StepRecord(query_kind="text", level_overridden=False, view="text:C", keep_rule="rho", keep_value=0.5,
                        k=7, candidates_before=14, candidates_after=7, seconds=2.000049)
    written = cli_values(record)
    assert written["keep"] == {"rule": "rho", "value": 0.5, "k": 7}
    assert written["seconds"] == 2.0 and written["query"] is None and "filters" not in written
