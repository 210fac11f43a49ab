"""Distributed dispatch: grading nodes and their heartbeats; which node holds a submission, and when its
queue message was last published.

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-30
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from judge.store.models import UTCDateTime

revision = "0002"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("node", sa.String(200), nullable=True))
        batch.add_column(sa.Column("enqueued_at", UTCDateTime(), nullable=True))
        batch.create_index("ix_submissions_node", ["node"])
    op.create_table(
        "grading_nodes",
        sa.Column("name", sa.String(200), primary_key=True),
        sa.Column("hostname", sa.String(255), nullable=False),
        sa.Column("pid", sa.Integer(), nullable=False),
        sa.Column("queues", sa.String(200), nullable=False),
        sa.Column("backend", sa.String(32), nullable=False),
        sa.Column("version", sa.String(32), nullable=False),
        sa.Column("state", sa.String(24), nullable=False),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("slots", sa.Integer(), nullable=False),
        sa.Column("busy", sa.Integer(), nullable=False),
        sa.Column("idle_workers", sa.Integer(), nullable=False),
        sa.Column("graded", sa.Integer(), nullable=False),
        sa.Column("started_at", UTCDateTime(), nullable=False),
        sa.Column("last_seen", UTCDateTime(), nullable=False),
    )
    op.create_index("ix_grading_nodes_last_seen", "grading_nodes", ["last_seen"])


def downgrade() -> None:
    op.drop_table("grading_nodes")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_index("ix_submissions_node")
        batch.drop_column("enqueued_at")
        batch.drop_column("node")
