"""Cases, galleries used, steps (query images referenced inline), marks, notes and the hash-chained audit trail.

Revision ID: 0001_initial
Revises:
Created: first schema of the case store
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0001_initial"
down_revision = None
branch_labels = None
depends_on = None

GENESIS_HASH = "0" * 64

STEP_COLUMNS_0001 = (
    "id", "case_id", "parent_id", "seq", "depth", "gallery_id", "query_text", "query_kind", "example_item",
    "scenario", "sketch_path", "sketch_sha256", "ir_path", "ir_sha256", "view", "level", "level_source",
    "level_overridden", "keep_rule", "keep_value", "k", "filters", "candidates_before", "filtered_out",
    "candidates_after", "kept_ids", "kept_scores", "kept_sha256", "histogram", "seconds", "created_at",
)


def time_column(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.String(32), nullable=nullable)


def step_triggers(columns: tuple[str, ...]) -> list[str]:
    """Steps are values: no column but ``undone_at`` may change, ``undone_at`` only once, no row may go."""
    return [
        f"CREATE TRIGGER steps_immutable BEFORE UPDATE OF {', '.join(columns)} ON steps "
        "BEGIN SELECT RAISE(ABORT, 'steps are immutable: only undone_at may be set'); END",
        "CREATE TRIGGER steps_undo_once BEFORE UPDATE OF undone_at ON steps WHEN OLD.undone_at IS NOT NULL "
        "BEGIN SELECT RAISE(ABORT, 'the step is already undone'); END",
        "CREATE TRIGGER steps_no_delete BEFORE DELETE ON steps "
        "BEGIN SELECT RAISE(ABORT, 'steps are never deleted (undo marks them undone)'); END",
    ]


AUDIT_TRIGGERS = [
    "CREATE TRIGGER audit_entries_no_update BEFORE UPDATE ON audit_entries "
    "BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only: UPDATE refused'); END",
    "CREATE TRIGGER audit_entries_no_delete BEFORE DELETE ON audit_entries "
    "BEGIN SELECT RAISE(ABORT, 'the audit trail is append-only: DELETE refused'); END",
    "CREATE TRIGGER audit_entries_chain BEFORE INSERT ON audit_entries WHEN "
    "NEW.seq IS NOT COALESCE((SELECT MAX(seq) FROM audit_entries WHERE case_id = NEW.case_id), 0) + 1 "
    "OR NEW.prev_hash IS NOT COALESCE((SELECT hash FROM audit_entries WHERE case_id = NEW.case_id "
    f"ORDER BY seq DESC LIMIT 1), '{GENESIS_HASH}') "
    "BEGIN SELECT RAISE(ABORT, 'the audit entry does not extend its case''s chain'); END",
]


def upgrade() -> None:
    op.create_table(
        "cases",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("title", sa.String(200), nullable=False),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        time_column("created_at"),
        time_column("updated_at"),
        sa.Column("head_step_id", sa.Integer(), nullable=True),
        sa.CheckConstraint("status IN ('open', 'closed')", name=op.f("ck_cases_status")),
        sa.ForeignKeyConstraint(["head_step_id"], ["steps.id"], name=op.f("fk_cases_head_step_id_steps")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_cases")),
    )
    op.create_table(
        "case_galleries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("gallery_fingerprint", sa.String(64), nullable=False),
        sa.Column("model_fingerprint", sa.String(200), nullable=False),
        sa.Column("item_count", sa.Integer(), nullable=False),
        time_column("added_at"),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"], name=op.f("fk_case_galleries_case_id_cases")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_case_galleries")),
        sa.UniqueConstraint("case_id", "path", "gallery_fingerprint",
                            name=op.f("uq_case_galleries_case_id_path_gallery_fingerprint")),
    )
    op.create_table(
        "steps",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("parent_id", sa.Integer(), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("depth", sa.Integer(), nullable=False),
        sa.Column("gallery_id", sa.Integer(), nullable=False),
        sa.Column("query_text", sa.Text(), nullable=True),
        sa.Column("query_kind", sa.String(32), nullable=False),
        sa.Column("example_item", sa.Text(), nullable=True),
        sa.Column("scenario", sa.String(64), nullable=True),
        sa.Column("sketch_path", sa.Text(), nullable=True),
        sa.Column("sketch_sha256", sa.String(64), nullable=True),
        sa.Column("ir_path", sa.Text(), nullable=True),
        sa.Column("ir_sha256", sa.String(64), nullable=True),
        sa.Column("view", sa.String(64), nullable=False),
        sa.Column("level", sa.String(32), nullable=True),
        sa.Column("level_source", sa.String(16), nullable=True),
        sa.Column("level_overridden", sa.Boolean(), nullable=False),
        sa.Column("keep_rule", sa.String(16), nullable=False),
        sa.Column("keep_value", sa.Float(), nullable=False),
        sa.Column("k", sa.Integer(), nullable=False),
        sa.Column("filters", sa.Text(), nullable=False),
        sa.Column("candidates_before", sa.Integer(), nullable=False),
        sa.Column("filtered_out", sa.Integer(), nullable=False),
        sa.Column("candidates_after", sa.Integer(), nullable=False),
        sa.Column("kept_ids", sa.LargeBinary(), nullable=False),
        sa.Column("kept_scores", sa.LargeBinary(), nullable=False),
        sa.Column("kept_sha256", sa.String(64), nullable=False),
        sa.Column("histogram", sa.Text(), nullable=False),
        sa.Column("seconds", sa.Float(), nullable=False),
        time_column("created_at"),
        time_column("undone_at", nullable=True),
        sa.CheckConstraint("keep_rule IN ('rho', 'k', 'threshold')", name=op.f("ck_steps_keep_rule")),
        sa.CheckConstraint("level_source IS NULL OR level_source IN "
                           "('override', 'encoder', 'parser', 'classifier', 'default')",
                           name=op.f("ck_steps_level_source")),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"], name=op.f("fk_steps_case_id_cases")),
        sa.ForeignKeyConstraint(["parent_id"], ["steps.id"], name=op.f("fk_steps_parent_id_steps")),
        sa.ForeignKeyConstraint(["gallery_id"], ["case_galleries.id"],
                                name=op.f("fk_steps_gallery_id_case_galleries")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_steps")),
        sa.UniqueConstraint("case_id", "seq", name=op.f("uq_steps_case_id_seq")),
    )
    op.create_table(
        "marks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("gallery_id", sa.Integer(), nullable=False),
        sa.Column("item_id", sa.Text(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("note", sa.Text(), nullable=True),
        time_column("at"),
        sa.CheckConstraint("state IN ('confirmed', 'rejected')", name=op.f("ck_marks_state")),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"], name=op.f("fk_marks_case_id_cases")),
        sa.ForeignKeyConstraint(["gallery_id"], ["case_galleries.id"],
                                name=op.f("fk_marks_gallery_id_case_galleries")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_marks")),
        sa.UniqueConstraint("case_id", "gallery_id", "item_id", name=op.f("uq_marks_case_id_gallery_id_item_id")),
    )
    op.create_table(
        "notes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("item_id", sa.Text(), nullable=True),
        sa.Column("gallery_id", sa.Integer(), nullable=True),
        sa.Column("step_id", sa.Integer(), nullable=True),
        time_column("at"),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"], name=op.f("fk_notes_case_id_cases")),
        sa.ForeignKeyConstraint(["gallery_id"], ["case_galleries.id"],
                                name=op.f("fk_notes_gallery_id_case_galleries")),
        sa.ForeignKeyConstraint(["step_id"], ["steps.id"], name=op.f("fk_notes_step_id_steps")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notes")),
    )
    op.create_table(
        "audit_entries",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.Column("at", sa.String(32), nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("action", sa.String(32), nullable=False),
        sa.Column("payload", sa.Text(), nullable=False),
        sa.Column("prev_hash", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"], name=op.f("fk_audit_entries_case_id_cases")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_audit_entries")),
        sa.UniqueConstraint("case_id", "seq", name=op.f("uq_audit_entries_case_id_seq")),
    )
    for statement in (*step_triggers(STEP_COLUMNS_0001), *AUDIT_TRIGGERS):
        op.execute(statement)


def downgrade() -> None:
    for table in ("audit_entries", "notes", "marks", "steps", "case_galleries", "cases"):
        op.drop_table(table)
