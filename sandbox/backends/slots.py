"""SandboxedProcess slots: one real uid per concurrent worker, locked across every backend and judge process.

A slot is a uid (``FIRST_UID + slot``). A worker holds an exclusive ``flock`` on ``SLOT_LOCK_DIR/<uid>``
for its whole life, so two workers never share a uid (RLIMIT_NPROC counts every process of a uid, and a
uid's leftovers must never be mistaken for another worker's).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable
from typing import TypeVar

from sandbox.backends.base import SlotBusy

FIRST_UID = 60000
#: Slots 0..SLOTS-1; the top SELF_TEST_SLOTS are kept for self-tests so health checks never wait.
SLOTS = 1000
SELF_TEST_SLOTS = 10
WORKER_SLOTS = SLOTS - SELF_TEST_SLOTS
SLOT_LOCK_DIR = "/run/jax-judge/slots"
#: Executors run no user code and are long-lived: a uid range of their own, never a tracer's.
EXECUTOR_FIRST_UID = 61000
EXECUTOR_SLOTS = 100

W = TypeVar("W")


def lock_uid(uid: int, lock_dir: str = SLOT_LOCK_DIR) -> int | None:
    """Hold the uid's lock (the fd), or raise SlotBusy; None when no lock directory can be made."""
    try:
        os.makedirs(lock_dir, mode=0o700, exist_ok=True)
        fd = os.open(os.path.join(lock_dir, str(uid)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise SlotBusy(f"uid {uid} is in use by another worker") from None
    return fd


def unlock(fd: int | None) -> None:
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)


def in_free_slot(start_in: Callable[[int], W], first: int, count: int = WORKER_SLOTS) -> W:
    """``start_in(slot)`` for ``first`` or, while slots are busy, the next ones (wrapping around)."""
    last_busy = ""
    for step in range(count):
        try:
            return start_in((first + step) % count)
        except SlotBusy as exc:
            last_busy = str(exc)
    raise SlotBusy(f"no free slot among {count}: {last_busy}")
