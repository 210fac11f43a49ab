"""The host's start gate is a fair queue, and every wait for a start or a worker is bounded by progress.

``sandbox.session.starts.StartGate`` serves waiters lowest ticket first across every process of the host (a
waiter that died gives up its turn), and ``StartGate.acquire`` / ``ProcessPool.acquire`` fail only after a
bounded time in which nothing moved, never after a fixed wall-clock time while the queue or the starts
advance.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from sandbox.backends.base import Backend, PopenProcess, SandboxedProcess
from sandbox.errors import ProcessStartError
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.pool import ProcessPool
from sandbox.session.starts import StartGate, StartState
from tests.conftest import ROOT

#: A process that takes a ticket, says its number, waits for its turn, logs its name and holds the place
#: for a moment.
_WAITER = textwrap.dedent(
    """
    import sys, time
    sys.path.insert(0, {root!r})
    from pathlib import Path
    from sandbox.session.starts import StartGate
    gate = StartGate(Path(sys.argv[1]), limit=1)
    waiter = gate.join()
    print(waiter.number, flush=True)
    while (ticket := waiter.try_admit()) is None:
        time.sleep(0.01)
    with open(sys.argv[2], "a") as log:
        log.write(sys.argv[3] + "\\n")
    time.sleep(0.05)
    ticket.release()
    """
).format(root=str(ROOT))


@pytest.fixture
def spawned() -> Iterator[list[subprocess.Popen[str]]]:
    processes: list[subprocess.Popen[str]] = []
    yield processes
    for process in processes:
        process.kill()
        process.wait()
        if process.stdout is not None:
            process.stdout.close()


def _queue_up(gate_dir: Path, log: Path, name: str, spawned: list[subprocess.Popen[str]]) -> int:
    """Start a waiter process; its ticket number once it holds one."""
    process = subprocess.Popen(
        [sys.executable, "-c", _WAITER, str(gate_dir), str(log), name], stdout=subprocess.PIPE, text=True
    )
    spawned.append(process)
    assert process.stdout is not None
    return int(process.stdout.readline())


def test_waiters_of_several_processes_are_served_in_ticket_order(
    tmp_path: Path, spawned: list[subprocess.Popen[str]]
) -> None:
    gate = StartGate(tmp_path / "gate", limit=1)
    held = gate.try_acquire()
    assert held is not None
    log = tmp_path / "served"
    numbers = [_queue_up(gate.dir, log, f"w{i}", spawned) for i in range(5)]
    assert numbers == sorted(numbers)
    time.sleep(0.3)  # every waiter is polling: a race would now let any of them win
    held.release()
    for process in spawned:
        assert process.wait(timeout=60) == 0
    assert log.read_text().split() == [f"w{i}" for i in range(5)]


def test_a_place_is_not_taken_past_the_queue(tmp_path: Path, spawned: list[subprocess.Popen[str]]) -> None:
    gate = StartGate(tmp_path / "gate", limit=1)
    held = gate.try_acquire()
    assert held is not None
    first = gate.join()
    assert first is not None
    later = gate.join()
    assert later is not None
    held.release()
    assert later.try_admit() is None, "a later ticket took the place before the first"
    assert later.view is not None and later.view.ahead == 1
    ticket = first.try_admit()
    assert ticket is not None
    assert gate.try_acquire() is None  # the place is taken again
    ticket.release()
    assert gate.try_acquire() is None, "a plain try overtook a queued waiter"
    second = later.try_admit()
    assert second is not None
    second.release()


def test_a_killed_waiter_does_not_block_the_queue(
    tmp_path: Path, spawned: list[subprocess.Popen[str]]
) -> None:
    gate = StartGate(tmp_path / "gate", limit=1)
    held = gate.try_acquire()
    assert held is not None
    log = tmp_path / "served"
    dead = _queue_up(gate.dir, log, "dead", spawned)
    _queue_up(gate.dir, log, "alive", spawned)
    os.kill(spawned[0].pid, signal.SIGKILL)
    spawned[0].wait()
    held.release()
    assert spawned[1].wait(timeout=30) == 0
    assert log.read_text().split() == ["alive"]
    assert not (gate.dir / f"ticket-{dead:016d}").exists(), "the dead waiter's ticket was not cleared"


def test_a_waiter_that_stopped_asking_gives_up_its_turn(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sandbox.session.starts as starts

    gate = StartGate(tmp_path / "gate", limit=1)
    stopped = gate.join()
    assert stopped is not None
    asking = gate.join()
    assert asking is not None
    assert asking.try_admit() is None
    monkeypatch.setattr(starts, "STALE_S", 0.0)  # the first has not asked for longer than that
    ticket = asking.try_admit()
    assert ticket is not None
    ticket.release()
    stopped.cancel()


# ------------------------------------------------------------------------------------------ progress


def test_a_wait_behind_a_stalled_queue_fails_after_the_no_progress_bound(tmp_path: Path) -> None:
    gate = StartGate(tmp_path / "gate", limit=1)
    held = gate.try_acquire()  # never advances
    assert held is not None
    began = time.monotonic()
    assert gate.acquire(0.6) is None
    assert 0.6 <= time.monotonic() - began < 5
    held.release()


def test_a_slow_queue_that_moves_is_waited_out_however_long(tmp_path: Path) -> None:
    gate = StartGate(tmp_path / "gate", limit=1)
    held = gate.try_acquire()
    assert held is not None
    stop = threading.Event()

    def advance() -> None:  # the start holding the place gets CPU now and then, for 4 stall bounds
        for _ in range(20):
            if stop.wait(0.1):
                return
            held.touch()
        held.release()

    thread = threading.Thread(target=advance)
    began = time.monotonic()
    thread.start()
    try:
        ticket = gate.acquire(0.5)
    finally:
        stop.set()
        thread.join()
    assert ticket is not None, "a wait failed while the start ahead of it progressed"
    assert time.monotonic() - began >= 1.5
    ticket.release()


#: A worker start that burns ``CPU`` seconds (or sleeps them), then reports ready.
_START = textwrap.dedent(
    """
    import os, sys, time
    sys.path.insert(0, {root!r})
    from sandbox.shared.wire import encode_frame
    fd = int(sys.argv[sys.argv.index("--result-fd") + 1])
    mode, amount = sys.argv[1], float(sys.argv[2])
    if mode == "sleep":
        time.sleep(amount)
    else:
        until = time.thread_time() + amount
        while time.thread_time() < until:
            pass
    os.write(fd, encode_frame({{"type": "ready"}}))
    sys.stdin.read()
    """
).format(root=str(ROOT))


class _Backend(Backend):
    name = "queue-test"

    def __init__(self, mode: str, amount: float) -> None:
        self.mode, self.amount = mode, amount

    def available(self) -> str | None:
        return None

    def protections(self) -> list:  # type: ignore[type-arg]
        return []

    def start_tracer(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        return self.start_executor(limits, slot)

    def start_executor(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        argv = [sys.executable, "-c", _START, self.mode, str(self.amount)]
        return PopenProcess(self.name, argv, {"PATH": "/usr/bin:/bin"}, role="executor")


class _FastClock:
    """A clock that runs ``rate`` times faster than the real one (what ``ProcessPool.acquire`` measures its
    time without progress with)."""

    def __init__(self, rate: float) -> None:
        self.rate = rate
        self.began = time.monotonic()

    def __call__(self) -> float:
        return (time.monotonic() - self.began) * self.rate


def test_a_pool_wait_of_minutes_that_keeps_progressing_succeeds(tmp_path: Path) -> None:
    """60 s without progress fails an acquire; a start that takes far longer than 60 s by the pool's clock
    but gets CPU all along is waited for."""
    clock = _FastClock(40.0)  # a poll of the start (0.5 s) is 20 s of this clock: progress within 60 s
    backend = _Backend("burn", 3.0)
    gate = StartGate(tmp_path / "gate", limit=1)
    limits = SandboxLimits(startup_time_s=1000.0)
    pool = ProcessPool(backend, limits, 1, start=backend.start_executor, gate=gate, clock=clock)
    try:
        worker = pool.acquire(60.0)
        waited = clock()
        assert waited > 100, f"the start was quicker than the test needs ({waited:.0f} s of the pool's clock)"
        worker.close()
    finally:
        pool.close()


def test_a_pool_wait_with_nothing_progressing_fails_with_the_judges_reason(tmp_path: Path) -> None:
    clock = _FastClock(100.0)
    backend = _Backend("sleep", 3600.0)  # a start that gets no CPU (stuck, but not yet past its stall limit)
    gate = StartGate(tmp_path / "gate", limit=1)
    limits = SandboxLimits(startup_time_s=1000.0)
    pool = ProcessPool(backend, limits, 1, start=backend.start_executor, gate=gate, clock=clock)
    try:
        began = time.monotonic()
        with pytest.raises(ProcessStartError, match=r"nothing progressed for \d+ s \(no start advanced"):
            pool.acquire(60.0)
        assert time.monotonic() - began < 10
    finally:
        pool.close()


def test_a_pool_whose_starts_wait_in_the_queue_says_how_many_are_ahead(tmp_path: Path) -> None:
    gate = StartGate(tmp_path / "gate", limit=1)
    held = gate.try_acquire()
    other = gate.join()  # another judge's start queued before this pool's
    assert held is not None and other is not None
    backend = _Backend("burn", 0.1)
    pool = ProcessPool(backend, SandboxLimits(), 1, start=backend.start_executor, gate=gate)
    try:
        deadline = time.monotonic() + 10
        state: StartState | None = None
        while time.monotonic() < deadline:
            state = pool.start_state()
            if state is not None and state.gated and state.queue_ahead:
                break
            time.sleep(0.05)
        assert state is not None and state.gated == 1 and state.queue_ahead == 1, state
        assert "1 other starts queued ahead" in state.describe()
    finally:
        pool.close()
        other.cancel()
        held.release()
