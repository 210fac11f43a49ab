"""Where a key or value sits in a problem's files: 1-based lines for ``problem.toml`` keys and tables and
for the values of a JSON case file, so every finding can name its line.

Pure functions of the file's text. Paths are tuples of keys and list indices, as pydantic error locations
are (``("args", 1, "traced")``, ``("cases", 3, "expected")``); ``line_of`` answers with the line of the
longest prefix of a path that it knows, so a location inside an inline table or an array still gets the
line of the key that holds it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from json_source_map import calculate

Path = tuple[str | int, ...]

_TABLE = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(
    r"""^\s*((?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|"[^"]*"|'[^']*'))*)\s*="""
)
_PART = re.compile(r"""[A-Za-z0-9_-]+|"[^"]*"|'[^']*'""")


def _parts(dotted: str) -> list[str]:
    return [part.strip("\"'") for part in _PART.findall(dotted)]


def toml_lines(text: str) -> dict[Path, int]:
    """The line of every table header and key assignment of a TOML document.

    ``[[args]]`` headers count: the second opens ``("args", 1)``. Lines inside multi-line strings and
    multi-line arrays are not read as keys."""
    lines: dict[Path, int] = {}
    prefix: Path = ()
    arrays: dict[Path, int] = {}
    open_string: str | None = None
    depth = 0  # brackets of a multi-line array or inline table still open
    for number, line in enumerate(text.splitlines(), start=1):
        if open_string is not None:
            if line.count(open_string) % 2:
                open_string = None
            continue
        if depth > 0:
            depth += _depth_change(line)
            continue
        table = _TABLE.match(line)
        if table:
            name: Path = tuple(_parts(table.group(2)))
            if table.group(1) == "[[":
                index = arrays.get(name, -1) + 1
                arrays[name] = index
                lines.setdefault(name, number)
                prefix = (*name, index)
            else:
                prefix = name
            lines.setdefault(prefix, number)
            continue
        key = _KEY.match(line)
        if not key:
            continue
        path = (*prefix, *_parts(key.group(1)))
        lines.setdefault(path, number)
        value = line[key.end() :]
        for quote in ('"""', "'''"):
            if value.count(quote) % 2:
                open_string = quote
        if open_string is None:
            depth = max(0, _depth_change(value))
    return lines


def _depth_change(text: str) -> int:
    """Opening minus closing brackets and braces outside strings and comments."""
    change = 0
    quote: str | None = None
    for char in text:
        if quote is not None:
            if char == quote:
                quote = None
        elif char in "\"'":
            quote = char
        elif char == "#":
            break
        elif char in "[{":
            change += 1
        elif char in "]}":
            change -= 1
    return change


def json_lines(text: str) -> dict[Path, int]:
    """The line of every value of a JSON document (of its key, for an object member); empty when the text
    is not valid JSON."""
    try:
        entries = calculate(text)
    except Exception:  # the loader reports invalid JSON with its own position
        return {}
    lines: dict[Path, int] = {}
    for pointer, entry in entries.items():
        parts = [] if pointer == "" else pointer[1:].split("/")
        path = tuple(_unescape(part) for part in parts)
        start = entry.key_start if entry.key_start is not None else entry.value_start
        lines[path] = start.line + 1
        # list indices come as digits: also index the path with ints, as pydantic locations have them
        lines.setdefault(
            tuple(int(p) if isinstance(p, str) and p.isdigit() else p for p in path), start.line + 1
        )
    return lines


def _unescape(part: str) -> str:
    return part.replace("~1", "/").replace("~0", "~")


def line_of(lines: Mapping[Path, int], path: Sequence[str | int]) -> int | None:
    """The line of ``path``, or of its longest known prefix; None when not even its first part is known."""
    key = tuple(path)
    while key:
        if key in lines:
            return lines[key]
        key = key[:-1]
    return None
