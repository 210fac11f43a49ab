"""Waiting for descriptors to become readable, for any descriptor number.

``select.select`` refuses descriptors numbered 1024 or above (FD_SETSIZE), which a judge serving many
connections reaches: its workers' pipes then get such numbers and no worker could start. ``poll`` has no
such limit.
"""

from __future__ import annotations

import select
from collections.abc import Iterable


def readable(fds: Iterable[int], timeout: float | None) -> list[int]:
    """The descriptors of ``fds`` that are readable (or closed, or in error) within ``timeout`` seconds."""
    poller = select.poll()
    wanted = list(dict.fromkeys(fds))
    for fd in wanted:
        poller.register(fd, select.POLLIN | select.POLLPRI)
    millis = None if timeout is None else max(0, int(timeout * 1000 + 0.999))
    return [fd for fd, _ in poller.poll(millis)]
