"""Tree types and the conversions both sides of the sandbox share.

A decoded output tree (what the judge compares) is made of ``dict`` (string keys, or ``NonStrKey``), ``list``,
``tuple``, ``None``, ``OtherNode``, ``BadLeaf``, ``numpy.ndarray`` leaves (bfloat16 via ``ml_dtypes``) and
``KeyArray`` leaves (a typed PRNG key array as its implementation and uint32 key data).

The container rule (one rule, for the user's output and the reference's alike): subclasses of ``dict``,
``list`` and ``tuple`` (``OrderedDict``, ``defaultdict``, a ``NamedTuple``, ...) are read as their base
container; any other pytree node type is kept as an ``OtherNode`` naming its type, and any other leaf than
an array as a ``BadLeaf`` naming its type, so the comparison reports a structure or type mismatch.

Inputs travel split in two: an abstract tree (structure, shapes, dtypes; what the tracer sees) and the flat
list of its leaves in the abstract tree's order (what the executor receives). ``split_input`` is that split;
dict keys are visited in sorted order, as ``jax.jit`` itself flattens them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np


@dataclass(frozen=True)
class NonStrKey:
    """A dict key that was not a string in the user's output, kept as its ``repr`` and type name."""

    text: str
    type_name: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class OtherNode:
    """A pytree node of a type other than dict/list/tuple/None (a registered class, a dataclass node)."""

    type_name: str
    children: tuple[Any, ...]


@dataclass(frozen=True)
class BadLeaf:
    """A leaf of the user's output that is not an array (a string, an object), kept by its type name."""

    type_name: str


#: PRNG key implementations a key argument or output may use, by JAX's name: the uint32 words of one key's
#: data. A typed key array of shape ``S`` is held as data of shape ``(*S, words)``.
KEY_IMPLS: dict[str, int] = {"threefry2x32": 2}


@dataclass(frozen=True, eq=False)
class KeyArray:
    """A typed PRNG key array (``jax.random.key``) as data, on either side of the sandbox: the name of its
    implementation and its raw key data (``jax.random.key_data``), uint32 of shape ``(*shape, words)``.

    Programs carry keys as that data only (a typed key lowers to it); the tracer marks which outputs are
    keys and the judge wraps them again, so a key compares as a key, never as the uint32 array under it.
    """

    impl: str
    data: np.ndarray[Any, Any]

    def __post_init__(self) -> None:
        words = KEY_IMPLS.get(self.impl)
        if words is None:
            raise ValueError(f"unknown PRNG key implementation {self.impl[:40]!r}")
        if self.data.dtype != np.uint32 or self.data.ndim < 1 or self.data.shape[-1] != words:
            raise ValueError(
                f"{self.impl} key data must be uint32 of shape (..., {words}), got {self.data.dtype} "
                f"{tuple(self.data.shape)}"
            )

    @property
    def shape(self) -> tuple[int, ...]:
        """The key array's own shape (without the data's last axis)."""
        return tuple(int(n) for n in self.data.shape[:-1])


class TreeTooDeep(ValueError):
    """A tree nested deeper than the conversion allows."""


def type_name(value: Any) -> str:
    kind = type(value)
    if kind.__module__ in ("builtins", "__main__"):
        return kind.__qualname__
    return f"{kind.__module__}.{kind.__qualname__}"


def to_host(
    tree: Any,
    is_array: Callable[[Any], bool],
    children: Callable[[Any], list[Any] | None],
    convert: Callable[[Any], Any] = np.asarray,
    max_depth: int = 64,
) -> Any:
    """A function's output -> plain containers, ``convert``-ed array leaves, and the container rule above.

    The one conversion both sides use: the tracer for the user's output (``convert`` records a traced leaf),
    the judge for the reference's (``convert`` is ``np.asarray``), so the two trees compared are built by
    the same rule. ``children`` gives a foreign pytree node's children, or None for a leaf. Raises
    ``TreeTooDeep`` past ``max_depth`` levels.
    """

    return _to_host(tree, is_array, children, convert, max_depth, 0)


def _to_host(
    node: Any,
    is_array: Callable[[Any], bool],
    children: Callable[[Any], list[Any] | None],
    convert: Callable[[Any], Any],
    max_depth: int,
    depth: int,
) -> Any:
    # A module-level function, not a recursive closure: a closure that refers to itself is a reference
    # cycle, which would keep traced values alive after a trace (and make JAX's leak check collect).
    if depth > max_depth:
        raise TreeTooDeep(f"the output is nested deeper than {max_depth} levels")
    args = (is_array, children, convert, max_depth, depth + 1)
    if isinstance(node, dict):
        return {k: _to_host(v, *args) for k, v in node.items()}
    if isinstance(node, list):
        return [_to_host(v, *args) for v in node]
    if isinstance(node, tuple):
        return tuple(_to_host(v, *args) for v in node)
    if node is None:
        return None
    if is_array(node):
        return convert(node)
    kids = children(node)
    if kids is None:
        return BadLeaf(type_name(node))
    return OtherNode(type(node).__name__, tuple(_to_host(c, *args) for c in kids))


# ---------------------------------------------------------------------------------------------- inputs


def split_input(tree: Any) -> tuple[Any, list[np.ndarray[Any, Any]]]:
    """A host input tree (dicts with string keys, lists, numpy leaves) -> (abstract node, flat leaves).

    The abstract node is ``{"dict": [[key, node], ...]}`` (keys sorted), ``{"list": [...]}`` or
    ``{"aval": {"dtype": ..., "shape": [...]}}``; the leaves follow the node's order.
    """
    leaves: list[np.ndarray[Any, Any]] = []

    def walk(node: Any) -> Any:
        if isinstance(node, dict):
            return {"dict": [[key, walk(node[key])] for key in sorted(node)]}
        if isinstance(node, list | tuple):
            return {"list": [walk(v) for v in node]}
        array = np.asarray(node)
        leaves.append(array)
        return {"aval": {"dtype": array.dtype.name, "shape": list(array.shape)}}

    return walk(tree), leaves
