"""Read a submission's source bytes the way Python reads a source file.

``decode_source`` is what the CLI (``judge grade FILE``) and the service call on the bytes they receive,
before anything reaches a sandbox:

- the encoding is found like Python finds it (``tokenize.detect_encoding``): a UTF-8 byte-order mark, else a
  PEP 263 ``coding:`` line, else UTF-8; the byte-order mark is dropped, so a file saved by an editor that
  writes one grades like any other;
- only the text encodings editors save source in are accepted (``ACCEPTED``: UTF-8, ASCII, Latin-1,
  ISO-8859-15, Windows-1252, under any of their names); any other codec a coding line names (``punycode``,
  ``rot13``, ``utf-16``, ``unicode_escape``...) is refused with the line, since such codecs transform the
  text or fail with errors of their own;
- bytes that are not valid in that encoding, a NUL byte (Python refuses to compile source holding one), a
  malformed coding line and an over-long source each raise ``SourceError``, an ``InputError`` whose path
  names the line (``line 3``), so the learner sees where the problem is.
"""

from __future__ import annotations

import codecs
import io
import re
import tokenize

from judge.core.errors import InputError

__all__ = ["ACCEPTED", "SourceError", "decode_source"]

#: The source encodings accepted, by their codec names (``codecs.lookup(name).name``), with how to say them.
ACCEPTED = {
    "utf-8": "UTF-8",
    "utf-8-sig": "UTF-8",
    "ascii": "ASCII",
    "iso8859-1": "Latin-1",
    "iso8859-15": "ISO-8859-15",
    "cp1252": "Windows-1252",
}
_ACCEPTED_TEXT = "UTF-8 (the default), ASCII, Latin-1, ISO-8859-15 or Windows-1252"

_BOM = b"\xef\xbb\xbf"
#: PEP 263: a comment on line 1 or 2 that names the encoding.
_COOKIE = re.compile(rb"^[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


class SourceError(InputError):
    """The source cannot be read as Python source. ``line`` is 1-based, None when no line is at fault."""

    def __init__(self, line: int | None, reason: str) -> None:
        super().__init__(f"line {line}" if line is not None else "code", reason)
        self.line = line


def _cookie_line(data: bytes) -> int | None:
    """The line (1 or 2) of the coding comment, None when there is none."""
    for number, line in enumerate(data.removeprefix(_BOM).split(b"\n", 2)[:2], start=1):
        if _COOKIE.match(line):
            return number
    return None


def _line_of(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


def decode_source(data: bytes, *, max_bytes: int | None = None) -> str:
    """The text of a Python source file given as bytes; raises ``SourceError`` naming the line at fault."""
    if max_bytes is not None and len(data) > max_bytes:
        raise SourceError(None, f"the code is {len(data)} bytes; the limit is {max_bytes}")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        line = _cookie_line(data)
        if line is not None:
            raise SourceError(line, f"cannot tell the source encoding: {exc.msg or exc}") from None
        # No coding line: the first lines are not UTF-8, and decoding pinpoints the byte below.
        encoding = "utf-8-sig" if data.startswith(_BOM) else "utf-8"
    try:
        codec = codecs.lookup(encoding).name
    except LookupError:
        raise SourceError(_cookie_line(data) or 1, f"unknown source encoding {encoding!r}") from None
    if codec not in ACCEPTED:
        raise SourceError(
            _cookie_line(data) or 1,
            f"the source encoding {encoding!r} is not accepted; declare {_ACCEPTED_TEXT}",
        )
    # Decode past a byte-order mark with the plain codec, so error offsets count from the file's start.
    skip = len(_BOM) if encoding == "utf-8-sig" and data.startswith(_BOM) else 0
    try:
        text = data[skip:].decode("utf-8" if skip else encoding)
    except UnicodeDecodeError as exc:
        start = exc.start + skip
        line = _line_of(data, start)
        column = start - (data.rfind(b"\n", 0, start) + 1) + 1
        raise SourceError(
            line,
            f"byte 0x{data[start]:02x} at column {column} is not valid {exc.encoding} text; "
            "save the file as UTF-8",
        ) from None
    nul = text.find("\0")
    if nul >= 0:
        line = text.count("\n", 0, nul) + 1
        column = nul - (text.rfind("\n", 0, nul) + 1) + 1
        raise SourceError(
            line, f"a NUL character at column {column}; Python source cannot hold NUL characters"
        )
    return text
