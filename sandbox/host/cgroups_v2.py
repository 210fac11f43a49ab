"""cgroup v2 (the unified hierarchy) controls for sandboxed workers.

Every worker gets ONE cgroup, ``<base>/jax-judge/<worker name>``, where ``base`` is the judge's own cgroup
(from ``/proc/self/cgroup``, line ``0::PATH``) or, when set, ``JUDGE_CGROUP_ROOT``: a cgroup an administrator
delegated to the judge. In it:

- memory: ``memory.max`` and, where swap is accounted, ``memory.swap.max`` = 0 (v1's memsw bound memory plus
  swap together; here swap is simply refused). An out-of-memory kill shows as ``oom_kill`` in
  ``memory.events``. The limit is never lowered below ``memory.current``: v2 would reclaim, then OOM-kill
  the worker inside the write (v1 answered EBUSY).
- pids: ``pids.max`` (every process and thread in the cgroup, whatever its uid).
- cpu: an optional quota in ``cpu.max``; ``cpu.weight`` (v1 shares scaled so that 1024 is v2's 100) while
  JAX starts.
- core files every v2 cgroup has, delegated controllers or not: ``cpu.stat`` (``usage_usec``: CPU time of
  every process, the v1 ``cpuacct``) and ``cgroup.kill`` (Linux >= 5.14: SIGKILL to every member at once,
  forks included) or else ``cgroup.freeze`` (freeze, wait for ``frozen 1`` in ``cgroup.events``, SIGKILL
  every member, thaw): the v1 ``freezer``.

Delegation. A controller reaches the workers only if it is listed in ``base/cgroup.controllers`` (the
parent of ``base`` delegates it) and enabled in ``base/cgroup.subtree_control`` and in
``jax-judge/cgroup.subtree_control``. The kernel's "no internal processes" rule forbids enabling a domain
controller (memory) in a non-root cgroup that holds processes, and the judge itself lives in its own cgroup:
so when the judge is the ONLY process there (a systemd unit with ``Delegate=yes``, a container's main
process) it first moves itself into the leaf ``base/jax-judge.self``, as delegated services are expected to.
When other processes share the cgroup (a login shell, a CI step) nothing is moved and the controllers are
reported unavailable with the reason; the workers still get a cgroup of their own for ``cgroup.kill`` and
``cpu.stat`` when ``base`` is writable, and rlimits for the rest.
"""

from __future__ import annotations

import errno
import os
import time
from dataclasses import dataclass
from pathlib import Path

from sandbox.host import cgroups_base as fs
from sandbox.host.cgroups_base import CgroupError, ControllerState, ProcessCgroups, signal_all

#: The controllers the judge enables for its workers (cpuacct and freezer are core files in v2).
DELEGATED = ("memory", "pids", "cpu")
CPU_PERIOD_US = 100_000
#: v1 ``cpu.shares`` default, and v2 ``cpu.weight`` default and range.
V1_DEFAULT_SHARES = 1024
DEFAULT_WEIGHT = 100
MAX_WEIGHT = 10_000
#: Suffix of the leaf the judge moves itself into when it must empty its own cgroup.
SELF_LEAF_SUFFIX = ".self"

DETAILS = {
    "memory": "memory.max (+ memory.swap.max 0); OOM kills from memory.events",
    "pids": "pids.max: fork and thread bombs",
    "cpu": "cpu.max; cpu.weight while JAX starts",
    "cpuacct": "cpu.stat usage_usec: CPU time of every process",
}


@dataclass(frozen=True)
class V2Setup:
    """What discovery found: the per-controller states and one sentence on how delegation went."""

    states: dict[str, ControllerState]
    note: str


def controllers(path: Path) -> list[str]:
    """The controller names listed in a ``cgroup.controllers`` or ``cgroup.subtree_control`` file."""
    try:
        return fs.read(path).split()
    except OSError:
        return []


def _procs(directory: Path) -> set[int]:
    try:
        return {int(p) for p in fs.read(directory / "cgroup.procs").split()}
    except (OSError, ValueError):
        return set()


def _enable(directory: Path, wanted: list[str]) -> dict[str, OSError]:
    """Enable each controller of ``wanted`` for the children of ``directory``, one write each (so that
    memory refused does not keep pids away); controller -> the error that refused it."""
    failed: dict[str, OSError] = {}
    enabled = controllers(directory / "cgroup.subtree_control")
    for controller in wanted:
        if controller in enabled:
            continue
        try:
            fs.write(directory / "cgroup.subtree_control", f"+{controller}")
        except OSError as exc:
            failed[controller] = exc
    return failed


def _why(directory: Path, exc: OSError) -> str:
    why = exc.strerror or str(exc)
    if exc.errno == errno.EBUSY:
        why += f" ({directory} holds processes: cgroup v2's no-internal-processes rule)"
    return f"cannot enable it in {directory / 'cgroup.subtree_control'}: {why}"


def discover_v2(
    mount: Path,
    mount_root: str,
    own_path: str,
    parent_name: str,
    *,
    create: bool = True,
    root: Path | None = None,
    pid: int | None = None,
) -> V2Setup:
    """Find (and with ``create``, set up) the judge's parent cgroup ``<base>/<parent_name>`` on the v2
    hierarchy mounted at ``mount`` (whose root is ``mount_root`` inside the hierarchy), where ``base`` is
    ``root`` if given, else this process's cgroup ``own_path``. ``pid`` is the judge's pid (default: this
    process), the only process allowed in ``base`` for the judge to move itself out of it.

    Without ``create`` nothing is written: the states say what an earlier setup left usable."""
    pid = os.getpid() if pid is None else pid
    if root is not None:
        base = root
    else:
        relative = os.path.relpath(own_path, mount_root) if own_path.startswith(mount_root) else "."
        base = (mount / relative) if relative != "." else mount
        if not base.is_dir():
            base = mount
    parent = base / parent_name
    available = controllers(base / "cgroup.controllers")
    if not (base / "cgroup.controllers").exists():
        why = f"{base} is not a cgroup v2 directory"
        return V2Setup(_all_unusable(why), why)
    failed: dict[str, str] = {}
    notes: list[str] = []
    wanted = [c for c in DELEGATED if c in available]
    for controller in DELEGATED:
        if controller not in available:
            failed[controller] = f"not delegated: missing from {base / 'cgroup.controllers'}"
    if create:
        refused = _enable(base, wanted)
        busy = any(exc.errno == errno.EBUSY for exc in refused.values())
        members = _procs(base) if busy else set()
        if busy and members == {pid} and root is None:
            # Alone in its cgroup (Delegate=yes, a container's main process): leave it for a leaf, as a
            # delegated service is expected to, so that the cgroup may hand controllers down.
            leaf = base / f"{parent_name}{SELF_LEAF_SUFFIX}"
            try:
                fs.KERNEL.mkdir(leaf, exist_ok=True)
                fs.write(leaf / "cgroup.procs", str(pid))
                notes.append(f"the judge moved itself into {leaf} so that {base} may delegate")
                refused = _enable(base, wanted)
            except OSError as exc:
                notes.append(f"the judge could not move itself into {leaf}: {exc.strerror}")
        elif busy and members - {pid}:
            others = sorted(members - {pid})
            notes.append(
                f"{base} also holds other processes ({', '.join(map(str, others[:5]))}"
                f"{', ...' if len(others) > 5 else ''}): the judge does not move them; run it as a "
                "systemd unit with Delegate=yes, or set JUDGE_CGROUP_ROOT to an empty cgroup delegated "
                "to it"
            )
        failed.update({c: _why(base, exc) for c, exc in refused.items()})
        try:
            fs.KERNEL.mkdir(parent, exist_ok=True)
        except OSError as exc:
            why = f"cannot create {parent}: {exc.strerror}"
            return V2Setup(_all_unusable(why), "; ".join([*notes, why]))
        usable = [c for c in wanted if c not in failed]
        failed.update({c: _why(parent, exc) for c, exc in _enable(parent, usable).items()})
    if not (parent / "cgroup.procs").exists():
        why = f"{parent} does not exist"
        return V2Setup(_all_unusable(why), why)
    if not os.access(parent, os.W_OK):
        why = f"cannot use {parent}: not writable"
        return V2Setup(_all_unusable(why), why)
    enabled = controllers(parent / "cgroup.subtree_control")
    states: dict[str, ControllerState] = {}
    for controller in DELEGATED:
        if controller in enabled:
            states[controller] = ControllerState(controller, parent, version=2, detail=DETAILS[controller])
        else:
            why = failed.get(controller) or f"not enabled in {parent / 'cgroup.subtree_control'}"
            states[controller] = ControllerState(controller, None, why, version=2)
    states["cpuacct"] = ControllerState("cpuacct", parent, version=2, detail=DETAILS["cpuacct"])
    kill = (
        "cgroup.kill: SIGKILL to every member at once"
        if (parent / "cgroup.kill").exists()
        else "cgroup.freeze: freeze, SIGKILL every member, thaw (no cgroup.kill before Linux 5.14)"
    )
    states["freezer"] = ControllerState("freezer", parent, version=2, detail=kill)
    return V2Setup(states, "; ".join(notes))


def _all_unusable(reason: str) -> dict[str, ControllerState]:
    return {c: ControllerState(c, None, reason, version=2) for c in (*DELEGATED, "cpuacct", "freezer")}


def shares_to_weight(shares: int) -> int:
    """v1 ``cpu.shares`` to v2 ``cpu.weight``, proportionally: each default maps to the other."""
    return min(MAX_WEIGHT, max(1, round(shares * DEFAULT_WEIGHT / V1_DEFAULT_SHARES)))


class V2Cgroups(ProcessCgroups):
    """A worker's cgroup on v2: one directory; ``dirs`` names it for every controller usable in it."""

    #: Use ``cgroup.kill`` where the kernel has it (False: always the freeze sequence).
    use_cgroup_kill = True

    def _dir(self, controller: str | None = None) -> Path | None:
        if controller is not None:
            return self.dirs.get(controller)
        return next(iter(self.dirs.values()), None)

    def set_limits(self, memory_bytes: int, pids: int, cpu_cores: float | None = None) -> None:
        memory = self._dir("memory")
        if memory is not None:
            self._set_memory(memory, memory_bytes)
        pids_dir = self._dir("pids")
        if pids_dir is not None:
            fs.write(pids_dir / "pids.max", str(pids))
        cpu = self._dir("cpu")
        if cpu is not None and cpu_cores is not None:
            quota = max(1000, int(cpu_cores * CPU_PERIOD_US))
            fs.write(cpu / "cpu.max", f"{quota} {CPU_PERIOD_US}")

    def set_memory(self, memory_bytes: int) -> bool:
        memory = self._dir("memory")
        if memory is None:
            return False
        try:
            self._set_memory(memory, memory_bytes)
        except (CgroupError, OSError):
            return False
        return True

    @staticmethod
    def _set_memory(directory: Path, limit: int) -> None:
        try:
            current = int(fs.read(directory / "memory.current").strip() or 0)
        except (OSError, ValueError):
            current = 0
        if current > limit:
            raise CgroupError(
                f"memory already above {limit >> 20} MiB ({current >> 20} MiB in use); lowering memory.max "
                "would OOM-kill the worker"
            )
        try:
            fs.write(directory / "memory.max", str(limit))
            if (directory / "memory.swap.max").exists():
                fs.write(directory / "memory.swap.max", "0")
        except OSError as exc:
            raise CgroupError(f"cannot set the memory limit in {directory}: {exc.strerror}") from None

    def set_cpu_shares(self, shares: int) -> bool:
        cpu = self._dir("cpu")
        if cpu is None:
            return False
        try:
            fs.write(cpu / "cpu.weight", str(shares_to_weight(shares)))
        except OSError:
            return False
        return True

    def oom_kills(self) -> int:
        memory = self._dir("memory")
        if memory is None:
            return 0
        return _counter(memory / "memory.events", "oom_kill")

    def cpu_seconds(self) -> float | None:
        directory = self._dir("cpuacct")
        if directory is None:
            return None
        try:
            text = fs.read(directory / "cpu.stat")
        except OSError:
            return None
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec" and value.strip().isdigit():
                return int(value) / 1e6
        return None

    def _kill_at_once(self) -> bool:
        directory = self._dir()
        if directory is None or not self.use_cgroup_kill or not (directory / "cgroup.kill").exists():
            return False
        try:
            fs.write(directory / "cgroup.kill", "1")
        except OSError:  # e.g. the cgroup is gone or the file refused: the freeze sequence still works
            return False
        return True

    def _freeze_and_signal(self, deadline: float) -> tuple[bool, set[int]]:
        directory = self._dir()
        if directory is None:
            return False, set()
        frozen = self._freeze(directory, True, deadline)
        members = self.members()
        signal_all(members)
        # A frozen v2 task still dies of SIGKILL, but thawing makes sure and leaves the cgroup usable.
        self._freeze(directory, False, deadline)
        return frozen, members

    @staticmethod
    def _freeze(directory: Path, frozen: bool, deadline: float) -> bool:
        want = "1" if frozen else "0"
        try:
            fs.write(directory / "cgroup.freeze", want)
            while _counter(directory / "cgroup.events", "frozen", default=-1) != int(want):
                if time.monotonic() >= deadline:
                    return False
                time.sleep(0.001)
        except OSError:
            return False
        return True


def _counter(path: Path, key: str, default: int = 0) -> int:
    """The value of ``key`` in a flat keyed file such as ``memory.events`` or ``cgroup.events``."""
    try:
        text = fs.read(path)
    except OSError:
        return default
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key and value.strip().isdigit():
            return int(value)
    return default
