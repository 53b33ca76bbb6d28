"""What a case needs to tell its whole story: the working state of its search, the gallery version it searched,
how each mark was reached and when a note was edited.

- ``cases.working_state``: the search controls of the case (filters, level, keep rule, query images) as
  canonical JSON, so a case reopens with its own controls and a new case starts clean. Not evidence: it is not
  audited (every step records what it actually searched).
- ``case_galleries.version``: the gallery version (``engine.index`` versions) the case searched.
- ``marks.step_id``/``score``/``rank``/``actor``: the step at which an item was marked, its score and rank
  there, and who marked it.
- ``notes.edited_at``: the time of a note's last edit (each edit is audited with its text).

All columns are nullable: rows written before this revision keep NULL (unknown), and their audit payloads,
which never carried these keys, still verify.

Revision ID: 0003_case_record
Revises: 0002_evidence
Created: third schema of the case store
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003_case_record"
down_revision = "0002_evidence"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("cases", sa.Column("working_state", sa.Text(), nullable=True))
    op.add_column("case_galleries", sa.Column("version", sa.Integer(), nullable=True))
    with op.batch_alter_table("marks") as batch:
        batch.add_column(sa.Column("step_id", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("score", sa.Float(), nullable=True))
        batch.add_column(sa.Column("rank", sa.Integer(), nullable=True))
        batch.add_column(sa.Column("actor", sa.String(200), nullable=True))
        batch.create_foreign_key(op.f("fk_marks_step_id_steps"), "steps", ["step_id"], ["id"])
    op.add_column("notes", sa.Column("edited_at", sa.String(32), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("notes") as batch:
        batch.drop_column("edited_at")
    with op.batch_alter_table("marks") as batch:
        batch.drop_constraint(op.f("fk_marks_step_id_steps"), type_="foreignkey")
        for column in ("actor", "rank", "score", "step_id"):
            batch.drop_column(column)
    with op.batch_alter_table("case_galleries") as batch:
        batch.drop_column("version")
    with op.batch_alter_table("cases") as batch:
        batch.drop_column("working_state")
