"""The mark a tracer writes into its output where the public phase ends, and finding it in the stream.

A submission's prints are shown only up to the moment the tracer is given a hidden signature. The judge
knows that moment from the ``public_done`` result frame, but prints and frames travel separately: through
two pipes, or, for a container, through the engine's attach stream, which relays the container's stdout
(frames) and stderr (prints) on their own schedules, so a print may reach the judge after a frame written
later. So the judge does not guess from timing: it sends the tracer a fresh mark with the job, the tracer
writes it to its output (after flushing the prints) just before it says ``public_done``, and the judge cuts
the output where the mark is, waiting for it before it sends anything hidden.

The mark is no secret (user code runs in the tracer's process and could read it). Forging it only cuts
the forger's own output early: every print of the public phase precedes the real mark, and every print
after ``continue`` follows it, because the judge sends ``continue`` only once it has seen a mark.
"""

from __future__ import annotations

import secrets


def new_mark() -> bytes:
    """A mark for one session: NUL-delimited, so ordinary printed text never contains it."""
    return b"\x00[judge: end of public output " + secrets.token_hex(8).encode() + b"]\x00"


class MarkScanner:
    """Finds the first occurrence of ``mark`` in a stream read in chunks of any size."""

    def __init__(self, mark: bytes) -> None:
        if not mark:
            raise ValueError("an empty mark")
        self.mark = mark
        self._tail = b""  # the stream's last len(mark) - 1 bytes: a mark may straddle two chunks
        self._seen = 0  # stream bytes fed so far
        #: Stream offset of the mark's first byte, once found.
        self.found_at: int | None = None

    def feed(self, chunk: bytes) -> int | None:
        """Scan the next chunk of the stream; the mark's stream offset once it has been seen."""
        if self.found_at is None and chunk:
            data = self._tail + chunk
            index = data.find(self.mark)
            if index >= 0:
                self.found_at = self._seen - len(self._tail) + index
            else:
                self._tail = data[-(len(self.mark) - 1) :] if len(self.mark) > 1 else b""
        self._seen += len(chunk)
        return self.found_at
