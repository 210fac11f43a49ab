"""Safe display of text that user code controls, and strict JSON.

A submission chooses what it prints, the messages of its exceptions and the keys and reprs in its output,
so any of it may hold terminal escape sequences (clear the screen, move the cursor, print a fake
``ACCEPTED``), carriage returns that overwrite a line, bidirectional-override characters that reorder what
a reader sees, or lone surrogates that no encoder accepts. ``escape_text`` makes such text inert for a
terminal or a page: every one of those characters becomes a visible escape (``\\x1b``, ``\\u202e``), so
the text shows what was sent and can never act on the display.

``strict_json`` serializes for parsers that follow the JSON standard (browsers included): no ``NaN`` or
``Infinity`` (a non-finite float becomes ``null``), no lone surrogate (escaped as its visible text), ASCII
only.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from judge.core.pytree_json import key_dtype_name
from sandbox.shared.tree import KeyArray, NonStrKey, OtherNode

__all__ = ["TreeLayout", "escape_surrogates", "escape_text", "sanitize_json", "strict_json", "tree_layout"]

#: C0 controls but tab and newline, DEL, C1 controls (0x9b is a one-byte CSI), the bidirectional marks,
#: embeddings, overrides and isolates, the line and paragraph separators, the byte-order mark, and lone
#: surrogates.
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ufeff\ud800-\udfff]"
)
_SURROGATE = re.compile("[\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def escape_text(text: str, *, newlines: bool = True) -> str:
    """``text`` with every control, bidi-override and lone-surrogate character written as a visible escape.

    Tabs are kept; newlines are kept unless ``newlines`` is False (then they become ``\\x0a``). Printable
    text, non-ASCII letters included, is unchanged.
    """
    escaped = _UNSAFE.sub(_escape, text)
    return escaped if newlines else escaped.replace("\n", "\\x0a")


_SCALARS = frozenset({int, float, bool, type(None)})


def escape_surrogates(value: Any) -> Any:
    """A JSON-ready value with every lone surrogate in a string or key written as its visible escape, and
    nothing else changed (bidirectional marks stay: this is a raw value, not display text). Lists of
    numbers, the bulk of any value, are passed over without a walk."""
    if isinstance(value, str):
        return _SURROGATE.sub(_escape, value) if _SURROGATE.search(value) else value
    if isinstance(value, dict):
        return {escape_surrogates(k): escape_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        if {type(item) for item in value} <= _SCALARS:
            return value
        return [escape_surrogates(item) for item in value]
    return value


def sanitize_json(value: Any) -> Any:
    """A JSON-ready value (dicts, lists, str, numbers, bool, None) with every non-finite float as ``None``
    and every lone surrogate in a string (or key) written as its visible escape."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, str):
        return _SURROGATE.sub(_escape, value)
    if isinstance(value, dict):
        return {sanitize_json(str(k)): sanitize_json(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [sanitize_json(v) for v in value]
    return value


def strict_json(value: Any, *, indent: int | None = None) -> str:
    """``value`` as standard JSON text (see ``sanitize_json``), ASCII only."""
    return json.dumps(sanitize_json(value), allow_nan=False, ensure_ascii=True, indent=indent)


#: One step of a path into a shown tree: a dict key's text or a list/tuple index.
PathStep = str | int


@dataclass(frozen=True)
class TreeLayout:
    """What a tree's JSON cannot say, for the page to show it as Python would: each leaf's dtype (by its
    path: dict keys as text, list and tuple positions as ints) and the paths of the tuple nodes (JSON
    writes a tuple as a list, though a list where a tuple is expected fails the comparison)."""

    leaves: list[tuple[list[PathStep], str]] = field(default_factory=list)
    tuples: list[list[PathStep]] = field(default_factory=list)


def tree_layout(tree: object) -> TreeLayout:
    """The ``TreeLayout`` of a tree of numpy arrays and numbers in dicts, lists, tuples and other nodes
    (``OtherNode`` counts as a tuple: its children are positional)."""
    layout = TreeLayout()
    _walk_layout(tree, [], layout)
    return layout


def _walk_layout(tree: object, path: list[PathStep], layout: TreeLayout) -> None:
    if tree is None:
        return
    if isinstance(tree, dict):
        for key, child in tree.items():
            text = key.text if isinstance(key, NonStrKey) else str(key)
            _walk_layout(child, [*path, text], layout)
        return
    if isinstance(tree, list | tuple | OtherNode):
        children = tree.children if isinstance(tree, OtherNode) else tree
        if not isinstance(tree, list):
            layout.tuples.append(path)
        for index, child in enumerate(children):
            _walk_layout(child, [*path, index], layout)
        return
    if isinstance(tree, KeyArray):
        # Its JSON is {"key_data": [...]}: the leaf is the data, tagged with the key's dtype (key<fry>).
        layout.leaves.append(([*path, "key_data"], key_dtype_name(tree.impl)))
        return
    if isinstance(tree, np.ndarray | np.generic):
        dtype = str(tree.dtype)
    elif isinstance(tree, bool):
        dtype = "bool"
    elif isinstance(tree, int):
        dtype = "int"
    elif isinstance(tree, float):
        dtype = "float"
    else:
        dtype = type(tree).__name__
    layout.leaves.append((path, dtype))
