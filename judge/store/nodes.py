"""Grading nodes' heartbeats (distributed dispatch): one row per node, written by its beats.
``Store.nodes``."""

from __future__ import annotations

from dataclasses import fields
from datetime import datetime

from sqlalchemy import (
    delete,
    select,
    update,
)

from judge.store.database import Database
from judge.store.models import (
    GradingNode,
    Submission,
    utcnow,
)
from judge.store.records import (
    NodeBeat,
    NodeRecord,
    NodeState,
    Status,
)


class Nodes:
    """Rows of ``grading_nodes``."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def heartbeat(self, beat: NodeBeat) -> None:
        """Record a grading node's state now (the row is created by its first beat)."""
        values = {f.name: getattr(beat, f.name) for f in fields(beat) if f.name != "name"}
        values |= {"state": beat.state.value, "last_seen": utcnow()}
        with self.db.transaction() as session:
            updated = session.execute(
                update(GradingNode).where(GradingNode.name == beat.name).values(**values)
            )
            if getattr(updated, "rowcount", 0) == 0:
                session.add(GradingNode(name=beat.name, **values))

    def known(self, seen_after: datetime | None = None) -> list[NodeRecord]:
        """Grading nodes (those seen after ``seen_after``), most recently started first."""
        query = select(GradingNode).order_by(GradingNode.started_at.desc(), GradingNode.name)
        if seen_after is not None:
            query = query.where(GradingNode.last_seen >= seen_after)
        with self.db.transaction() as session:
            return [_node(row) for row in session.scalars(query)]

    def prune(self, before: datetime) -> int:
        """Forget nodes not seen since ``before`` that hold no work; how many rows went."""
        busy = select(Submission.node).where(
            Submission.status == Status.RUNNING.value, Submission.node.is_not(None)
        )
        with self.db.transaction() as session:
            result = session.execute(
                delete(GradingNode).where(GradingNode.last_seen < before, GradingNode.name.not_in(busy))
            )
            return int(getattr(result, "rowcount", 0) or 0)


def _node(row: GradingNode) -> NodeRecord:
    values = {f.name: getattr(row, f.name) for f in fields(NodeRecord)}
    return NodeRecord(**{**values, "state": NodeState(row.state)})
