"""What cgroup v1 and cgroup v2 have in common: the per-controller state found at start, the interface a
worker's cgroups offer the backend, and the file operations on a cgroup tree.

Both hierarchies use the same five controller names (``CONTROLLERS``), so the backend and ``judge doctor``
speak of "cgroup memory" whatever the host has. Under v2, ``cpuacct`` stands for ``cpu.stat`` and
``freezer`` for ``cgroup.kill`` / ``cgroup.freeze``: core files every v2 cgroup has, controllers or not.

Every read, write, mkdir and rmdir on a cgroup tree goes through ``KERNEL``, so the unit tests can stand in
a fake tree that reacts the way the kernel does (interface files appearing on mkdir, ``cgroup.kill``
killing the members, the "no internal processes" rule).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

CONTROLLERS = ("memory", "pids", "cpu", "cpuacct", "freezer")
PARENT_NAME = "jax-judge"


class CgroupError(Exception):
    pass


@dataclass(frozen=True)
class ControllerState:
    """One controller as found at start."""

    controller: str
    #: The judge's parent cgroup directory for this controller, or None when it cannot be used.
    parent: Path | None
    #: Why the controller cannot be used (empty when it can).
    reason: str = ""
    #: The hierarchy it belongs to: 1 (a v1 mount of its own) or 2 (the unified hierarchy).
    version: int = 1
    #: What it does for a worker here (the files written or read), for ``judge doctor``.
    detail: str = ""


class KernelFiles:
    """File operations on a cgroup tree (the real ones: the kernel answers)."""

    def read(self, path: Path) -> str:
        with open(path) as handle:
            return handle.read()

    def write(self, path: Path, value: str) -> None:
        with open(path, "w") as handle:
            handle.write(value)

    def mkdir(self, path: Path, exist_ok: bool = False) -> None:
        path.mkdir(exist_ok=exist_ok)

    def rmdir(self, path: Path) -> None:
        path.rmdir()


#: The file operations every cgroup module uses (tests replace it with a fake kernel).
KERNEL = KernelFiles()


def read(path: Path) -> str:
    return KERNEL.read(path)


def write(path: Path, value: str) -> None:
    KERNEL.write(path, value)


class ProcessCgroups(ABC):
    """The cgroups of one worker: ``dirs`` maps each usable controller to its directory (v1: one directory
    per hierarchy; v2: one directory for every controller). Created by
    ``sandbox.host.cgroups.worker_cgroups``."""

    def __init__(self, states: dict[str, ControllerState], name: str) -> None:
        self.name = name
        self.dirs: dict[str, Path] = {}
        try:
            for controller, state in states.items():
                if state.parent is None:
                    continue
                directory = state.parent / name
                if directory not in self.dirs.values():
                    KERNEL.mkdir(directory)
                self.dirs[controller] = directory
        except OSError as exc:
            self.remove()
            raise CgroupError(f"cannot create cgroup {name}: {exc}") from None

    @classmethod
    def adopt(cls, dirs: dict[str, Path]) -> ProcessCgroups:
        """Take charge of existing cgroup directories (e.g. left behind by a judge that crashed)."""
        adopted = cls.__new__(cls)
        adopted.name = next(iter(dirs.values())).name if dirs else ""
        adopted.dirs = dict(dirs)
        return adopted

    # ------------------------------------------------------------------------------------- joining

    def procs_files(self) -> list[Path]:
        """The ``cgroup.procs`` files a new process writes its pid to, one per distinct directory."""
        return [d / "cgroup.procs" for d in dict.fromkeys(self.dirs.values())]

    def members(self) -> set[int]:
        """Pids of every process in the worker's cgroups."""
        pids: set[int] = set()
        for procs in self.procs_files():
            with contextlib.suppress(OSError, ValueError):
                pids.update(int(p) for p in read(procs).split())
        return pids

    # ------------------------------------------------------------------------------------- limits

    @abstractmethod
    def set_limits(self, memory_bytes: int, pids: int, cpu_cores: float | None = None) -> None:
        """Memory (swap included), process/thread count and, if given, a CPU quota in cores.
        Raises CgroupError (or OSError) when a limit cannot be set."""

    @abstractmethod
    def set_memory(self, memory_bytes: int) -> bool:
        """Change the memory limit only (up or down); False if it cannot be set (e.g. usage already above
        it: never OOM-kills the worker to get there)."""

    @abstractmethod
    def set_cpu_shares(self, shares: int) -> bool:
        """The worker's CPU weight against its siblings in v1 ``cpu.shares`` units (default 1024); False
        without a cpu cgroup."""

    # ------------------------------------------------------------------------------------- reading

    @abstractmethod
    def oom_kills(self) -> int:
        """How many processes the memory cgroup's OOM killer ended (0 without a memory cgroup)."""

    @abstractmethod
    def cpu_seconds(self) -> float | None:
        """CPU time used by every process of the worker, or None where it is not accounted."""

    # ------------------------------------------------------------------------------------- killing

    def kill_all(self, timeout: float = 2.0) -> bool:
        """SIGKILL every member so that none can fork meanwhile; True once the cgroups are empty."""
        deadline = time.monotonic() + timeout
        if self._kill_at_once():
            return self._emptied(deadline)
        while True:
            frozen, members = self._freeze_and_signal(deadline)
            if not members:
                return True
            # Every member had SIGKILL pending while frozen: none returns to user space, so none forks
            # again. Only their exits are left to wait for (an executor's takes ~10 ms), looking at the
            # members without freezing the cgroup again each time; a pass again only if that takes long
            # (the thaw did not take, say).
            if frozen and self._emptied(min(deadline, time.monotonic() + _EXIT_WAIT_S)):
                return True
            if time.monotonic() >= deadline:
                return not self.members()
            time.sleep(0.002)

    def _emptied(self, deadline: float) -> bool:
        """Wait until the cgroups have no member (True) or the deadline passed (False)."""
        while self.members():
            if time.monotonic() >= deadline:
                return False
            time.sleep(0.002)
        return True

    def signal_all_members(self, timeout: float = 2.0) -> bool:
        """SIGKILL every member so that none can fork meanwhile, without waiting for them to exit: True once
        each has the signal pending, so none runs user code again (a task with SIGKILL pending dies before
        it returns to user space); False if that could not be made sure (``kill_all`` then)."""
        if self._kill_at_once():
            return True
        frozen, _ = self._freeze_and_signal(time.monotonic() + timeout)
        return frozen

    def _kill_at_once(self) -> bool:
        """Have the kernel SIGKILL every member, forks under way included, where it can (v2's
        ``cgroup.kill``); False where it cannot."""
        return False

    @abstractmethod
    def _freeze_and_signal(self, deadline: float) -> tuple[bool, set[int]]:
        """Freeze, SIGKILL every member, thaw: whether they were frozen as they were signalled (so none can
        have forked meanwhile), and the members signalled. Without a freezer the members are signalled
        all the same, and the first value is False."""

    def remove(self, timeout: float = 2.0) -> list[str]:
        """Kill what is left and remove the directories; notes for any that could not go."""
        notes: list[str] = []
        if not self.dirs:
            return notes
        if self.members():
            self.kill_all(timeout)
        deadline = time.monotonic() + timeout
        for directory in list(dict.fromkeys(self.dirs.values())):
            while True:
                try:
                    KERNEL.rmdir(directory)
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY or time.monotonic() >= deadline:
                        notes.append(f"cgroup {directory} not removed: {exc.strerror}")
                        break
                    time.sleep(0.01)
        self.dirs.clear()
        return notes


#: How long ``kill_all`` waits for signalled members to exit before it freezes and signals them again.
_EXIT_WAIT_S = 0.25


def signal_all(pids: set[int]) -> None:
    """SIGKILL each pid (gone or not ours: ignored)."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, signal.SIGKILL)
