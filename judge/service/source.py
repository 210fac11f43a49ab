"""Submitted ``code`` from a JSON body -> the ``str`` the engine grades, or InputError naming the line.

The same reading as ``judge grade FILE`` (``judge.core.source.decode_source``): a byte-order mark or a
``coding:`` line is honoured, undecodable bytes (a lone surrogate in the JSON string) and NUL characters are
refused with their line. The error's path is ``code``, the body field, so the API's 422 names it.
"""

from __future__ import annotations

from judge.core.errors import InputError
from judge.core.source import SourceError, decode_source


def source_from_json(code: str) -> str:
    try:
        return decode_source(code.encode("utf-8", "surrogatepass"))
    except SourceError as exc:
        raise InputError("code", str(exc)) from None
