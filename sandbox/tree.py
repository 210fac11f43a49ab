"""Node types for decoded output trees that are not plain dict/list/tuple/None.

A decoded tree (what the judge compares) is made of ``dict`` (string keys, or ``NonStrKey``), ``list``,
``tuple``, ``None``, ``OtherNode`` and ``numpy.ndarray`` leaves (bfloat16 via ``ml_dtypes``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


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
