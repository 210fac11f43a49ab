"""Platform API: caller metadata on submissions (external user, tags), regrades, idempotency keys, and the
indexes that list a key's submissions by cursor and find finished ones for retention.

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-02
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from judge.store.models import JsonDoc, UTCDateTime

revision = "0003"
down_revision = "0002"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("external_user", sa.String(200), nullable=True))
        batch.add_column(sa.Column("tags", JsonDoc, nullable=True))
        batch.add_column(sa.Column("regrade_of", sa.String(36), nullable=True))
        batch.create_index("ix_submissions_key_created", ["key_name", "created_at", "id"])
        batch.create_index("ix_submissions_key_user", ["key_name", "external_user", "created_at", "id"])
        batch.create_index("ix_submissions_finished", ["finished_at"])
        batch.create_index("ix_submissions_regrade_of", ["regrade_of"])
        batch.create_index("ix_submissions_problem_created", ["problem", "created_at"])
    op.create_table(
        "idempotency_keys",
        sa.Column("scope", sa.String(200), primary_key=True),
        sa.Column("key", sa.String(255), primary_key=True),
        sa.Column("body_hash", sa.String(64), nullable=False),
        sa.Column(
            "submission_id",
            sa.String(36),
            sa.ForeignKey("submissions.id", ondelete="CASCADE"),
            nullable=False,
        ),
        sa.Column("created_at", UTCDateTime(), nullable=False),
    )
    op.create_index("ix_idempotency_keys_created", "idempotency_keys", ["created_at"])
    op.create_index("ix_idempotency_keys_submission_id", "idempotency_keys", ["submission_id"])


def downgrade() -> None:
    op.drop_table("idempotency_keys")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_index("ix_submissions_problem_created")
        batch.drop_index("ix_submissions_regrade_of")
        batch.drop_index("ix_submissions_finished")
        batch.drop_index("ix_submissions_key_user")
        batch.drop_index("ix_submissions_key_created")
        batch.drop_column("regrade_of")
        batch.drop_column("tags")
        batch.drop_column("external_user")
