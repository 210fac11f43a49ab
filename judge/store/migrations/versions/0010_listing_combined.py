"""Listing at a million, the second step: a problem with a status or a verdict gets an index of its own,
and a tag row carries its submission's status and verdict, kept equal by the database itself.

A count of a popular problem's queued or rarely judged submissions walked the problem's range at a million
on PostgreSQL (33 ms p50, 65 ms p95: the planner misjudged how few the status's or verdict's range held):
``(key_id, problem, status, created_at, id)`` and ``(key_id, problem, verdict, created_at, id)`` make each
such filter one range, in a page's order.

With the tag rows' copy, a tag filter beside a status or a verdict (``tag=course:c3&verdict=accepted``,
a count of them) is one range of the tag's index, read from the index alone, instead of a look-up of
every tagged submission's row (at a million submissions a count of a tag, a problem and a verdict took
135 ms: 8,500 row look-ups; 10 ms p95 now).

The copy is kept by a trigger on ``submissions`` (every change of ``status`` or ``verdict`` writes the
submission's tag rows, whichever statement of the store makes it: fourteen do), so no writer can forget
it. The tag indexes end with status and verdict, which orders nothing (``submission_id`` before them is
unique) but lets an index-only scan check them.

Revision ID: 0010
Revises: 0009
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

#: The tag indexes as 0009 made them, and as they are from here on (status and verdict last).
_BEFORE = {
    "ix_submission_tags_owner_tag": ["key_id", "name", "value", "created_at", "submission_id"],
    "ix_submission_tags_owner_tag_problem": [
        "key_id",
        "name",
        "value",
        "problem",
        "created_at",
        "submission_id",
    ],
}
_AFTER = {name: [*columns, "status", "verdict"] for name, columns in _BEFORE.items()}
_PROBLEM_INDEXES = {
    "ix_submissions_owner_problem_status": ["key_id", "problem", "status", "created_at", "id"],
    "ix_submissions_owner_problem_verdict": ["key_id", "problem", "verdict", "created_at", "id"],
}

TRIGGER = "submission_tags_follow"

_SQLITE_TRIGGER = f"""
CREATE TRIGGER {TRIGGER} AFTER UPDATE OF status, verdict ON submissions
FOR EACH ROW WHEN OLD.status IS NOT NEW.status OR OLD.verdict IS NOT NEW.verdict
BEGIN
    UPDATE submission_tags SET status = NEW.status, verdict = NEW.verdict WHERE submission_id = NEW.id;
END
"""
_POSTGRES_FUNCTION = f"""
CREATE FUNCTION {TRIGGER}() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE submission_tags SET status = NEW.status, verdict = NEW.verdict WHERE submission_id = NEW.id;
    RETURN NULL;
END
$$
"""
_POSTGRES_TRIGGER = f"""
CREATE TRIGGER {TRIGGER} AFTER UPDATE OF status, verdict ON submissions
FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.verdict IS DISTINCT FROM NEW.verdict)
EXECUTE FUNCTION {TRIGGER}()
"""


def upgrade() -> None:
    bind = op.get_bind()
    status = sa.Column("status", sa.String(16), nullable=False, server_default="queued")
    op.add_column("submission_tags", status)
    op.add_column("submission_tags", sa.Column("verdict", sa.String(64), nullable=True))
    bind.execute(
        sa.text(
            "UPDATE submission_tags SET "
            "status = (SELECT status FROM submissions WHERE submissions.id = submission_tags.submission_id), "
            "verdict = (SELECT verdict FROM submissions WHERE submissions.id = submission_tags.submission_id)"
        )
    )
    for name, columns in _AFTER.items():
        op.drop_index(name, table_name="submission_tags")
        op.create_index(name, "submission_tags", columns)
    for name, columns in _PROBLEM_INDEXES.items():
        op.create_index(name, "submissions", columns)
    if bind.dialect.name == "postgresql":
        bind.execute(sa.text(_POSTGRES_FUNCTION))
        bind.execute(sa.text(_POSTGRES_TRIGGER))
    else:
        bind.execute(sa.text(_SQLITE_TRIGGER))


def downgrade() -> None:
    bind = op.get_bind()
    if bind.dialect.name == "postgresql":
        bind.execute(sa.text(f"DROP TRIGGER {TRIGGER} ON submissions"))
        bind.execute(sa.text(f"DROP FUNCTION {TRIGGER}()"))
    else:
        bind.execute(sa.text(f"DROP TRIGGER {TRIGGER}"))
    for name in _PROBLEM_INDEXES:
        op.drop_index(name, table_name="submissions")
    for name, columns in _BEFORE.items():
        op.drop_index(name, table_name="submission_tags")
        op.create_index(name, "submission_tags", columns)
    # In place on both databases (SQLite 3.35+ drops a column no index names): a batch copy of the table
    # would lose nothing here, but 0008 showed what a copy under a foreign key can cost.
    op.drop_column("submission_tags", "verdict")
    op.drop_column("submission_tags", "status")
