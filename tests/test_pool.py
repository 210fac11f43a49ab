"""WorkerPool with real backends (process and bwrap), plus a broken backend for the backoff."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pytest

from sandbox.backends import get_backend
from sandbox.base import Backend, PopenWorker, Protection, Worker
from sandbox.bwrap import BwrapBackend, BwrapWorker, processes_of_uid
from sandbox.errors import WorkerStartError
from sandbox.limits import SandboxLimits
from sandbox.monitor import run_job
from sandbox.pool import PoolClosed, WorkerPool
from sandbox.protocol import decode_tree, encode_tree

LIMITS = SandboxLimits(case_time_s=5.0, wall_time_s=20.0, memory_mb=1024, processes=64, startup_time_s=60.0)
CODE = "import jax.numpy as jnp\ndef f(x):\n    return x * 3\n"
#: Slots of these pools (the backend moves on to the next free one if another process holds a slot).
SLOT_BASE = 800


def job(code: str = CODE) -> dict[str, Any]:
    return {
        "type": "job",
        "code": code,
        "function": "f",
        "args": [{"name": "x", "kind": "pytree", "traced": True}],
        "cases": [{"name": "a", "args": [encode_tree(np.arange(3, dtype=np.float32))]}],
        "check_inputs_unchanged": False,
        "forbid_host_callbacks": True,
    }


@pytest.fixture(params=["process", "bwrap"])
def backend(request: pytest.FixtureRequest) -> Backend:
    backend = get_backend(request.param)
    reason = backend.available()
    if reason is not None:
        if request.param == "bwrap" and os.geteuid() == 0:
            pytest.fail(f"bwrap must work on this host: {reason}")
        pytest.skip(f"{request.param}: {reason}")
    return backend


@pytest.fixture
def pool(backend: Backend) -> Iterator[WorkerPool]:
    pool = WorkerPool(backend, LIMITS, size=2, slot_base=SLOT_BASE, slots=16)
    try:
        assert pool.wait_full(120), pool.stats()
        yield pool
    finally:
        pids = _pids(pool)
        pool.close()
        assert_gone(pids)


def _pids(pool: WorkerPool) -> list[int]:
    return [w.pid for w in pool.idle() if isinstance(w, PopenWorker)]


def assert_gone(pids: list[int]) -> None:
    for pid in pids:
        assert not os.path.exists(f"/proc/{pid}"), f"worker process {pid} outlived the pool"


def grade(worker: Worker) -> np.ndarray:
    raw = run_job(worker, job(), LIMITS)
    (result,) = [m for m in raw.messages if m["type"] == "case_result"]
    assert result["status"] == "ok", (result, raw.output)
    out: np.ndarray = decode_tree(result["output"])
    return out


@pytest.mark.slow
def test_acquire_gives_a_ready_worker_that_grades(pool: WorkerPool) -> None:
    started = time.monotonic()
    worker = pool.acquire(timeout=5)
    assert time.monotonic() - started < 0.5, "a warm worker must be handed out at once"
    assert worker.ready_info is not None and worker.alive()
    np.testing.assert_array_equal(grade(worker), [0, 3, 6])


@pytest.mark.slow
def test_refill_after_hand_out(pool: WorkerPool) -> None:
    first = pool.acquire(timeout=5)
    second = pool.acquire(timeout=5)
    assert pool.wait_full(120), pool.stats()
    stats = pool.stats()
    assert stats["started"] == 4 and stats["handed_out"] == 2 and stats["idle"] == 2
    for worker in (first, second):
        grade(worker)


@pytest.mark.slow
def test_killed_idle_worker_is_replaced_and_never_handed_out(pool: WorkerPool) -> None:
    victim = pool.idle()[0]
    victim.kill()
    victim.wait(5)
    handed = [pool.acquire(timeout=120) for _ in range(2)]
    assert victim not in handed
    assert all(w.alive() for w in handed)
    assert pool.stats()["discarded"] >= 1
    for worker in handed:
        grade(worker)


@pytest.mark.slow
def test_concurrent_acquires_get_distinct_workers(pool: WorkerPool) -> None:
    got: list[Worker] = []
    lock = threading.Lock()

    def take() -> None:
        worker = pool.acquire(timeout=120)
        with lock:
            got.append(worker)

    threads = [threading.Thread(target=take) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(180)
    assert len(got) == 4 and len({id(w) for w in got}) == 4
    pids = {w.pid for w in got if isinstance(w, PopenWorker)}
    assert len(pids) == 4
    uids = {w.uid for w in got if isinstance(w, BwrapWorker)}
    assert len(uids) in (0, 4), "concurrent bwrap workers must run as distinct uids"
    for worker in got:
        grade(worker)


@pytest.mark.slow
def test_job_limits_are_applied_at_hand_out(pool: WorkerPool) -> None:
    tight = SandboxLimits(memory_mb=900, processes=50, cpu_time_s=7)
    worker = pool.acquire(timeout=5, limits=tight)
    try:
        pid = worker.harness_pid() if isinstance(worker, BwrapWorker) else worker.pid  # type: ignore[attr-defined]
        text = Path(f"/proc/{pid}/limits").read_text()
        assert f"Max data size             {900 << 20}" in text
        cpu_soft = int(text.split("Max cpu time")[1].split()[0])
        assert 7 <= cpu_soft <= 7 + 10, "the CPU limit counts from the hand-out, not from JAX's import"
    finally:
        worker.close()


@pytest.mark.slow
def test_job_needing_more_than_the_pool_gets_a_fresh_worker(pool: WorkerPool) -> None:
    bigger = SandboxLimits(memory_mb=LIMITS.memory_mb * 2, processes=64)
    worker = pool.acquire(timeout=120, limits=bigger)
    assert worker not in pool.idle()
    assert pool.stats()["handed_out"] == 0, "the warm workers were not used"
    raw = run_job(worker, job(), bigger)
    assert [m["status"] for m in raw.messages if m["type"] == "case_result"] == ["ok"]


@pytest.mark.slow
def test_close_leaves_no_process(backend: Backend) -> None:
    pool = WorkerPool(backend, LIMITS, size=2, slot_base=SLOT_BASE, slots=16)
    assert pool.wait_full(120)
    handed = pool.acquire(timeout=5)
    workers = [*pool.idle(), handed]
    pool.close()
    assert_gone([w.pid for w in workers if isinstance(w, PopenWorker)])
    for worker in workers:
        if isinstance(worker, BwrapWorker):
            assert processes_of_uid(worker.uid) == set()
            assert worker.cgroups is not None and worker.cgroups.dirs == {}
    with pytest.raises(PoolClosed):
        pool.acquire(timeout=1)


# ------------------------------------------------------------------------------------------ no JAX


class BrokenBackend(Backend):
    """Workers that exit at once: the pool must back off instead of spinning."""

    name: ClassVar[str] = "broken"

    def __init__(self) -> None:
        self.starts = 0

    def available(self) -> str | None:
        return None

    def protections(self) -> list[Protection]:
        return []

    def start(self, limits: SandboxLimits, slot: int = 0) -> Worker:
        self.starts += 1
        return PopenWorker(
            self.name, ["/bin/sh", "-c", "echo broken >&2; exit 3", "sh"], {"PATH": "/usr/bin:/bin"}
        )


def test_broken_backend_backs_off_and_acquire_reports_why() -> None:
    backend = BrokenBackend()
    pool = WorkerPool(backend, LIMITS, size=2, slots=8)
    try:
        with pytest.raises(WorkerStartError, match="broken"):
            pool.acquire(timeout=2.5)
        # 0.5 + 1 + 2 s of backoff: at most a handful of starts in 2.5 s, not hundreds.
        assert 1 <= backend.starts <= 6, backend.starts
        assert pool.idle() == ()
    finally:
        pool.close()


def test_pool_rejects_too_few_slots() -> None:
    with pytest.raises(ValueError):
        WorkerPool(BrokenBackend(), LIMITS, size=4, slots=4)


def test_bwrap_start_moves_past_a_busy_slot() -> None:
    backend = BwrapBackend()
    if backend.available() is not None:
        pytest.skip(str(backend.available()))
    lock = backend._lock_uid(backend.uid(SLOT_BASE + 50))
    assert lock is not None
    try:
        worker = backend.start(LIMITS, SLOT_BASE + 50)
        try:
            assert isinstance(worker, BwrapWorker) and worker.uid != backend.uid(SLOT_BASE + 50)
        finally:
            worker.close()
    finally:
        os.close(lock)
