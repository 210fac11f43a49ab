"""A worker's two pipes as the session uses them, each party's frame limits, and a tracer's stop aside."""

from __future__ import annotations

import contextlib
import errno
import os
import selectors
import threading
from collections.abc import Iterable
from typing import Any

from sandbox.backends.base import SandboxedProcess
from sandbox.session.monitor import SessionJob
from sandbox.shared.wire import Frame, FrameLimits, FrameReader, encode_frame

#: Largest serialized program a tracer may send.
MAX_MODULE_BYTES = 16 * 1024 * 1024
#: Most bytes read from one channel per select round.
READ_CHUNK = 1 << 20


class Channel:
    """One process's request pipe (our writes, buffered, non-blocking) and reply pipe (a FrameReader)."""

    def __init__(self, worker: SandboxedProcess, limits: FrameLimits) -> None:
        self.worker = worker
        self.reader = FrameReader(limits)
        self.out = bytearray()
        self.eof = False
        self.write_failed = False
        os.set_blocking(worker.stdin_fd, False)
        os.set_blocking(worker.result_fd, False)

    def send(self, message: dict[str, Any], blobs: list[bytes] | None = None) -> None:
        self.out += encode_frame(message, blobs or [])

    def flush(self) -> None:
        while self.out and not self.write_failed:
            try:
                written = os.write(self.worker.stdin_fd, self.out[: 1 << 20])
            except BlockingIOError:
                return
            except OSError:
                self.write_failed = True  # it died: the reply channel tells how
                self.out.clear()
                return
            del self.out[:written]

    def read(self) -> list[Frame]:
        try:
            data = os.read(self.worker.result_fd, READ_CHUNK)
        except BlockingIOError:
            return []
        except OSError as exc:
            if exc.errno == errno.EAGAIN:
                return []
            data = b""
        if not data:
            self.eof = True
            return []
        return self.reader.feed(data)


class Writes:
    """Which request pipes the selector watches for room: those with bytes still to write."""

    def __init__(self, selector: selectors.BaseSelector) -> None:
        self.selector = selector
        self.watched: dict[int, bool] = {}

    def flush(self, channels: Iterable[Channel]) -> None:
        """Write what each channel can take now, and watch the pipes that still have bytes waiting."""
        for channel in channels:
            channel.flush()
            fd = channel.worker.stdin_fd
            want = bool(channel.out) and not channel.write_failed
            if want != self.watched.get(fd, False):
                if want:
                    self.selector.register(fd, selectors.EVENT_WRITE, "write")
                else:
                    self.selector.unregister(fd)
                self.watched[fd] = want

    def close(self) -> None:
        for fd, on in self.watched.items():
            if on:
                with contextlib.suppress(KeyError, ValueError):
                    self.selector.unregister(fd)


class AsideStop:
    """A tracer's stop (``SandboxedProcess.stop``: every process of it gets SIGKILL) on a thread of its own,
    so the session's thread goes on serving the executor while a cgroup v1 freezer settles (5-15 ms). The
    thread closes a pipe when it is over; the session's selector hears that (``fd``, data ``"stopped"``) and
    calls ``finish``, which is also how anyone waits for it."""

    def __init__(self, tracer: SandboxedProcess, selector: selectors.BaseSelector) -> None:
        self.selector = selector
        self.fd, done_w = os.pipe()

        def stop() -> None:
            try:
                tracer.stop()
            except Exception:  # it could not be made sure: every process is killed (and waited for)
                with contextlib.suppress(Exception):
                    tracer.kill()
            finally:
                os.close(done_w)

        self.thread = threading.Thread(target=stop, name="tracer-stop", daemon=True)
        selector.register(self.fd, selectors.EVENT_READ, "stopped")
        self.thread.start()

    def finish(self) -> None:
        """Wait for the stop to be over (at once when the selector heard it) and let go of the pipe."""
        self.thread.join()
        with contextlib.suppress(KeyError, ValueError):
            self.selector.unregister(self.fd)
        os.close(self.fd)


def tracer_limits(job: SessionJob) -> FrameLimits:
    steps = len(job.sigs) + 6
    return FrameLimits(
        max_frame=MAX_MODULE_BYTES + (1 << 20),
        max_json=1 << 20,
        max_json_depth=200,
        max_frames=steps,
        max_total=min(steps * (MAX_MODULE_BYTES + (1 << 20)), 256 << 20),
    )


def executor_limits(job: SessionJob) -> FrameLimits:
    requests = 2 * len(job.sigs) + len(job.cases) + 4
    frame = job.max_output_bytes + (1 << 20)
    return FrameLimits(
        max_frame=frame, max_json=4 << 20, max_json_depth=64, max_frames=requests, max_total=requests * frame
    )
