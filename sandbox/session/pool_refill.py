"""A pool's warm-up: the background thread that keeps ``size`` ready workers
(``sandbox.session.pool.ProcessPool``).

It starts workers, waits for their ``ready``, drops idle workers that died, and starts replacements after
every hand-out. Each start first takes a place at the host's start gate
(``sandbox.session.starts.StartGate``); a start is waited for while it progresses
(``sandbox.session.starts.StartClock``), never killed for being slow on a busy host. A worker that fails to
become ready is closed and replaced after a backoff that doubles on each consecutive failure
(``sandbox.session.pool_state``), so a broken backend does not spin.
"""

from __future__ import annotations

import threading
import time
import weakref
from collections.abc import Callable

from sandbox.backends.base import SandboxedProcess, SlotBusy
from sandbox.errors import ProcessStartError
from sandbox.host.resource_limits import SandboxLimits
from sandbox.host.waitfd import readable
from sandbox.session.pool_slots import SlotLeases
from sandbox.session.pool_state import PoolState, close_worker, finished
from sandbox.session.starts import StartGate, Ticket, Waiter

#: Seconds between two tries for a place at the start gate while starts wait for one.
GATE_RETRY_S = 0.25


class Refill:
    """The refill thread of one pool. ``start(limits, slot)`` starts one worker; ``ready_limits``: re-apply
    the pool's limits to a worker once it is ready (an executor's job sets its own instead)."""

    def __init__(
        self,
        state: PoolState,
        slots: SlotLeases,
        gate: StartGate,
        start: Callable[[SandboxLimits, int], SandboxedProcess],
        *,
        slot_base: int,
        ready_limits: bool,
    ) -> None:
        self.state, self.slots, self.gate = state, slots, gate
        self.start_worker, self.slot_base, self.ready_limits = start, slot_base, ready_limits
        #: The last progress seen of each start under way and each ticket (its ``moved_at``).
        self.seen: weakref.WeakKeyDictionary[object, float] = weakref.WeakKeyDictionary()
        self.thread = threading.Thread(
            target=self.run, name=f"sandbox-pool-{state.backend.name}", daemon=True
        )

    def run(self) -> None:
        state = self.state
        while True:
            with state.cond:
                if state.closed:
                    return
                dead = [w for w in state.idle if not w.alive()]
                for worker in dead:
                    state.idle.remove(worker)
                need = state.size - len(state.idle) - len(state.pending)
                state.handed = [w for w in state.handed if not finished(w)]
                spare = len(state.idle) + len(state.pending)
                # A worker serves one job and is replaced once that job is over, not while it runs:
                # starting the replacement would take CPU from that very job. But at least half the pool
                # stays ready (or starting), so that a burst, or a Run kept in reserve beside busy
                # submissions, finds one; and waiting callers get theirs now.
                half = (state.size + 1) // 2
                need = max(need - len(state.handed), half - spare, state.waiting - spare)
                may_start = time.monotonic() >= state.backoff_until
            for worker in dead:
                state.retire(worker)
            if need > 0 and may_start:
                self._start(need)
            else:  # nothing wanted, or a backoff after failed starts: no ticket holds back other starts
                self._queue(0)
            self._wait_events()

    def _queue(self, count: int) -> list[Waiter]:
        """Keep ``count`` tickets of this pool in the host's start queue (joining at its end, leaving with
        the latest); the waiters, lowest first."""
        state = self.state
        with state.cond:
            waiters = state.waiters
            extra = waiters[count:]
            del waiters[count:]
            missing = count - len(waiters)
        for waiter in extra:
            waiter.cancel()
        joined: list[Waiter] = []
        for _ in range(missing):
            ticket = self.gate.join()
            if ticket is None:
                state.failed(f"the host's start gate cannot be used ({self.gate.dir})")
                break
            joined.append(ticket)
        with state.cond:
            state.waiters.extend(joined)
            state.gated = len(state.waiters)
            return list(state.waiters)

    def _start(self, count: int) -> None:
        """Begin up to ``count`` starts, each admitted by the start gate in its turn (lowest ticket of the
        host first); the rest keep their place in the queue."""
        state = self.state
        for waiter in self._queue(count):
            ticket = waiter.try_admit()
            with state.cond:
                if waiter.moved_at != self.seen.get(waiter):
                    self.seen[waiter] = waiter.moved_at
                    state.progressed(start=True)
            if ticket is None:
                break
            with state.cond:
                if waiter in state.waiters:
                    state.waiters.remove(waiter)
                state.gated = len(state.waiters)
            worker = self.start_one(state.limits, ticket)
            if worker is None:
                break
            with state.cond:
                state.pending.append(worker)
                state.started += 1
                state.progressed(start=True)

    def start_one(self, limits: SandboxLimits, ticket: Ticket | None = None) -> SandboxedProcess | None:
        """Start a worker in the next free slot, skipping slots busy elsewhere; None after a failure. The
        worker holds ``ticket`` (its place at the start gate) until it is ready or closed."""
        try:
            worker = self._start_in_slot(limits)
        except BaseException:
            if ticket is not None:
                ticket.release()
            raise
        if worker is None:
            if ticket is not None:
                ticket.release()
            return None
        worker.admission = ticket
        return worker

    def _start_in_slot(self, limits: SandboxLimits) -> SandboxedProcess | None:
        state, slots = self.state, self.slots
        for _ in range(slots.slots):
            slot = slots.lease()
            if slot is None:
                state.failed("every slot of the pool is in use")
                return None
            try:
                worker = self.start_worker(limits, self.slot_base + slot)
            except SlotBusy as exc:
                slots.skip(slot, str(exc))
                continue
            except Exception as exc:
                slots.release(slot)
                state.failed(f"{type(exc).__name__}: {exc}")
                return None
            slots.own(slot, worker)
            return worker
        state.failed("every slot of the pool is busy")
        return None

    def _wait_events(self) -> None:
        """Sleep until a starting worker speaks, one's start has had its chance (``StartClock``: CPU time it
        got, a stall, a wall cap), a place at the start gate may be free, or someone wakes us."""
        state = self.state
        now = time.monotonic()
        budget = state.limits.startup_time_s
        with state.cond:
            pending = list(state.pending)
            wake_at = [now + w.start_clock(budget).next_check() for w in pending]
            if state.backoff_until > now:
                wake_at.append(state.backoff_until)
            if state.gated:
                wake_at.append(now + GATE_RETRY_S)
        timeout = max(0.0, min([*wake_at, now + 1.0]) - now)
        fds = {w.result_fd: w for w in pending}
        try:
            ready = readable([state.wake_r, *fds], timeout)
        except (OSError, ValueError):
            ready = []
        if state.wake_r in ready:
            state.drain_wake()
        for worker in pending:
            clock = worker.start_clock(budget)
            overdue = clock.overdue()
            with state.cond:
                if clock.moved_at != self.seen.get(worker):
                    self.seen[worker] = clock.moved_at
                    state.progressed(start=True)
            if worker.result_fd in ready or overdue is not None:
                self._settle(worker)

    def _settle(self, worker: SandboxedProcess) -> None:
        """The worker's first bytes arrived (or its start has had its chance): ready, or closed and counted
        as a failure (a backoff before the next start)."""
        state = self.state
        try:
            worker.wait_ready(state.limits.startup_time_s)
            # Idle from now on: count the CPU time limit from here, not from before JAX's import (an
            # executor's job sets its own, see sandbox.inside.executor).
            if self.ready_limits:
                worker.apply_limits(state.limits)
        except (ProcessStartError, OSError) as exc:
            with state.cond:
                if worker in state.pending:
                    state.pending.remove(worker)
            close_worker(worker)
            state.failed(str(exc))
            return
        with state.cond:
            if worker in state.pending:
                state.pending.remove(worker)
            keep = not state.closed
            took = max(0.0, time.monotonic() - worker.started_at)
            last = state.typical_start_s
            state.typical_start_s = took if last is None else 0.7 * last + 0.3 * took
            if keep:
                state.idle.append(worker)
                state.failures = 0
                state.progressed()
                state.cond.notify_all()
        if not keep:
            close_worker(worker)
