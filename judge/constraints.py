"""Small helpers for problem validators (``problems/<slug>/validator.py``).

A validator checks the CONVERTED inputs of a case (``Case.inputs`` keyed by argument name: trees of numpy
arrays, and Python floats for ``number`` arguments) against its problem's Constraints section. Each helper
returns a list of violations, each ``"<path>: <reason>"`` where the path names the argument and the place
in it, e.g. ``grads["w"]: 4 dimensions, at most 3 allowed``, so a validator is a few lines of
``errors += helper(...)``, and ``split_violation`` turns a violation back into (path, reason) for the
``InputError`` a custom Run input gets.

Trees follow the Run-panel rule (``judge.pytree_json``): dicts (string keys, visited sorted like JAX) and
lists are nodes, numpy arrays are leaves.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np

from judge.pytree_json import PathKey, path_str

__all__ = [
    "check_dtype",
    "check_finite",
    "check_has_leaves",
    "check_max_abs",
    "check_max_elements",
    "check_ndim",
    "check_number",
    "check_same_structure",
    "leaves_with_paths",
    "longest_list",
    "nesting_depth",
    "split_violation",
    "tree_signature",
]


def _walk(tree: Any, keys: tuple[PathKey, ...]) -> Iterator[tuple[tuple[PathKey, ...], Any]]:
    if isinstance(tree, dict):
        for key in sorted(tree):
            yield from _walk(tree[key], (*keys, key))
    elif isinstance(tree, list | tuple):
        for i, item in enumerate(tree):
            yield from _walk(item, (*keys, i))
    else:
        yield keys, tree


def leaves_with_paths(tree: Any, root: str) -> list[tuple[str, Any]]:
    """``(path, leaf)`` for every leaf in JAX flatten order, e.g. ``('grads["w"]', array([...]))``."""
    return [(path_str(root, keys), leaf) for keys, leaf in _walk(tree, ())]


def _array(leaf: Any) -> np.ndarray[Any, Any] | None:
    return leaf if isinstance(leaf, np.ndarray) else None


def check_has_leaves(tree: Any, root: str) -> list[str]:
    """The tree holds at least one array leaf (``{}`` and ``[]``-only containers do not)."""
    if any(_array(leaf) is not None for _, leaf in leaves_with_paths(tree, root)):
        return []
    return [f"{root}: the tree has no leaf, at least one is required"]


def check_ndim(tree: Any, root: str, *, max_ndim: int, min_ndim: int = 0) -> list[str]:
    """Every leaf is an array with ``min_ndim`` to ``max_ndim`` dimensions."""
    errors = []
    for path, leaf in leaves_with_paths(tree, root):
        array = _array(leaf)
        if array is None:
            errors.append(f"{path}: expected an array leaf, got {type(leaf).__name__}")
        elif array.ndim > max_ndim:
            errors.append(f"{path}: {array.ndim} dimensions, at most {max_ndim} allowed")
        elif array.ndim < min_ndim:
            errors.append(f"{path}: {array.ndim} dimensions, at least {min_ndim} required")
    return errors


def check_dtype(tree: Any, root: str, dtype: str) -> list[str]:
    """Every array leaf has the case dtype (one dtype per case)."""
    return [
        f"{path}: dtype {leaf.dtype}, the case dtype is {dtype}"
        for path, leaf in leaves_with_paths(tree, root)
        if isinstance(leaf, np.ndarray) and leaf.dtype.name != dtype
    ]


def check_finite(tree: Any, root: str) -> list[str]:
    """Every element of every leaf is finite (no NaN, no infinity)."""
    errors = []
    for path, leaf in leaves_with_paths(tree, root):
        array = _array(leaf)
        if array is None or array.size == 0:
            continue
        finite = np.isfinite(array.astype(np.float64))
        if not finite.all():
            index = tuple(int(i) for i in np.unravel_index(int(np.argmin(finite)), array.shape))
            at = f"[{', '.join(map(str, index))}]" if index else ""
            errors.append(f"{path}{at}: non-finite value {float(array[index])!r}")
    return errors


def check_max_abs(tree: Any, root: str, limit: float) -> list[str]:
    """Every element of every leaf has a magnitude of at most ``limit`` (the first offending element)."""
    errors = []
    for path, leaf in leaves_with_paths(tree, root):
        array = _array(leaf)
        if array is None or array.size == 0:
            continue
        magnitude = np.abs(array.astype(np.float64))
        with np.errstate(invalid="ignore"):
            over = ~(magnitude <= limit)
        if over.any():
            index = tuple(int(i) for i in np.unravel_index(int(np.argmax(over)), array.shape))
            at = f"[{', '.join(map(str, index))}]" if index else ""
            errors.append(f"{path}{at}: {float(array[index]):.6g} is larger in magnitude than {limit:g}")
    return errors


def check_max_elements(trees: dict[str, Any], limit: int) -> list[str]:
    """All leaves of all the given trees together hold at most ``limit`` elements."""
    total = sum(
        leaf.size
        for name, tree in trees.items()
        for _, leaf in leaves_with_paths(tree, name)
        if isinstance(leaf, np.ndarray)
    )
    if total > limit:
        return [f"{', '.join(trees)}: {total} elements in total, at most {limit} allowed"]
    return []


def check_number(
    value: Any,
    name: str,
    *,
    gt: float | None = None,
    ge: float | None = None,
    lt: float | None = None,
    le: float | None = None,
) -> list[str]:
    """A ``number`` argument is a finite float within the given bounds."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return [f"{name}: expected a number, got {type(value).__name__}"]
    if not math.isfinite(value):
        return [f"{name}: non-finite value {value!r}"]
    errors = []
    if gt is not None and not value > gt:
        errors.append(f"{name}: {value!r}, must be greater than {gt!r}")
    if ge is not None and not value >= ge:
        errors.append(f"{name}: {value!r}, must be at least {ge!r}")
    if lt is not None and not value < lt:
        errors.append(f"{name}: {value!r}, must be less than {lt!r}")
    if le is not None and not value <= le:
        errors.append(f"{name}: {value!r}, must be at most {le!r}")
    return errors


def _describe(node: Any) -> str:
    if isinstance(node, dict):
        return f"a dict with keys {sorted(node)}"
    if isinstance(node, list | tuple):
        return f"a list of {len(node)}"
    if isinstance(node, np.ndarray):
        return f"an array of shape {node.shape}"
    return type(node).__name__


def check_same_structure(
    first: Any, first_name: str, other: Any, other_name: str, *, shapes: bool = True
) -> list[str]:
    """``other`` has exactly the tree structure of ``first`` (and, with ``shapes``, equal leaf shapes)."""
    errors: list[str] = []
    _same(first, other, first_name, other_name, (), shapes, errors)
    return errors


def _same(
    a: Any, b: Any, a_name: str, b_name: str, keys: tuple[PathKey, ...], shapes: bool, errors: list[str]
) -> None:
    here = path_str(b_name, keys)
    there = path_str(a_name, keys)
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            missing, extra = sorted(set(a) - set(b)), sorted(set(b) - set(a))
            detail = "; ".join(
                part
                for part in (
                    f"missing keys {missing}" if missing else "",
                    f"extra keys {extra}" if extra else "",
                )
                if part
            )
            errors.append(f"{here}: keys differ from {there} ({detail})")
            return
        for key in sorted(a):
            _same(a[key], b[key], a_name, b_name, (*keys, key), shapes, errors)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            errors.append(f"{here}: a list of {len(b)}, {there} is a list of {len(a)}")
            return
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            _same(x, y, a_name, b_name, (*keys, i), shapes, errors)
        return
    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray):
        if shapes and a.shape != b.shape:
            errors.append(f"{here}: shape {b.shape}, {there} has shape {a.shape}")
        return
    errors.append(f"{here}: {_describe(b)}, {there} is {_describe(a)}")


# ------------------------------------------------------------------------------------- tree shape facts


def tree_signature(tree: Any) -> tuple[Any, ...]:
    """What a traced function can see of a converted tree: its containers (dict keys, list lengths) and
    each leaf's shape and dtype, never a value. Two trees with equal signatures trace identically."""
    if isinstance(tree, dict):
        return ("dict", tuple((key, tree_signature(tree[key])) for key in sorted(tree)))
    if isinstance(tree, list | tuple):
        return ("list", tuple(tree_signature(item) for item in tree))
    if isinstance(tree, np.ndarray):
        return ("leaf", tree.shape, tree.dtype.name)
    return ("value", type(tree).__name__)


def longest_list(tree: Any) -> int:
    """The most items of any list node in the tree (0 when it has none)."""
    if isinstance(tree, dict):
        return max((longest_list(v) for v in tree.values()), default=0)
    if isinstance(tree, list | tuple):
        return max([len(tree), *(longest_list(v) for v in tree)])
    return 0


def nesting_depth(tree: Any) -> int:
    """Containers (dicts and lists) on the longest path from the root to a leaf: 0 for a bare array,
    1 for ``{"w": array}``; an empty container counts as one level."""
    if isinstance(tree, dict | list | tuple):
        children = tree.values() if isinstance(tree, dict) else tree
        return 1 + max((nesting_depth(v) for v in children), default=0)
    return 0


def split_violation(text: str) -> tuple[str, str]:
    """``'grads["a: b"][0]: too big'`` -> ``('grads["a: b"][0]', 'too big')``: the first ``": "`` outside
    brackets and quotes ends the path. Text without one is all reason, with the path ``"args"``."""
    depth = 0
    quoted = escaped = False
    for i, char in enumerate(text):
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char == "[":
            depth += 1
        elif char == "]":
            depth = max(0, depth - 1)
        elif char == ":" and depth == 0 and text[i + 1 : i + 2] == " ":
            return text[:i], text[i + 2 :]
    return "args", text
