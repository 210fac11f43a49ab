"""The ``bwrap`` backend's worker cgroups and uids (``sandbox.backends.bwrap``): a worker's cgroups made with
its limits, a forked worker moved into its own, every process of a uid killed, a slot released once nothing
runs as its uid, and cgroups left by a judge process that no longer runs removed."""

from __future__ import annotations

import contextlib
import os
import signal
import time

from sandbox.backends.slots import unlock
from sandbox.errors import ProcessStartError
from sandbox.host.cgroups import (
    CgroupError,
    ControllerState,
    ProcessCgroups,
    adopt,
    stale_children,
    worker_cgroups,
)
from sandbox.host.command import MIB
from sandbox.host.procfs import processes_of_uid, uid_of
from sandbox.host.resource_limits import SandboxLimits
from sandbox.session.forkserver import ForkedTracer


def make_cgroups(
    states: dict[str, ControllerState], name: str, limits: SandboxLimits, cores: float | None
) -> ProcessCgroups | None:
    """A worker's own cgroups under the judge's parents, with its memory, process and CPU (``cores``) limits;
    None where no controller is usable."""
    if not any(state.parent is not None for state in states.values()):
        return None
    try:
        cgroups = worker_cgroups(states, name)
    except CgroupError as exc:
        raise ProcessStartError(str(exc)) from None
    try:
        cgroups.set_limits(limits.memory_mb * MIB, limits.processes, cores)
    except (CgroupError, OSError) as exc:
        cgroups.remove()
        raise ProcessStartError(f"cannot set cgroup limits: {exc}") from None
    return cgroups


def adopt_forked(tracer: ForkedTracer, cgroups: ProcessCgroups | None) -> None:
    """A forked tracer reported ready (confined, nothing of the user's run yet): check that its host pid is
    the slot's uid, then move it into its own cgroups before it is handed out."""
    if uid_of(tracer.pid) != tracer.uid:
        tracer.kill()
        raise ProcessStartError(f"forked tracer {tracer.pid} is not uid {tracer.uid}")
    if cgroups is None:
        return
    try:
        for procs in cgroups.procs_files():
            procs.write_text(str(tracer.pid))
    except OSError as exc:
        tracer.kill()
        raise ProcessStartError(f"cannot move the tracer into its cgroups: {exc}") from None


def kill_uid(uid: int, cgroups: ProcessCgroups | None, *, scan: bool) -> bool:
    """Kill every process of a forked worker: its cgroups' members (everything it started after it was
    moved there) and, with ``scan`` (or without cgroups), anything else running as its uid. True when a
    scan of ``/proc`` then found nothing of the uid (False without a scan, or when something survived)."""
    if cgroups is not None:
        cgroups.kill_all()
        if not scan:
            return False
    for _ in range(20):
        pids = processes_of_uid(uid)
        if not pids:
            return True
        for pid in pids:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.01)
    return False


def kill_worker(uid: int, cgroups: ProcessCgroups | None) -> None:
    """A forked worker's kill: its cgroups' members, or every process of its uid where it has no cgroups."""
    kill_uid(uid, cgroups, scan=cgroups is None)


def release_uid(uid: int, cgroups: ProcessCgroups | None, lock: int | None) -> list[str]:
    """Once nothing runs as the uid any more: remove the cgroups and release the slot's lock. The kill's
    last scan of ``/proc`` is the check (a scan reads every host process's status: one per close, not two);
    nothing of the uid can start after it, as only the slot's own worker, now gone, ran as that uid."""
    notes: list[str] = []
    cleared = kill_uid(uid, cgroups, scan=True)
    if cgroups is not None:
        notes.extend(cgroups.remove())
    if cleared or not processes_of_uid(uid):
        unlock(lock)
    else:
        notes.append(f"processes of uid {uid} survived; its slot stays locked")
    return notes


def sweep_stale(states: dict[str, ControllerState]) -> None:
    """Remove worker cgroups left by a judge process that no longer runs (named ``*-<judge pid>-<n>``)."""
    for state, child in stale_children(states):
        adopt(state, child).remove()
