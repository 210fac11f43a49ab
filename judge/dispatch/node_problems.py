"""A grading node's look at the problem versions that went live or were retired since its last look
(``LiveProblems.refresh``): the new versions' expected outputs are computed before they are served, and a
database that does not answer is logged and looked at again at the next poll; and whether another node
serves a version this one lacks."""

from __future__ import annotations

import logging
from datetime import timedelta

from judge.core.problems import Problem
from judge.dispatch.live_problems import LiveProblems
from judge.dispatch.served import serves
from judge.store import NodeState, Store
from judge.store.models import utcnow
from judge.store.problem_versions import ProblemVersions

log = logging.getLogger(__name__)


def refresh_live(problems: LiveProblems, pushed: ProblemVersions) -> bool:
    """Refresh ``problems`` from ``pushed``; True when the problems served changed."""
    from judge.core.expected import expected_outputs

    def warm(loaded: list[Problem]) -> None:
        for problem in loaded:
            expected_outputs(problem, problem.cases)

    try:
        changed = problems.refresh(pushed, prepare=warm)
    except Exception as exc:  # the database is down: the next heartbeat looks again
        log.warning("reading the problem versions failed: %s: %s", type(exc).__name__, exc)
        return False
    if changed:
        log.info("problems refreshed: %d served", len(problems))
    return changed


#: States of a node that takes (or will take) work from the queue.
TAKING_WORK = frozenset({NodeState.READY, NodeState.STARTING, NodeState.UNREADY})


def served_elsewhere(
    store: Store, own_name: str, node_timeout_s: float, slug: str, content_hash: str
) -> bool:
    """Whether another live grading node (seen within ``node_timeout_s``, taking work) reports serving
    ``slug`` in version ``content_hash`` (a node that lacks it holds the submission for that one)."""
    cutoff = utcnow() - timedelta(seconds=node_timeout_s)
    return any(
        serves(node.problem_versions, slug, content_hash)
        for node in store.nodes.known(seen_after=cutoff)
        if node.name != own_name and node.state in TAKING_WORK
    )
