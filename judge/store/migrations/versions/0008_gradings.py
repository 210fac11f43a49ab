"""Regrades as gradings: a regrade grades the same submission again and keeps each grading (``gradings``)
instead of storing a new submission; an operator's regrade of a problem is a job (``regrade_jobs``) that
queues them in batches and resumes where it stopped. ``submissions.grading`` names the current one.

Revision ID: 0008
Revises: 0007
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from judge.store.models import BigId, JsonDoc, UTCDateTime

revision = "0008"
down_revision = "0007"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("grading", sa.Integer(), nullable=True))
    op.create_table(
        "gradings",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column(
            "submission_id",
            sa.String(36),
            sa.ForeignKey("submissions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("verdict", sa.String(32), nullable=True),
        sa.Column("result", JsonDoc, nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("manifest", JsonDoc, nullable=True),
        sa.Column("accepted_hash", sa.String(64), nullable=True),
        sa.Column("accepted_revision", sa.Integer(), nullable=True),
        sa.Column("job_id", sa.String(36), nullable=True),
        sa.Column("notify", sa.Boolean(), nullable=False),
        sa.Column("first_attempt", sa.Integer(), nullable=False),
        sa.Column("previous_status", sa.String(16), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
        sa.UniqueConstraint("submission_id", "number", name="uq_gradings_submission_number"),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_gradings_job_status", "gradings", ["job_id", "status"])
    op.create_index("ix_gradings_status", "gradings", ["status"])
    op.create_table(
        "regrade_jobs",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("problem", sa.String(64), nullable=False),
        sa.Column("problem_hash", sa.String(64), nullable=False),
        sa.Column("problem_revision", sa.Integer(), nullable=True),
        sa.Column("force", sa.Boolean(), nullable=False),
        sa.Column("notify", sa.Boolean(), nullable=False),
        sa.Column("batch", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("total", sa.Integer(), nullable=False),
        sa.Column("queued", sa.Integer(), nullable=False),
        sa.Column("after_created", UTCDateTime(), nullable=True),
        sa.Column("after_id", sa.String(36), nullable=True),
        sa.Column("requested_by", sa.String(64), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
    )
    op.create_index("ix_regrade_jobs_state", "regrade_jobs", ["state"])


def downgrade() -> None:
    op.drop_index("ix_regrade_jobs_state", table_name="regrade_jobs")
    op.drop_table("regrade_jobs")
    op.drop_index("ix_gradings_status", table_name="gradings")
    op.drop_index("ix_gradings_job_status", table_name="gradings")
    op.drop_table("gradings")
    if op.get_bind().dialect.name == "sqlite":
        # Not a batch (a copy of the table, the old one dropped): with foreign keys on, dropping it would
        # take every row that references a submission (events, callbacks, tags) with it. SQLite >= 3.35
        # drops a column in place.
        op.execute("ALTER TABLE submissions DROP COLUMN grading")
    else:
        op.drop_column("submissions", "grading")
