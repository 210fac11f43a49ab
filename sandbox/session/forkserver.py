"""The judge's side of a zygote (``sandbox.inside.zygote``): start it, fork tracers from it, hear their exits.

    server = ForkServer("bwrap", launch, confine=True)      # launch(control_fd) starts the zygote process
    server.start(timeout=60)                                # it imports JAX once
    tracer = ForkedTracer(server, limits, uid=60007, ...)   # a SandboxedProcess: pipes of its own, forked at
    once tracer.wait_ready(30)                                   # the child confined itself and is ready

The control channel is a Unix ``SOCK_SEQPACKET`` pair; the judge's end has ``SO_PASSCRED`` on, so the kernel
tells it the zygote's pid and each child's pid in the judge's own PID namespace (the zygote names the child
with ``SCM_CREDENTIALS``, which only a process with CAP_SYS_ADMIN may do for another pid; without it, as in
the ``process`` backend, the pid in the message is already the host's). One reader thread dispatches the
zygote's replies; the zygote reports every exit of a child it reaped, which ``ForkedTracer.wait`` waits for.

Why fork: a tracer forked from a parent that imported JAX (and traced once, without starting the XLA
backend) costs ~0.1 s of CPU instead of the ~0.7 s of a fresh ``import jax``; see
``docs/architecture-sandbox.md``.
"""

from __future__ import annotations

import array
import contextlib
import itertools
import json
import os
import signal
import socket
import struct
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sandbox.backends.base import ExitInfo, SandboxedProcess, WarmUp, apply_rlimits, rlimit_plan
from sandbox.errors import ProcessStartError
from sandbox.host.procfs import process_cpu_s
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.starts import StartClock

#: CPU seconds a zygote may take to import JAX and report ready (``sandbox.session.starts.StartClock``: a slow
#: start on a busy host is waited for while it progresses, up to its wall cap).
ZYGOTE_START_S = 90.0
#: Seconds the launch itself (creating the process, not its start-up) may take.
LAUNCH_S = 60.0
_MAX_MESSAGE = 1 << 16


@dataclass
class ZygoteProcess:
    """What a backend's launcher started: the process, and how to kill and clean up after it."""

    pid: int
    kill: Callable[[], None]
    wait: Callable[[float | None], int | None]
    cleanup: Callable[[], None] = lambda: None
    #: The zygote's own output (warnings, a traceback if it dies), read by the server.
    output_fd: int | None = None
    #: CPU seconds the zygote's processes used so far (None: unknown, its start is judged by wall time).
    cpu: Callable[[], float | None] = lambda: None


@dataclass
class _Child:
    inner_pid: int = 0
    host_pid: int = 0
    code: int | None = None
    error: str | None = None
    replied: threading.Event = field(default_factory=threading.Event)
    exited: threading.Event = field(default_factory=threading.Event)


class ForkServer:
    """A running zygote and the requests in flight. Thread-safe."""

    def __init__(
        self,
        backend: str,
        launch: Callable[[int], ZygoteProcess],
        *,
        confine: bool,
        pid_namespace: bool = False,
    ) -> None:
        """``confine``: children confine themselves (bwrap). ``pid_namespace``: the zygote runs in a PID
        namespace of its own, so a child's host pid must come from the kernel (``SCM_CREDENTIALS``)."""
        self.backend = backend
        self.confine = confine
        self.pid_namespace = pid_namespace
        self._launch = launch
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._pending: dict[int, _Child] = {}
        self._by_pid: dict[int, _Child] = {}
        self._early_exits: dict[int, int] = {}
        self._sock: socket.socket | None = None
        self._process: ZygoteProcess | None = None
        self._reader: threading.Thread | None = None
        self._dead = threading.Event()
        self._closing = threading.Event()
        self.ready_info: dict[str, Any] | None = None
        self.host_pid: int | None = None
        self._output = b""
        self.forks = 0

    # ------------------------------------------------------------------------------------------ life

    def start(self, timeout: float = ZYGOTE_START_S) -> None:
        """Launch the zygote and wait for its ``ready``.

        The launch happens on a thread of its own that lives until ``close``: bubblewrap's
        ``--die-with-parent`` ties the sandbox to the THREAD that started it (``PR_SET_PDEATHSIG`` counts
        threads), so a zygote started lazily by a short-lived request thread would die with that thread.
        """
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        launched: dict[str, Any] = {}
        done = threading.Event()

        def keeper() -> None:
            try:
                launched["process"] = self._launch(theirs.fileno())
            except BaseException as exc:
                launched["error"] = exc
            finally:
                theirs.close()
                done.set()
            self._closing.wait()

        threading.Thread(target=keeper, name=f"{self.backend}-zygote-keeper", daemon=True).start()
        if not done.wait(LAUNCH_S):
            ours.close()
            self._closing.set()
            raise ProcessStartError(
                f"{self.backend} zygote: its launch did not return within {LAUNCH_S:.0f} s"
            )
        if "error" in launched:
            ours.close()
            self._closing.set()
            raise launched["error"]
        self._process = launched["process"]
        self._sock = ours
        try:
            message, pid = self._receive_ready(StartClock(timeout, self._process.cpu))
        except (OSError, ValueError, ProcessStartError) as exc:
            self.close()
            raise ProcessStartError(
                f"{self.backend} zygote did not start: {exc}; {self._drain_output()}"
            ) from None
        if message is None or message.get("type") != "ready":
            self.close()
            raise ProcessStartError(
                f"{self.backend} zygote did not start: {message!r}; {self._drain_output()}"
            )
        self.ready_info = message
        self.host_pid = pid or message.get("pid")
        ours.settimeout(None)
        self._reader = threading.Thread(target=self._read_loop, name=f"{self.backend}-zygote", daemon=True)
        self._reader.start()

    def _receive_ready(self, clock: StartClock) -> tuple[dict[str, Any] | None, int | None]:
        """The zygote's first message, waited for while its start progresses (``StartClock``)."""
        assert self._sock is not None
        while True:
            why = clock.overdue()
            if why is not None:
                raise ProcessStartError(f"it did not report ready {why}")
            self._sock.settimeout(max(0.05, clock.next_check()))
            try:
                return self._receive()
            except TimeoutError:
                continue

    def alive(self) -> bool:
        return self._sock is not None and not self._dead.is_set()

    def close(self) -> None:
        """Close the control socket (the zygote exits on it) and kill the zygote and every child of it."""
        self._closing.set()
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
        process, self._process = self._process, None
        if process is not None:
            if process.wait(2.0) is None:
                process.kill()
                process.wait(5.0)
            process.cleanup()
            if process.output_fd is not None:
                with contextlib.suppress(OSError):
                    os.close(process.output_fd)
        self._dead.set()
        with self._lock:
            children = list(self._pending.values()) + list(self._by_pid.values())
        for child in children:
            child.replied.set()
            child.exited.set()

    # ------------------------------------------------------------------------------------------ forking

    def fork(self, request: dict[str, Any], fds: list[int], timeout: float = 10.0) -> _Child:
        """Ask for a child with these three descriptors (stdin, result, output). Returns once forked."""
        if not self.alive():
            raise ProcessStartError(f"the {self.backend} zygote is not running")
        child = _Child()
        with self._lock:
            request_id = next(self._ids)
            self._pending[request_id] = child
        try:
            assert self._sock is not None
            socket.send_fds(
                self._sock, [json.dumps({**request, "type": "fork", "id": request_id}).encode()], fds
            )
        except OSError as exc:
            with self._lock:
                self._pending.pop(request_id, None)
            raise ProcessStartError(f"the {self.backend} zygote is gone: {exc}") from None
        if not child.replied.wait(timeout) or child.error is not None or not child.inner_pid:
            with self._lock:
                self._pending.pop(request_id, None)
            raise ProcessStartError(f"the {self.backend} zygote could not fork: {child.error or 'no reply'}")
        self.forks += 1
        return child

    # ------------------------------------------------------------------------------------------ replies

    def _receive(self) -> tuple[dict[str, Any] | None, int | None]:
        """One message from the zygote and the sender pid the kernel attached (None at end of file)."""
        assert self._sock is not None
        data, ancillary, _, _ = self._sock.recvmsg(_MAX_MESSAGE, socket.CMSG_SPACE(struct.calcsize("iII")))
        if not data:
            return None, None
        pid = None
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_CREDENTIALS:
                pid = struct.unpack("iII", payload[: struct.calcsize("iII")])[0]
            elif level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                for fd in array.array("i", payload[: len(payload) - len(payload) % 4]):
                    os.close(fd)
        message = json.loads(data)
        return (message if isinstance(message, dict) else None), pid

    def _read_loop(self) -> None:
        try:
            while self._sock is not None:
                message, pid = self._receive()
                if message is None:
                    break
                self._dispatch(message, pid)
        except (OSError, ValueError):
            pass
        finally:
            self._dead.set()
            with self._lock:
                children = list(self._pending.values()) + list(self._by_pid.values())
            for child in children:
                child.replied.set()

    def _dispatch(self, message: dict[str, Any], pid: int | None) -> None:
        kind = message.get("type")
        with self._lock:
            if kind in ("forked", "fork_failed"):
                child = self._pending.pop(int(message.get("id") or 0), None)
                if child is None:
                    return
                if kind == "forked":
                    child.inner_pid = int(message["pid"])
                    if not self.pid_namespace:
                        child.host_pid = child.inner_pid
                    elif pid and pid != self.host_pid:
                        child.host_pid = pid  # the kernel's translation of the pid the zygote named
                    else:
                        child.error = "the zygote could not name its child's pid (SCM_CREDENTIALS)"
                        child.replied.set()
                        return
                    self._by_pid[child.inner_pid] = child
                    early = self._early_exits.pop(child.inner_pid, None)
                    if early is not None:
                        child.code = early
                        child.exited.set()
                else:
                    child.error = str(message.get("message"))
                child.replied.set()
            elif kind == "exit":
                inner = int(message.get("pid") or 0)
                code = int(message.get("code") or 0)
                exited = self._by_pid.pop(inner, None)
                if exited is None:
                    # An orphan the zygote reaped, or a child that died before its "forked" was read.
                    if len(self._early_exits) < 1024:
                        self._early_exits[inner] = code
                    return
                exited.code = code
                exited.exited.set()

    def _drain_output(self) -> str:
        process = self._process
        if process is None or process.output_fd is None:
            return ""
        chunks = b""
        with contextlib.suppress(OSError):
            os.set_blocking(process.output_fd, False)
            while len(chunks) < 8192:
                data = os.read(process.output_fd, 8192)
                if not data:
                    break
                chunks += data
        return chunks.decode(errors="replace")[-2000:]


class ForkedTracer(SandboxedProcess):
    """A tracer forked by a zygote: its own pipes, pid and (when confined) uid, cgroups and /tmp."""

    def __init__(
        self,
        server: ForkServer,
        limits: SandboxLimits,
        rlimits: dict[str, tuple[int, int]],
        *,
        uid: int = 0,
        tmp_bytes: int = 64 << 20,
        shm_bytes: int = 16 << 20,
        on_ready: Callable[[ForkedTracer], None] | None = None,
        on_kill: Callable[[ForkedTracer], None] | None = None,
        on_stop: Callable[[ForkedTracer], bool] | None = None,
        on_close: Callable[[ForkedTracer], list[str]] | None = None,
        on_limits: Callable[[ForkedTracer, SandboxLimits], bool] | None = None,
        oom_killed: Callable[[], bool] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        """``extra``: more fields of the fork request (an executor's, ``ForkedExecutor``)."""
        super().__init__()
        self.backend = server.backend
        self.role = "tracer"
        self.server = server
        self.limits = limits
        self.uid = uid
        self._on_ready, self._on_kill, self._on_close = on_ready, on_kill, on_close
        self._on_stop = on_stop
        self._on_limits = on_limits
        self._oom_killed = oom_killed
        self._notes: list[str] = []
        self._closed = False
        result_r, result_w = os.pipe()
        output_r, output_w = os.pipe()
        stdin_r, stdin_w = os.pipe()
        request = {
            "confine": server.confine,
            "uid": uid,
            "rlimits": {name: list(pair) for name, pair in rlimits.items()},
            "tmp_bytes": tmp_bytes,
            "shm_bytes": shm_bytes,
            **(extra or {}),
        }
        try:
            self._child = server.fork(request, [stdin_r, result_w, output_w])
        except BaseException:
            for fd in (result_r, result_w, output_r, output_w, stdin_r, stdin_w):
                os.close(fd)
            raise
        for fd in (result_w, output_w, stdin_r):
            os.close(fd)
        self.stdin_fd, self.result_fd, self.output_fd = stdin_w, result_r, output_r
        # A pidfd names this very process for good: a pid number could be reused once it is reaped.
        self._pidfd: int | None = None
        with contextlib.suppress(OSError):
            self._pidfd = os.pidfd_open(self._child.host_pid)

    @property
    def pid(self) -> int:
        """The child's pid in the judge's PID namespace."""
        return self._child.host_pid

    @property
    def closed(self) -> bool:
        return self._closed

    def start_cpu_s(self) -> float | None:
        """CPU seconds of the forked child (it has no children of its own before it is ready)."""
        return process_cpu_s(self.pid) if self.pid else None

    def on_ready(self) -> None:
        if self._on_ready is not None:
            self._on_ready(self)

    def kill(self) -> None:
        if self._on_kill is not None:
            self._on_kill(self)
        self._signal_kill()

    def stop(self) -> None:
        """Every process of the tracer gets SIGKILL at once (its cgroups', ``on_stop``), and nobody waits
        for them to exit; without a way to make sure of that, ``kill``."""
        if self._on_stop is None or not self._on_stop(self):
            self.kill()
            return
        self._signal_kill()

    def _signal_kill(self) -> None:
        if self._pidfd is not None:
            with contextlib.suppress(OSError):
                signal.pidfd_send_signal(self._pidfd, signal.SIGKILL)

    def wait(self, timeout: float | None) -> int | None:
        if self._child.code is not None:
            return self._child.code
        if not self._child.exited.wait(timeout):
            if not self.server.alive() and not self._running():
                self._notes.append("the zygote ended before reporting how the tracer exited")
                self._child.code = -int(signal.SIGKILL)
            return self._child.code
        return self._child.code

    def oom_killed_now(self) -> bool:
        return self._oom_killed is not None and self._oom_killed()

    def exit_info(self) -> ExitInfo:
        info = ExitInfo(returncode=self._child.code, notes=list(self._notes))
        if self._oom_killed is not None and self._oom_killed():
            info.oom_killed = True
            info.notes.append("the memory cgroup's OOM killer ended the tracer")
        return info

    def apply_limits(self, limits: SandboxLimits) -> bool:
        """Tighten the tracer to a job's limits (the backend's ``on_limits``; else rlimits, same uid)."""
        if self._on_limits is not None:
            return self._on_limits(self, limits)
        try:
            plan = rlimit_plan(self.pid, limits, nproc=False)
            if plan is None:
                return False
            apply_rlimits(self.pid, plan)
        except OSError:
            return False
        return True

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.release_admission()
        self.kill()
        self.wait(5.0)
        if self._on_close is not None:
            self._notes.extend(self._on_close(self))
        fds = [self.stdin_fd, self.result_fd, self.output_fd]
        if self._pidfd is not None:
            fds.append(self._pidfd)
            self._pidfd = None
        for fd in fds:
            with contextlib.suppress(OSError):
                os.close(fd)

    def _running(self) -> bool:
        if self._pidfd is None:
            return False
        try:
            signal.pidfd_send_signal(self._pidfd, 0)
        except ProcessLookupError:
            return False
        except OSError:
            return True
        return True


class ForkedExecutor(ForkedTracer):
    """An executor forked by an executor zygote (``sandbox.inside.zygote --role executor``) for one job: it
    confines itself to ``uid`` (of the executor range), sets the heap scrub, starts its own XLA backend and
    reports ready. The fork request carries what a started executor gets as options and environment, and
    its warm-up (``warm_up``: "broad" also compiles ``sandbox.inside.broad_warm_up``'s program)."""

    def __init__(
        self,
        server: ForkServer,
        limits: SandboxLimits,
        rlimits: dict[str, tuple[int, int]],
        *,
        malloc_perturb: str,
        cache_scope: str = "job",
        warm_up: WarmUp = "tiny",
        on_memory: Callable[[ForkedExecutor, int], bool] | None = None,
        **kwargs: Any,
    ) -> None:
        extra = {
            "malloc_perturb": malloc_perturb,
            "cache_scope": cache_scope,
            "devices": limits.devices,
            "warm_up": warm_up,
        }
        self._on_memory = on_memory
        super().__init__(server, limits, rlimits, extra=extra, **kwargs)
        self.role = "executor"

    def set_memory_limit(self, memory_mb: int) -> bool:
        return self._on_memory is not None and self._on_memory(self, memory_mb)


def wait_gone(pids: Callable[[], set[int]], timeout: float) -> bool:
    """Poll until ``pids()`` is empty; True if it got there in time."""
    deadline = time.monotonic() + timeout
    while pids():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.01)
    return True
