"""Keys without restarts and problem versions: submissions are owned by the API key's stable id
(``key_id``; existing rows take their key's name, which is the id of a key line without one, so they stay
readable), the listing indexes follow the owner, and grading nodes report the problem versions they serve.

Revision ID: 0004
Revises: 0003
Create Date: 2026-12-03
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from judge.store.models import JsonDoc

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("key_id", sa.String(64), nullable=True))
    op.execute("UPDATE submissions SET key_id = key_name WHERE key_name IS NOT NULL")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_index("ix_submissions_key_user")
        batch.drop_index("ix_submissions_key_created")
        batch.create_index("ix_submissions_owner_created", ["key_id", "created_at", "id"])
        batch.create_index("ix_submissions_owner_user", ["key_id", "external_user", "created_at", "id"])
    with op.batch_alter_table("grading_nodes") as batch:
        batch.add_column(sa.Column("problem_versions", JsonDoc, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("grading_nodes") as batch:
        batch.drop_column("problem_versions")
    with op.batch_alter_table("submissions") as batch:
        batch.drop_index("ix_submissions_owner_user")
        batch.drop_index("ix_submissions_owner_created")
        batch.create_index("ix_submissions_key_created", ["key_name", "created_at", "id"])
        batch.create_index("ix_submissions_key_user", ["key_name", "external_user", "created_at", "id"])
        batch.drop_column("key_id")
