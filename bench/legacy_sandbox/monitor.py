"""Drive one job through a ready worker, for every backend alike.

Sends the job on the worker's stdin, reads framed results from its private channel and its captured output
(capped: the rest is read and dropped, so a flood fills neither memory nor disk), and enforces the wall
time per case and per job by killing the worker. The result is raw: turning it into verdicts is the
judge's job (``judge.grader``).
"""

from __future__ import annotations

import contextlib
import os
import select
import selectors
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from sandbox.base import Worker
from sandbox.limits import SandboxLimits

from .protocol import FrameReader, ProtocolError, encode_frame

TimeoutKind = Literal["case", "wall"]


@dataclass
class RawRun:
    """Everything the worker said and did, before any interpretation."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    output: bytes = b""
    output_total: int = 0
    returncode: int | None = None
    timeout: TimeoutKind | None = None
    #: Index of the case that had started and not finished when the run stopped.
    running_case: int | None = None
    oom_killed: bool = False
    #: Index of the case whose user code was being traced (ahead of the running case) when the run stopped.
    tracing_case: int | None = None
    #: Bytes of output captured before each case started (index -> offset), to withhold hidden output.
    output_marks: dict[int, int] = field(default_factory=dict)
    protocol_error: str | None = None
    elapsed_s: float = 0.0
    notes: list[str] = field(default_factory=list)

    @property
    def output_truncated(self) -> bool:
        return self.output_total > len(self.output)


def run_job(worker: Worker, job: dict[str, Any], limits: SandboxLimits) -> RawRun:
    """Run one job to the end (or to a limit) and release the worker."""
    raw = RawRun()
    start = time.monotonic()
    try:
        worker.wait_ready(limits.startup_time_s)
        start = time.monotonic()  # the job's clock starts when it is sent, not while JAX imports
        _feed_stdin(worker, encode_frame(job))
        _pump(worker, limits, raw, start)
    finally:
        worker.kill()
        worker.wait(5.0)
        info = worker.exit_info()
        raw.returncode = info.returncode
        raw.oom_killed = info.oom_killed
        raw.notes.extend(info.notes)
        raw.elapsed_s = time.monotonic() - start
        worker.close()
    return raw


def _feed_stdin(worker: Worker, data: bytes) -> None:
    """Write the job in a thread: it may exceed the pipe buffer, and the harness may never read it."""
    # The thread writes to and closes its OWN copy: closing worker.stdin_fd here as well as in
    # worker.close() closed whatever descriptor another thread had meanwhile received that number.
    fd = os.dup(worker.stdin_fd)

    def feed() -> None:
        try:
            view = memoryview(data)
            while view:
                written = os.write(fd, view[: 1 << 16])
                view = view[written:]
        except OSError:
            pass  # the worker died; the monitor reports how
        finally:
            with contextlib.suppress(OSError):
                os.close(fd)

    threading.Thread(target=feed, name="judge-stdin", daemon=True).start()


def _pump(worker: Worker, limits: SandboxLimits, raw: RawRun, start: float) -> None:
    reader = FrameReader(limits.max_frame_bytes)
    wall_deadline = start + limits.wall_time_s
    # Loading the code counts like a case: an import that never ends costs one case limit.
    case_deadline: float | None = time.monotonic() + limits.case_time_s
    open_fds = {worker.result_fd, worker.output_fd}
    output = bytearray()
    with selectors.DefaultSelector() as sel:
        for fd in open_fds:
            sel.register(fd, selectors.EVENT_READ)
        while open_fds:
            now = time.monotonic()
            deadline = min(wall_deadline, case_deadline) if case_deadline else wall_deadline
            if now >= deadline:
                raw.timeout = "case" if case_deadline and case_deadline <= wall_deadline else "wall"
                worker.kill()
                break
            events = sel.select(timeout=min(deadline - now, 0.5))
            # Frames first: a case_start frame is written before that case's user code prints anything,
            # so reading it first puts every byte of output on the right side of the case boundary.
            events.sort(key=lambda e: e[0].fd != worker.result_fd)
            for key, _ in events:
                fd = int(key.fd)
                chunk = _read_available(fd) if fd == worker.result_fd else _read(fd)
                if not chunk:
                    sel.unregister(fd)
                    open_fds.discard(fd)
                    continue
                if fd == worker.output_fd:
                    _capture(output, chunk, raw, limits)
                    continue
                try:
                    messages = reader.feed(chunk)
                except ProtocolError as exc:
                    raw.protocol_error = str(exc)
                    worker.kill()
                    open_fds.clear()
                    break
                for message in messages:
                    raw.messages.append(message)
                    kind = message["type"]
                    if kind == "case_start":
                        raw.running_case = _index(message)
                        if raw.running_case is not None:
                            raw.output_marks[raw.running_case] = raw.output_total
                        case_deadline = time.monotonic() + limits.case_time_s
                    elif kind == "trace_start":
                        raw.tracing_case = _index(message)
                    elif kind == "trace_end":
                        raw.tracing_case = None
                    elif kind in ("loaded", "load_error"):
                        case_deadline = None
                    elif kind == "case_result":
                        raw.running_case = None
                        case_deadline = None
                    elif kind == "done":
                        # The harness is finished; take what output is still buffered, then stop.
                        open_fds.discard(worker.result_fd)
            if raw.messages and raw.messages[-1]["type"] == "done" and worker.result_fd not in open_fds:
                _drain_output(worker, output, raw, limits)
                break
    raw.output = bytes(output)


def _drain_output(worker: Worker, output: bytearray, raw: RawRun, limits: SandboxLimits) -> None:
    deadline = time.monotonic() + 0.5
    with selectors.DefaultSelector() as sel:
        sel.register(worker.output_fd, selectors.EVENT_READ)
        while time.monotonic() < deadline and sel.select(timeout=max(0.0, deadline - time.monotonic())):
            chunk = _read(worker.output_fd)
            if not chunk:
                return
            _capture(output, chunk, raw, limits)


def _capture(output: bytearray, chunk: bytes, raw: RawRun, limits: SandboxLimits) -> None:
    """Keep user output up to the cap; count (and drop) the rest, so a flood fills no memory."""
    raw.output_total += len(chunk)
    room = limits.output_bytes - len(output)
    if room > 0:
        output += chunk[:room]


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 1 << 16)
    except OSError:
        return b""


def _read_available(fd: int) -> bytes:
    """Everything readable on fd right now (at least one read), so no frame is left half-read."""
    data = _read(fd)
    while data and len(data) % (1 << 16) == 0 and select.select([fd], [], [], 0)[0]:
        more = _read(fd)
        if not more:
            break
        data += more
    return data


def _index(message: dict[str, Any]) -> int | None:
    value = message.get("index")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


__all__ = ["RawRun", "run_job"]
