"""cgroup v1 controls for sandboxed workers: memory, pids, cpu, cpuacct and freezer.

Every worker gets one cgroup per controller, ``<judge parent>/<worker name>``, where the judge parent is
``jax-judge`` under the judge's OWN cgroup of that hierarchy (so the workers stay inside whatever limits the
judge itself runs under; under systemd give the unit ``Delegate=yes``). The judge is root on a host with the
v1 controllers mounted under ``/sys/fs/cgroup/<controller>``.

- memory: ``memory.limit_in_bytes`` and, where swap accounting exists, ``memory.memsw.limit_in_bytes``; an
  out-of-memory kill shows as the ``oom_kill`` counter of ``memory.oom_control`` (``memory.failcnt`` does
  not count it).
- pids: ``pids.max`` stops fork and thread bombs (processes and threads of every uid in the cgroup).
- cpu: an optional CFS quota (cores per worker); cpuacct: CPU time used, all processes counted.
- freezer: a kill freezes the cgroup, SIGKILLs every member, then thaws it, so nothing forks meanwhile.

A hierarchy that is missing or not writable is reported (``ControllerState.reason``) and left out; the
backend says so in its protections. cgroup v2 is not handled yet (this host's v2 tree has no controllers).
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

CONTROLLERS = ("memory", "pids", "cpu", "cpuacct", "freezer")
PARENT_NAME = "jax-judge"
CFS_PERIOD_US = 100_000


class CgroupError(Exception):
    pass


@dataclass(frozen=True)
class ControllerState:
    controller: str
    #: The judge's parent cgroup directory for this controller, or None when it cannot be used.
    parent: Path | None
    reason: str = ""


def _mounts(mountinfo: str) -> dict[str, tuple[Path, str]]:
    """controller -> (mount point, root of the mount inside the hierarchy) for cgroup v1 mounts."""
    found: dict[str, tuple[Path, str]] = {}
    try:
        lines = Path(mountinfo).read_text().splitlines()
    except OSError:
        return found
    for line in lines:
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3 or tail[0] != "cgroup":
            continue
        for option in tail[2].split(","):
            if option in CONTROLLERS and option not in found:
                found[option] = (Path(fields[4].replace("\\040", " ")), fields[3])
    return found


def _own_paths(proc_cgroup: str) -> dict[str, str]:
    """controller -> this process's cgroup path in that hierarchy (from /proc/self/cgroup)."""
    paths: dict[str, str] = {}
    try:
        lines = Path(proc_cgroup).read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) == 3:
            for controller in parts[1].split(","):
                paths[controller] = parts[2]
    return paths


def discover(
    parent_name: str = PARENT_NAME,
    *,
    mountinfo: str = "/proc/self/mountinfo",
    proc_cgroup: str = "/proc/self/cgroup",
    create: bool = True,
) -> dict[str, ControllerState]:
    """Find (and create) the judge's parent cgroup of each controller."""
    mounts = _mounts(mountinfo)
    own = _own_paths(proc_cgroup)
    states: dict[str, ControllerState] = {}
    for controller in CONTROLLERS:
        if controller not in mounts:
            states[controller] = ControllerState(controller, None, "no cgroup v1 hierarchy mounted")
            continue
        mount_point, mount_root = mounts[controller]
        path = own.get(controller, "/")
        relative = os.path.relpath(path, mount_root) if path.startswith(mount_root) else "."
        base = (mount_point / relative).resolve() if relative != "." else mount_point
        if not base.is_dir():
            base = mount_point
        parent = base / parent_name
        try:
            if create:
                parent.mkdir(exist_ok=True)
            if not os.access(parent, os.W_OK):
                raise PermissionError(errno.EACCES, "not writable", str(parent))
        except OSError as exc:
            states[controller] = ControllerState(controller, None, f"cannot use {parent}: {exc.strerror}")
            continue
        if controller == "memory" and not (parent / "memory.oom_control").exists():
            states[controller] = ControllerState(controller, None, "memory.oom_control missing")
            continue
        states[controller] = ControllerState(controller, parent)
    return states


def _write(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


def _read(path: Path) -> str:
    with open(path) as handle:
        return handle.read()


class WorkerCgroups:
    """The cgroups of one worker, one directory per usable controller."""

    def __init__(self, states: dict[str, ControllerState], name: str) -> None:
        self.name = name
        self.dirs: dict[str, Path] = {}
        try:
            for controller, state in states.items():
                if state.parent is None:
                    continue
                directory = state.parent / name
                if directory not in self.dirs.values():
                    directory.mkdir()
                self.dirs[controller] = directory
        except OSError as exc:
            self.remove()
            raise CgroupError(f"cannot create cgroup {name}: {exc}") from None

    @classmethod
    def adopt(cls, dirs: dict[str, Path]) -> WorkerCgroups:
        """Take charge of existing cgroup directories (e.g. left behind by a judge that crashed)."""
        adopted = cls.__new__(cls)
        adopted.name = next(iter(dirs.values())).name if dirs else ""
        adopted.dirs = dict(dirs)
        return adopted

    # ------------------------------------------------------------------------------------- joining

    def procs_files(self) -> list[Path]:
        """The ``cgroup.procs`` files a new process writes its pid to, one per distinct directory."""
        return [d / "cgroup.procs" for d in dict.fromkeys(self.dirs.values())]

    # ------------------------------------------------------------------------------------- limits

    def set_limits(self, memory_bytes: int, pids: int, cpu_cores: float | None = None) -> None:
        memory = self.dirs.get("memory")
        if memory is not None:
            self._set_memory(memory, memory_bytes)
        if "pids" in self.dirs:
            _write(self.dirs["pids"] / "pids.max", str(pids))
        if "cpu" in self.dirs and cpu_cores is not None:
            _write(self.dirs["cpu"] / "cpu.cfs_period_us", str(CFS_PERIOD_US))
            _write(self.dirs["cpu"] / "cpu.cfs_quota_us", str(max(1000, int(cpu_cores * CFS_PERIOD_US))))

    def set_memory(self, memory_bytes: int) -> bool:
        """Change the memory limit only (up or down); False if it cannot be set (e.g. already above it)."""
        memory = self.dirs.get("memory")
        if memory is None:
            return False
        try:
            self._set_memory(memory, memory_bytes)
        except (CgroupError, OSError):
            return False
        return True

    def set_cpu_shares(self, shares: int) -> bool:
        """The worker's CPU weight against its siblings (default 1024); False without a cpu cgroup."""
        cpu = self.dirs.get("cpu")
        if cpu is None:
            return False
        try:
            _write(cpu / "cpu.shares", str(max(2, shares)))
        except OSError:
            return False
        return True

    @staticmethod
    def _set_memory(directory: Path, limit: int) -> None:
        memsw = directory / "memory.memsw.limit_in_bytes"
        files = [directory / "memory.limit_in_bytes"]
        if memsw.exists():
            # memsw must stay >= the plain limit: lower the plain one first, raise memsw first.
            current = int(_read(files[0]).strip() or 0)
            files = [files[0], memsw] if limit <= current else [memsw, files[0]]
        for path in files:
            try:
                _write(path, str(limit))
            except OSError as exc:
                if exc.errno == errno.EBUSY:
                    raise CgroupError(
                        f"memory already above {limit >> 20} MiB; cannot set {path.name}"
                    ) from None
                raise CgroupError(f"cannot set {path}: {exc}") from None

    # ------------------------------------------------------------------------------------- reading

    def oom_kills(self) -> int:
        memory = self.dirs.get("memory")
        if memory is None:
            return 0
        try:
            text = _read(memory / "memory.oom_control")
        except OSError:
            return 0
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def cpu_seconds(self) -> float | None:
        cpuacct = self.dirs.get("cpuacct")
        if cpuacct is None:
            return None
        try:
            return int(_read(cpuacct / "cpuacct.usage")) / 1e9
        except (OSError, ValueError):
            return None

    def members(self) -> set[int]:
        pids: set[int] = set()
        for procs in self.procs_files():
            with contextlib.suppress(OSError, ValueError):
                pids.update(int(p) for p in _read(procs).split())
        return pids

    # ------------------------------------------------------------------------------------- killing

    def kill_all(self, timeout: float = 2.0) -> bool:
        """Freeze, SIGKILL every member, thaw; True once the cgroups are empty."""
        freezer = self.dirs.get("freezer")
        deadline = time.monotonic() + timeout
        while True:
            frozen = freezer is not None and self._freeze(freezer, "FROZEN", deadline)
            members = self.members()
            for pid in members:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            if freezer is not None:
                # SIGKILL is delivered once the tasks thaw; a frozen cgroup cannot die.
                self._freeze(freezer, "THAWED", deadline)
            if not members:
                return True
            if time.monotonic() >= deadline:
                return not self.members()
            time.sleep(0.005 if frozen else 0.002)

    @staticmethod
    def _freeze(freezer: Path, state: str, deadline: float) -> bool:
        try:
            _write(freezer / "freezer.state", state)
            while _read(freezer / "freezer.state").strip() != state:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.001)
        except OSError:
            return False
        return True

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
                    directory.rmdir()
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
