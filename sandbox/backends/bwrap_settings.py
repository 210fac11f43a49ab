"""The ``bwrap`` backend's host-specific choices (``sandbox.backends.bwrap``): uids and slots, tmpfs sizes,
cgroups, the Python and the code folder bound inside, the executors' cache scope, the zygote's bounds."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from sandbox.backends.base import CODE_ROOT
from sandbox.backends.slots import EXECUTOR_FIRST_UID, EXECUTOR_SLOTS, FIRST_UID, SLOT_LOCK_DIR, SLOTS
from sandbox.host.cgroups import PARENT_NAME
from sandbox.host.command import FAST_COMPILE_XLA_FLAGS
from sandbox.host.seccomp_filter import SYSTEM_PYTHON


@dataclass(frozen=True)
class BwrapSettings:
    """Host-specific choices; the defaults fit a Debian host where the judge runs from its venv as root."""

    #: SandboxedProcess in slot s runs as uid/gid ``uid_base + s``; no other process may use these ids.
    uid_base: int = FIRST_UID
    uid_slots: int = SLOTS
    tmp_mb: int = 64
    shm_mb: int = 16
    #: CFS quota per worker in cores, or None for no quota (CPU time is still limited by RLIMIT_CPU).
    cpu_cores: float | None = None
    cgroup_parent: str = PARENT_NAME
    #: cgroup v2 only: a cgroup delegated to the judge (a directory of the cgroup2 mount, no processes of
    #: its own) to hold ``cgroup_parent`` instead of the judge's own cgroup (``JUDGE_CGROUP_ROOT``).
    cgroup_root: str | None = field(default_factory=lambda: os.environ.get("JUDGE_CGROUP_ROOT") or None)
    #: "1" or "2" to use that cgroup hierarchy on a host that mounts both; None: v1 if its memory, pids or
    #: cpu hierarchy is mounted, else v2 (``JUDGE_CGROUP_VERSION``).
    cgroup_version: str | None = field(default_factory=lambda: os.environ.get("JUDGE_CGROUP_VERSION") or None)
    #: The Python that runs the sandboxed programs, as a path valid inside (the venv's ``bin/python``).
    python: str = sys.executable
    #: Folders bound read-only at their own path so that Python works: the install and the venv.
    python_roots: tuple[str, ...] = field(
        default_factory=lambda: tuple(
            dict.fromkeys(os.path.realpath(p) for p in (sys.base_prefix, sys.prefix))
        )
    )
    code_dir: Path = CODE_ROOT / "sandbox"
    #: Where the folder holding only the ``sandbox`` package appears inside (the working directory).
    inside_root: str = "/opt/jax-judge"
    system_python: str = SYSTEM_PYTHON
    #: CPU weight (cpu.shares; 1024 is normal) of a worker until it reports ready: importing JAX yields to
    #: running jobs, but not so far that a refill starves on a busy host (16 made starts take over 60 s).
    startup_cpu_shares: int = 256
    #: One lock file per uid, held while a worker runs as it: slots stay distinct across judge processes.
    lock_dir: str = SLOT_LOCK_DIR
    #: Executors run as ``executor_uid_base + slot``: a range of their own, never a tracer's uid.
    executor_uid_base: int = EXECUTOR_FIRST_UID
    executor_slots: int = EXECUTOR_SLOTS
    #: ``job``: compiled programs are cached within one grading; ``process``: across an executor's jobs
    #: (``JUDGE_EXECUTOR_CACHE``; see docs/architecture-sandbox.md for the trade-off).
    executor_cache_scope: str = field(default_factory=lambda: os.environ.get("JUDGE_EXECUTOR_CACHE", "job"))
    #: ``XLA_FLAGS`` of every sandboxed program. The expected outputs are computed with the same flags
    #: (``judge.core.expected``); only a benchmark that replays an older design sets others.
    xla_flags: str = FAST_COMPILE_XLA_FLAGS
    #: The zygote's cgroup: itself (JAX imported) plus its children until each moves to its own cgroup.
    zygote_memory_mb: int = 4096
    zygote_processes: int = 4096
