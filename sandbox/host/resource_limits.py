"""Resource limits for one sandboxed run, independent of any problem format."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SandboxLimits:
    #: Wall seconds for one case (compile included); the run stops at the first case over it.
    case_time_s: float = 10.0
    #: Wall seconds for the whole job, from sending it to the last result.
    wall_time_s: float = 60.0
    #: CPU seconds of the sandboxed process, all threads counted.
    cpu_time_s: float = 120.0
    #: Memory in MiB.
    memory_mb: int = 1536
    #: Bytes of captured user output kept (stdout and stderr together).
    output_bytes: int = 64 * 1024
    #: Processes and threads at once.
    processes: int = 64
    #: Largest frame a sandboxed program may send; half of it bounds one case's output arrays.
    max_frame_bytes: int = 64 * 1024 * 1024
    #: Seconds a fresh worker may take to import JAX and report ready.
    startup_time_s: float = 30.0
    #: CPU host devices the job's programs are partitioned over (a problem's ``[sandbox] devices``). An
    #: executor's device count is fixed when it starts, so pools keep executors per count.
    devices: int = 1
