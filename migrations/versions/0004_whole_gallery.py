"""Steps record whether they scored the whole gallery: ``steps.whole_gallery``.

A step normally scores the items the previous step kept; a step with ``whole_gallery`` (following a sighting to
the next camera, ``engine.retrieval.search.follow``) scores every item of the gallery again, less the rejected
ones. Steps recorded before this revision all searched the previous step's items: they get false. Their audit
payloads never carried the key, and the payload leaves it out while it is false (``audit_values`` of
``engine.kernel.step_schema``), so they still verify.

The immutability trigger names the columns it guards, so it is made again with the new one.

Revision ID: 0004_whole_gallery
Revises: 0003_case_record
Created: fourth schema of the case store
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_whole_gallery"
down_revision = "0003_case_record"
branch_labels = None
depends_on = None

STEP_COLUMNS_0002 = (
    "id", "case_id", "parent_id", "seq", "depth", "gallery_id", "query_text", "query_kind", "example_item",
    "scenario", "sketch_evidence_id", "ir_evidence_id", "view", "level", "level_source", "level_overridden",
    "keep_rule", "keep_value", "k", "filters", "candidates_before", "filtered_out", "candidates_after",
    "kept_ids", "kept_scores", "kept_sha256", "histogram", "seconds", "created_at",
)
STEP_COLUMNS_0004 = (*STEP_COLUMNS_0002, "whole_gallery")


def immutable_trigger(columns: tuple[str, ...]) -> str:
    return (f"CREATE TRIGGER steps_immutable BEFORE UPDATE OF {', '.join(columns)} ON steps "
            "BEGIN SELECT RAISE(ABORT, 'steps are immutable: only undone_at may be set'); END")


def upgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS steps_immutable")
    op.add_column("steps", sa.Column("whole_gallery", sa.Boolean(), nullable=False, server_default=sa.false()))
    op.execute(immutable_trigger(STEP_COLUMNS_0004))


def downgrade() -> None:
    for name in ("steps_immutable", "steps_undo_once", "steps_no_delete"):
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    with op.batch_alter_table("steps", recreate="always") as batch:
        batch.drop_column("whole_gallery")
    op.execute(immutable_trigger(STEP_COLUMNS_0002))
    op.execute("CREATE TRIGGER steps_undo_once BEFORE UPDATE OF undone_at ON steps WHEN OLD.undone_at IS NOT NULL "
               "BEGIN SELECT RAISE(ABORT, 'the step is already undone'); END")
    op.execute("CREATE TRIGGER steps_no_delete BEFORE DELETE ON steps "
               "BEGIN SELECT RAISE(ABORT, 'steps are never deleted (undo marks them undone)'); END")
