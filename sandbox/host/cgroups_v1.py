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
backend says so in its protections.
"""

from __future__ import annotations

import errno
import os
import time
from pathlib import Path

from sandbox.host import cgroups_base as fs
from sandbox.host.cgroups_base import CONTROLLERS, CgroupError, ControllerState, ProcessCgroups, signal_all

CFS_PERIOD_US = 100_000

DETAILS = {
    "memory": "memory.limit_in_bytes (+memsw); OOM kills from memory.oom_control",
    "pids": "pids.max: fork and thread bombs",
    "cpu": "cpu.cfs_quota_us; cpu.shares while JAX starts",
    "cpuacct": "cpuacct.usage: CPU time of every process",
    "freezer": "freezer.state: freeze, SIGKILL every member, thaw",
}


def discover_v1(
    mounts: dict[str, tuple[Path, str]], own: dict[str, str], parent_name: str, *, create: bool
) -> dict[str, ControllerState]:
    """Find (and create) the judge's parent cgroup of each controller.

    ``mounts``: controller -> (mount point, root of the mount inside the hierarchy); ``own``: controller ->
    this process's cgroup path in that hierarchy (from /proc/self/cgroup)."""
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
                fs.KERNEL.mkdir(parent, exist_ok=True)
            if not os.access(parent, os.W_OK):
                raise PermissionError(errno.EACCES, "not writable", str(parent))
        except OSError as exc:
            states[controller] = ControllerState(controller, None, f"cannot use {parent}: {exc.strerror}")
            continue
        if controller == "memory" and not (parent / "memory.oom_control").exists():
            states[controller] = ControllerState(controller, None, "memory.oom_control missing")
            continue
        states[controller] = ControllerState(controller, parent, detail=DETAILS[controller])
    return states


class V1Cgroups(ProcessCgroups):
    """A worker's cgroups on v1: one directory per controller hierarchy."""

    def set_limits(self, memory_bytes: int, pids: int, cpu_cores: float | None = None) -> None:
        memory = self.dirs.get("memory")
        if memory is not None:
            self._set_memory(memory, memory_bytes)
        if "pids" in self.dirs:
            fs.write(self.dirs["pids"] / "pids.max", str(pids))
        if "cpu" in self.dirs and cpu_cores is not None:
            fs.write(self.dirs["cpu"] / "cpu.cfs_period_us", str(CFS_PERIOD_US))
            fs.write(self.dirs["cpu"] / "cpu.cfs_quota_us", str(max(1000, int(cpu_cores * CFS_PERIOD_US))))

    def set_memory(self, memory_bytes: int) -> bool:
        memory = self.dirs.get("memory")
        if memory is None:
            return False
        try:
            self._set_memory(memory, memory_bytes)
        except (CgroupError, OSError):
            return False
        return True

    def set_cpu_shares(self, shares: int) -> bool:
        cpu = self.dirs.get("cpu")
        if cpu is None:
            return False
        try:
            fs.write(cpu / "cpu.shares", str(max(2, shares)))
        except OSError:
            return False
        return True

    @staticmethod
    def _set_memory(directory: Path, limit: int) -> None:
        memsw = directory / "memory.memsw.limit_in_bytes"
        files = [directory / "memory.limit_in_bytes"]
        if memsw.exists():
            # memsw must stay >= the plain limit: lower the plain one first, raise memsw first.
            current = int(fs.read(files[0]).strip() or 0)
            files = [files[0], memsw] if limit <= current else [memsw, files[0]]
        for path in files:
            try:
                fs.write(path, str(limit))
            except OSError as exc:
                if exc.errno == errno.EBUSY:
                    raise CgroupError(
                        f"memory already above {limit >> 20} MiB; cannot set {path.name}"
                    ) from None
                raise CgroupError(f"cannot set {path}: {exc}") from None

    def oom_kills(self) -> int:
        memory = self.dirs.get("memory")
        if memory is None:
            return 0
        try:
            text = fs.read(memory / "memory.oom_control")
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
            return int(fs.read(cpuacct / "cpuacct.usage")) / 1e9
        except (OSError, ValueError):
            return None

    def _freeze_and_signal(self, deadline: float) -> tuple[bool, set[int]]:
        freezer = self.dirs.get("freezer")
        frozen = freezer is not None and self._freeze(freezer, "FROZEN", deadline)
        members = self.members()
        signal_all(members)
        if freezer is not None:
            # SIGKILL is delivered once the tasks thaw; a frozen cgroup cannot die.
            self._freeze(freezer, "THAWED", deadline)
        return frozen, members

    @staticmethod
    def _freeze(freezer: Path, state: str, deadline: float) -> bool:
        try:
            fs.write(freezer / "freezer.state", state)
            while fs.read(freezer / "freezer.state").strip() != state:
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.001)
        except OSError:
            return False
        return True
