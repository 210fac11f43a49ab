"""Optional learner accounts: the account (name and password hash), the submissions made while signed
in, and per problem the last code and when it was first solved.

Revision ID: 0006
Revises: 0005
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from judge.store.models import UTCDateTime

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "accounts",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("name", sa.String(64), nullable=False),
        sa.Column("name_key", sa.String(64), nullable=False, unique=True),
        sa.Column("password_hash", sa.String(255), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("last_signin_at", UTCDateTime(), nullable=True),
    )
    op.create_table(
        "account_submissions",
        sa.Column(
            "submission_id",
            sa.String(36),
            sa.ForeignKey("submissions.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column(
            "account_id", sa.String(36), sa.ForeignKey("accounts.id", ondelete="CASCADE"), nullable=False
        ),
        sa.Column("problem", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
    )
    op.create_index(
        "ix_account_submissions_account", "account_submissions", ["account_id", "problem", "created_at"]
    )
    op.create_table(
        "account_problems",
        sa.Column(
            "account_id",
            sa.String(36),
            sa.ForeignKey("accounts.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("problem", sa.String(64), primary_key=True),
        sa.Column("code", sa.Text(), nullable=True),
        sa.Column("code_saved_at", UTCDateTime(), nullable=True),
        sa.Column("solved_at", UTCDateTime(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("account_problems")
    op.drop_index("ix_account_submissions_account", table_name="account_submissions")
    op.drop_table("account_submissions")
    op.drop_table("accounts")
