"""cgroups for sandboxed workers: which hierarchy this host has, and one interface over v1 and v2.

``detect`` reads ``/proc/self/mountinfo`` and ``/proc/self/cgroup`` once, at the backend's start:

- cgroup v1 when any of memory, pids or cpu has a v1 hierarchy of its own (``sandbox.host.cgroups_v1``; a
  "hybrid" host like the one this was built on also mounts an empty cgroup2 tree, reported but unused);
- cgroup v2 otherwise, when a cgroup2 hierarchy is mounted (``sandbox.host.cgroups_v2``: delegation, the "no
  internal processes" rule, ``cgroup.kill``);
- none: every controller is reported unavailable and workers are bounded by rlimits only.

Either way the result is one ``ControllerState`` per name of ``CONTROLLERS`` and a sentence for
``judge doctor`` (``CgroupSetup.summary``), and ``worker_cgroups`` makes the matching ``ProcessCgroups``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from sandbox.host.cgroups_base import (
    CONTROLLERS,
    PARENT_NAME,
    CgroupError,
    ControllerState,
    ProcessCgroups,
)
from sandbox.host.cgroups_v1 import V1Cgroups, discover_v1
from sandbox.host.cgroups_v2 import V2Cgroups, controllers, discover_v2

__all__ = [
    "CONTROLLERS",
    "LIMITS_LOST",
    "PARENT_NAME",
    "CgroupError",
    "CgroupSetup",
    "ControllerState",
    "ProcessCgroups",
    "adopt",
    "detect",
    "discover",
    "worker_cgroups",
]

#: The controllers whose absence takes a limit away (cpuacct and freezer only change how kills and CPU time
#: are done); what is lost without each, for ``judge doctor``.
LIMITS_LOST = {
    "memory": "one memory bound over all of a worker's processes (shared memory and page cache included) "
    "and OOM reports",
    "pids": "a process/thread bound over the whole worker (RLIMIT_NPROC counts per uid only)",
    "cpu": "a CPU quota and a low CPU weight while JAX starts",
}
#: What still bounds a worker without cgroups.
RLIMITS_LEFT = (
    "rlimits (RLIMIT_DATA and RLIMIT_AS per process, RLIMIT_NPROC per uid, RLIMIT_CPU, RLIMIT_FSIZE)"
)


@dataclass(frozen=True)
class CgroupSetup:
    """The hierarchy in use (1, 2 or None), its mount point, the states, and a sentence for doctor."""

    version: int | None
    mount: Path | None
    states: dict[str, ControllerState]
    summary: str

    @property
    def active(self) -> bool:
        """Workers get a cgroup of their own (with or without limits)."""
        return any(state.parent is not None for state in self.states.values())


def _mounts(mountinfo: str) -> tuple[dict[str, tuple[Path, str]], tuple[Path, str] | None]:
    """(controller -> (mount point, root of the mount inside the hierarchy) for cgroup v1 mounts, the first
    cgroup2 mount as (mount point, root) or None)."""
    found: dict[str, tuple[Path, str]] = {}
    unified: tuple[Path, str] | None = None
    try:
        lines = Path(mountinfo).read_text().splitlines()
    except OSError:
        return found, unified
    for line in lines:
        left, sep, right = line.partition(" - ")
        if not sep:
            continue
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 3:
            continue
        point = Path(fields[4].replace("\\040", " "))
        if tail[0] == "cgroup2":
            unified = unified or (point, fields[3])
        elif tail[0] == "cgroup":
            for option in tail[2].split(","):
                if option in CONTROLLERS and option not in found:
                    found[option] = (point, fields[3])
    return found, unified


def _own_paths(proc_cgroup: str) -> dict[str, str]:
    """controller -> this process's cgroup path in that hierarchy (from /proc/self/cgroup); the unified
    hierarchy's line (``0::PATH``) is under the key ``""``."""
    paths: dict[str, str] = {}
    try:
        lines = Path(proc_cgroup).read_text().splitlines()
    except OSError:
        return paths
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        if parts[0] == "0" and parts[1] == "":
            paths[""] = parts[2]
            continue
        for controller in parts[1].split(","):
            paths[controller] = parts[2]
    return paths


def detect(
    parent_name: str = PARENT_NAME,
    *,
    mountinfo: str = "/proc/self/mountinfo",
    proc_cgroup: str = "/proc/self/cgroup",
    create: bool = True,
    root: str | Path | None = None,
    version: str | None = None,
) -> CgroupSetup:
    """Which hierarchy this host has, and the judge's parent cgroup of each controller (created with
    ``create``). ``root``: cgroup v2 only, a delegated cgroup to use instead of the judge's own.
    ``version``: "1" or "2" to use that hierarchy even where the other one is mounted (a hybrid host);
    None or "" to choose as described above."""
    v1, unified = _mounts(mountinfo)
    own = _own_paths(proc_cgroup)
    if version not in (None, "", "1", "2"):
        why = f"JUDGE_CGROUP_VERSION must be 1 or 2, not {version!r}"
        states = {c: ControllerState(c, None, why) for c in CONTROLLERS}
        return CgroupSetup(None, None, states, _summary(None, states, why))
    if version == "2" and unified is None:
        why = "JUDGE_CGROUP_VERSION=2 but no cgroup2 hierarchy is mounted"
        states = {c: ControllerState(c, None, why) for c in CONTROLLERS}
        return CgroupSetup(None, None, states, _summary(None, states, why))
    if version != "2" and (version == "1" or any(c in v1 for c in ("memory", "pids", "cpu"))):
        states = discover_v1(v1, own, parent_name, create=create)
        summary = _summary(1, states, "v1 hierarchies under " + _common_mount(v1))
        if unified is not None:
            left = controllers(unified[0] / "cgroup.controllers")
            summary += (
                f"; the cgroup2 tree at {unified[0]} is not used (hybrid host: its controllers are "
                f"{', '.join(left) or 'none'}, the others are bound to v1)"
            )
        return CgroupSetup(1, None, states, summary)
    if unified is not None:
        mount, mount_root = unified
        setup = discover_v2(
            mount,
            mount_root,
            own.get("", "/"),
            parent_name,
            create=create,
            root=Path(root) if root else None,
        )
        summary = _summary(2, setup.states, f"the unified hierarchy at {mount}")
        if setup.note:
            summary += f"; {setup.note}"
        return CgroupSetup(2, mount, setup.states, summary)
    states = {c: ControllerState(c, None, "no cgroup hierarchy mounted") for c in CONTROLLERS}
    return CgroupSetup(None, None, states, _summary(None, states, "no cgroup hierarchy mounted"))


def discover(
    parent_name: str = PARENT_NAME,
    *,
    mountinfo: str = "/proc/self/mountinfo",
    proc_cgroup: str = "/proc/self/cgroup",
    create: bool = True,
    root: str | Path | None = None,
    version: str | None = None,
) -> dict[str, ControllerState]:
    """``detect(...).states``: the judge's parent cgroup of each controller, or why it has none."""
    return detect(
        parent_name, mountinfo=mountinfo, proc_cgroup=proc_cgroup, create=create, root=root, version=version
    ).states


def _common_mount(v1: dict[str, tuple[Path, str]]) -> str:
    points = sorted({str(point.parent) for point, _ in v1.values()})
    return ", ".join(points)


def _summary(version: int | None, states: dict[str, ControllerState], where: str) -> str:
    """``cgroup v2 (the unified hierarchy at /sys/fs/cgroup): memory, pids, cpu, cpuacct, freezer under
    /sys/fs/cgroup/x/jax-judge``, or what is missing, what remains and what is lost."""
    name = f"cgroup v{version}" if version else "no cgroups"
    usable = [c for c, s in states.items() if s.parent is not None]
    parents = sorted({str(s.parent) for s in states.values() if s.parent is not None})
    text = f"{name} ({where})" if version else f"{name}: {where}"
    if usable:
        text += f": {', '.join(usable)} under {', '.join(parents)}"
    lost = [c for c in LIMITS_LOST if states[c].parent is None]
    if lost:
        text += f"; without {', '.join(lost)}, workers are bounded by {RLIMITS_LEFT}; lost: " + "; ".join(
            LIMITS_LOST[c] for c in lost
        )
    if not usable:
        text += "; kills go by uid (no cgroup to kill every member at once)"
    elif states["freezer"].parent is None:
        text += "; kills SIGKILL each member without freezing the cgroup first (a fork may slip through)"
    return text


def worker_cgroups(states: dict[str, ControllerState], name: str) -> ProcessCgroups:
    """The cgroups of a new worker called ``name`` under the judge's parents (v1 or v2 as ``states`` are).
    Raises CgroupError when a directory cannot be created."""
    versions = {s.version for s in states.values() if s.parent is not None}
    cls: type[ProcessCgroups] = V2Cgroups if versions == {2} else V1Cgroups
    return cls(states, name)


def adopt(state: ControllerState, directory: Path) -> ProcessCgroups:
    """Take charge of a worker's directory left by a judge that no longer runs (to kill and remove it)."""
    cls: type[ProcessCgroups] = V2Cgroups if state.version == 2 else V1Cgroups
    return cls.adopt({state.controller: directory})


def stale_children(states: dict[str, ControllerState]) -> list[tuple[ControllerState, Path]]:
    """SandboxedProcess cgroups named ``*-<pid>-<n>`` whose judge process (``pid``) no longer runs."""
    found: list[tuple[ControllerState, Path]] = []
    seen: set[Path] = set()
    for state in states.values():
        if state.parent is None or state.parent in seen:
            continue
        seen.add(state.parent)
        try:
            children = list(state.parent.iterdir())
        except OSError:
            continue
        for child in children:
            if not child.is_dir():
                continue
            parts = child.name.rsplit("-", 2)
            if len(parts) != 3 or not parts[1].isdigit() or os.path.exists(f"/proc/{parts[1]}"):
                continue
            found.append((state, child))
    return found
