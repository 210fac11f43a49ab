"""What the API node knows of the grading nodes (distributed dispatch), read from their heartbeats: which
are alive, how many places they offer, which problem versions they grade, and where this node and they
disagree. With in-process dispatch this process is the only grader: alive, never lost, no skew.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import timedelta
from typing import Any

from judge.core.settings import Settings
from judge.dispatch import GradingLoop
from judge.dispatch.served import serves
from judge.store import NodeRecord, NodeState, Store
from judge.store.models import utcnow

#: Node states that count as alive (taking or about to take work).
LIVE = frozenset({NodeState.STARTING, NodeState.READY, NodeState.UNREADY, NodeState.DRAINING})


class Fleet:
    """The grading nodes seen from an API node. ``api_versions``: the versions this node accepts
    submissions for, read at each call (they change when pushed versions go live)."""

    def __init__(
        self,
        store: Store,
        settings: Settings,
        worker: GradingLoop,
        api_versions: Callable[[], Mapping[str, Any]],
    ) -> None:
        self.store = store
        self.settings = settings
        self.distributed = settings.distributed
        self.worker = worker
        self.api_versions = api_versions

    def live_nodes(self) -> list[NodeRecord]:
        """Grading nodes whose heartbeat is recent (distributed dispatch)."""
        cutoff = utcnow() - timedelta(seconds=self.settings.node_timeout_s)
        return [n for n in self.store.nodes.known(seen_after=cutoff) if n.state in LIVE]

    def version_skew(self) -> list[dict[str, Any]]:
        """Problems served in more than one version by this API node (what it accepts submissions for)
        and the live grading nodes (what grades them): per problem, each version's hash, revision and
        who serves it. Empty when every node agrees (always, with in-process dispatch)."""
        if not self.distributed:
            return []
        served: dict[str, dict[str, dict[str, Any]]] = {}

        def add(slug: str, version: Mapping[str, Any], who: str) -> None:
            entry = served.setdefault(slug, {}).setdefault(
                str(version.get("hash")),
                {"hash": version.get("hash"), "revision": version.get("revision"), "served_by": []},
            )
            entry["served_by"].append(who)

        for slug, version in self.api_versions().items():
            add(slug, version, "api")
        for node in self.live_nodes():
            for slug, version in (node.problem_versions or {}).items():
                if isinstance(version, Mapping):
                    add(slug, version, node.name)
        return [
            {"problem": slug, "versions": list(versions.values())}
            for slug, versions in sorted(served.items())
            if len(versions) > 1
        ]

    def version_graded(self, slug: str, content_hash: str) -> bool:
        """Whether a grader has ``slug`` in version ``content_hash``: this process (in-process dispatch),
        or a live grading node (by its heartbeat)."""
        if not self.distributed:
            return self.worker.has_version(slug, content_hash)
        return any(
            serves(node.problem_versions, slug, content_hash)
            for node in self.live_nodes()
            if node.state is not NodeState.DRAINING
        )

    def grading_alive(self) -> bool:
        """Whether anything grades submissions now: this process (in-process dispatch), or a live
        grading node; True when the database cannot tell (no claim of a dead queue is made then)."""
        if not self.distributed:
            return True
        try:
            return bool(self.live_nodes())
        except Exception:
            return True

    def nodes_count(self, *, alive: bool) -> int:
        """Live grading nodes (``alive``), or those marked lost; in-process dispatch: itself, never lost."""
        if not self.distributed:
            return 1 if alive else 0
        if alive:
            return len(self.live_nodes())
        return sum(
            1
            for n in self.store.nodes.known(seen_after=utcnow() - timedelta(hours=1))
            if n.state is NodeState.LOST
        )

    def node_slots(self) -> int:
        """Grading places of the ready nodes (the distributed queue's capacity)."""
        return sum(n.slots for n in self.live_nodes() if n.state is NodeState.READY)
