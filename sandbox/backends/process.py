"""``process``: plain subprocesses with rlimits. Development and tests only: it isolates nothing.

Tracers and executors are ordinary processes of the judge's own user; forked tracers come from a zygote that
is an ordinary process too (no confinement, no uid drop). They share the host's network, files and user;
the CLI and the service refuse this backend unless started with an explicit insecure flag, and say so on
every run.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
from typing import ClassVar

from sandbox.backends.base import CODE_ROOT, Backend, PopenProcess, Protection, SandboxedProcess, WarmUp
from sandbox.host.command import (
    EXECUTOR,
    MALLOC_PERTURB,
    TRACER,
    ZYGOTE,
    executor_options,
    program_argv,
    program_env,
    rlimit_argv,
    rlimit_values,
)
from sandbox.host.procfs import session_cpu_s
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.forkserver import ForkedExecutor, ForkedTracer, ForkServer, ZygoteProcess


class ProcessBackend(Backend):
    name: ClassVar[str] = "process"
    insecure: ClassVar[bool] = True

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._zygote: ForkServer | None = None
        self._executor_zygote: ForkServer | None = None

    def available(self) -> str | None:
        return None

    def protections(self) -> list[Protection]:
        return [
            Protection("separate process", True, "user code never runs in the judge's process"),
            Protection("rlimits", True, "cpu, data, address space, file size, open files"),
            Protection("namespaces", False, "none: shares network, files and processes with the host"),
            Protection("uid drop", False, "runs as the judge's own user"),
            Protection("seccomp", False, "no system-call filter"),
            Protection("cgroup", False, "no memory/pids cgroup"),
        ]

    def start_tracer(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        argv = [*rlimit_argv(limits, nproc=False), *program_argv(TRACER)]
        env = program_env(str(CODE_ROOT), module=TRACER)
        return PopenProcess(self.name, argv, env, cwd=str(CODE_ROOT), role="tracer")

    def start_executor(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        argv = [*rlimit_argv(limits, nproc=False), *program_argv(EXECUTOR), *executor_options(limits)]
        env = program_env(str(CODE_ROOT), module=EXECUTOR)
        return PopenProcess(self.name, argv, env, cwd=str(CODE_ROOT), role="executor")

    def fork_tracer(self, limits: SandboxLimits, slot: int = 0) -> SandboxedProcess:
        return ForkedTracer(
            self._fork_server(), limits, rlimit_values(limits, nproc=False), on_kill=_kill_group
        )

    def fork_executor(
        self, limits: SandboxLimits, slot: int = 0, warm_up: WarmUp = "tiny"
    ) -> SandboxedProcess:
        """An executor forked from the executor zygote (its own process, the judge's user: nothing is
        confined on this backend); it sets the heap scrub itself."""
        return ForkedExecutor(
            self._fork_server(executor=True),
            limits,
            rlimit_values(limits, nproc=False),
            malloc_perturb=MALLOC_PERTURB,
            warm_up=warm_up,
            on_kill=_kill_group,
        )

    def _fork_server(self, *, executor: bool = False) -> ForkServer:
        with self._lock:
            server = self._executor_zygote if executor else self._zygote
            if server is not None and server.alive():
                return server
            if server is not None:
                server.close()
            role = "executor" if executor else "tracer"
            server = ForkServer(self.name, lambda fd: _launch_zygote(fd, role), confine=False)
            server.start()
            if executor:
                self._executor_zygote = server
            else:
                self._zygote = server
            return server

    def close(self) -> None:
        with self._lock:
            servers = [self._zygote, self._executor_zygote]
            self._zygote = self._executor_zygote = None
        for server in servers:
            if server is not None:
                server.close()


def _launch_zygote(control_fd: int, role: str = "tracer") -> ZygoteProcess:
    output_r, output_w = os.pipe()
    # An executor zygote scrubs its own heap too (its children set the byte again, ``mallopt``).
    env = program_env(str(CODE_ROOT), module=EXECUTOR if role == "executor" else ZYGOTE)
    try:
        proc = subprocess.Popen(
            [*program_argv(ZYGOTE), "--control-fd", str(control_fd), "--role", role],
            stdin=subprocess.DEVNULL,
            stdout=output_w,
            stderr=output_w,
            pass_fds=(control_fd,),
            env=env,
            cwd=str(CODE_ROOT),
            start_new_session=True,
            close_fds=True,
        )
    finally:
        os.close(output_w)

    def kill() -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)

    def wait(timeout: float | None) -> int | None:
        try:
            return proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return None

    return ZygoteProcess(proc.pid, kill, wait, output_fd=output_r, cpu=lambda: session_cpu_s(proc.pid))


def _kill_group(tracer: ForkedTracer) -> None:
    """The tracer leads a session of its own: kill its process group (what it forked, unless it left it)."""
    if tracer.wait(0) is None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(tracer.pid, signal.SIGKILL)
