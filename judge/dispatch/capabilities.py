"""Capability routing: which grading queue a submission goes to, and which queues a node takes work from.

A problem grades on the CPU unless its spec says otherwise (``[sandbox] backend``): a submission of a
problem that needs an accelerator is published to that backend's queue, and only a node that grades on
that backend (``judge.core.accelerators.detect_backend``, or ``JUDGE_BACKEND``) consumes it, so a CPU node
never claims TPU work and its verdict never comes from another machine's numerics. A node on an accelerator
takes its own backend's queue first; with ``also_cpu`` it also takes CPU work while its chip is idle (the
CPU work then grades exactly as on a CPU node: its executor compiles for the CPU). The queue names keep
the CPU's as it always was, so a deployment without accelerators sees no change.
"""

from __future__ import annotations

from judge.core.accelerators import parse_backend

#: The queue of submissions that grade on the CPU (the Celery queue every deployment has); an
#: accelerator's queue is this name and the backend's (``queue_for``).
SUBMISSIONS_QUEUE = "judge.submissions"


def queue_for(backend: str) -> str:
    """The queue of submissions that grade on ``backend`` (``cpu``: the submissions queue itself)."""
    name = parse_backend(backend)
    return SUBMISSIONS_QUEUE if name == "cpu" else f"{SUBMISSIONS_QUEUE}.{name}"


def node_queues(backend: str, *, also_cpu: bool = False) -> list[str]:
    """The queues a node grading on ``backend`` consumes, its own first."""
    own = queue_for(backend)
    return [own, SUBMISSIONS_QUEUE] if also_cpu and own != SUBMISSIONS_QUEUE else [own]


def can_grade(node_backend: str, required: str, *, also_cpu: bool = False) -> bool:
    """Whether a node on ``node_backend`` may claim a submission that requires ``required``."""
    return queue_for(required) in node_queues(node_backend, also_cpu=also_cpu)
