"""Submitted source text -> the ``str`` the engine grades, or InputError naming the line.

A minimal local version of ``judge.source.decode_source`` (branch ``verdicts``), with the same contract:
strip a UTF-8 byte-order mark, require UTF-8, refuse NUL characters. The lead reconciles the two.
"""

from __future__ import annotations

from judge.errors import InputError

_BOM = b"\xef\xbb\xbf"


def decode_source(data: bytes) -> str:
    if data.startswith(_BOM):
        data = data[len(_BOM) :]
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError("code", f"line {line}: not UTF-8 text (byte {data[exc.start]:#04x})") from None
    nul = text.find("\0")
    if nul >= 0:
        raise InputError(
            "code", f"line {text.count(chr(10), 0, nul) + 1}: the source contains a NUL character"
        )
    return text


def source_from_json(code: str) -> str:
    """A ``code`` string from a JSON body (which may hold lone surrogates) -> checked source text."""
    return decode_source(code.encode("utf-8", "surrogatepass"))
