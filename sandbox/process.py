"""``process``: a plain subprocess with rlimits. Development and tests only: it isolates nothing.

It shares the host's network, files and user; the CLI and the service refuse it unless started with an
explicit insecure flag, and say so on every run.
"""

from __future__ import annotations

from typing import ClassVar

from sandbox.base import CODE_ROOT, Backend, PopenWorker, Protection, Worker
from sandbox.command import harness_argv, harness_env, rlimit_argv
from sandbox.limits import SandboxLimits


class ProcessBackend(Backend):
    name: ClassVar[str] = "process"
    insecure: ClassVar[bool] = True

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

    def start(self, limits: SandboxLimits, slot: int = 0) -> Worker:
        argv = [*rlimit_argv(limits, nproc=False), *harness_argv()]
        return PopenWorker(self.name, argv, harness_env(str(CODE_ROOT)), cwd=str(CODE_ROOT))
