"""Evidence table: query images become case-level records (one per case and SHA-256) that steps point to.

Revision 0001 kept each step's sketch/IR path and SHA-256 inline. Here every distinct (case, SHA-256) becomes
an ``evidence`` row (original path and time of its first use; the file in the evidence folder keeps its name
``<sha256><suffix>``, the suffix read from the folder when the file is there), steps get
``sketch_evidence_id``/``ir_evidence_id``, and the inline columns go. The steps table is rebuilt (SQLite
cannot drop constrained columns in place), so its triggers are made again.

Revision ID: 0002_evidence
Revises: 0001_initial
Created: second schema of the case store
"""

from __future__ import annotations

import re
from pathlib import Path

import sqlalchemy as sa
from alembic import op

revision = "0002_evidence"
down_revision = "0001_initial"
branch_labels = None
depends_on = None

STEP_COLUMNS_0002 = (
    "id", "case_id", "parent_id", "seq", "depth", "gallery_id", "query_text", "query_kind", "example_item",
    "scenario", "sketch_evidence_id", "ir_evidence_id", "view", "level", "level_source", "level_overridden",
    "keep_rule", "keep_value", "k", "filters", "candidates_before", "filtered_out", "candidates_after",
    "kept_ids", "kept_scores", "kept_sha256", "histogram", "seconds", "created_at",
)
STEP_COLUMNS_0001_INLINE = ("sketch_path", "sketch_sha256", "ir_path", "ir_sha256")
_SUFFIX = re.compile(r"\.[a-z0-9]{1,8}")


def stored_name(sha256: str, original_path: str | None) -> str:
    """The evidence file's name as revision 0001 wrote it: SHA-256 plus the original's lower-case suffix."""
    suffix = ""
    if original_path:
        name = original_path.replace("\\", "/").rsplit("/", 1)[-1]
        suffix = "." + name.rsplit(".", 1)[-1].lower() if "." in name.lstrip(".") else ""
    return sha256 + (suffix if _SUFFIX.fullmatch(suffix) else ".bin")


def database_file(connection) -> Path | None:
    """The main database's file (None for an in-memory database)."""
    for _, name, file in connection.exec_driver_sql("PRAGMA database_list").fetchall():
        if name == "main" and file:
            return Path(file)
    return None


def name_on_disk(db_file: Path | None, case_id: int, sha256: str, original_path: str | None) -> str:
    """The evidence file's name as it lies in the case's evidence folder (``<db>.evidence/case-<id>/``) when
    exactly one file there carries this SHA-256 (a database taken down to 0001 and back: an image drawn in the
    app keeps its ``.png``), else ``stored_name``."""
    if db_file is not None:
        folder = db_file.with_name(db_file.name + ".evidence") / f"case-{case_id}"
        found = sorted(p.name for p in folder.glob(f"{sha256}.*") if p.is_file()) if folder.is_dir() else []
        if len(found) == 1 and _SUFFIX.fullmatch(found[0][len(sha256):]):
            return found[0]
    return stored_name(sha256, original_path)


def step_triggers(columns: tuple[str, ...]) -> list[str]:
    return [
        f"CREATE TRIGGER steps_immutable BEFORE UPDATE OF {', '.join(columns)} ON steps "
        "BEGIN SELECT RAISE(ABORT, 'steps are immutable: only undone_at may be set'); END",
        "CREATE TRIGGER steps_undo_once BEFORE UPDATE OF undone_at ON steps WHEN OLD.undone_at IS NOT NULL "
        "BEGIN SELECT RAISE(ABORT, 'the step is already undone'); END",
        "CREATE TRIGGER steps_no_delete BEFORE DELETE ON steps "
        "BEGIN SELECT RAISE(ABORT, 'steps are never deleted (undo marks them undone)'); END",
    ]


def drop_step_triggers() -> None:
    for name in ("steps_immutable", "steps_undo_once", "steps_no_delete"):
        op.execute(f"DROP TRIGGER IF EXISTS {name}")


def upgrade() -> None:
    op.create_table(
        "evidence",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("case_id", sa.Integer(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("original_path", sa.Text(), nullable=True),
        sa.Column("stored_name", sa.String(100), nullable=False),
        sa.Column("added_at", sa.String(32), nullable=False),
        sa.ForeignKeyConstraint(["case_id"], ["cases.id"], name=op.f("fk_evidence_case_id_cases")),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_evidence")),
        sa.UniqueConstraint("case_id", "sha256", name=op.f("uq_evidence_case_id_sha256")),
    )
    connection = op.get_bind()
    uses = connection.execute(sa.text(
        "SELECT case_id, sketch_sha256, sketch_path, created_at FROM steps WHERE sketch_sha256 IS NOT NULL "
        "UNION ALL SELECT case_id, ir_sha256, ir_path, created_at FROM steps WHERE ir_sha256 IS NOT NULL "
        "ORDER BY 4")).all()
    db_file = database_file(connection)
    first_use: dict[tuple[int, str], tuple[str | None, str]] = {}
    for case_id, sha256, path, created_at in uses:
        first_use.setdefault((case_id, sha256), (path, created_at))
    for (case_id, sha256), (path, created_at) in first_use.items():
        connection.execute(sa.text(
            "INSERT INTO evidence (case_id, sha256, original_path, stored_name, added_at) "
            "VALUES (:case_id, :sha256, :path, :name, :at)"),
            {"case_id": case_id, "sha256": sha256, "path": path, "name": name_on_disk(db_file, case_id, sha256, path),
             "at": created_at})

    drop_step_triggers()
    op.add_column("steps", sa.Column("sketch_evidence_id", sa.Integer(), nullable=True))
    op.add_column("steps", sa.Column("ir_evidence_id", sa.Integer(), nullable=True))
    for role in ("sketch", "ir"):
        op.execute(f"UPDATE steps SET {role}_evidence_id = (SELECT evidence.id FROM evidence "
                   f"WHERE evidence.case_id = steps.case_id AND evidence.sha256 = steps.{role}_sha256) "
                   f"WHERE {role}_sha256 IS NOT NULL")
    with op.batch_alter_table("steps", recreate="always") as batch:
        batch.create_foreign_key(op.f("fk_steps_sketch_evidence_id_evidence"), "evidence",
                                 ["sketch_evidence_id"], ["id"])
        batch.create_foreign_key(op.f("fk_steps_ir_evidence_id_evidence"), "evidence", ["ir_evidence_id"], ["id"])
        for column in STEP_COLUMNS_0001_INLINE:
            batch.drop_column(column)
    for statement in step_triggers(STEP_COLUMNS_0002):
        op.execute(statement)


def downgrade() -> None:
    drop_step_triggers()
    with op.batch_alter_table("steps", recreate="always") as batch:
        batch.add_column(sa.Column("sketch_path", sa.Text(), nullable=True))
        batch.add_column(sa.Column("sketch_sha256", sa.String(64), nullable=True))
        batch.add_column(sa.Column("ir_path", sa.Text(), nullable=True))
        batch.add_column(sa.Column("ir_sha256", sa.String(64), nullable=True))
    for role in ("sketch", "ir"):
        for column, source in (("path", "original_path"), ("sha256", "sha256")):
            op.execute(f"UPDATE steps SET {role}_{column} = (SELECT evidence.{source} FROM evidence "
                       f"WHERE evidence.id = steps.{role}_evidence_id) WHERE {role}_evidence_id IS NOT NULL")
    with op.batch_alter_table("steps", recreate="always") as batch:
        batch.drop_constraint(op.f("fk_steps_sketch_evidence_id_evidence"), type_="foreignkey")
        batch.drop_constraint(op.f("fk_steps_ir_evidence_id_evidence"), type_="foreignkey")
        batch.drop_column("sketch_evidence_id")
        batch.drop_column("ir_evidence_id")
    op.drop_table("evidence")
    columns_0001 = tuple(c for c in STEP_COLUMNS_0002 if not c.endswith("_evidence_id"))
    for statement in step_triggers((*columns_0001[:10], *STEP_COLUMNS_0001_INLINE, *columns_0001[10:])):
        op.execute(statement)
