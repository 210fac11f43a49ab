"""A log that a flood of connections cannot flood: at most ``burst`` records of one kind (logger and
message template) per ``window_s`` seconds; the rest are counted, and the next record of that kind let
through says how many were dropped. Tracebacks of repeated records are dropped with them."""

from __future__ import annotations

import logging
import threading
import time


class FloodFilter(logging.Filter):
    def __init__(self, burst: int = 20, window_s: float = 10.0) -> None:
        super().__init__()
        self.burst = burst
        self.window_s = window_s
        self._lock = threading.Lock()
        self._windows: dict[tuple[str, str], tuple[float, int, int]] = {}

    def filter(self, record: logging.LogRecord) -> bool:
        key = (record.name, str(record.msg))
        now = time.monotonic()
        with self._lock:
            start, count, dropped = self._windows.get(key, (now, 0, 0))
            if now - start >= self.window_s:
                start, count = now, 0
            if count >= self.burst:
                self._windows[key] = (start, count, dropped + 1)
                return False
            self._windows[key] = (start, count + 1, 0)
            if len(self._windows) > 10_000:  # many distinct templates: forget the oldest windows
                for old in sorted(self._windows, key=lambda k: self._windows[k][0])[:5_000]:
                    del self._windows[old]
        if dropped:
            record.msg = f"{record.msg} ({dropped} similar records dropped)"
        return True


#: Loggers a flood of hostile connections writes to: uvicorn's server log, asyncio's accept loop (out of
#: file descriptors), the connection guard; and the access log, one template for every request, so it
#: gets a larger burst.
FLOODED = ("uvicorn.error", "asyncio", "judge.service.protocol")
ACCESS = "uvicorn.access"


def install(burst: int = 20, access_burst: int = 2000, window_s: float = 10.0) -> list[FloodFilter]:
    """Filter the flooded loggers; returns the filters (one shared by the warning loggers)."""
    flood = FloodFilter(burst, window_s)
    for name in FLOODED:
        logging.getLogger(name).addFilter(flood)
    access = FloodFilter(access_burst, window_s)
    logging.getLogger(ACCESS).addFilter(access)
    return [flood, access]
