"""Problem versions as data: the versions operators push at runtime (package archive, check state and
findings, tenant scope) and the catalog's revision counter that every node polls.

Revision ID: 0007
Revises: 0006
Create Date: 2026-12-06
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from judge.store.models import BigId, JsonDoc, UTCDateTime

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "problem_versions",
        sa.Column("id", BigId, primary_key=True, autoincrement=True),
        sa.Column("slug", sa.String(64), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False),
        sa.Column("revision", sa.Integer(), nullable=False),
        sa.Column("archive", sa.LargeBinary(), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("findings", JsonDoc, nullable=True),
        sa.Column("tenants", JsonDoc, nullable=True),
        sa.Column("pushed_by", sa.String(64), nullable=True),
        sa.Column("created_at", UTCDateTime(), nullable=False),
        sa.Column("updated_at", UTCDateTime(), nullable=False),
        sa.Column("live_at", UTCDateTime(), nullable=True),
    )
    op.create_index("ux_problem_versions_slug_hash", "problem_versions", ["slug", "hash"], unique=True)
    op.create_index("ix_problem_versions_state", "problem_versions", ["state"])
    op.create_table(
        "problem_catalog",
        sa.Column("id", sa.Integer(), primary_key=True),
        sa.Column("revision", sa.BigInteger(), nullable=False),
    )
    op.execute("INSERT INTO problem_catalog (id, revision) VALUES (1, 0)")


def downgrade() -> None:
    op.drop_table("problem_catalog")
    op.drop_index("ix_problem_versions_state", table_name="problem_versions")
    op.drop_index("ux_problem_versions_slug_hash", table_name="problem_versions")
    op.drop_table("problem_versions")
