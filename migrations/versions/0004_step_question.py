"""Which question the app suggested to ask the witness before a step, and what was answered.

- ``steps.question``: canonical JSON ``{"key", "question", "gain", "answer"}`` — the question shown after the
  step's parent (``engine.retrieval.evidence.next_question``) and the value whose button ran this step (``answer``
  null: the description was edited instead) — and/or ``"unknown"``: the keys the witness said they did not
  know before this step (hidden from then on along the branch). NULL: no question was shown.

Nullable: steps written before this revision keep NULL, and their audit payloads, which never carried the key,
still verify.

Revision ID: 0004_step_question
Revises: 0003_case_record
Created: fourth schema of the case store
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004_step_question"
down_revision = "0003_case_record"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("steps", sa.Column("question", sa.Text(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("steps") as batch:
        batch.drop_column("question")
