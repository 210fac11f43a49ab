"""The sandbox interface: a backend starts workers; a worker serves exactly one job.

A worker is a harness process (``python -m sandbox.harness``) that imports JAX, reports ``ready`` on its
private result channel and then waits for one job on stdin. Backends differ only in how they start that
process and what they can tell after it ends (an out-of-memory kill, for instance); the job itself is
driven by ``sandbox.monitor.run_job`` for every backend alike.
"""

from __future__ import annotations

import contextlib
import os
import resource
import select
import signal
import subprocess
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from sandbox.command import rlimit_argv
from sandbox.errors import WorkerStartError
from sandbox.limits import SandboxLimits
from sandbox.protocol import FrameReader, ProtocolError

#: The folder that holds the ``sandbox`` package: the only project code a worker needs.
CODE_ROOT = Path(__file__).resolve().parent.parent


class SlotBusy(WorkerStartError):
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


class Worker(ABC):
    """One sandboxed harness process. The monitor reads ``result_fd`` and ``output_fd``."""

    backend: str
    stdin_fd: int
    result_fd: int
    output_fd: int

    def __init__(self) -> None:
        self.ready_info: dict[str, Any] | None = None
        self._reader: FrameReader | None = None
        self.started_at = time.monotonic()

    @abstractmethod
    def kill(self) -> None:
        """Kill every process of the worker, immediately (SIGKILL)."""

    @abstractmethod
    def wait(self, timeout: float | None) -> int | None:
        """Wait for the worker to exit; its return code, or None if it is still running."""

    @abstractmethod
    def exit_info(self) -> ExitInfo:
        """What the backend can tell about how the worker ended. Call after ``wait``."""

    @abstractmethod
    def close(self) -> None:
        """Release everything the worker holds (fds, cgroups, containers). Idempotent."""

    def reader(self, max_frame: int) -> FrameReader:
        if self._reader is None:
            self._reader = FrameReader(max_frame)
        return self._reader

    def wait_ready(self, timeout: float, max_frame: int = 1 << 20) -> dict[str, Any]:
        """Block until the harness reports ``ready``; raise WorkerStartError if it dies or hangs."""
        if self.ready_info is not None:
            return self.ready_info
        deadline = time.monotonic() + timeout
        reader = self.reader(max_frame)
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.kill()
                raise WorkerStartError(f"{self.backend} worker did not report ready within {timeout:.0f} s")
            ready, _, _ = select.select([self.result_fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(self.result_fd, 1 << 16)
            if not chunk:
                self.wait(1.0)
                self.kill()
                detail = _drain(self.output_fd)
                raise WorkerStartError(f"{self.backend} worker exited before it was ready: {detail}")
            try:
                messages = reader.feed(chunk)
            except ProtocolError as exc:
                self.kill()
                raise WorkerStartError(f"{self.backend} worker sent a malformed frame: {exc}") from None
            for message in messages:
                if message["type"] == "ready":
                    self.ready_info = message
                    return message

    def alive(self) -> bool:
        return self.wait(0) is None

    def apply_limits(self, limits: SandboxLimits) -> bool:
        """Re-apply the worker-side limits (memory, processes, CPU time) for the job it is handed out for.

        Called by the pool just before a ready worker is handed out, so the CPU time JAX's import used does
        not count against the job. Limits only go down: False when the job needs more than the worker was
        started with, or when this backend cannot change a running worker's limits.
        """
        return False


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
        while len(chunks) < limit and select.select([fd], [], [], 0.2)[0]:
            data = os.read(fd, limit)
            if not data:
                break
            chunks += data
    except OSError:
        pass
    text = chunks.decode(errors="replace").strip()
    return text[-limit:] or "(no output)"


class PopenWorker(Worker):
    """A worker that is a local process tree started with ``subprocess.Popen`` in its own session."""

    def __init__(
        self,
        backend: str,
        argv: list[str],
        env: dict[str, str],
        cwd: str | None = None,
        pass_fds: tuple[int, ...] = (),
    ) -> None:
        """``pass_fds``: more descriptors the child inherits at their numbers (the caller closes its own)."""
        super().__init__()
        self.backend = backend
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
        """prlimit the harness (``prlimit`` execs it: same pid), counting CPU time from now on."""
        try:
            plan = rlimit_plan(self.proc.pid, limits, nproc=False)
            if plan is None:
                return False
            apply_rlimits(self.proc.pid, plan)
        except OSError:
            return False
        return True

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        if self.proc.returncode is None:
            self.kill()
            self.proc.wait()
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
    def start(self, limits: SandboxLimits, slot: int = 0) -> Worker:
        """Start one worker; it imports JAX and reports ready on its own.

        Concurrent workers need distinct slots; a backend may raise ``SlotBusy`` for a slot in use.
        """
