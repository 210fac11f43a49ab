"""The tracer's printed output: kept up to the cap (the rest counted and dropped, so a flood fills no
memory), cut into sections at the tracer's section marks, and cut where the public output ends at the
session's output mark (``sandbox.shared.output_mark``)."""

from __future__ import annotations

import contextlib
import os
import selectors
import time
from collections.abc import Callable

from sandbox.backends.base import SandboxedProcess
from sandbox.session.channel import READ_CHUNK
from sandbox.session.monitor import RawRun
from sandbox.shared.output_mark import MarkScanner, SectionSplitter, new_mark, new_section_token

#: Longest wait, after ``public_done``, for the tracer's output mark to come through its output relay (it
#: comes at once unless the tracer closed or redirected its output, which costs only its own session).
MARK_WAIT_S = 2.0
#: Most section marks kept from one session (one per signature and public case, and the load, honestly).
MAX_SECTIONS = 4096


class OutputCapture:
    """What the tracer prints, read from its output pipe into the record (``raw``). ``hidden``: the job
    has something hidden, so the public output's end is found by the output mark; ``on_cut`` is called once
    it is found (or given up on) while the session waits for it (``await_cut``)."""

    def __init__(
        self, worker: SandboxedProcess, raw: RawRun, cap: int, *, hidden: bool, on_cut: Callable[[], None]
    ) -> None:
        self.worker, self.raw, self.cap, self.on_cut = worker, raw, cap, on_cut
        self.kept = bytearray()
        self.section_token = new_section_token()
        self.splitter = SectionSplitter(self.section_token)
        #: Finds where the public output ends, when there is anything hidden to keep it from.
        self.marks = MarkScanner(new_mark()) if hidden else None
        #: After ``public_done``, while the mark is on its way: when to stop waiting for it.
        self.mark_deadline: float | None = None

    @property
    def mark_text(self) -> str | None:
        """The output mark the tracer writes before ``public_done`` (None: nothing hidden to cut at)."""
        return self.marks.mark.decode("ascii") if self.marks is not None else None

    def await_cut(self) -> bool:
        """The tracer finished everything public: True if the cut is still to come (``on_cut`` follows,
        within ``MARK_WAIT_S``), False if it is known already.

        The tracer wrote its mark before ``public_done``, but output may trail the frames (a container
        engine relays them separately). A mark that does not come (the tracer closed or redirected its
        output) cuts the output where it stands, at the output's end or after ``MARK_WAIT_S``."""
        if self.marks is not None and self.raw.output_cut is None:
            self.mark_deadline = time.monotonic() + MARK_WAIT_S
            return True
        return False

    def mark_missing(self) -> None:
        self.raw.output_cut = len(self.kept)
        self.raw.output_cut_stream = self.raw.output_total
        self.marks = None  # anything later is hidden output; a late mark stays in it, never shown
        self._cut()

    def read(self, sel: selectors.BaseSelector) -> None:
        fd = self.worker.output_fd
        try:
            chunk = os.read(fd, READ_CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            with contextlib.suppress(KeyError, ValueError):
                sel.unregister(fd)
            if self.mark_deadline is not None:
                self.mark_missing()  # the output ended without the mark: no need to wait for it
            return
        self.capture(chunk)

    def drain(self, budget_s: float = 0.5) -> None:
        """Take what output is buffered now (bounded in time: a flood cannot hold the judge)."""
        fd = self.worker.output_fd
        deadline = time.monotonic() + budget_s
        with contextlib.suppress(OSError):
            os.set_blocking(fd, False)
        while time.monotonic() < deadline:
            try:
                chunk = os.read(fd, READ_CHUNK)
            except BlockingIOError:
                return
            except OSError:
                return
            if not chunk:
                return
            self.capture(chunk)

    def finish(self) -> None:
        """The session is over: take what is buffered and write the kept output into the record."""
        self.drain()
        self.keep(self.splitter.flush())
        self.raw.output = bytes(self.kept)

    def capture(self, chunk: bytes) -> None:
        """Take the section marks out of the stream (each records where its section starts), and keep
        the rest (``keep``)."""
        for piece in self.splitter.feed(chunk):
            if isinstance(piece, str):
                if len(self.raw.sections) < MAX_SECTIONS:
                    self.raw.sections.append((self.raw.output_total, piece))
            else:
                self.keep(piece)

    def keep(self, chunk: bytes) -> None:
        """Keep user output up to the cap; count (and drop) the rest, so a flood fills no memory. The
        first output mark is taken out of the stream and sets where the public output ends."""
        if not chunk:
            return
        self.raw.output_total += len(chunk)
        room = self.cap - len(self.kept)
        if room > 0:
            self.kept += chunk[:room]
        if self.marks is not None and self.raw.output_cut is None:
            at = self.marks.feed(chunk)
            if at is not None:
                # The stream without the mark: the kept output is its first bytes, up to the cap.
                del self.kept[at : at + len(self.marks.mark)]
                self.raw.output_total -= len(self.marks.mark)
                self.raw.output_cut = min(at, len(self.kept))
                self.raw.output_cut_stream = at
                if self.mark_deadline is not None:
                    self._cut()

    def _cut(self) -> None:
        self.mark_deadline = None
        self.on_cut()
