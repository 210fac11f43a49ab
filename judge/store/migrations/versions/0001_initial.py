"""Submissions, their progress events and their callback attempts.

Revision ID: 0001
Revises:
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from judge.store.models import BigId, JsonDoc, UTCDateTime

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "submissions",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("problem", sa.String(64), nullable=False),
        sa.Column("code", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("verdict", sa.String(32), nullable=True),
        sa.Column("result", JsonDoc, nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("manifest", JsonDoc, nullable=False),
        sa.Column("key_name", sa.String(64), nullable=True),
        sa.Column("client_address", sa.String(64), nullable=True),
        sa.Column("callback_url", sa.String(2048), nullable=True),
        sa.Column("callback_state", sa.String(16), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("started_at", UTCDateTime(), nullable=True),
        sa.Column("finished_at", UTCDateTime(), nullable=True),
    )
    op.create_index("ix_submissions_status_created", "submissions", ["status", "created_at"])
    op.create_index("ix_submissions_callback_state", "submissions", ["callback_state"])
    op.create_table(
        "submission_events",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column(
            "submission_id",
            sa.String(36),
            sa.ForeignKey("submissions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("data", JsonDoc, nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_index("ix_submission_events_submission_id", "submission_events", ["submission_id", "id"])
    op.create_table(
        "callback_attempts",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column(
            "submission_id",
            sa.String(36),
            sa.ForeignKey("submissions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("attempt", sa.Integer(), nullable=False),
        sa.Column("url", sa.String(2048), nullable=False),
        sa.Column("status_code", sa.Integer(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
    )
    op.create_index("ix_callback_attempts_submission_id", "callback_attempts", ["submission_id"])


def downgrade() -> None:
    op.drop_table("callback_attempts")
    op.drop_table("submission_events")
    op.drop_table("submissions")
