"""The sandbox interface: a backend starts workers of two roles; the monitor drives them.

- A **tracer** (``sandbox.inside.tracer``) runs user code for exactly one submission: its own process and its
  own uid. Backends start one directly (``start_tracer``) or fork it from a zygote that imported JAX once
  (``fork_tracer``; the default falls back to ``start_tracer``).
- An **executor** (``sandbox.inside.executor``) runs no user code and serves one job (the pool closes it
  after it), as a uid of a range of its own. Backends start one (``start_executor``) or fork it from an
  executor zygote that imported JAX once (``fork_executor``; the default falls back to ``start_executor``).

Each is a process that imports JAX, reports ``ready`` on its private result channel and then reads requests
on stdin. Backends differ only in how they start it and what they can tell after it ends (an out-of-memory
kill, for instance); a grading is driven by ``sandbox.session.driver.run_session`` for every backend alike.
"""

from __future__ import annotations

import collections
import contextlib
import os
import resource
import signal
import subprocess
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from sandbox.errors import ProcessStartError
from sandbox.host.command import rlimit_argv
from sandbox.host.procfs import session_cpu_s
from sandbox.host.resource_limits import SandboxLimits
from sandbox.host.waitfd import readable
from sandbox.session.starts import STALL_FACTOR, StartClock, Ticket, default_gate
from sandbox.shared.wire import FrameLimits, FrameReader, ProtocolError

Role = Literal["tracer", "executor", "zygote"]
#: How a forked executor warms up before it reports ready: a tiny program, or that and a broad one
#: (``sandbox.inside.broad_warm_up``; the pool asks for it while it serves no job).
WarmUp = Literal["tiny", "broad"]
#: What a program may send before and including ``ready``.
READY_LIMITS = FrameLimits(
    max_frame=64 * 1024, max_json=64 * 1024, max_json_depth=8, max_frames=4, max_total=1 << 20
)

#: Seconds ``close`` waits for a killed worker's process to exit.
KILL_WAIT_S = 10.0

#: The folder that holds the ``sandbox`` package: the only project code a worker needs.
CODE_ROOT = Path(__file__).resolve().parent.parent.parent


class SlotBusy(ProcessStartError):
    """``Backend.start`` was given a slot that another worker (maybe of another judge process) holds."""


@dataclass(frozen=True)
class Protection:
    """One protection a backend applies, and whether it is active on this host."""

    name: str
    active: bool
    detail: str = ""


@dataclass
class ExitInfo:
    returncode: int | None
    #: The backend saw the kernel kill the worker for memory (cgroup OOM, exit 137 in a container).
    oom_killed: bool = False
    notes: list[str] = field(default_factory=list)


class SandboxedProcess(ABC):
    """One sandboxed process: a tracer (one job) or an executor (many jobs). The monitor drives it through
    three descriptors: ``stdin_fd`` (requests), ``result_fd`` (framed replies) and ``output_fd`` (what it
    prints, stdout and stderr together)."""

    backend: str
    role: Role
    stdin_fd: int
    result_fd: int
    output_fd: int

    def __init__(self) -> None:
        self.ready_info: dict[str, Any] | None = None
        #: Bytes that arrived on the result channel after ``ready`` (fed to the job's reader first).
        self.leftover = b""
        self.started_at = time.monotonic()
        self._tail: collections.deque[bytes] | None = None
        self._clock: StartClock | None = None
        #: The start's place at the host's start gate, released once it is ready or has failed.
        self.admission: Ticket | None = None

    @abstractmethod
    def kill(self) -> None:
        """Kill every process of the worker, immediately (SIGKILL)."""

    def stop(self) -> None:
        """End every process of the worker now, as ``kill`` does, but without waiting for them to exit where
        the backend can otherwise make sure that none runs user code again (each has SIGKILL pending): the
        caller goes on while they exit, and ``close`` reaps them. Here, as most backends do: ``kill``."""
        self.kill()

    @abstractmethod
    def wait(self, timeout: float | None) -> int | None:
        """Wait for the worker to exit; its return code, or None if it is still running."""

    @abstractmethod
    def exit_info(self) -> ExitInfo:
        """What the backend can tell about how the worker ended. Call after ``wait``."""

    @abstractmethod
    def close(self) -> None:
        """Release everything the worker holds (fds, cgroups, containers). Idempotent."""

    def oom_killed_now(self) -> bool:
        """Whether the memory bound has already ended one of the worker's processes while the worker
        itself may still be alive (a child it forked, say). Backends without a memory cgroup say False."""
        return False

    def wait_ready(self, timeout: float) -> dict[str, Any]:
        """Block until the program reports ``ready``; raise ProcessStartError if it dies, hangs or says
        anything else first. Uses a reader of its own with small limits (never the job's).

        ``timeout`` is the start's budget, judged by ``sandbox.session.starts.StartClock``: CPU seconds the
        worker's processes got (where the backend can tell, ``start_cpu_s``), with a stall limit and a wall
        cap, so a start that progresses slowly on a busy host is waited for and one that is stuck is not.
        Counted from the worker's start: a pool that settles a worker later waits out only what is left."""
        try:
            return self._wait_ready(self.start_clock(timeout))
        finally:
            self.release_admission()

    def start_clock(self, budget_s: float) -> StartClock:
        """The clock of this worker's start (one per budget, counted from ``started_at``)."""
        clock = self._clock
        if clock is None or clock.budget_s != budget_s:
            clock = self._clock = StartClock(
                budget_s, self.start_cpu_s, started_at=self.started_at, on_move=self._advanced
            )
        return clock

    def _advanced(self) -> None:
        """The start got CPU time: its place at the host's start gate says so to waiters of every process."""
        ticket = self.admission
        if ticket is not None:
            ticket.touch()

    def start_cpu_s(self) -> float | None:
        """CPU seconds the worker's processes have used so far; None where the backend cannot tell (the
        start is then judged by wall time)."""
        return None

    def release_admission(self) -> None:
        """Give back the place the start held at the host's start gate (``sandbox.session.starts``).
        Idempotent."""
        ticket, self.admission = self.admission, None
        if ticket is not None:
            ticket.release()

    def _wait_ready(self, clock: StartClock) -> dict[str, Any]:
        if self.ready_info is not None:
            return self.ready_info
        reader = FrameReader(READY_LIMITS)
        while True:
            why = clock.overdue()
            if why is not None:
                self.kill()
                raise ProcessStartError(f"{self.backend} {self.role} did not report ready {why}")
            ready = readable([self.result_fd], clock.next_check())
            if not ready:
                continue
            chunk = os.read(self.result_fd, 1 << 16)
            if not chunk:
                self.wait(1.0)
                self.kill()
                detail = _drain(self.output_fd)
                raise ProcessStartError(f"{self.backend} {self.role} exited before it was ready: {detail}")
            try:
                frames = reader.feed(chunk)
            except ProtocolError as exc:
                self.kill()
                raise ProcessStartError(f"{self.backend} {self.role} sent a malformed frame: {exc}") from None
            for frame in frames:
                if frame.type == "ready":
                    self.ready_info = frame.message
                    self.leftover = bytes(reader.take_pending())
                    self.on_ready()
                    return frame.message
                if frame.type == "start_error":
                    self.kill()
                    raise ProcessStartError(
                        f"{self.backend} {self.role} failed to start: "
                        f"{str(frame.message.get('message'))[:2000]}"
                    )
                self.kill()
                raise ProcessStartError(f"{self.backend} {self.role} said {frame.type!r} before ready")

    def on_ready(self) -> None:  # noqa: B027 (a hook: most workers need nothing)
        """Called once the program reported ready (e.g. to move it into its cgroups)."""

    def clock_root(self) -> int | None:
        """The host pid every process of the worker descends from (``sandbox.shared.schedclock`` reads its
        tasks' run-queue waits), or None where the backend cannot tell: its time is then wall time."""
        pid = getattr(self, "pid", None)
        return pid if isinstance(pid, int) and pid > 0 else None

    def alive(self) -> bool:
        return self.wait(0) is None

    def apply_limits(self, limits: SandboxLimits) -> bool:
        """Re-apply the worker-side limits (memory, processes, CPU time) for the job it is handed out for.

        Called by the pool just before a ready worker is handed out, so the CPU time JAX's import used does
        not count against the job. Limits only go down: False when the job needs more than the worker was
        started with, or when this backend cannot change a running worker's limits.
        """
        return False

    def set_memory_limit(self, memory_mb: int) -> bool:
        """Set the memory limit of a running executor for its next job (its cgroup), where the backend can;
        False if it cannot (the limit it was started with stays)."""
        return False

    def drain_output(self) -> None:
        """Read the worker's output in a background thread from now on, keeping its last 8 KiB (executors
        print nothing a learner needs, but a full pipe would block them)."""
        if self._tail is not None:
            return
        self._tail = collections.deque(maxlen=128)
        fd = os.dup(self.output_fd)  # the thread owns this copy: closing ours never races its reads
        tail = self._tail

        def pump() -> None:
            try:
                while True:
                    data = os.read(fd, 1 << 16)
                    if not data:
                        return
                    tail.append(data[-4096:])
            except OSError:
                return
            finally:
                with contextlib.suppress(OSError):
                    os.close(fd)

        threading.Thread(target=pump, name=f"{self.backend}-{self.role}-output", daemon=True).start()

    def output_tail(self) -> str:
        if not self._tail:
            return ""
        return b"".join(self._tail)[-8192:].decode(errors="replace")


#: rlimit_argv option name -> the line of /proc/PID/limits that shows it.
_LIMIT_LINES = {
    "cpu": "Max cpu time",
    "data": "Max data size",
    "as": "Max address space",
    "fsize": "Max file size",
    "core": "Max core file size",
    "nofile": "Max open files",
    "nproc": "Max processes",
}


def current_rlimits(pid: int) -> dict[str, tuple[int, int]]:
    """The rlimits of a running process, read from /proc/PID/limits (readable where prlimit(2) is not)."""
    out: dict[str, tuple[int, int]] = {}
    with open(f"/proc/{pid}/limits") as handle:
        text = handle.read()
    for name, label in _LIMIT_LINES.items():
        for line in text.splitlines():
            if line.startswith(label + " "):
                soft, hard = line[len(label) :].split()[:2]
                out[name] = tuple(  # type: ignore[assignment]
                    resource.RLIM_INFINITY if v == "unlimited" else int(v) for v in (soft, hard)
                )
    return out


def rlimit_plan(pid: int, limits: SandboxLimits, *, nproc: bool = True) -> dict[str, tuple[int, int]] | None:
    """The rlimits a running worker should get for a job, or None if the job needs more than it has.

    Values come from ``rlimit_argv`` (one source of truth). Limits only ever go down, so no capability is
    needed; RLIMIT_CPU counts from the CPU the process has used so far (JAX's import is not the job's).
    """
    current = current_rlimits(pid)
    used = cpu_seconds_used(pid)
    plan: dict[str, tuple[int, int]] = {}
    for option in rlimit_argv(limits, nproc=nproc)[1:-1]:
        name, _, value = option.removeprefix("--").partition("=")
        soft_text, _, hard_text = value.partition(":")
        soft, hard = int(soft_text), int(hard_text or soft_text)
        have = current.get(name, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))[1]
        if name == "cpu":
            soft, hard = soft + used, hard + used
            hard = _at_most(hard, have)
            soft = min(soft, hard)
        elif have != resource.RLIM_INFINITY and hard > have:
            return None
        plan[name] = (soft, hard)
    return plan


def _at_most(value: int, limit: int) -> int:
    return value if limit == resource.RLIM_INFINITY else min(value, limit)


def apply_rlimits(pid: int, plan: dict[str, tuple[int, int]]) -> None:
    """Set a plan from ``rlimit_plan`` with prlimit(2) (needs the same uid, or CAP_SYS_RESOURCE)."""
    for name, (soft, hard) in plan.items():
        resource.prlimit(pid, getattr(resource, f"RLIMIT_{name.upper()}"), (soft, hard))


def cpu_seconds_used(pid: int) -> int:
    """User + system CPU seconds of a process (all its threads), rounded up."""
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rpartition(")")[2].split()
    ticks = int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)
    return -(-ticks // os.sysconf("SC_CLK_TCK"))


def _drain(fd: int, limit: int = 4000) -> str:
    chunks = b""
    try:
        while len(chunks) < limit and readable([fd], 0.2):
            data = os.read(fd, limit)
            if not data:
                break
            chunks += data
    except OSError:
        pass
    text = chunks.decode(errors="replace").strip()
    return text[-limit:] or "(no output)"


class PopenProcess(SandboxedProcess):
    """A worker that is a local process tree started with ``subprocess.Popen`` in its own session."""

    def __init__(
        self,
        backend: str,
        argv: list[str],
        env: dict[str, str],
        cwd: str | None = None,
        pass_fds: tuple[int, ...] = (),
        role: Role = "tracer",
    ) -> None:
        """``pass_fds``: more descriptors the child inherits at their numbers (the caller closes its own)."""
        super().__init__()
        self.backend = backend
        self.role = role
        result_r, result_w = os.pipe()
        output_r, output_w = os.pipe()
        stdin_r, stdin_w = os.pipe()
        try:
            self.proc = subprocess.Popen(
                [*argv, "--result-fd", str(result_w)],
                stdin=stdin_r,
                stdout=output_w,
                stderr=output_w,
                pass_fds=(result_w, *pass_fds),
                env=env,
                cwd=cwd,
                start_new_session=True,
                close_fds=True,
            )
        finally:
            for fd in (result_w, output_w, stdin_r):
                os.close(fd)
        self.stdin_fd, self.result_fd, self.output_fd = stdin_w, result_r, output_r
        self._closed = False

    @property
    def pid(self) -> int:
        return self.proc.pid

    def kill(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        with contextlib.suppress(ProcessLookupError):
            self.proc.kill()

    def wait(self, timeout: float | None) -> int | None:
        try:
            return self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    def exit_info(self) -> ExitInfo:
        return ExitInfo(returncode=self.proc.returncode)

    @property
    def closed(self) -> bool:
        return self._closed

    def apply_limits(self, limits: SandboxLimits) -> bool:
        """prlimit the program (``prlimit`` execs it: same pid), counting CPU time from now on."""
        try:
            plan = rlimit_plan(self.proc.pid, limits, nproc=False)
            if plan is None:
                return False
            apply_rlimits(self.proc.pid, plan)
        except OSError:
            return False
        return True

    def start_cpu_s(self) -> float | None:
        """CPU seconds of the worker's session (it was started in a session of its own)."""
        return session_cpu_s(self.proc.pid) if self.proc.returncode is None else None

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.release_admission()
        if self.proc.returncode is None:
            self.kill()
            # Bounded: a process that SIGKILL cannot end (stuck in the kernel) must not hang the judge; it
            # is reaped later by the Popen object.
            self.wait(KILL_WAIT_S)
        for fd in (self.stdin_fd, self.result_fd, self.output_fd):
            with contextlib.suppress(OSError):
                os.close(fd)


class Backend(ABC):
    """A way to start sandboxed workers. Registered by name in ``sandbox.backends.BACKENDS``."""

    name: ClassVar[str]
    #: True only for the development backend that isolates nothing.
    insecure: ClassVar[bool] = False

    @abstractmethod
    def available(self) -> str | None:
        """None when the backend can run here, else why not."""

    @abstractmethod
    def protections(self) -> list[Protection]:
        """The protections this backend applies, each with whether it is active on this host."""

    @abstractmethod
    def start_tracer(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        """Start one tracer process of its own (it imports JAX and reports ready on its own).

        Concurrent workers need distinct slots; a backend may raise ``SlotBusy`` for a slot in use.
        """

    def fork_tracer(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        """A tracer forked from this backend's zygote (JAX imported once), or ``start_tracer``'s."""
        return self.start_tracer(limits, slot)

    @abstractmethod
    def start_executor(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        """Start one executor (a uid of the executor range on backends that drop privileges)."""

    def fork_executor(
        self, limits: SandboxLimits, slot: int = 0, warm_up: WarmUp = "tiny"
    ) -> SandboxedProcess:
        """An executor forked from this backend's executor zygote (JAX imported once, no backend started)
        that warms up as ``warm_up`` says, or ``start_executor``'s (which warms up tiny)."""
        return self.start_executor(limits, slot)

    def start_pair(self, limits: SandboxLimits, slot: int = 0) -> GradingProcesses:
        """A fresh tracer and a fresh executor for one grading, both closed after it (CLI, tests).

        The two starts are admitted as one at the host's start gate (``sandbox.session.starts``), in their
        turn: it waits as long as the queue ahead moves, and fails saying so only when it stood still for
        ``STALL_FACTOR`` start budgets."""
        stall_s = STALL_FACTOR * limits.startup_time_s
        ticket = default_gate().acquire(stall_s)
        if ticket is None:
            raise ProcessStartError(
                f"no {self.name} start could begin: the host's start gate queue did not move for "
                f"{stall_s:.0f} s (no start admitted or advanced; {default_gate().dir})"
            )
        handles = ticket.split(2)
        try:
            tracer = self.start_tracer(limits, slot)
        except BaseException:
            for handle in handles:
                handle.release()
            raise
        tracer.admission = handles[0]
        try:
            executor = self.start_executor(limits, slot)
        except BaseException:
            handles[1].release()
            tracer.close()
            raise
        executor.admission = handles[1]
        return GradingProcesses(tracer, executor)

    def close(self) -> None:  # noqa: B027 (a hook: backends without a zygote keep nothing running)
        """Stop what the backend keeps running between workers (its zygote). Idempotent."""


class GradingProcesses:
    """A tracer and the executor of one grading. ``release`` closes the tracer and hands the executor to
    ``on_release`` (its pool's, with whether it may serve another job) or, without one, closes it.

    The executor computes the public and custom cases first and the hidden ones last
    (``sandbox.session.monitor``): once it has held a hidden value it computes nothing shown again
    (``RawRun.executor_reusable``)."""

    def __init__(
        self,
        tracer: SandboxedProcess,
        executor: SandboxedProcess,
        on_release: Callable[[SandboxedProcess, bool], None] | None = None,
        close_tracer: Callable[[SandboxedProcess], None] | None = None,
    ) -> None:
        """``close_tracer``: who closes the used tracer (a pool closes it on its own thread, off the
        grading's clock); default: closed here, before ``release`` returns."""
        self.tracer = tracer
        self.executor = executor
        self._on_release = on_release
        self._close_tracer = close_tracer
        self._released = False

    @property
    def backend(self) -> str:
        return self.tracer.backend

    def release(self, executor_reusable: bool) -> None:
        """``executor_reusable``: the executor may serve another job (``RawRun.executor_reusable``)."""
        if self._released:
            return
        self._released = True
        with contextlib.suppress(Exception):
            if self._close_tracer is not None:
                self._close_tracer(self.tracer)
            else:
                self.tracer.close()
        _give_back(self.executor, executor_reusable, self._on_release)

    def close(self) -> None:
        """Release with the executor closed (after a failure, or when nobody else wants it)."""
        self.release(False)


def _give_back(
    worker: SandboxedProcess, healthy: bool, on_release: Callable[[SandboxedProcess, bool], None] | None
) -> None:
    if on_release is not None:
        on_release(worker, healthy)
        return
    with contextlib.suppress(Exception):
        worker.close()
