"""Listing at a million: a submission's tags as rows of their own (``submission_tags``, what a tag
filter reads, with the submission's owner, problem and creation time), an index per listing filter after
the owner, results packed on SQLite, and the progress
events of finished gradings folded into their final event (``judge.store.eventlog``). Existing rows are
migrated: their tags copied, their results packed, their events folded.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-06
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import sqlalchemy as sa
from alembic import op

from judge.store.eventlog import fold, folded, unfold
from judge.store.models import JsonDoc, UTCDateTime
from judge.store.packed import PackedJson

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

#: Rows read and written per statement while migrating.
BATCH = 500

_submissions = sa.table(
    "submissions",
    sa.column("id", sa.String()),
    sa.column("key_id", sa.String()),
    sa.column("problem", sa.String()),
    sa.column("created_at", UTCDateTime()),
    sa.column("status", sa.String()),
    sa.column("tags", JsonDoc),
    sa.column("result", PackedJson()),
)
_tags = sa.table(
    "submission_tags",
    sa.column("submission_id", sa.String()),
    sa.column("name", sa.String()),
    sa.column("value", sa.String()),
    sa.column("key_id", sa.String()),
    sa.column("problem", sa.String()),
    sa.column("created_at", UTCDateTime()),
)
_events = sa.table(
    "submission_events",
    sa.column("id", sa.BigInteger()),
    sa.column("submission_id", sa.String()),
    sa.column("attempt", sa.Integer()),
    sa.column("kind", sa.String()),
    sa.column("data", JsonDoc),
    sa.column("created_at", UTCDateTime()),
)
_INDEXES = {
    "ix_submissions_owner_problem": ["key_id", "problem", "created_at", "id", "status", "verdict"],
    "ix_submissions_owner_status": ["key_id", "status", "created_at", "id", "problem"],
    "ix_submissions_owner_verdict": ["key_id", "verdict", "created_at", "id", "problem"],
}
_TAG_INDEXES = {
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
_FINISHED = ("done", "failed")
_FINAL_KINDS = ("result", "failed")


def _batches(query: Any, key: Any) -> Any:
    """Rows of ``query`` in batches of BATCH, in the order of the unique column ``key``."""
    bind = op.get_bind()
    last = None
    while True:
        page = query if last is None else query.where(key > last)
        rows = bind.execute(page.order_by(key).limit(BATCH)).all()
        if not rows:
            return
        yield rows
        last = rows[-1][0]


def upgrade() -> None:
    op.create_table(
        "submission_tags",
        sa.Column(
            "submission_id",
            sa.String(36),
            sa.ForeignKey("submissions.id", ondelete="CASCADE"),
            primary_key=True,
        ),
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("value", sa.String(200), nullable=False),
        sa.Column("key_id", sa.String(64), nullable=True),
        sa.Column("problem", sa.String(64), nullable=False),
        sa.Column("created_at", UTCDateTime(), nullable=False),
    )
    bind = op.get_bind()
    columns = (
        _submissions.c.id,
        _submissions.c.key_id,
        _submissions.c.problem,
        _submissions.c.created_at,
        _submissions.c.tags,
    )
    for rows in _batches(sa.select(*columns).where(_submissions.c.tags.is_not(None)), _submissions.c.id):
        values = [
            {
                "submission_id": sid,
                "name": name,
                "value": str(value),
                "key_id": key,
                "problem": problem,
                "created_at": created,
            }
            for sid, key, problem, created, tags in rows
            for name, value in (tags or {}).items()
        ]
        if values:
            bind.execute(sa.insert(_tags), values)
    for name, indexed in _TAG_INDEXES.items():
        op.create_index(name, "submission_tags", indexed)
    for name, indexed in _INDEXES.items():
        op.create_index(name, "submissions", indexed)
    if bind.dialect.name == "sqlite":
        _rewrite_results()  # read as stored (JSON text), written packed
    _fold_events()


def _rewrite_results() -> None:
    bind = op.get_bind()
    query = sa.select(_submissions.c.id, _submissions.c.result).where(_submissions.c.result.is_not(None))
    for rows in _batches(query, _submissions.c.id):
        for sid, result in rows:
            bind.execute(sa.update(_submissions).where(_submissions.c.id == sid).values(result=result))


def _fold_events() -> None:
    """Fold the events of every finished grading into its final event (as ``Store.finish`` now does)."""
    bind = op.get_bind()
    finished = sa.select(_submissions.c.id, _submissions.c.result).where(_submissions.c.status.in_(_FINISHED))
    for rows in _batches(finished, _submissions.c.id):
        results = dict(rows)
        events: dict[str, list[Any]] = defaultdict(list)
        query = (
            sa.select(
                _events.c.submission_id, _events.c.id, _events.c.attempt, _events.c.kind, _events.c.data
            )
            .where(_events.c.submission_id.in_(list(results)))
            .order_by(_events.c.id)
        )
        for sid, ident, attempt, kind, data in bind.execute(query):
            events[sid].append((ident, attempt, kind, data))
        for sid, stored in events.items():
            final = stored[-1]
            if final[2] not in _FINAL_KINDS or folded(final[3]):
                continue
            earlier = [
                (ident, kind, data) for ident, attempt, kind, data in stored[:-1] if attempt == final[1]
            ]
            gone = [ident for ident, *_ in stored[:-1]]
            if gone:
                bind.execute(sa.delete(_events).where(_events.c.id.in_(gone)))
            data = fold(final[3], earlier, results[sid])
            bind.execute(sa.update(_events).where(_events.c.id == final[0]).values(data=data))


def downgrade() -> None:
    bind = op.get_bind()
    query = sa.select(
        _events.c.id,
        _events.c.submission_id,
        _events.c.attempt,
        _events.c.kind,
        _events.c.data,
        _events.c.created_at,
    )
    for rows in _batches(query, _events.c.id):
        for ident, sid, attempt, kind, data, created in rows:
            if not folded(data):
                continue
            result = bind.execute(sa.select(_submissions.c.result).where(_submissions.c.id == sid)).scalar()
            *earlier, final = unfold(ident, kind, data, result)
            if earlier:
                bind.execute(
                    sa.insert(_events),
                    [
                        {
                            "id": i,
                            "submission_id": sid,
                            "attempt": attempt,
                            "kind": k,
                            "data": d,
                            "created_at": created,
                        }
                        for i, k, d in earlier
                    ],
                )
            bind.execute(sa.update(_events).where(_events.c.id == ident).values(data=final[2]))
    if bind.dialect.name == "sqlite":
        plain = sa.table("submissions", sa.column("id", sa.String()), sa.column("result", JsonDoc))
        for rows in _batches(sa.select(_submissions.c.id, _submissions.c.result), _submissions.c.id):
            for sid, result in rows:
                if result is not None:
                    bind.execute(sa.update(plain).where(plain.c.id == sid).values(result=result))
    for name in _INDEXES:
        op.drop_index(name, "submissions")
    for name in _TAG_INDEXES:
        op.drop_index(name, "submission_tags")
    op.drop_table("submission_tags")
