"""Which question the app suggested to ask the witness before a step, and what was answered.

- ``steps.question``: canonical JSON ``{"key", "question", "gain", "answer"}`` — the question shown after the
  step's parent (``engine.retrieval.evidence.next_question``) and the value whose button ran this step (``answer``
  null: the description was edited instead) — and/or ``"unknown"``: the keys the witness said they did not
  know before this step (hidden from then on along the branch). NULL: no question was shown.

Nullable: steps written before this revision keep NULL, and their audit payloads, which never carried the key,
still verify. Like every other column of a step it is written once: the immutability trigger, which names the
columns it guards, is made again with it.

Revision ID: 0005_step_question
Revises: 0004_whole_gallery
Created: fifth schema of the case store
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005_step_question"
down_revision = "0004_whole_gallery"
branch_labels = None
depends_on = None


STEP_COLUMNS_0004 = (
    "id", "case_id", "parent_id", "seq", "depth", "gallery_id", "query_text", "query_kind", "example_item",
    "scenario", "sketch_evidence_id", "ir_evidence_id", "view", "level", "level_source", "level_overridden",
    "keep_rule", "keep_value", "k", "filters", "candidates_before", "filtered_out", "candidates_after",
    "kept_ids", "kept_scores", "kept_sha256", "histogram", "seconds", "created_at", "whole_gallery",
)
STEP_COLUMNS_0005 = (*STEP_COLUMNS_0004, "question")


def immutable_trigger(columns: tuple[str, ...]) -> str:
    return (f"CREATE TRIGGER steps_immutable BEFORE UPDATE OF {', '.join(columns)} ON steps "
            "BEGIN SELECT RAISE(ABORT, 'steps are immutable: only undone_at may be set'); END")


def upgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS steps_immutable")
    op.add_column("steps", sa.Column("question", sa.Text(), nullable=True))
    op.execute(immutable_trigger(STEP_COLUMNS_0005))


def downgrade() -> None:
    for name in ("steps_immutable", "steps_undo_once", "steps_no_delete"):
        op.execute(f"DROP TRIGGER IF EXISTS {name}")
    with op.batch_alter_table("steps", recreate="always") as batch:
        batch.drop_column("question")
    op.execute(immutable_trigger(STEP_COLUMNS_0004))
    op.execute("CREATE TRIGGER steps_undo_once BEFORE UPDATE OF undone_at ON steps WHEN OLD.undone_at IS NOT NULL "
               "BEGIN SELECT RAISE(ABORT, 'the step is already undone'); END")
    op.execute("CREATE TRIGGER steps_no_delete BEFORE DELETE ON steps "
               "BEGIN SELECT RAISE(ABORT, 'steps are never deleted (undo marks them undone)'); END")
