"""A grading node's gate before it consumes: the sandbox self-test passes (retried while it fails, the
node ``unready`` meanwhile), then its warm pool starts and a warm worker comes up (``unready`` with the
engine's reason while that takes longer than ``WARM_TIMEOUT_S``)."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Protocol

from judge.core.doctor import SelfTest
from judge.store import NodeState

log = logging.getLogger(__name__)

#: Seconds between self-test attempts while it fails; longest wait for the first warm worker.
SELF_TEST_RETRY_S = 30.0
WARM_TIMEOUT_S = 180.0


class Warming(Protocol):
    def readiness(self) -> str | None: ...


def ready_to_consume(
    check: Callable[[], SelfTest],
    start_engine: Callable[[], Warming],
    set_state: Callable[[NodeState, str | None], None],
    stop: threading.Event,
) -> bool:
    """Self-test (``check``), then a warm worker of the engine ``start_engine`` starts; False when asked
    to stop first."""
    while not stop.is_set():
        result = check()
        if result.ok:
            break
        reason = f"the sandbox self-test failed: {result.message[:300]}"
        log.error("%s; taking no jobs, trying again in %.0f s", reason, SELF_TEST_RETRY_S)
        set_state(NodeState.UNREADY, reason)
        stop.wait(SELF_TEST_RETRY_S)
    if stop.is_set():
        return False
    engine = start_engine()
    set_state(NodeState.STARTING, "the warm sandbox workers are starting")
    deadline = time.monotonic() + WARM_TIMEOUT_S
    while not stop.is_set():
        why = engine.readiness()
        if why is None:
            return True
        if time.monotonic() > deadline:
            set_state(NodeState.UNREADY, why)
            deadline = time.monotonic() + WARM_TIMEOUT_S
        stop.wait(0.1)
    return False
