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


# ------------------------------------------------------------------------------------------ sections

#: Longest label of a section mark (``load``, ``trace 12``, ``run 7``).
MAX_LABEL = 40
#: Section marks open and close with SOH, not NUL: no byte of the end mark may be held back as the possible
#: start of a section mark (the judge must see the end mark whole as soon as it arrives).
_SECTION_HEAD = b"\x01[judge: output of "
_SECTION_TAIL = b"]\x01"


def new_section_token() -> str:
    """The session's section token: it tells the judge's section marks from text that merely looks alike."""
    return secrets.token_hex(8)


def section_mark(token: str, label: str) -> bytes:
    """The mark a tracer writes where the output of ``label`` begins (what its code runs next)."""
    return _SECTION_HEAD + token.encode("ascii") + b" " + label.encode("ascii")[:MAX_LABEL] + _SECTION_TAIL


class SectionSplitter:
    """Takes the section marks of one session out of a stream read in chunks of any size.

    ``feed`` returns the chunk as a list of text pieces (bytes) and labels (str, a mark's label, where the
    mark stood), in stream order. Bytes that could be the start of a mark are held back until the next
    chunk shows what they are (``flush`` returns them at the end). Like the end mark these are no secret:
    a forged section mark only mislabels the forger's own prints; the end of the public output is found
    by ``MarkScanner`` in the stream without them."""

    def __init__(self, token: str) -> None:
        self.head = _SECTION_HEAD + token.encode("ascii") + b" "
        self._held = b""

    def feed(self, chunk: bytes) -> list[bytes | str]:
        data = self._held + chunk
        self._held = b""
        out: list[bytes | str] = []
        text = bytearray()
        start = 0
        while True:
            at = data.find(b"\x01", start)
            if at < 0:
                text += data[start:]
                break
            text += data[start:at]
            rest = data[at:]
            if len(rest) < len(self.head):
                if self.head.startswith(rest):
                    self._held = bytes(rest)  # maybe a mark's first bytes: wait for the next chunk
                    break
                text += b"\x01"
                start = at + 1
                continue
            if not rest.startswith(self.head):
                text += b"\x01"
                start = at + 1
                continue
            end = rest.find(_SECTION_TAIL, len(self.head), len(self.head) + MAX_LABEL + len(_SECTION_TAIL))
            if end < 0:
                if len(rest) < len(self.head) + MAX_LABEL + len(_SECTION_TAIL):
                    self._held = bytes(rest)  # a mark whose label has not all come yet
                    break
                text += b"\x01"  # too long for a label: text
                start = at + 1
                continue
            label = rest[len(self.head) : end]
            if not _label_ok(label):
                text += b"\x01"
                start = at + 1
                continue
            if text:
                out.append(bytes(text))
                text.clear()
            out.append(label.decode("ascii"))
            start = at + end + len(_SECTION_TAIL)
        if text:
            out.append(bytes(text))
        return out

    def flush(self) -> bytes:
        """What is still held back (the stream ended inside what looked like a mark): it is text."""
        held, self._held = self._held, b""
        return held


def _label_ok(label: bytes) -> bool:
    return bool(label) and all(0x20 <= byte < 0x7F for byte in label)
