"""Pools of warm sandboxed workers: JAX already imported, ``ready`` already reported.

    pool = GradingPool(backend, limits, size=2)
    pair = pool.acquire(timeout=30, limits=job_limits)     # a warm pair; fails after 30 s without progress
    raw = run_session(pair, job, job_limits)
    pair.release(raw.executor_reusable)                    # the tracer and the executor are closed
    ...
    pool.close()                                           # kills idle, starting and handed-out workers

``GradingPool`` combines a ``ProcessPool`` of one-shot tracers (forked from the backend's zygote where it
has one) and ``ExecutorPool``s of one-job executors (started ahead, each closed after the one job it
served). The rest of this docstring is about ``ProcessPool``, which keeps one-shot workers of any kind
(``start`` chooses which):

One background thread keeps ``size`` ready workers: it starts them, waits for their ``ready``, drops idle
workers that died, and starts replacements after every hand-out. Each start first takes a place at the
host's start gate (``sandbox.session.starts.StartGate``: a bounded number of starts at once over every judge
process of the host); the others wait for a place. A start is waited for while it progresses
(``sandbox.session.starts.StartClock``: the CPU time its processes got, a stall limit, a wall cap), never
killed for being slow on a busy host. A worker that fails to become ready is closed and replaced after a
backoff that doubles on each consecutive failure (0.5 s up to 30 s), so a broken backend does not spin.

``acquire`` waits as long as something progresses (a start advances or becomes ready, the host's start
queue moves, a worker is handed out or comes back): a long wait on a busy host is waited out, and only
``stall_s`` seconds with no progress at all end it, in a ``ProcessStartError`` that says so (with the last
start error). ``start_status`` says why the pool is not full (``start_state``: the same as fields,
``sandbox.session.starts.StartState``).

Limits: workers start with the pool's limits, which act as a ceiling, and get them re-applied with
``SandboxedProcess.apply_limits`` once ready (the CPU-time limit then counts from there, so JAX's import is
not charged to the job). ``acquire(limits=...)`` with other worker-side limits (memory, processes, CPU time)
tightens the chosen worker to them (rlimits of the program; cgroup memory and pids). A job that needs more
memory or processes than the pool's limits, or a backend that cannot change a running worker, gets a fresh
worker started with the job's own limits (slow, correct). One pool therefore serves every problem; the
monitor's limits (wall and case time, output) are whatever is passed to ``run_job``.

Slots: the pool gives each live worker a distinct slot in ``range(slot_base, slot_base + slots)``, reused
round-robin once its worker is closed (the ``bwrap`` backend runs slot s as uid 60000+s and itself moves on
to a free slot, ``SlotBusy`` only when none is, if another process holds one).

Thread-safe: ``acquire`` may be called from any number of threads; ``close`` from any thread, once.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import fields, replace

from sandbox.backends.base import Backend, GradingProcesses, SandboxedProcess, WarmUp
from sandbox.errors import ProcessStartError, SandboxError
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.pool_refill import Refill
from sandbox.session.pool_slots import SlotLeases
from sandbox.session.pool_state import PoolState, close_worker, finished
from sandbox.session.starts import StartGate, StartState, default_gate

#: Longest real wait between two looks at the progress of a waiting ``acquire``.
TAKE_POLL_S = 0.5
#: How long ``close`` lets the holders of handed-out workers close them before it does.
HANDED_CLOSE_GRACE_S = 2.0
#: Limits a running worker enforces itself (the others are the monitor's, passed to run_job).
WORKER_LIMITS = ("memory_mb", "processes", "cpu_time_s")


class PoolClosed(SandboxError):
    pass


def fits(job: SandboxLimits, pool: SandboxLimits) -> bool:
    """True when a worker started with ``pool`` limits can be tightened to ``job`` limits."""
    return job.memory_mb <= pool.memory_mb and job.processes <= pool.processes


class ProcessPool:
    """Ready one-shot workers handed out one at a time. Its parts: the shared state (``state``,
    ``sandbox.session.pool_state``), the slots (``slots``, ``sandbox.session.pool_slots``) and the refill
    thread (``refill``, ``sandbox.session.pool_refill``); this class hands workers out, reports on the pool's
    health and closes it."""

    def __init__(
        self,
        backend: Backend,
        limits: SandboxLimits,
        size: int | None = None,
        *,
        slot_base: int = 0,
        slots: int | None = None,
        start: Callable[[SandboxLimits, int], SandboxedProcess] | None = None,
        gate: StartGate | None = None,
        ready_limits: bool = True,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``start(limits, slot)`` starts one worker (default: ``backend.fork_tracer``); each serves one job.
        ``gate``: admits starts (default: the host-wide one of ``sandbox.session.starts``). ``ready_limits``:
        re-apply the pool's limits to a worker once it is ready (an executor's job sets its own instead).
        ``clock``: what ``acquire`` measures its time without progress with (tests inject one)."""
        self.backend = backend
        self.limits = limits
        self.size = max(1, size if size is not None else (os.cpu_count() or 1))
        count = slots if slots is not None else max(64, 4 * self.size)
        if count < 2 * self.size:
            raise ValueError("a pool needs at least 2 slots per worker (idle ones plus handed-out ones)")
        self.gate = gate or default_gate()
        self.state = PoolState(backend, limits, self.size, clock)
        self.slots = SlotLeases(self.state, count)
        self.refill = Refill(
            self.state,
            self.slots,
            self.gate,
            start or backend.fork_tracer,
            slot_base=slot_base,
            ready_limits=ready_limits,
        )
        #: Closes used workers (``close_later``) on a thread of its own, so that neither the caller nor the
        #: refill thread waits for a kill, an exit and a cgroup removal.
        self._closer = ThreadPoolExecutor(max_workers=1, thread_name_prefix=f"sandbox-close-{backend.name}")
        self.gate.listen(self.state.gate_freed)
        self.refill.thread.start()

    # ------------------------------------------------------------------------------------- hand-out

    def acquire(self, timeout: float, limits: SandboxLimits | None = None) -> SandboxedProcess:
        """A ready worker nobody else has, tightened to ``limits`` (default: the pool's). ``timeout`` bounds
        the time without progress, not the wait: the wait goes on while the pool progresses and fails after
        ``timeout`` seconds in which nothing did."""
        job = limits or self.limits
        if not fits(job, self.limits):
            return self._fresh(job, timeout)
        while True:
            worker = self.take(timeout)
            if not _differ(job, self.limits) or worker.apply_limits(job):
                return worker  # the pool's limits were applied when the worker became ready
            if not worker.alive():  # died after the check: take another
                self.state.retire(worker)
                continue
            # The backend cannot tighten this worker: start one with the job's own limits.
            self.state.retire(worker)
            return self._fresh(job, timeout)

    def take(self, stall_s: float) -> SandboxedProcess:
        """An idle worker; waits while the pool progresses (``PoolState.progressed``), fails after
        ``stall_s`` seconds (of ``clock``) without progress, counted from the later of the call and the last
        progress."""
        state = self.state
        dead: list[SandboxedProcess] = []
        began = state.now()
        try:
            with state.cond:
                while True:
                    if state.closed:
                        raise PoolClosed("the worker pool is closed")
                    while state.idle:
                        worker = state.idle.popleft()
                        if worker.ready_info is not None and worker.alive():
                            state.handed = [w for w in state.handed if not finished(w)]
                            state.handed.append(worker)
                            state.handed_out += 1
                            state.progressed()
                            return worker
                        dead.append(worker)
                    quiet = state.now() - max(began, state.progress_at)
                    if quiet >= stall_s:
                        why = f"; last start error: {state.last_error}" if state.last_error else ""
                        raise ProcessStartError(
                            f"no ready {self.backend.name} worker: nothing progressed for {quiet:.0f} s (no "
                            f"start advanced or was admitted at the host's start gate, no worker was handed "
                            f"out or came back){why}"
                        )
                    state.waiting += 1
                    try:
                        state.cond.wait(min(TAKE_POLL_S, stall_s - quiet))
                    finally:
                        state.waiting -= 1
        finally:
            state.wake()
            for worker in dead:
                state.retire(worker)

    def _fresh(self, limits: SandboxLimits, stall_s: float) -> SandboxedProcess:
        """A worker started now with the job's own limits (the pool's cannot be tightened to them), in its
        turn at the host's start gate (a queue that stood still for ``stall_s`` fails it)."""
        ticket = self.gate.acquire(stall_s)
        if ticket is None:
            raise ProcessStartError(
                f"cannot start a {self.backend.name} worker: the host's start gate queue did not move for "
                f"{stall_s:.0f} s"
            )
        worker = self.refill.start_one(limits, ticket)
        if worker is None:
            raise ProcessStartError(f"cannot start a {self.backend.name} worker: {self.state.last_error}")
        with self.state.cond:
            self.state.handed.append(worker)
        try:
            worker.wait_ready(limits.startup_time_s)
        except BaseException:
            self.state.retire(worker)
            raise
        return worker

    def close_later(self, worker: SandboxedProcess) -> None:
        """Close a handed-out worker whose job is over on the pool's closing thread, so the caller does not
        wait for the kill, the exit and the cgroup removal (tens of milliseconds). Its slot stays taken
        until it is closed; ``close`` waits for every close still queued."""
        state = self.state
        with state.cond:
            if worker in state.handed:
                state.handed.remove(worker)
            try:
                self._closer.submit(close_worker, worker)
                queued = True
            except RuntimeError:  # the pool is closing: its closer takes no more work
                queued = False
        state.wake()  # its job is over: a one-job worker's replacement may start now
        if not queued:
            close_worker(worker)

    # ------------------------------------------------------------------------------------- health

    def quiet_s(self) -> float:
        """Seconds (of ``clock``) since the pool last progressed."""
        with self.state.cond:
            return self.state.now() - self.state.progress_at

    def stats(self) -> dict[str, int | str | None]:
        state = self.state
        with state.cond:
            return {
                "size": self.size,
                "idle": len(state.idle),
                "starting": len(state.pending),
                "started": state.started,
                "handed_out": state.handed_out,
                "discarded": state.discarded,
                "gated": state.gated,
                "last_error": state.last_error,
            }

    def start_state(self) -> StartState | None:
        """Why the pool is not full yet, as fields; None when it is (or is closed)."""
        state = self.state
        with state.cond:
            if len(state.idle) >= self.size or state.closed:
                return None
            pending = list(state.pending)
            gated, failures, error = state.gated, state.failures, state.last_error
            backoff = state.backoff_until - time.monotonic()
            first = state.waiters[0].view if state.waiters else None
            typical = state.typical_start_s
        oldest = None
        if pending:
            clocks = [w.start_clock(self.limits.startup_time_s).progress() for w in pending]
            oldest = max(clocks, key=lambda p: p.wall_s)
        return StartState(
            starting=len(pending),
            oldest=oldest,
            gated=gated,
            gate_limit=self.gate.limit,
            queue_ahead=first.ahead if first is not None and gated else 0,
            typical_s=typical,
            failures=failures,
            retry_in_s=backoff if backoff > 0 and failures else None,
            last_error=error,
        )

    def start_status(self) -> str | None:
        """Why the pool is not full yet, in words (for ``/readyz``); None when it is."""
        state = self.start_state()
        return (state.describe() if state is not None else "") or None

    def idle(self) -> tuple[SandboxedProcess, ...]:
        """The ready workers waiting now (a snapshot: for health checks and tests)."""
        with self.state.cond:
            return tuple(self.state.idle)

    def wait_full(self, timeout: float) -> bool:
        """Block until ``size`` workers are idle and ready (start-up, tests, benchmarks)."""
        state = self.state
        deadline = time.monotonic() + timeout
        with state.cond:
            while len(state.idle) < self.size and not state.closed:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                state.cond.wait(remaining)
            return not state.closed

    # ------------------------------------------------------------------------------------- closing

    def close(self) -> None:
        """Stop refilling and kill every worker of the pool, handed-out ones included. Idempotent."""
        state = self.state
        with state.cond:
            if state.closed:
                return
            state.closed = True
            state.cond.notify_all()
        state.wake()
        self.refill.thread.join(timeout=60)
        self._closer.shutdown(wait=True)  # every used worker queued for closing is closed
        with state.cond:
            workers = [*state.idle, *state.pending]
            handed = [w for w in state.handed if not finished(w)]
            waiters, state.waiters = state.waiters, []
            state.idle.clear()
            state.pending.clear()
            state.handed.clear()
        self.slots.clear()
        # A handed-out worker may be inside run_job in another thread: kill it and let that thread close it
        # (closing its descriptors under a running monitor could hand their numbers to someone else).
        for worker in handed:
            with contextlib.suppress(Exception):
                worker.kill()
        for waiter in waiters:
            waiter.cancel()
        for worker in workers:
            close_worker(worker)
        deadline = time.monotonic() + HANDED_CLOSE_GRACE_S
        while any(not finished(w) for w in handed) and time.monotonic() < deadline:
            time.sleep(0.02)
        for worker in handed:
            if not finished(worker):
                close_worker(worker)
        self.gate.unlisten(self.state.gate_freed)
        state.close_wake()

    def __enter__(self) -> ProcessPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _differ(a: SandboxLimits, b: SandboxLimits) -> bool:
    return any(getattr(a, f.name) != getattr(b, f.name) for f in fields(a) if f.name in WORKER_LIMITS)


# ------------------------------------------------------------------------------------------ executors

#: CPU seconds an executor may use over its whole life (each job's own limit is set by ``begin``).
EXECUTOR_CPU_S = 100_000


def executor_slots(size: int) -> int:
    """Slots an executor pool of ``size`` uses (its live and its closing executors)."""
    return max(2 * size, 8)


class ExecutorPool:
    """Executors that serve one job each: ``acquire`` lends one, ``give_back`` closes it after its job
    (on the pool's closing thread, off the grading's clock), whatever happened in it. One background thread
    keeps ``size`` of them started and ready ahead of demand, as for tracers, so a job never waits for an
    executor's start while the pool keeps up. Thread-safe.

    Why one job: a program is data the executor compiles, and a kernel bug it triggers (a sort comparator
    that is not a strict weak order made XLA's ``std::sort`` write outside its buffer) can leave the process
    compromised with the job still finishing normally. An executor that ran one submission's (or one Run's)
    program never runs another's, so a compromised one serves nobody else; a crash, a signal, a malformed
    frame or a recycle request changes nothing, as no executor is ever lent twice. Executors are forked from
    the backend's executor zygote (``Backend.fork_executor``: a process that imported JAX and the executor
    but never started the XLA backend, ran a program or held a value), so a job's executor costs a fork and
    a backend start instead of a fresh ``import jax``; each child confines itself to an executor uid, sets
    the heap scrub and starts its own backend. Backends that cannot fork (docker) start them."""

    def __init__(self, backend: Backend, limits: SandboxLimits, size: int, *, slot_base: int = 0) -> None:
        self.backend = backend
        self.limits = limits
        started = replace(limits, cpu_time_s=EXECUTOR_CPU_S)
        self._pool = ProcessPool(
            backend,
            started,
            size,
            slot_base=slot_base,
            slots=executor_slots(size),
            start=self._fork,
            ready_limits=False,
        )
        self.retired = 0

    def _fork(self, limits: SandboxLimits, slot: int) -> SandboxedProcess:
        """Fork an executor that warms up broadly (``sandbox.inside.broad_warm_up``: ~35 ms more CPU, the
        op kinds jobs use most set up before its job) while the pool serves no job, when that CPU is
        spare, and tiny while one runs, when it would come out of that job's or the next one's."""
        pool: ProcessPool | None = getattr(self, "_pool", None)  # None while the pool itself is made
        warm_up: WarmUp = "tiny" if pool is not None and pool.state.serving() else "broad"
        return self.backend.fork_executor(limits, slot, warm_up)

    def acquire(self, timeout: float, limits: SandboxLimits | None = None) -> SandboxedProcess:
        """A ready executor nobody has had (waiting while the pool progresses, failing after ``timeout``
        seconds without progress); a fresh one when the job needs more than the pool's limits."""
        job = limits or self.limits
        if job.devices != self.limits.devices:
            raise ValueError(
                f"a job of {job.devices} devices asked a pool of {self.limits.devices}-device executors"
            )
        if not fits(job, self.limits):
            worker = self.backend.start_executor(replace(job, cpu_time_s=EXECUTOR_CPU_S))
            try:
                worker.wait_ready(job.startup_time_s)
            except BaseException:
                close_worker(worker)
                raise
            return worker
        worker = self._pool.take(timeout)
        worker.set_memory_limit(job.memory_mb)
        return worker

    def give_back(self, worker: SandboxedProcess, healthy: bool) -> None:
        """An executor's job is over: it is closed (``healthy`` or not), never lent again."""
        self.retired += 1
        self._pool.close_later(worker)

    def stats(self) -> dict[str, int | str | None]:
        return {**self._pool.stats(), "retired": self.retired}

    def wait_full(self, timeout: float) -> bool:
        return self._pool.wait_full(timeout)

    def start_state(self) -> StartState | None:
        return self._pool.start_state()

    def start_status(self) -> str | None:
        return self._pool.start_status()

    def idle(self) -> tuple[SandboxedProcess, ...]:
        return self._pool.idle()

    def close(self) -> None:
        self._pool.close()


class GradingPool:
    """Warm tracers and warm executors, handed out in pairs (one grading each).

    One executor per grading: it computes the public and custom cases first and the hidden ones last, only
    once every shown result is in (``sandbox.session.monitor``), so nothing shown is computed in a process
    that has held a hidden value; and it serves that one grading only (``ExecutorPool``). A second, secret
    executor per Submit (the design before issue 36) bought no latency worth a second fork, backend start and
    compile of every program (docs/architecture-sandbox.md has the measurements).

    Device counts: an executor's host devices are fixed when it starts (``SandboxLimits.devices``), so a job
    of D > 1 devices gets its executor from a pool of D-device executors of its own (``mesh_size``, in slot
    ranges after the one-device pool's), made on the first such job, or at start for the counts in
    ``device_counts``. Tracers serve every count (a job tells its tracer the count before user code runs; a
    forked tracer has started no backend yet).
    """

    def __init__(
        self,
        backend: Backend,
        limits: SandboxLimits,
        size: int | None = None,
        *,
        slot_base: int = 0,
        slots: int | None = None,
        executor_slot_base: int | None = None,
        mesh_size: int = 1,
        device_counts: tuple[int, ...] = (),
    ) -> None:
        self.backend = backend
        self.limits = limits
        self.mesh_size = max(1, mesh_size)
        #: Device count -> the pool of executors with that many host devices (counts > 1).
        self.meshes: dict[int, ExecutorPool] = {}
        self._mesh_lock = threading.Lock()
        self._closed = False
        self.tracers = ProcessPool(backend, limits, size, slot_base=slot_base, slots=slots)
        self.size = self.tracers.size
        executor_base = slot_base if executor_slot_base is None else executor_slot_base
        self.executors = ExecutorPool(backend, limits, self.size, slot_base=executor_base)
        #: Where the executors of device-count pools take their slots (one range per count).
        self._mesh_slot_base = executor_base + executor_slots(self.size)
        for devices in device_counts:
            self.executor_pool(devices)

    def executor_pool(self, devices: int) -> ExecutorPool:
        """The pool of executors of jobs of ``devices`` host devices, made on first use."""
        if devices <= 1:
            return self.executors
        with self._mesh_lock:
            if self._closed:
                raise PoolClosed("the grading pool is closed")
            pool = self.meshes.get(devices)
            if pool is None:
                limits = replace(self.limits, devices=devices)
                span = executor_slots(self.mesh_size)
                base = self._mesh_slot_base + span * len(self.meshes)
                pool = ExecutorPool(self.backend, limits, self.mesh_size, slot_base=base)
                self.meshes[devices] = pool
            return pool

    def acquire(self, timeout: float, limits: SandboxLimits | None = None) -> GradingProcesses:
        """A tracer nobody else has and an executor lent for the grading; ``GradingProcesses.release`` gives
        them back. Each wait goes on while its pool progresses and fails after ``timeout`` seconds without
        progress (``ProcessPool.acquire``)."""
        pool = self.executor_pool((limits or self.limits).devices)
        tracer = self.tracers.acquire(timeout, limits)
        try:
            executor = pool.acquire(timeout, limits)
        except BaseException:
            close_worker(tracer)
            raise
        return GradingProcesses(tracer, executor, pool.give_back, self.tracers.close_later)

    def stats(self) -> dict[str, int | str | None]:
        tracers = self.tracers.stats()
        executors = self.executors.stats()
        return {
            **tracers,
            "idle": min(int(tracers["idle"] or 0), int(executors["idle"] or 0)),
            "tracers_idle": tracers["idle"],
            "executors_idle": executors["idle"],
            "executors_started": executors["started"],
            "executors_retired": executors["retired"],
            "last_error": tracers["last_error"] or executors["last_error"],
            **self._mesh_stats(),
        }

    def _mesh_stats(self) -> dict[str, int | str | None]:
        with self._mesh_lock:
            meshes = dict(self.meshes)
        return {f"executors_{d}_devices_idle": pool.stats()["idle"] for d, pool in sorted(meshes.items())}

    def quiet_s(self) -> float:
        """Seconds since the least recently progressing of the pools that are not full last progressed (0
        when every pool is full)."""
        pools = (self.tracers, self.executors._pool)
        return max((p.quiet_s() for p in pools if p.start_state() is not None), default=0.0)

    def wait_full(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        return self.tracers.wait_full(timeout) and self.executors.wait_full(
            max(0.0, deadline - time.monotonic())
        )

    def close(self) -> None:
        with self._mesh_lock:
            self._closed = True
            meshes = list(self.meshes.values())
        self.tracers.close()
        self.executors.close()
        for pool in meshes:
            pool.close()

    def __enter__(self) -> GradingPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
