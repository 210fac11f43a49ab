"""Node types for decoded output trees that are not plain dict/list/tuple/None.

A decoded tree (what the judge compares) is made of ``dict`` (string keys, or ``NonStrKey``), ``list``,
``tuple``, ``None``, ``OtherNode`` and ``numpy.ndarray`` leaves (bfloat16 via ``ml_dtypes``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class NonStrKey:
    """A dict key that was not a string in the user's output, kept as its ``repr``."""

    text: str
    type_name: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class OtherNode:
    """A pytree node of a type other than dict/list/tuple/None (a namedtuple, a registered class)."""

    type_name: str
    children: tuple[Any, ...]


def to_host(tree: Any, is_array: Callable[[Any], bool], children: Callable[[Any], list[Any]]) -> Any:
    """A function's output -> plain containers with numpy leaves, other pytree nodes kept by type name.

    The one conversion both sides use: the harness for the user's output, the judge for the reference's,
    so the two trees compared are built the same way. ``children`` gives a foreign node's children.
    """
    if isinstance(tree, dict):
        return {k: to_host(v, is_array, children) for k, v in tree.items()}
    if type(tree) is list:
        return [to_host(v, is_array, children) for v in tree]
    if type(tree) is tuple:
        return tuple(to_host(v, is_array, children) for v in tree)
    if tree is None:
        return None
    if is_array(tree):
        return np.asarray(tree)
    return OtherNode(type(tree).__name__, tuple(to_host(c, is_array, children) for c in children(tree)))
