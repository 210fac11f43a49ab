"""What ``/proc`` says about host processes: a process's real uid, the processes of a uid or a session, and
the CPU time they used. Raw reads (a scan reads every process's files, several times per worker start)."""

from __future__ import annotations

import os

_TICK = os.sysconf("SC_CLK_TCK")


def _read(path: str, size: int = 8192) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    try:
        return os.read(fd, size)
    finally:
        os.close(fd)


def uid_of(pid: int) -> int | None:
    """Real uid of a process, or None if it is gone (owners of /proc/PID can lie, ``status`` does not)."""
    try:
        status = _read(f"/proc/{pid}/status")
        start = status.index(b"\nUid:") + 5
        return int(status[start : status.index(b"\n", start)].split()[0])
    except (OSError, ValueError, IndexError):
        return None


def processes_of_uid(uid: int) -> set[int]:
    """Host pids whose real uid is ``uid``."""
    return {int(e.name) for e in os.scandir("/proc") if e.name.isdigit() and uid_of(int(e.name)) == uid}


def _ticks(stat: bytes) -> int:
    fields = stat.rpartition(b")")[2].split()
    return int(fields[11]) + int(fields[12])  # utime, stime (fields 14 and 15 of stat)


def process_cpu_s(pid: int) -> float | None:
    """CPU seconds of one process (all its threads); None if it is gone."""
    try:
        return _ticks(_read(f"/proc/{pid}/stat")) / _TICK
    except (OSError, ValueError, IndexError):
        return None


def session_cpu_s(sid: int) -> float:
    """CPU seconds of the processes of session ``sid`` (a worker started in a session of its own)."""
    want = str(sid).encode()
    total = 0
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = _read(f"/proc/{entry.name}/stat")
            if stat.rpartition(b")")[2].split()[3] == want:  # field 6: the session id
                total += _ticks(stat)
        except (OSError, ValueError, IndexError):
            continue
    return total / _TICK


def uid_cpu_s(uid: int) -> float:
    """CPU seconds of the processes whose real uid is ``uid`` (a slot's uid belongs to one worker)."""
    return sum(process_cpu_s(pid) or 0.0 for pid in processes_of_uid(uid))
