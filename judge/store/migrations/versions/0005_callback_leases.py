"""Callback leases: the sender delivering a callback holds it until a time it renews at each try, so a
callback whose sender died mid-delivery (an API node killed while sending it) is taken over by another
once the lease has passed, instead of staying pending forever.

Revision ID: 0005
Revises: 0004
Create Date: 2026-12-05
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

from judge.store.models import UTCDateTime

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.add_column(sa.Column("callback_sender", sa.String(200), nullable=True))
        batch.add_column(sa.Column("callback_lease_until", UTCDateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("submissions") as batch:
        batch.drop_column("callback_lease_until")
        batch.drop_column("callback_sender")
