"""A grading node's look at the problem versions that went live or were retired since its last look
(``LiveProblems.refresh``): the new versions' expected outputs are computed before they are served, and a
database that does not answer is logged and looked at again at the next poll."""

from __future__ import annotations

import logging

from judge.dispatch.live_problems import LiveProblems
from judge.problems import Problem
from judge.store.problem_versions import ProblemVersions

log = logging.getLogger(__name__)


def refresh_live(problems: LiveProblems, pushed: ProblemVersions) -> bool:
    """Refresh ``problems`` from ``pushed``; True when the problems served changed."""
    from judge.expected import expected_outputs

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
